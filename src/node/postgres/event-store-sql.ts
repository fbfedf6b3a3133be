/**
 * The longer SQL texts of the PostgreSQL event store, with `{name}` for its tables.
 * Internal to `AxPostgresEventStore`.
 */

import type { AxEventAppendInput } from '../../events/store.js';
import { toPgText as t, toPgTextOrNull as tn } from './connection.js';
import { json } from './event-store-rows.js';

const LEASED_SET = `SET status = $3,
    target_id = COALESCE($4::text, target_id),
    instance_key = COALESCE($5::text, instance_key),
    started_at = COALESCE($6::float8, started_at),
    output = CASE WHEN $7::boolean THEN $8::text ELSE output END,
    error = CASE WHEN $9::boolean THEN $10::text ELSE error END,
    attempt = COALESCE($11::integer, attempt),
    due_at = CASE WHEN $12::boolean THEN $13::float8 ELSE due_at END,
    lease_owner = CASE WHEN $14::boolean THEN NULL ELSE lease_owner END,
    lease_until = CASE WHEN $14::boolean THEN NULL ELSE lease_until END,
    finished_at = $15::float8`;
const LEASED_WHERE = `WHERE id = $1 AND fencing = $2 AND status IN ('claimed','running')
  RETURNING seq`;

/** A compare-and-set transition: the fencing token and a leased status are its condition. */
export const UPDATE_LEASED = `UPDATE {deliveries} ${LEASED_SET}
  ${LEASED_WHERE}`;

/**
 * {@link UPDATE_LEASED} committed without waiting for its WAL flush, for a transition that
 * may be lost to a database crash (`replayable`): the delivery would only run again.
 */
export const UPDATE_LEASED_RELAXED = `WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true) AS done)
  UPDATE {deliveries} ${LEASED_SET}
  FROM relaxed
  ${LEASED_WHERE}`;

/**
 * {@link UPDATE_LEASED} for many deliveries at once, from column arrays in the order of its
 * parameters; returns the ids it changed. An ordered delivery's leaving takes its key's
 * advisory lock in a trigger, and the rows of one statement would take those in no set
 * order: the statement takes them first, in hash order like appends, so it cannot deadlock
 * with an append (the triggers then find them held).
 */
export function updateLeasedMany(lockSpace: number, relaxed = false): string {
  // Relaxed (every transition `replayable`): committed without waiting for its WAL flush.
  const commit = relaxed
    ? "relaxed AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true) AS done),"
    : '';
  return `WITH ${commit} x AS MATERIALIZED (
      SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::float8[],
        $7::boolean[], $8::text[], $9::boolean[], $10::text[], $11::integer[], $12::boolean[], $13::float8[],
        $14::boolean[], $15::float8[]) AS x(id, fencing, status, target_id, instance_key, started_at,
          set_output, output, set_error, error, attempt, requeue, due_at, release, finished_at)),
    locked AS MATERIALIZED (
      SELECT count(pg_advisory_xact_lock(${lockSpace}, k.h)) AS n
      FROM (SELECT DISTINCT hashtext(d.ordering_key) AS h FROM {deliveries} d JOIN x ON d.id = x.id
            WHERE d.ordering_key IS NOT NULL ORDER BY 1) k)
    UPDATE {deliveries} d SET status = x.status,
      target_id = COALESCE(x.target_id, d.target_id),
      instance_key = COALESCE(x.instance_key, d.instance_key),
      started_at = COALESCE(x.started_at, d.started_at),
      output = CASE WHEN x.set_output THEN x.output ELSE d.output END,
      error = CASE WHEN x.set_error THEN x.error ELSE d.error END,
      attempt = COALESCE(x.attempt, d.attempt),
      due_at = CASE WHEN x.requeue THEN x.due_at ELSE d.due_at END,
      lease_owner = CASE WHEN x.release THEN NULL ELSE d.lease_owner END,
      lease_until = CASE WHEN x.release THEN NULL ELSE d.lease_until END,
      finished_at = x.finished_at
    FROM x, locked${relaxed ? ', relaxed' : ''}
    WHERE d.id = x.id AND d.fencing = x.fencing AND d.status IN ('claimed','running') AND locked.n >= 0
    RETURNING d.id`;
}

/**
 * The deliveries of one event, from column arrays starting at parameter `$first` (event key
 * and time are `$1`/`$5` of the append, passed in as SQL). Rows go in in ordering-key hash
 * order, so concurrent appends take their ordering locks in one order and cannot deadlock.
 */
