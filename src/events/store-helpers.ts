/**
 * Small pieces shared by the store implementations (memory here, SQLite in `ax-mcp/node`).
 * Not part of the public API.
 */

import type { AxEventDelivery, AxEventDeliveryDraft, AxEventRun } from './store.js';

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

/**
 * A copy of a delivery, field by field. (Object spread of these wide records is very slow
 * in V8, and stores copy them on every claim.)
 */
export function copyDelivery(d: AxEventDelivery, patch: Partial<AxEventDelivery> = {}): AxEventDelivery {
  const copy: AxEventDelivery = {
    id: d.id,
    runId: d.runId,
    routeId: d.routeId,
    action: d.action,
    targetId: d.targetId,
    instanceKey: d.instanceKey,
    orderingKey: d.orderingKey,
    dueAt: d.dueAt,
    coalesceKey: d.coalesceKey,
    correlation: d.correlation,
    planError: d.planError,
    kind: d.kind,
    sinkId: d.sinkId,
    eventKey: d.eventKey,
    seq: d.seq,
    status: d.status,
    attempt: d.attempt,
    leaseOwner: d.leaseOwner,
    leaseUntil: d.leaseUntil,
    fencingToken: d.fencingToken,
    cancelRequested: d.cancelRequested,
    createdAt: d.createdAt,
    startedAt: d.startedAt,
    finishedAt: d.finishedAt,
    output: d.output,
    error: d.error,
    continuationIds: [...d.continuationIds],
  };
  for (const key of Object.keys(patch) as (keyof AxEventDelivery)[]) {
    (copy as unknown as Record<string, unknown>)[key] = patch[key];
  }
  return copy;
}

/** A new queued delivery record from a draft. */
export function newDelivery(
  draft: AxEventDeliveryDraft,
  fields: {
    kind: 'event' | 'sink';
    sinkId: string | null;
    eventKey: string | null;
    seq: number;
    now: number;
  },
): AxEventDelivery {
  return {
    id: draft.id,
    runId: draft.runId,
    routeId: draft.routeId,
    action: draft.action,
    targetId: draft.targetId,
    instanceKey: draft.instanceKey,
    orderingKey: draft.orderingKey,
    dueAt: draft.dueAt,
    coalesceKey: draft.coalesceKey,
    correlation: draft.correlation,
    planError: draft.planError,
    kind: fields.kind,
    sinkId: fields.sinkId,
    eventKey: fields.eventKey,
    seq: fields.seq,
    status: 'queued',
    attempt: 0,
    leaseOwner: null,
    leaseUntil: null,
    fencingToken: 0,
    cancelRequested: false,
    createdAt: fields.now,
    startedAt: null,
    finishedAt: null,
    output: null,
    error: null,
    continuationIds: [],
  };
}
