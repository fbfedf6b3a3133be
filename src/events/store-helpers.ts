/**
 * Small pieces shared by the store implementations (memory here, SQLite in `ax-mcp/node`).
 * Not part of the public API.
 */

import type { AxEventDelivery, AxEventRun } from './store.js';

/** Separator for composite keys; it cannot occur in validated attributes. */
export const NUL = '\u0000';

/** The time a delivery becomes claimable (due time, or lease expiry), or `null` if terminal. */
export function nextDueOf(d: Pick<AxEventDelivery, 'status' | 'dueAt' | 'leaseUntil'>): number | null {
  if (d.status === 'queued' || d.status === 'failed') return d.dueAt;
  if (d.status === 'claimed' || d.status === 'running') return d.leaseUntil ?? 0;
  return null;
}

/** The public run record of an event delivery and its sink deliveries. */
export function deliveryToRun(d: AxEventDelivery, sinks: readonly AxEventDelivery[]): AxEventRun {
  return {
    id: d.runId,
    deliveryId: d.id,
    routeId: d.routeId,
    action: d.action,
    targetId: d.targetId,
    instanceKey: d.instanceKey,
    status: d.status,
    attempt: d.attempt,
    dueAt: d.status === 'queued' || d.status === 'failed' ? d.dueAt : null,
    startedAt: d.startedAt,
    finishedAt: d.finishedAt,
    output: d.output,
    error: d.error,
    continuationIds: [...d.continuationIds],
    sinks: sinks.map((s) => ({
      sinkId: s.sinkId ?? '',
      deliveryId: s.id,
      status: s.status,
      attempt: s.attempt,
      error: s.error,
    })),
  };
}
