/**
 * The PostgreSQL event store's listings: every run, newest last update first, filtered and
 * paged by cursor; and the continuations it holds. Internal to `AxPostgresEventStore`.
 *
 * Ids are ordered `COLLATE "C"` (byte order), whatever the database's collation, so a cursor
 * means the same on every connection. No index serves the order (the last update is computed
 * from three columns), so a page scans the event deliveries: an expression index would cost
 * every claim and transition an index write, which an operator's view does not justify.
 */

import { type CheckedRunQuery, encodeCursor, isExpired, type RunPosition } from '../../events/run-listing.js';
import type { AxEventContinuationListing, AxEventDelivery, AxEventRunPage } from '../../events/store.js';
import { deliveryToRun } from '../../events/store-helpers.js';
import { toPgText as t, toPgTextOrNull } from './connection.js';
import { type Row, toContinuation, toDelivery } from './event-store-rows.js';
import type { EventTables } from './event-store-tables.js';

const LAST_UPDATE = 'GREATEST(created_at, started_at, finished_at)';

// One statement, so the page and its sink writes come from one snapshot.
const RUNS = `WITH page AS (
    SELECT *, ${LAST_UPDATE} AS last_update FROM {deliveries}
    WHERE kind = 'event'
      AND ($1::text[] IS NULL OR status = ANY($1::text[]))
      AND ($2::text IS NULL OR route_id = $2::text)
      AND ($3::text IS NULL OR target_id = $3::text)
      AND ($4::float8 IS NULL OR ${LAST_UPDATE} < $4::float8
        OR (${LAST_UPDATE} = $4::float8 AND run_id COLLATE "C" < $5::text))
    ORDER BY last_update DESC, run_id COLLATE "C" DESC
    LIMIT $6)
  SELECT * FROM (
    SELECT 0 AS part, page.* FROM page
    UNION ALL
    SELECT 1 AS part, s.*, NULL::float8 AS last_update FROM {deliveries} s
    WHERE s.kind = 'sink' AND s.run_id IN (SELECT run_id FROM page)) AS rows
  ORDER BY part, last_update DESC NULLS LAST, run_id COLLATE "C" DESC, seq`;

const CONTINUATIONS = `SELECT * FROM {continuations} ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $1`;

/** One page of runs. */
export async function listRuns(tables: EventTables, query: CheckedRunQuery): Promise<AxEventRunPage> {
  const result = await tables.query(RUNS, [
    query.statuses,
    toPgTextOrNull(query.routeId),
    toPgTextOrNull(query.targetId),
    query.before?.at ?? null,
    query.before ? t(query.before.id) : null,
    // One more than the page: whether a next page exists.
    query.limit + 1,
  ]);
  const found: Row[] = [];
  const sinks = new Map<string, AxEventDelivery[]>();
  for (const row of result.rows) {
    if (row.part === 0) {
      found.push(row);
      continue;
    }
    const sink = toDelivery(row);
    const list = sinks.get(sink.runId) ?? [];
    list.push(sink);
    sinks.set(sink.runId, list);
  }
  const page = found.slice(0, query.limit);
  const runs = page.map((row) => {
    const d = toDelivery(row);
    return deliveryToRun(d, sinks.get(d.runId) ?? []);
  });
  const last = page[page.length - 1];
  if (found.length <= query.limit || !last) return { runs };
  const position: RunPosition = { at: Number(last.last_update), id: toDelivery(last).runId };
  return { runs, next: encodeCursor(position) };
}

/** Up to `limit` continuations, newest first, expired ones (not yet pruned) marked. */
export async function listContinuations(
  tables: EventTables,
  input: { now: number; limit: number },
): Promise<AxEventContinuationListing[]> {
  const result = await tables.query(CONTINUATIONS, [input.limit]);
  return result.rows.map((row) => {
    const c = toContinuation(row);
    return { ...c, expired: isExpired(c, input.now) };
  });
}
