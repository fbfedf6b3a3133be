/** Appending events and claiming their deliveries: dedupe, due times, ordering, fencing tokens, coalescing, lease recovery. */
import { type Case, check, claimOne, draft, publish, same, storedEvent } from './kit.js';

export const deliveryCases: Case[] = [
  [
    'dedupes on (scope, source, id) and returns the original delivery ids',
    async (store) => {
      const event = storedEvent('same');
      const dedupe = { scope: 'anonymous', source: 'test://kit', id: 'same' };
      const first = await store.append({ dedupe, event, deliveries: [draft(), draft()], now: 0 });
      const again = await store.append({ dedupe, event: storedEvent('same'), deliveries: [draft()], now: 1 });
      check(first.status === 'appended' && again.status === 'duplicate', 'second append is a duplicate');
      same(again.deliveryIds, first.deliveryIds, 'duplicate returns original ids');
      const otherScope = await store.append({
        dedupe: { ...dedupe, scope: 'id:t///' },
        event: storedEvent('same', 'id:t///'),
        deliveries: [draft()],
        now: 0,
      });
      const otherSource = await store.append({
        dedupe: { ...dedupe, source: 'x' },
        event,
        deliveries: [],
        now: 0,
      });
      check(otherScope.status === 'appended', 'another scope is not a duplicate');
      check(otherSource.status === 'appended', 'another source is not a duplicate');
      same(await store.countPending(), 3, 'pending deliveries');
    },
  ],
  [
    'records an event with no deliveries for dedupe',
    async (store) => {
      const dedupe = { scope: 'anonymous', source: 'test://kit', id: 'lonely' };
      const a = await store.append({ dedupe, event: storedEvent('lonely'), deliveries: [], now: 0 });
      const b = await store.append({ dedupe, event: storedEvent('lonely'), deliveries: [], now: 0 });
      same([a.status, b.status], ['appended', 'duplicate'], 'statuses');
      same(await store.countPending(), 0, 'nothing pending');
    },
  ],
  [
    'claims due deliveries only, with attempt and fencing token increments',
    async (store) => {
      const [early, late] = await publish(store, [draft({ dueAt: 0 }), draft({ dueAt: 500 })]);
      const claims = await store.claim({ workerId: 'w1', now: 100, leaseMs: 1000, limit: 10 });
      same(
        claims.map((c) => c.delivery.id),
        [early],
        'only the due delivery is claimed',
      );
      const c = claims[0];
      check(c, 'claim');
      same([c.delivery.status, c.delivery.attempt, c.recovered], ['claimed', 1, false], 'claim fields');
      check(c.event?.ingress.event.type === 'kit.test', 'claim carries the event');
      same(await store.nextDueAt(), 500, 'next due is the debounced delivery (lease ends later)');
      const later = await store.claim({ workerId: 'w1', now: 500, leaseMs: 1000, limit: 10 });
      same(
        later.map((x) => x.delivery.id),
        [late],
        'the late one becomes claimable',
      );
      check(later[0] && later[0].delivery.fencingToken > 0, 'fencing token set');
    },
  ],
  [
    'keeps strict order per ordering key, and none for relaxed deliveries',
    async (store) => {
      const [a] = await publish(store, [draft({ orderingKey: 'k' })]);
      const [b] = await publish(store, [draft({ orderingKey: 'k' })]);
      const [r1] = await publish(store, [draft()]);
      const [r2] = await publish(store, [draft()]);
      const first = await store.claim({ workerId: 'w1', now: 0, leaseMs: 1000, limit: 10 });
      same(first.map((c) => c.delivery.id).sort(), [a, r1, r2].sort(), 'first batch');
      same(await store.claim({ workerId: 'w1', now: 0, leaseMs: 1000, limit: 10 }), [], 'b waits for a');
      const ca = first.find((c) => c.delivery.id === a);
      check(ca, 'a claimed');
      check(
        await store.transition({
          deliveryId: a as string,
          fencingToken: ca.delivery.fencingToken,
          now: 1,
          status: 'failed',
          dueAt: 50,
        }),
        'a failed',
      );
      same(
        await store.claim({ workerId: 'w1', now: 10, leaseMs: 1000, limit: 10 }),
        [],
        'a retrying still blocks b',
      );
      const retry = await claimOne(store, 50);
      same(retry?.delivery.id, a, 'a retried first');
      same(retry?.delivery.attempt, 2, 'second attempt');
      check(retry, 'retry');
      await store.transition({
        deliveryId: a as string,
        fencingToken: retry.delivery.fencingToken,
        now: 60,
        status: 'succeeded',
      });
      same((await claimOne(store, 60))?.delivery.id, b, 'b after a is terminal');
    },
  ],
  [
    'rejects transitions and heartbeats with a stale fencing token',
    async (store) => {
      await publish(store, [draft()]);
      const c = await claimOne(store, 0, 100);
      check(c, 'claim');
      const token = c.delivery.fencingToken;
      same(
        await store.heartbeat({ deliveryId: c.delivery.id, fencingToken: token, leaseUntil: 150 }),
        { held: true, cancelRequested: false },
        'heartbeat',
      );
      same(await claimOne(store, 120), undefined, 'lease extended by heartbeat');
      const recovered = await claimOne(store, 150);
      check(
        recovered?.recovered === true && recovered.previousStatus === 'claimed',
        'recovered after expiry',
      );
      check(recovered.delivery.fencingToken > token, 'new fencing token');
      const stale = await store.transition({
        deliveryId: c.delivery.id,
        fencingToken: token,
        now: 151,
        status: 'succeeded',
      });
      check(!stale, 'stale transition rejected');
      const beat = await store.heartbeat({ deliveryId: c.delivery.id, fencingToken: token, leaseUntil: 999 });
      check(!beat.held, 'stale heartbeat rejected');
      const fresh = recovered.delivery.fencingToken;
      check(
        await store.transition({
          deliveryId: c.delivery.id,
          fencingToken: fresh,
          now: 152,
          status: 'running',
        }),
        'running',
      );
      const again = await claimOne(store, 152 + 1000);
      same(again?.previousStatus, 'running', 'a crashed run is recovered as running');
      same(again?.delivery.attempt, 3, 'attempts count claims');
    },
  ],
  [
    'coalesces a queued delivery in place',
    async (store) => {
      const [first] = await publish(store, [draft({ coalesceKey: 'c', dueAt: 100 })], 0);
      const [second] = await publish(store, [draft({ coalesceKey: 'c', dueAt: 150 })], 50);
      same(second, first, 'same delivery id');
      same(await store.countPending(), 1, 'one pending');
      same(await store.claim({ workerId: 'w', now: 120, leaseMs: 10, limit: 5 }), [], 'timer restarted');
      const c = await claimOne(store, 150);
      same(c?.delivery.id, first, 'claimed at the new due time');
      const [third] = await publish(store, [draft({ coalesceKey: 'c', dueAt: 200 })], 160);
      check(third !== first, 'a claimed delivery is not coalesced');
    },
  ],
  [
    'takes back every lease on recoverLeases',
    async (store) => {
      await publish(store, [draft(), draft()]);
      const claims = await store.claim({ workerId: 'w1', now: 0, leaseMs: 60_000, limit: 5 });
      same(claims.length, 2, 'two claimed');
      same(await store.recoverLeases({ now: 10 }), 2, 'two recovered');
      const again = await store.claim({ workerId: 'w2', now: 10, leaseMs: 60_000, limit: 5 });
      check(again.length === 2 && again.every((c) => c.recovered), 'claimable again as recovered');
    },
  ],
];
