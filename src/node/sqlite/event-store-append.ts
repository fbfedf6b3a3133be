/** Appending to the SQLite event store. Internal to `AxSQLiteEventStore`. */
import { AxEventInputError } from '../../events/errors.js';
import type { AxEventAppendInput, AxEventAppendManyInput, AxEventAppendResult } from '../../events/store.js';
import { json, parse, type Row, type Statements } from './event-store-rows.js';

/** The store's limits an append keeps. */
export interface AppendLimits {
  maxEventBytes: number;
  maxPendingDeliveries: number;
}

/**
 * Appends an event and its deliveries, once per dedupe key, within the pending limit; a
 * delivery with a coalescing key replaces a queued, never-tried one of the same key. Runs
 * inside the store's transaction.
 */
export function appendEvent(
  q: Statements,
  input: AxEventAppendInput,
  limits: AppendLimits,
): AxEventAppendResult {
  const d = input.dedupe;
  const known = q('SELECT delivery_ids FROM {dedupe} WHERE scope = ? AND source = ? AND event_id = ?').get(
    d.scope,
    d.source,
    d.id,
  ) as Row | undefined;
  if (known) return { status: 'duplicate', deliveryIds: parse<string[]>(known.delivery_ids) ?? [] };
  if (input.event.bytes > limits.maxEventBytes) {
    throw new AxEventInputError('event_too_large', `The event exceeds ${limits.maxEventBytes} bytes`);
  }
  const ids: string[] = [];
  if (input.deliveries.length > 0) {
    const pending = pendingCount(q);
    if (pending + input.deliveries.length > limits.maxPendingDeliveries) {
      return { status: 'full', reason: `${pending} pending deliveries` };
    }
    const e = input.event;
    q('INSERT INTO {events} (key, scope, ingress, bytes, received_at) VALUES (?, ?, ?, ?, ?)').run(
      e.key,
      e.scope,
      input.ingressText ?? JSON.stringify(e.ingress),
      e.bytes,
      e.receivedAt,
    );
    for (const draft of input.deliveries) {
      const existing = draft.coalesceKey
        ? (q(
            "SELECT id, event_key FROM {deliveries} WHERE coalesce_key = ? AND status = 'queued' AND attempt = 0",
          ).get(draft.coalesceKey) as Row | undefined)
        : undefined;
      if (existing) {
        q(
          'UPDATE {deliveries} SET event_key = ?, due_at = ?, correlation = ?, plan_error = ? WHERE id = ?',
        ).run(e.key, draft.dueAt, json(draft.correlation), json(draft.planError), existing.id);
        dropEventIfUnused(q, existing.event_key as string);
        ids.push(existing.id as string);
        continue;
      }
      q(
        `INSERT INTO {deliveries} (id, run_id, kind, event_key, route_id, action, target_id, instance_key,
          ordering_key, due_at, coalesce_key, correlation, plan_error, status, created_at)
         VALUES (?, ?, 'event', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?)`,
      ).run(
        draft.id,
        draft.runId,
        e.key,
        draft.routeId,
        draft.action,
        draft.targetId,
        draft.instanceKey,
        draft.orderingKey,
        draft.dueAt,
        draft.coalesceKey,
        json(draft.correlation),
        json(draft.planError),
        input.now,
      );
      ids.push(draft.id);
    }
  }
  q('INSERT INTO {dedupe} (scope, source, event_id, delivery_ids, created_at) VALUES (?, ?, ?, ?, ?)').run(
    d.scope,
    d.source,
    d.id,
    JSON.stringify(ids),
    input.now,
  );
  return { status: 'appended', deliveryIds: ids };
}

/** Thrown to roll a batch back when one of its items finds the store full. */
export class BatchFull extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/**
 * Appends a batch item by item inside the store's one transaction, so each item sees the
 * dedupe keys and ordering-key predecessors of the items before it. A full store throws
 * {@link BatchFull}: the caller rolls the whole batch back.
 */
export function appendEvents(
  q: Statements,
  input: AxEventAppendManyInput,
  limits: AppendLimits,
): AxEventAppendResult[] {
  return input.items.map((item) => {
    const result = appendEvent(q, { ...item, now: input.now }, limits);
    if (result.status === 'full') throw new BatchFull(result.reason);
    return result;
  });
}

function dropEventIfUnused(q: Statements, key: string): void {
  q('DELETE FROM {events} WHERE key = ? AND NOT EXISTS (SELECT 1 FROM {deliveries} WHERE event_key = ?)').run(
    key,
    key,
  );
}

/** Non-terminal deliveries, from the counter the schema's triggers keep. */
export function pendingCount(q: Statements): number {
  return (q("SELECT value AS n FROM {counters} WHERE name = 'pending'").get() as Row).n as number;
}
