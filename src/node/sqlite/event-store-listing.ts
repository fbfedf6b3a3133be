/**
 * The SQLite event store's listings: every run, newest last update first, filtered and paged
 * by cursor; and the continuations it holds. Internal to `AxSQLiteEventStore`.
 *
 * No index serves the order (the last update is computed from three columns), so a page
 * scans the event deliveries; an expression index would cost every claim and transition a
 * write, which the listing (an operator's view) does not justify.
 */

import { type CheckedRunQuery, encodeCursor, isExpired, type RunPosition } from '../../events/run-listing.js';
import type { AxEventContinuationListing, AxEventDelivery, AxEventRunPage } from '../../events/store.js';
import { deliveryToRun } from '../../events/store-helpers.js';
import { type Row, type Statements, toContinuation, toDelivery } from './event-store-rows.js';

const LAST_UPDATE = 'max(created_at, coalesce(started_at, created_at), coalesce(finished_at, created_at))';

/** One page of runs; call it inside a transaction, so the runs and their sink writes agree. */
export function listRuns(statements: Statements, query: CheckedRunQuery): AxEventRunPage {
  const rows = statements(
    `SELECT * FROM (SELECT *, ${LAST_UPDATE} AS last_update FROM {deliveries} WHERE kind = 'event')
     WHERE (@statuses IS NULL OR status IN (SELECT value FROM json_each(@statuses)))
       AND (@route IS NULL OR route_id = @route)
       AND (@target IS NULL OR target_id = @target)
       AND (@at IS NULL OR last_update < @at OR (last_update = @at AND run_id < @id))
     ORDER BY last_update DESC, run_id DESC LIMIT @limit`,
  ).all({
    statuses: query.statuses === null ? null : JSON.stringify(query.statuses),
    route: query.routeId,
    target: query.targetId,
    at: query.before?.at ?? null,
    id: query.before?.id ?? null,
    // One more than the page: whether a next page exists.
    limit: query.limit + 1,
  }) as Row[];
  const page = rows.slice(0, query.limit);
  const sinks = new Map<string, AxEventDelivery[]>();
  if (page.length > 0) {
    const sinkRows = statements(
      `SELECT * FROM {deliveries} WHERE kind = 'sink' AND run_id IN (SELECT value FROM json_each(?))
       ORDER BY seq`,
    ).all(JSON.stringify(page.map((r) => r.run_id))) as Row[];
    for (const row of sinkRows) {
      const sink = toDelivery(row);
      const list = sinks.get(sink.runId) ?? [];
      list.push(sink);
      sinks.set(sink.runId, list);
    }
  }
  const runs = page.map((row) => {
    const d = toDelivery(row);
    return deliveryToRun(d, sinks.get(d.runId) ?? []);
  });
  const last = page[page.length - 1];
  if (rows.length <= query.limit || !last) return { runs };
  const position: RunPosition = { at: last.last_update as number, id: last.run_id as string };
  return { runs, next: encodeCursor(position) };
}

/** Up to `limit` continuations, newest first, expired ones (not yet pruned) marked. */
export function listContinuations(
  statements: Statements,
  input: { now: number; limit: number },
): AxEventContinuationListing[] {
  const rows = statements('SELECT * FROM {continuations} ORDER BY created_at DESC, id DESC LIMIT ?').all(
    input.limit,
  ) as Row[];
  return rows.map((row) => {
    const c = toContinuation(row);
    return { ...c, expired: isExpired(c, input.now) };
  });
}