export function insertDeliveries(first: number, eventKey: string, now: string): string {
  const p = (i: number, type: string) => `$${first + i}::${type}[]`;
  return `INSERT INTO {deliveries} (id, run_id, kind, event_key, route_id, action, target_id, instance_key,
      ordering_key, due_at, coalesce_key, correlation, plan_error, status, created_at)
    SELECT x.id, x.run_id, 'event', ${eventKey}, x.route_id, x.action, x.target_id, x.instance_key,
      x.ordering_key, x.due_at, x.coalesce_key, x.correlation, x.plan_error, 'queued', ${now}
    FROM unnest(${p(0, 'text')}, ${p(1, 'text')}, ${p(2, 'text')}, ${p(3, 'text')}, ${p(4, 'text')},
      ${p(5, 'text')}, ${p(6, 'text')}, ${p(7, 'float8')}, ${p(8, 'text')}, ${p(9, 'text')}, ${p(10, 'text')})
      WITH ORDINALITY AS x(id, run_id, route_id, action, target_id, instance_key, ordering_key, due_at,
        coalesce_key, correlation, plan_error, ord)`;
}

/** Column arrays of delivery drafts, in the order {@link insertDeliveries} reads them. */
export function draftColumns(drafts: AxEventAppendInput['deliveries']): unknown[] {
  return [
    drafts.map((d) => t(d.id)),
    drafts.map((d) => t(d.runId)),
    drafts.map((d) => t(d.routeId)),
    drafts.map((d) => d.action),
    drafts.map((d) => tn(d.targetId)),
    drafts.map((d) => t(d.instanceKey)),
    drafts.map((d) => tn(d.orderingKey)),
    drafts.map((d) => d.dueAt),
    drafts.map((d) => tn(d.coalesceKey)),
    drafts.map((d) => json(d.correlation)),
    drafts.map((d) => json(d.planError)),
  ];
}

/** A delivery draft as one row of {@link APPEND_MANY}'s JSON document (its fields as stored). */
export function draftRow(d: AxEventAppendInput['deliveries'][number]): Record<string, unknown> {
  return {
    id: t(d.id),
    run_id: t(d.runId),
    route_id: t(d.routeId),
    action: d.action,
    target_id: tn(d.targetId),
    instance_key: t(d.instanceKey),
    ordering_key: tn(d.orderingKey),
    due_at: d.dueAt,
    coalesce_key: tn(d.coalesceKey),
    correlation: json(d.correlation),
    plan_error: json(d.planError),
  };
}

/**
 * One append without coalescing, as one statement: room check, dedupe insert, and the event
 * and its deliveries only if the dedupe key was new.
 */
export const APPEND = `WITH room AS (
           SELECT $11::integer = 0 OR COALESCE(sum(pending), 0) + $11::integer <= $12::float8 AS ok
           FROM {counters}),
         dd AS (
           INSERT INTO {dedupe} (scope, source, event_id, delivery_ids, created_at)
           SELECT $1::text, $2::text, $3::text, $4::text, $5::float8 FROM room WHERE room.ok
           ON CONFLICT DO NOTHING RETURNING 1 AS one),
         ev AS (
           INSERT INTO {events} (key, scope, ingress, bytes, received_at)
           SELECT $6::text, $7::text, $8::text, $9::integer, $10::float8
           WHERE $11::integer > 0 AND EXISTS (SELECT 1 FROM dd)),
         dl AS (
           ${insertDeliveries(13, '$6::text', '$5::float8')}
           WHERE EXISTS (SELECT 1 FROM dd)
           ORDER BY hashtext(x.ordering_key), x.ord)
         SELECT (SELECT count(*) FROM dd)::integer AS appended, (SELECT ok FROM room) AS room`;

/**
 * Lease up to `$2` deliveries: expired leases first (crash recovery), then due work in
 * (due_at, seq) order; heads of their ordering keys only; rows another claimer holds are
 * skipped; the event comes along. The claim commits without waiting for its WAL flush
 * (`relaxed`): a claim lost in a database crash only makes the delivery claimable again, and
 * the `running` transition, which always precedes invoking a target, commits synchronously
 * and so flushes the claim with it (WAL is flushed in order).
 */
