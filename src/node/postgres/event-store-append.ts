/**
 * Appending to the PostgreSQL event store: an event with its deliveries in one statement, or,
 * when a delivery coalesces with a queued one, SQLite's steps in one transaction under
 * advisory locks of the coalescing keys. A dedupe key is recorded once; a race on it runs the
 * transaction again.
 */
import type pg from 'pg';
import { AxEventInputError } from '../../events/errors.js';
import type { AxEventAppendInput, AxEventAppendResult, AxEventDedupeKey } from '../../events/store.js';
import { fromPgText, toPgText as t } from './connection.js';
import { json, laterDue, parse, type Row } from './event-store-rows.js';
import { APPEND, draftColumns, insertDeliveries } from './event-store-sql.js';
import type { EventTables } from './event-store-tables.js';

/** What an append needs of its store. */
export interface AppendingStore {
  tables: EventTables;
  maxEventBytes: number;
  maxPendingDeliveries: number;
  /** The advisory-lock key space of the store's schema. */
  lockSpace: number;
  /** Wakes idle workers: `count` deliveries were added, the earliest not due yet due at `laterDueAt`. */
  wake(count?: number, laterDueAt?: number): void;
  countPending(): Promise<number>;
}

/** A transaction to run again: another append recorded the same dedupe key first. */
class DedupeRace extends Error {}

async function knownIds(store: AppendingStore, d: AxEventDedupeKey): Promise<string[] | null> {
  const known = await store.tables.query(
    'SELECT delivery_ids FROM {dedupe} WHERE scope = $1 AND source = $2 AND event_id = $3',
    [t(d.scope), t(d.source), t(d.id)],
  );
  const row = known.rows[0];
  return row ? (parse<string[]>(row.delivery_ids) ?? []) : null;
}

/** Appends an event and its deliveries, once per dedupe key, within the pending limit. */
export async function appendEvent(
  store: AppendingStore,
  input: AxEventAppendInput,
): Promise<AxEventAppendResult> {
  const d = input.dedupe;
  if (input.event.bytes > store.maxEventBytes) {
    const known = await knownIds(store, d);
    if (known) return { status: 'duplicate', deliveryIds: known };
    throw new AxEventInputError('event_too_large', `The event exceeds ${store.maxEventBytes} bytes`);
  }
  if (input.deliveries.some((draft) => draft.coalesceKey !== null)) {
    const result = await appendCoalescing(store, input);
    if (result.status === 'appended' && result.deliveryIds.length > 0)
      store.wake(result.deliveryIds.length, laterDue(input.deliveries, input.now));
    return result;
  }
  const ids = input.deliveries.map((draft) => draft.id);
  const e = input.event;
  const n = input.deliveries.length;
  for (;;) {
    const result = await store.tables.query(APPEND, [
      t(d.scope),
      t(d.source),
      t(d.id),
      JSON.stringify(ids),
      input.now,
      t(e.key),
      t(e.scope),
      input.ingressText ?? JSON.stringify(e.ingress),
      e.bytes,
      e.receivedAt,
      n,
      store.maxPendingDeliveries,
      ...draftColumns(input.deliveries),
    ]);
    const row = result.rows[0] as Row;
    if (row.appended === 1) {
      if (n > 0) store.wake(n, laterDue(input.deliveries, input.now));
      return { status: 'appended', deliveryIds: ids };
    }
    const known = await knownIds(store, d);
    if (known) return { status: 'duplicate', deliveryIds: known };
    if (row.room !== true) {
      const pending = await store.countPending();
      return { status: 'full', reason: `${pending} pending deliveries` };
    }
    // The conflicting dedupe key was pruned in between: try again.
  }
}

/** The append of an event with a coalescing delivery: SQLite's steps, in one transaction. */
function appendCoalescing(store: AppendingStore, input: AxEventAppendInput): Promise<AxEventAppendResult> {
  const d = input.dedupe;
  const e = input.event;
  return store.tables.tx<AxEventAppendResult>(
    async (client, rollback) => {
      const keys = [...new Set(input.deliveries.flatMap((x) => (x.coalesceKey ? [t(x.coalesceKey)] : [])))];
      for (const key of keys.sort()) {
        await store.tables.run(client, 'SELECT pg_advisory_xact_lock($1::integer, hashtext($2::text))', [
          store.lockSpace,
          key,
        ]);
      }
      const known = await store.tables.run(
        client,
        'SELECT delivery_ids FROM {dedupe} WHERE scope = $1 AND source = $2 AND event_id = $3',
        [t(d.scope), t(d.source), t(d.id)],
      );
      if (known.rows[0]) {
        return { status: 'duplicate', deliveryIds: parse<string[]>(known.rows[0].delivery_ids) ?? [] };
      }
      const pending = await pendingIn(store, client);
      if (pending + input.deliveries.length > store.maxPendingDeliveries) {
        return { status: 'full', reason: `${pending} pending deliveries` };
      }
      await store.tables.run(
        client,
        'INSERT INTO {events} (key, scope, ingress, bytes, received_at) VALUES ($1, $2, $3, $4, $5)',
        [t(e.key), t(e.scope), input.ingressText ?? JSON.stringify(e.ingress), e.bytes, e.receivedAt],
      );
      const ids: string[] = [];
      const fresh: AxEventAppendInput['deliveries'] = [];
      for (const draft of input.deliveries) {
        const existing = draft.coalesceKey
          ? (
              await store.tables.run(
                client,
                `SELECT id, event_key FROM {deliveries}
                 WHERE coalesce_key = $1 AND status = 'queued' AND attempt = 0 FOR UPDATE`,
                [t(draft.coalesceKey)],
              )
            ).rows[0]
          : undefined;
        if (existing) {
          await store.tables.run(
            client,
            'UPDATE {deliveries} SET event_key = $1, due_at = $2, correlation = $3, plan_error = $4 WHERE id = $5',
            [t(e.key), draft.dueAt, json(draft.correlation), json(draft.planError), existing.id],
          );
          await store.tables.run(
            client,
            `DELETE FROM {events} WHERE key = $1
             AND NOT EXISTS (SELECT 1 FROM {deliveries} WHERE event_key = $1)`,
            [existing.event_key],
          );
          ids.push(fromPgText(existing.id as string));
          continue;
        }
        fresh.push(draft);
        ids.push(draft.id);
      }
      if (fresh.length > 0) {
        await store.tables.run(
          client,
          `${insertDeliveries(3, '$1::text', '$2::float8')} ORDER BY hashtext(x.ordering_key), x.ord`,
          [t(e.key), input.now, ...draftColumns(fresh)],
        );
      }
      const recorded = await store.tables.run(
        client,
        `INSERT INTO {dedupe} (scope, source, event_id, delivery_ids, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT DO NOTHING RETURNING 1`,
        [t(d.scope), t(d.source), t(d.id), JSON.stringify(ids), input.now],
      );
      if (recorded.rowCount === 0) {
        rollback();
        throw new DedupeRace();
      }
      return { status: 'appended', deliveryIds: ids };
    },
    (error) => error instanceof DedupeRace,
  );
}

async function pendingIn(store: AppendingStore, client: pg.PoolClient): Promise<number> {
  const row = (
    await store.tables.run(client, 'SELECT COALESCE(sum(pending), 0)::float8 AS n FROM {counters}')
  ).rows[0] as Row;
  return row.n as number;
}
