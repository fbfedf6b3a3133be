/**
 * Appending batches (`appendMany`): order within an ordering key follows the batch, duplicates
 * within a batch and against earlier events are recognized, an empty batch is fine, and a
 * batch lands exactly like its events appended one by one. A store without `appendMany` is
 * held to the same through `append`, as the runtime would call it.
 */
import type { AxEventAppendItem, AxEventAppendResult, AxEventStore } from '../../events/store.js';
import { type Case, check, draft, same, storedEvent, uid } from './kit.js';

async function appendBatch(store: AxEventStore, items: AxEventAppendItem[], now = 0) {
  if (store.appendMany) {
    const results = await store.appendMany({ items, now });
    same(results.length, items.length, 'one result per item');
    return results;
  }
  const results: AxEventAppendResult[] = [];
  for (const item of items) results.push(await store.append({ ...item, now }));
  return results;
}

function item(id: string, deliveries = [draft()], scope = 'anonymous', source = 'test://kit') {
  return { dedupe: { scope, source, id }, event: storedEvent(id, scope), deliveries };
}

/** Claims everything, one head per ordering key at a time, finishing each; returns the ids in claim order. */
async function drain(store: AxEventStore): Promise<string[]> {
  const order: string[] = [];
  for (let round = 0; round < 100; round++) {
    const claims = await store.claim({ workerId: 'w1', now: round, leaseMs: 1000, limit: 100 });
    if (claims.length === 0) return order;
    for (const c of claims) {
      order.push(c.delivery.id);
      const done = await store.transition({
        deliveryId: c.delivery.id,
        fencingToken: c.delivery.fencingToken,
        now: round,
        status: 'succeeded',
      });
      check(done, 'transition');
    }
  }
  throw new Error('the store never ran dry');
}

export const batchCases: Case[] = [
  [
    'appends a batch with the order of its items within an ordering key',
    async (store) => {
      const drafts = [1, 2, 3, 4].map(() => draft({ orderingKey: 'batch-k' }));
      const results = await appendBatch(
        store,
        drafts.map((d) => item(uid('e'), [d])),
      );
      same(
        results.map((r) => r.status),
        ['appended', 'appended', 'appended', 'appended'],
        'statuses',
      );
      same(await store.countPending(), 4, 'pending');
      const first = await store.claim({ workerId: 'w1', now: 0, leaseMs: 1000, limit: 10 });
      same(
        first.map((c) => c.delivery.id),
        [drafts[0]?.id],
        'only the first of the key is claimable',
      );
      await store.transition({
        deliveryId: first[0]?.delivery.id as string,
        fencingToken: first[0]?.delivery.fencingToken as number,
        now: 1,
        status: 'succeeded',
      });
      same(
        [first[0]?.delivery.id, ...(await drain(store))],
        drafts.map((d) => d.id),
        'claimed in batch order',
      );
    },
  ],
  [
    'dedupes within a batch and against earlier events',
    async (store) => {
      const old = item(uid('e'), [draft()]);
      const earlier = await store.append({ ...old, now: 0 });
      check(earlier.status === 'appended', 'the earlier event is appended');
      const id = uid('e');
      const a = item(id, [draft(), draft()]);
      const results = await appendBatch(store, [
        a,
        item(old.dedupe.id, [draft()]),
        item(id, [draft()]),
        item(uid('e'), []),
        item(id, [draft()], 'id:t/a/u/s'),
      ]);
      same(
        results.map((r) => r.status),
        ['appended', 'duplicate', 'duplicate', 'appended', 'appended'],
        'statuses',
      );
      same(
        results[0]?.status === 'full' ? [] : results[0]?.deliveryIds,
        a.deliveries.map((d) => d.id),
        'ids',
      );
      same(
        results[1]?.status === 'full' ? null : results[1]?.deliveryIds,
        earlier.deliveryIds,
        'a duplicate of an earlier event has its ids',
      );
      same(
        results[2]?.status === 'full' ? null : results[2]?.deliveryIds,
        a.deliveries.map((d) => d.id),
        'a duplicate within the batch has the first one’s ids',
      );
      same(await store.countPending(), 1 + 2 + 1, 'pending: earlier, first of the batch, other scope');
      const again = await appendBatch(store, [item(id, [draft()]), item(id, [draft()], 'id:t/a/u/s')]);
      same(
        again.map((r) => r.status),
        ['duplicate', 'duplicate'],
        'the whole batch again is duplicates',
      );
    },
  ],
  [
    'takes an empty batch',
    async (store) => {
      same(await appendBatch(store, []), [], 'no results');
      same(await store.countPending(), 0, 'nothing pending');
      same(await store.claim({ workerId: 'w1', now: 0, leaseMs: 1000, limit: 10 }), [], 'nothing to claim');
    },
  ],
  [
    'lands a batch mixing keys and identities like the same events appended one by one',
    async (store) => {
      const shape = [
        { key: 'k1', scope: 'anonymous' },
        { key: 'k2', scope: 'id:t/a/u/s' },
        { key: 'k1', scope: 'id:t/a/u/s' },
        { key: null, scope: 'anonymous' },
        { key: 'k2', scope: 'anonymous' },
        { key: 'k1', scope: 'anonymous' },
      ];
      const build = (tag: string) =>
        shape.map((s, i) =>
          item(
            `same-${i % 4}`,
            [draft({ orderingKey: s.key && `${tag}:${s.key}` })],
            s.scope,
            `test://${tag}`,
          ),
        );
      const single = build('single');
      const batch = build('batch');
      const one: AxEventAppendResult[] = [];
      for (const x of single) one.push(await store.append({ ...x, now: 0 }));
      const many = await appendBatch(store, batch);
      same(
        many.map((r) => r.status),
        one.map((r) => r.status),
        'same statuses',
      );
      const position = (items: AxEventAppendItem[], results: AxEventAppendResult[]) =>
        results.map((r) =>
          r.status === 'full' ? -1 : items.findIndex((x) => x.deliveries[0]?.id === r.deliveryIds[0]),
        );
      same(position(batch, many), position(single, one), 'same delivery ids, by position');
      const order = await drain(store);
      const perKey = (items: AxEventAppendItem[], tag: string) =>
        ['k1', 'k2'].map((k) =>
          order.flatMap((id) => {
            const i = items.findIndex((x) => x.deliveries[0]?.id === id);
            return i >= 0 && items[i]?.deliveries[0]?.orderingKey === `${tag}:${k}` ? [i] : [];
          }),
        );
      same(perKey(batch, 'batch'), perKey(single, 'single'), 'same order per ordering key');
      same(perKey(batch, 'batch'), [[0, 2, 5], [1]], 'batch order per ordering key');
    },
  ],
];