export const CLAIM = `WITH expired AS (
         SELECT d.id, d.status AS previous_status, 0 AS branch, d.lease_until AS sort_at
         FROM {deliveries} d
         WHERE d.status IN ('claimed','running') AND d.lease_until <= $1 AND d.is_head
         ORDER BY d.lease_until LIMIT $2 FOR UPDATE OF d SKIP LOCKED),
       due AS (
         SELECT d.id, d.status AS previous_status, 1 AS branch, d.due_at AS sort_at
         FROM {deliveries} d
         WHERE d.status IN ('queued','failed') AND d.due_at <= $1 AND d.is_head
         ORDER BY d.due_at, d.seq LIMIT ($2 - (SELECT count(*) FROM expired)) FOR UPDATE OF d SKIP LOCKED),
       picked AS (SELECT * FROM expired UNION ALL SELECT * FROM due),
       relaxed AS (SELECT set_config('synchronous_commit', 'off', true) AS done),
       claimed AS (
         UPDATE {deliveries} d SET status = 'claimed', attempt = d.attempt + 1, fencing = d.fencing + 1,
           lease_owner = $3, lease_until = $4
         FROM picked p, relaxed WHERE d.id = p.id
         RETURNING d.*, p.previous_status, p.branch, p.sort_at)
       SELECT c.*, e.scope AS event_scope, e.ingress AS event_ingress, e.bytes AS event_bytes,
         e.received_at AS event_received_at
       FROM claimed c LEFT JOIN {events} e ON e.key = c.event_key
       ORDER BY c.branch, c.sort_at, c.seq`;

/**
 * A batch of appends without coalescing, as one statement: one room check for the whole
 * batch, the dedupe keys in key order (two batches sharing keys lock them in one order), and
 * the events and deliveries of the items whose key was new. Deliveries go in in
 * (ordering-key hash, batch position) order: ordering locks in one order, and within a key
 * the sequence follows the batch. Returns the room and the positions of the items written.
 *
 * The items (`$4`) and the deliveries (`$5`) travel as two JSON documents rather than as a
 * column array per field: `JSON.stringify` is native, where every element of a text array
 * is escaped in JavaScript, which was the largest single cost of a bulk publish.
 */
export const APPEND_MANY = `WITH room AS (
           SELECT $2::integer = 0 OR COALESCE(sum(pending), 0) + $2::integer <= $3::float8 AS ok
           FROM {counters}),
         items AS (
           SELECT * FROM json_to_recordset($4::json) AS i(scope text, source text, event_id text,
             delivery_ids text, key text, event_scope text, ingress text, bytes integer,
             received_at float8, n integer, item integer)),
         dd AS (
           INSERT INTO {dedupe} (scope, source, event_id, delivery_ids, created_at)
           SELECT i.scope, i.source, i.event_id, i.delivery_ids, $1::float8 FROM items i, room WHERE room.ok
           ORDER BY i.scope, i.source, i.event_id
           ON CONFLICT DO NOTHING RETURNING scope, source, event_id),
         fresh AS (
           SELECT i.* FROM items i
           JOIN dd ON dd.scope = i.scope AND dd.source = i.source AND dd.event_id = i.event_id),
         ev AS (
           INSERT INTO {events} (key, scope, ingress, bytes, received_at)
           SELECT f.key, f.event_scope, f.ingress, f.bytes, f.received_at FROM fresh f WHERE f.n > 0),
         dl AS (
           INSERT INTO {deliveries} (id, run_id, kind, event_key, route_id, action, target_id, instance_key,
             ordering_key, due_at, coalesce_key, correlation, plan_error, status, created_at)
           SELECT x.id, x.run_id, 'event', f.key, x.route_id, x.action, x.target_id, x.instance_key,
             x.ordering_key, x.due_at, x.coalesce_key, x.correlation, x.plan_error, 'queued', $1::float8
           FROM json_to_recordset($5::json) AS x(id text, run_id text, route_id text, action text,
             target_id text, instance_key text, ordering_key text, due_at float8, coalesce_key text,
             correlation text, plan_error text, item integer, ord integer)
           JOIN fresh f ON f.item = x.item
           ORDER BY hashtext(x.ordering_key), x.ord)
         SELECT (SELECT ok FROM room) AS room, ARRAY(SELECT f.item::integer FROM fresh f) AS appended`;

/** The recorded delivery ids of dedupe keys given as column arrays, by 1-based position. */
export const KNOWN_MANY = `SELECT k.n::integer AS n, d.delivery_ids
  FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS k(scope, source, event_id, n)
  JOIN {dedupe} d ON d.scope = k.scope AND d.source = k.source AND d.event_id = k.event_id`;
