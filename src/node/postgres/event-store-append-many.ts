/**
 * Appending a batch to the PostgreSQL event store: every event with its deliveries in one
 * statement (one round trip), one wake-up for the batch. A batch with a coalescing delivery
 * is appended item by item instead (each item one transaction, as `append` does it).
 * Internal to `AxPostgresEventStore`.
 */
import { AxEventInputError } from '../../events/errors.js';
import type {
  AxEventAppendItem,
  AxEventAppendManyInput,
  AxEventAppendResult,
  AxEventDedupeKey,
} from '../../events/store.js';
import { toPgText as t } from './connection.js';
import { type AppendingStore, appendEvent } from './event-store-append.js';
import { laterDue, parse, type Row } from './event-store-rows.js';
import { APPEND_MANY, draftRow, KNOWN_MANY } from './event-store-sql.js';

/** One string per dedupe key, told apart by the lengths of its first two parts. */
const dedupeKey = (d: AxEventDedupeKey) =>
  `${d.scope.length}:${d.source.length}:${d.scope}${d.source}${d.id}`;

/** The recorded delivery ids of these dedupe keys, by index into `items` (missing when unknown). */
async function knownIds(store: AppendingStore, items: AxEventAppendItem[]): Promise<Map<number, string[]>> {
  const known = new Map<number, string[]>();
  if (items.length === 0) return known;
  const result = await store.tables.query(KNOWN_MANY, [
    items.map((x) => t(x.dedupe.scope)),
    items.map((x) => t(x.dedupe.source)),
    items.map((x) => t(x.dedupe.id)),
  ]);
  for (const row of result.rows) known.set((row.n as number) - 1, parse<string[]>(row.delivery_ids) ?? []);
  return known;
}

/** Appends a batch: one result per item, in order (see `AxEventStore.appendMany`). */
export async function appendEvents(
  store: AppendingStore,
  input: AxEventAppendManyInput,
): Promise<AxEventAppendResult[]> {
  if (input.items.some((item) => item.deliveries.some((d) => d.coalesceKey !== null))) {
    return appendOneByOne(store, input);
  }
  // A later item with the key of an earlier one is that item's duplicate: only the first goes in.
  const first = new Map<string, number>();
  const unique: number[] = [];
  const alias = input.items.map((item, i) => {
    const key = dedupeKey(item.dedupe);
    const seen = first.get(key);
    if (seen !== undefined) return seen;
    first.set(key, i);
    unique.push(i);
    return i;
  });
  const results = new Map<number, AxEventAppendResult>();
  // An oversized event refuses the batch unless it is already known (then it is a duplicate).
  const large = unique.filter((i) => (input.items[i] as AxEventAppendItem).event.bytes > store.maxEventBytes);
  if (large.length > 0) {
    const known = await knownIds(
      store,
      large.map((i) => input.items[i] as AxEventAppendItem),
    );
    for (const [n, i] of large.entries()) {
      const ids = known.get(n);
      if (!ids)
        throw new AxEventInputError('event_too_large', `The event exceeds ${store.maxEventBytes} bytes`);
      results.set(i, { status: 'duplicate', deliveryIds: ids });
    }
  }
  let todo = unique.filter((i) => !results.has(i));
  let made = 0;
  for (let round = 0; todo.length > 0; round++) {
    const items = todo.map((i) => input.items[i] as AxEventAppendItem);
    const row = (await store.tables.query(APPEND_MANY, statementValues(store, items, input.now)))
      .rows[0] as Row;
    const written = new Set((row.appended as number[]).map((n) => todo[n - 1] as number));
    for (const i of written) {
      const item = input.items[i] as AxEventAppendItem;
      results.set(i, { status: 'appended', deliveryIds: item.deliveries.map((d) => d.id) });
      made += item.deliveries.length;
    }
    const rest = todo.filter((i) => !written.has(i));
    const known = await knownIds(
      store,
      rest.map((i) => input.items[i] as AxEventAppendItem),
    );
    for (const [n, i] of rest.entries()) {
      const ids = known.get(n);
      if (ids) results.set(i, { status: 'duplicate', deliveryIds: ids });
    }
    const unknown = rest.filter((i) => !results.has(i));
    if (row.room !== true && unknown.length > 0) {
      // The room was counted with the known items too: the unknown ones may still fit, once.
      const needed = unknown.reduce((n, i) => n + (input.items[i] as AxEventAppendItem).deliveries.length, 0);
      const pending = await store.countPending();
      if (round > 0 || pending + needed > store.maxPendingDeliveries) {
        for (const i of unknown) results.set(i, { status: 'full', reason: `${pending} pending deliveries` });
        break;
      }
    }
    // Otherwise a conflicting dedupe key was pruned in between: try those again.
    todo = unknown;
  }
  if (made > 0)
    store.wake(
      made,
      laterDue(
        input.items.flatMap((item) => item.deliveries),
        input.now,
      ),
    );
  return alias.map((i, j) => {
    const result = results.get(i) as AxEventAppendResult;
    if (i === j || result.status === 'full') return result;
    return { status: 'duplicate', deliveryIds: [...result.deliveryIds] };
  });
}

function statementValues(store: AppendingStore, items: AxEventAppendItem[], now: number): unknown[] {
  let drafts = 0;
  const rows = items.map((x, i) => ({
    scope: t(x.dedupe.scope),
    source: t(x.dedupe.source),
    event_id: t(x.dedupe.id),
    delivery_ids: JSON.stringify(x.deliveries.map((d) => d.id)),
    key: t(x.event.key),
    event_scope: t(x.event.scope),
    ingress: x.ingressText ?? JSON.stringify(x.event.ingress),
    bytes: x.event.bytes,
    received_at: x.event.receivedAt,
    n: x.deliveries.length,
    item: i + 1,
  }));
  const deliveries: Record<string, unknown>[] = [];
  for (const [i, x] of items.entries()) {
    for (const d of x.deliveries) {
      const row = draftRow(d);
      row.item = i + 1;
      row.ord = ++drafts;
      deliveries.push(row);
    }
  }
  return [now, drafts, store.maxPendingDeliveries, JSON.stringify(rows), JSON.stringify(deliveries)];
}

/** Item by item, stopping at the first full one (the rest are full too: not written). */
async function appendOneByOne(
  store: AppendingStore,
  input: AxEventAppendManyInput,
): Promise<AxEventAppendResult[]> {
  const results: AxEventAppendResult[] = [];
  for (const item of input.items) {
    const last = results.at(-1);
    if (last?.status === 'full') {
      results.push(last);
      continue;
    }
    results.push(await appendEvent(store, { ...item, now: input.now }));
  }
  return results;
}
