/**
 * Row mapping of the PostgreSQL event store. Internal to `AxPostgresEventStore`.
 */

import { parseIngressRecord } from '../../events/envelope.js';
import type {
  AxEventContinuation,
  AxEventDeadLetter,
  AxEventDelivery,
  AxEventRunStatus,
  AxEventStoredEvent,
} from '../../events/store.js';
import { fromPgText, fromPgTextOrNull } from './connection.js';

/** A result row. */
export type Row = Record<string, unknown>;

/**
 * The earliest due time later than `now` among `deliveries`, or `undefined` when all are due:
 * what a wake-up tells listeners, so that they know their next due time may have moved.
 */
export function laterDue(deliveries: readonly { dueAt: number }[], now: number): number | undefined {
  let later: number | undefined;
  for (const d of deliveries) if (d.dueAt > now && (later === undefined || d.dueAt < later)) later = d.dueAt;
  return later;
}

/** One day in milliseconds. */
export const DAY = 24 * 60 * 60 * 1000;

/** JSON text for a column, `null` for nothing. */
export function json(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/** Parse a JSON column. */
export function parse<T>(text: unknown): T | null {
  return typeof text === 'string' ? (JSON.parse(text) as T) : null;
}

/** A number column (`bigint` arrives as a string). */
function num(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}

function numOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : num(value);
}

/** A delivery from its row. */
export function toDelivery(r: Row): AxEventDelivery {
  return {
    id: fromPgText(r.id as string),
    runId: fromPgText(r.run_id as string),
    kind: r.kind as 'event' | 'sink',
    sinkId: fromPgTextOrNull(r.sink_id),
    eventKey: fromPgTextOrNull(r.event_key),
    routeId: fromPgText(r.route_id as string),
    action: r.action as AxEventDelivery['action'],
    targetId: fromPgTextOrNull(r.target_id),
    instanceKey: fromPgText(r.instance_key as string),
    orderingKey: fromPgTextOrNull(r.ordering_key),
    dueAt: num(r.due_at),
    coalesceKey: fromPgTextOrNull(r.coalesce_key),
    correlation: parse(r.correlation),
    planError: parse(r.plan_error),
    seq: num(r.seq),
    status: r.status as AxEventRunStatus,
    attempt: num(r.attempt),
    leaseOwner: fromPgTextOrNull(r.lease_owner),
    leaseUntil: numOrNull(r.lease_until),
    fencingToken: num(r.fencing),
    cancelRequested: r.cancel_requested === true,
    createdAt: num(r.created_at),
    startedAt: numOrNull(r.started_at),
    finishedAt: numOrNull(r.finished_at),
    output: parse(r.output),
    error: parse(r.error),
    continuationIds: parse<string[]>(r.continuation_ids) ?? [],
  };
}

/** The event joined onto a claimed delivery row (`event_*` columns), or `null`. */
export function toJoinedEvent(r: Row): AxEventStoredEvent | null {
  if (typeof r.event_ingress !== 'string') return null;
  return {
    key: fromPgText(r.event_key as string),
    scope: fromPgText(r.event_scope as string),
    ingress: parseIngressRecord(r.event_ingress),
    bytes: num(r.event_bytes),
    receivedAt: num(r.event_received_at),
  };
}

/** A continuation from its row. */
export function toContinuation(r: Row): AxEventContinuation {
  return {
    id: fromPgText(r.id as string),
    scope: fromPgText(r.scope as string),
    kind: fromPgText(r.kind as string),
    value: fromPgText(r.value as string),
    targetId: fromPgText(r.target_id as string),
    instanceKey: fromPgText(r.instance_key as string),
    runId: fromPgText(r.run_id as string),
    deliveryId: fromPgText(r.delivery_id as string),
    expiresAt: numOrNull(r.expires_at),
    metadata: parse(r.metadata),
    createdAt: num(r.created_at),
  };
}

/** A dead letter from its row. */
export function toDeadLetter(r: Row): AxEventDeadLetter {
  return {
    id: fromPgText(r.id as string),
    kind: r.kind as 'delivery' | 'sink',
    deliveryId: fromPgText(r.delivery_id as string),
    runId: fromPgText(r.run_id as string),
    sinkId: fromPgTextOrNull(r.sink_id),
    reason: r.reason as AxEventDeadLetter['reason'],
    error: parse(r.error),
    createdAt: num(r.created_at),
  };
}
