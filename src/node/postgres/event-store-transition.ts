/**
 * What the worker holding a delivery's lease writes: its transitions, compare-and-set on the
 * fencing token (one statement when nothing else changes, a transaction when sinks, a dead
 * letter or a resumed continuation come with it), and its continuations.
 */
import type pg from 'pg';
import { AxEventError } from '../../events/errors.js';
import type { AxEventContinuation, AxEventTransition } from '../../events/store.js';
import { isTerminalRunStatus } from '../../events/store.js';
import { sqlState, toPgText as t, toPgTextOrNull as tn } from './connection.js';
import { json, parse, toDelivery } from './event-store-rows.js';
import { UPDATE_LEASED, UPDATE_LEASED_RELAXED, updateLeasedMany } from './event-store-sql.js';
import type { EventTables } from './event-store-tables.js';

/** What a leased write needs of its store. */
export interface LeasingStore {
  tables: EventTables;
  /** The first key of the store's ordering advisory locks. */
  lockSpace: number;
  /** Wakes idle workers: `count` deliveries were queued, the earliest not due yet due at `laterDueAt`. */
  wake(count?: number, laterDueAt?: number): void;
}

function transitionValues(x: AxEventTransition): unknown[] {
  const requeue = x.status === 'queued' || x.status === 'failed';
  const terminal = isTerminalRunStatus(x.status);
  return [
    t(x.deliveryId),
    x.fencingToken,
    x.status,
    tn(x.targetId),
    tn(x.instanceKey),
    x.startedAt ?? null,
    x.output !== undefined,
    x.output !== undefined ? json(x.output) : null,
    x.error !== undefined,
    x.error !== undefined ? json(x.error) : null,
    x.attempt ?? null,
    requeue,
    requeue ? (x.dueAt ?? x.now) : null,
    requeue || terminal,
    terminal ? x.now : null,
  ];
}

/** The earliest due time of requeued deliveries that are not due yet (a retry's backoff), if any. */
function laterDueOf(requeued: readonly AxEventTransition[]): number | undefined {
  let later: number | undefined;
  for (const x of requeued) {
    const due = x.dueAt ?? x.now;
    if (due > x.now && (later === undefined || due < later)) later = due;
  }
  return later;
}

/** A transition that changes the delivery's row and nothing else: one statement. */
export function isSimpleTransition(x: AxEventTransition): boolean {
  return (
    !x.sinks?.length &&
    !x.consumeContinuationId &&
    !x.deadLetter &&
    x.status !== 'dead_lettered' &&
    x.status !== 'cancelled'
  );
}

/**
 * Simple transitions as one statement (one alone as {@link UPDATE_LEASED}): whether each was
 * taken. A delivery listed twice goes in a statement of its own.
 */
export async function transitionTogether(
  store: LeasingStore,
  batch: readonly AxEventTransition[],
): Promise<boolean[]> {
  if (batch.length === 1) return [await transitionLeased(store, batch[0] as AxEventTransition)];
  const ids = new Set(batch.map((x) => x.deliveryId));
  if (ids.size < batch.length) {
    const results: boolean[] = [];
    for (const x of batch) results.push(await transitionLeased(store, x));
    return results;
  }
  const rows = batch.map(transitionValues);
  const columns = (rows[0] ?? []).map((_, i) => rows.map((r) => r[i]));
  const relaxed = batch.every((x) => x.replayable === true);
  const result = await store.tables.query(updateLeasedMany(store.lockSpace, relaxed), columns);
  const taken = new Set(result.rows.map((r) => r.id as string));
  const oks = batch.map((x) => taken.has(t(x.deliveryId)));
  const requeued = batch.filter((x, i) => oks[i] && (x.status === 'queued' || x.status === 'failed'));
  if (requeued.length > 0) store.wake(requeued.length, laterDueOf(requeued));
  return oks;
}

