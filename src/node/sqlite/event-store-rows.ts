/**
 * Row mapping of the SQLite event store, and the shape of its statement cache. Internal to
 * `AxSQLiteEventStore`.
 */

import type BetterSqlite3 from 'better-sqlite3';
import type { AxEventContinuation, AxEventDelivery, AxEventRunStatus } from '../../events/store.js';

/** A result row. */
export type Row = Record<string, unknown>;
/** The store's prepared statement for `sql`, its `{table}` names filled in (prepared once). */
export type Statements = (sql: string) => BetterSqlite3.Statement;
/** The SQL list of non-terminal statuses. */
export const PENDING = "('queued','failed','claimed','running')";
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

/** A delivery from its row. */
export function toDelivery(r: Row): AxEventDelivery {
  return {
    id: r.id as string,
    runId: r.run_id as string,
    kind: r.kind as 'event' | 'sink',
    sinkId: (r.sink_id as string | null) ?? null,
    eventKey: (r.event_key as string | null) ?? null,
    routeId: r.route_id as string,
    action: r.action as AxEventDelivery['action'],
    targetId: (r.target_id as string | null) ?? null,
    instanceKey: r.instance_key as string,
    orderingKey: (r.ordering_key as string | null) ?? null,
    dueAt: r.due_at as number,
    coalesceKey: (r.coalesce_key as string | null) ?? null,
    correlation: parse(r.correlation),
    planError: parse(r.plan_error),
    seq: r.seq as number,
    status: r.status as AxEventRunStatus,
    attempt: r.attempt as number,
    leaseOwner: (r.lease_owner as string | null) ?? null,
    leaseUntil: (r.lease_until as number | null) ?? null,
    fencingToken: r.fencing as number,
    cancelRequested: r.cancel_requested === 1,
    createdAt: r.created_at as number,
    startedAt: (r.started_at as number | null) ?? null,
    finishedAt: (r.finished_at as number | null) ?? null,
    output: parse(r.output),
    error: parse(r.error),
    continuationIds: parse<string[]>(r.continuation_ids) ?? [],
  };
}

/** A continuation from its row. */
export function toContinuation(r: Row): AxEventContinuation {
  return {
    id: r.id as string,
    scope: r.scope as string,
    kind: r.kind as string,
    value: r.value as string,
    targetId: r.target_id as string,
    instanceKey: r.instance_key as string,
    runId: r.run_id as string,
    deliveryId: r.delivery_id as string,
    expiresAt: (r.expires_at as number | null) ?? null,
    metadata: parse(r.metadata),
    createdAt: r.created_at as number,
  };
}