/** A compare-and-set transition of a leased delivery, with what it brings (sinks, a dead letter, a resume). */
export async function transitionLeased(store: LeasingStore, x: AxEventTransition): Promise<boolean> {
  if (isSimpleTransition(x)) {
    // One compare-and-set statement: the fencing token and lease state are its condition.
    const sql = x.replayable === true ? UPDATE_LEASED_RELAXED : UPDATE_LEASED;
    const result = await store.tables.query(sql, transitionValues(x));
    const ok = result.rowCount === 1;
    if (ok && (x.status === 'queued' || x.status === 'failed')) store.wake(1, laterDueOf([x]));
    return ok;
  }
  const ok = await store.tables.tx(async (client) => {
    const leased = await store.tables.run(
      client,
      "SELECT * FROM {deliveries} WHERE id = $1 AND fencing = $2 AND status IN ('claimed','running') FOR UPDATE",
      [t(x.deliveryId), x.fencingToken],
    );
    const row = leased.rows[0];
    if (!row) return false;
    const d = toDelivery(row);
    const error = x.error !== undefined ? x.error : d.error;
    await store.tables.run(client, UPDATE_LEASED, transitionValues(x));
    if (x.status === 'dead_lettered' || x.status === 'cancelled') {
      await store.tables.run(client, 'DELETE FROM {continuations} WHERE delivery_id = $1', [t(d.id)]);
    }
    if (x.sinks?.length) {
      await store.tables.run(
        client,
        `INSERT INTO {deliveries} (id, run_id, kind, sink_id, event_key, route_id, action, target_id,
           instance_key, ordering_key, due_at, status, created_at)
         SELECT s.id, $3::text, 'sink', s.sink_id, NULL, $4::text, $5::text, $6::text, $7::text, NULL,
           $8::float8, 'queued', $8::float8
         FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS s(id, sink_id, ord) ORDER BY s.ord`,
        [
          x.sinks.map((s) => t(s.id)),
          x.sinks.map((s) => t(s.sinkId)),
          t(d.runId),
          t(d.routeId),
          d.action,
          tn(x.targetId ?? d.targetId),
          t(d.instanceKey),
          x.now,
        ],
      );
    }
    if (x.consumeContinuationId) await consume(store, client, x.consumeContinuationId, x.now);
    if (x.deadLetter) {
      await store.tables.run(
        client,
        `INSERT INTO {dead_letters} (id, kind, delivery_id, run_id, sink_id, reason, error, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          t(x.deadLetter.id),
          d.kind === 'sink' ? 'sink' : 'delivery',
          t(d.id),
          t(d.runId),
          tn(d.sinkId),
          x.deadLetter.reason,
          json(error),
          x.now,
        ],
      );
    }
    return true;
  });
  // A finished delivery may unblock the next of its ordering key, but the lane that
  // finished it claims again at once; only new work (sinks, a retry time) wakes the fleet.
  if (ok && (x.sinks?.length || x.status === 'queued' || x.status === 'failed'))
    store.wake(
      x.sinks?.length || 1,
      x.status === 'queued' || x.status === 'failed' ? laterDueOf([x]) : undefined,
    );
  return ok;
}

/** Delete a continuation; its run, if waiting and now without continuations, has succeeded. */
async function consume(
  store: LeasingStore,
  client: pg.PoolClient,
  continuationId: string,
  now: number,
): Promise<void> {
  const found = await store.tables.run(client, 'SELECT delivery_id FROM {continuations} WHERE id = $1', [
    t(continuationId),
  ]);
  const owner = found.rows[0]?.delivery_id as string | undefined;
  if (owner === undefined) return;
  // Lock the owning run first (as cancel does), so two resumes of one run see each other.
  await store.tables.run(client, 'SELECT 1 FROM {deliveries} WHERE id = $1 FOR UPDATE', [owner]);
  await store.tables.run(client, 'DELETE FROM {continuations} WHERE id = $1', [t(continuationId)]);
  await store.tables.run(
    client,
    `UPDATE {deliveries} SET status = 'succeeded', finished_at = $1
     WHERE id = $2 AND status = 'waiting_event'
       AND NOT EXISTS (SELECT 1 FROM {continuations} WHERE delivery_id = $2)`,
    [now, owner],
  );
}

/** Records the continuations of a leased delivery; a live one of another delivery is a conflict. */
export function putContinuations(
  store: LeasingStore,
  input: { deliveryId: string; fencingToken: number; now: number; continuations: AxEventContinuation[] },
): Promise<boolean> {
  return store.tables.tx(
    async (client) => {
      const leased = await store.tables.run(
        client,
        `SELECT continuation_ids FROM {deliveries}
         WHERE id = $1 AND fencing = $2 AND status IN ('claimed','running') FOR UPDATE`,
        [t(input.deliveryId), input.fencingToken],
      );
      const row = leased.rows[0];
      if (!row) return false;
      const ids = parse<string[]>(row.continuation_ids) ?? [];
      for (const c of input.continuations) {
        const existing = (
          await store.tables.run(
            client,
            'SELECT id, delivery_id, expires_at FROM {continuations} WHERE scope = $1 AND kind = $2 AND value = $3 FOR UPDATE',
            [t(c.scope), t(c.kind), t(c.value)],
          )
        ).rows[0];
        if (existing) {
          const live = existing.expires_at === null || (existing.expires_at as number) > input.now;
          if (live && existing.delivery_id !== t(input.deliveryId)) {
            throw new AxEventError(
              'continuation_conflict',
              `A live continuation of kind "${c.kind}" already exists`,
            );
          }
          await store.tables.run(client, 'DELETE FROM {continuations} WHERE id = $1', [existing.id]);
        }
        await store.tables.run(
          client,
          `INSERT INTO {continuations} (id, scope, kind, value, target_id, instance_key, run_id, delivery_id,
             expires_at, metadata, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
          [
            t(c.id),
            t(c.scope),
            t(c.kind),
            t(c.value),
            t(c.targetId),
            t(c.instanceKey),
            t(c.runId),
            t(input.deliveryId),
            c.expiresAt,
            json(c.metadata),
            c.createdAt,
          ],
        );
        if (!ids.includes(c.id)) ids.push(c.id);
      }
      await store.tables.run(client, 'UPDATE {deliveries} SET continuation_ids = $1 WHERE id = $2', [
        JSON.stringify(ids),
        t(input.deliveryId),
      ]);
      return true;
    },
    // Another delivery inserted the same (scope, kind, value) at the same moment: look again.
    (error) => sqlState(error) === '23505',
  );
}
