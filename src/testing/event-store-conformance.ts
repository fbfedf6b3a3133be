/**
 * The event store conformance kit. Run it in your own test suite against any
 * `EventStore` implementation:
 *
 * ```ts
 * import { describe, it } from 'vitest';
 * import { runEventStoreConformance } from 'ax-mcp/testing';
 * runEventStoreConformance({ name: 'my store', describe, it, create: () => new MyStore() });
 * ```
 *
 * It takes `describe`/`it` from your runner (vitest, jest or `node:test`) and asserts with
 * plain thrown errors, so it depends on no test library.
 */

import { normalizeIngress } from '../events/envelope.js';
import type {
  AxEventContinuation,
  AxEventDeliveryDraft,
  AxEventStoredEvent,
  EventStore,
} from '../events/store.js';

/** Options of {@link runEventStoreConformance}. */
export interface EventStoreConformanceOptions {
  /** Suite name. Default `EventStore conformance`. */
  name?: string;
  /** Your runner's `describe`. */
  describe: (name: string, fn: () => void) => unknown;
  /** Your runner's `it`. */
  it: (name: string, fn: () => Promise<void>) => unknown;
  /** A fresh, empty store for every test. */
  create: () => EventStore | Promise<EventStore>;
  /** Dispose of a store after its test. Default: `store.close()`. */
  dispose?: (store: EventStore) => void | Promise<void>;
}

class ConformanceError extends Error {}

function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new ConformanceError(message);
}

function same(actual: unknown, expected: unknown, message: string): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new ConformanceError(`${message}: expected ${e}, got ${a}`);
}

let counter = 0;
const uid = (prefix: string) => `${prefix}_${++counter}_${Math.random().toString(36).slice(2, 8)}`;

/** A stored event for `append` (scope `anonymous` unless given). */
function storedEvent(id = uid('e'), scope = 'anonymous'): AxEventStoredEvent {
  const { record, bytes } = normalizeIngress({
    event: { id, source: 'test://kit', type: 'kit.test', data: { n: 1 } },
  });
  return { key: uid('evt'), scope, ingress: record, bytes, receivedAt: 0 };
}

function draft(overrides: Partial<AxEventDeliveryDraft> = {}): AxEventDeliveryDraft {
  return {
    id: uid('dlv'),
    runId: uid('run'),
    routeId: 'route',
    action: 'wake',
    targetId: 'target',
    instanceKey: 'i',
    orderingKey: null,
    dueAt: 0,
    coalesceKey: null,
    correlation: null,
    planError: null,
    ...overrides,
  };
}

async function publish(store: EventStore, deliveries: AxEventDeliveryDraft[], now = 0, scope = 'anonymous') {
  const event = storedEvent(undefined, scope);
  const result = await store.append({
    dedupe: { scope, source: 'test://kit', id: event.ingress.event.id },
    event,
    deliveries,
    now,
  });
  check(result.status === 'appended', `append should succeed, got ${result.status}`);
  return result.deliveryIds;
}

function continuation(overrides: Partial<AxEventContinuation>): AxEventContinuation {
  return {
    id: uid('cont'),
    scope: 'id:t/a/u/s',
    kind: 'task',
    value: 'v1',
    targetId: 'target',
    instanceKey: 'i',
    runId: 'run',
    deliveryId: 'dlv',
    expiresAt: null,
    metadata: { step: 1 },
    createdAt: 0,
    ...overrides,
  };
}

const claimOne = async (store: EventStore, now = 0, leaseMs = 1000) => {
  const [claim] = await store.claim({ workerId: 'w1', now, leaseMs, limit: 1 });
  return claim;
};

type Case = [string, (store: EventStore) => Promise<void>];

const cases: Case[] = [
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
    'saves output, creates sink writes on success, and shows them on the run',
    async (store) => {
      const [id] = await publish(store, [draft()]);
      const c = await claimOne(store);
      check(c && id, 'claim');
      await store.transition({
        deliveryId: id,
        fencingToken: c.delivery.fencingToken,
        now: 1,
        status: 'running',
        startedAt: 1,
      });
      const ok = await store.transition({
        deliveryId: id,
        fencingToken: c.delivery.fencingToken,
        now: 2,
        status: 'succeeded',
        output: { answer: 42 },
        sinks: [{ id: uid('dlv'), sinkId: 'log' }],
      });
      check(ok, 'success recorded');
      const run = await store.getRun(c.delivery.runId);
      same(
        [run?.status, run?.output, run?.startedAt, run?.finishedAt],
        ['succeeded', { answer: 42 }, 1, 2],
        'run',
      );
      same(
        run?.sinks.map((s) => [s.sinkId, s.status]),
        [['log', 'queued']],
        'sink queued',
      );
      same((await store.getRun(id))?.id, c.delivery.runId, 'getRun by delivery id');
      const sink = await claimOne(store, 3);
      same(
        [sink?.delivery.kind, sink?.delivery.sinkId, sink?.delivery.runId],
        ['sink', 'log', c.delivery.runId],
        'sink claim',
      );
      check(sink, 'sink');
      await store.transition({
        deliveryId: sink.delivery.id,
        fencingToken: sink.delivery.fencingToken,
        now: 4,
        status: 'succeeded',
      });
      same((await store.getRun(id))?.sinks[0]?.status, 'succeeded', 'sink done');
      same(await store.countPending(), 0, 'nothing pending');
    },
  ],
  [
    'records dead letters and redrives them with fresh attempts',
    async (store) => {
      const [id] = await publish(store, [draft()]);
      const c = await claimOne(store);
      check(c && id, 'claim');
      await store.transition({
        deliveryId: id,
        fencingToken: c.delivery.fencingToken,
        now: 5,
        status: 'dead_lettered',
        error: { code: 'boom', name: 'Error', message: 'boom' },
        deadLetter: { id: 'dl1', reason: 'max_attempts' },
      });
      const letters = await store.listDeadLetters();
      same(
        letters.map((l) => [l.id, l.kind, l.deliveryId, l.reason, l.error?.code]),
        [['dl1', 'delivery', id, 'max_attempts', 'boom']],
        'dead letter',
      );
      same(await store.redrive({ deadLetterId: 'dl1', now: 10 }), id, 'redrive returns the delivery');
      same(await store.listDeadLetters(), [], 'dead letter retired');
      same(await store.redrive({ deadLetterId: 'dl1', now: 10 }), null, 'unknown dead letter');
      const again = await claimOne(store, 10);
      same([again?.delivery.id, again?.delivery.attempt], [id, 1], 'attempts start again');
    },
  ],
  [
    'scopes continuations, expires them, and refuses conflicts',
    async (store) => {
      const [id] = await publish(store, [draft()]);
      const c = await claimOne(store);
      check(c && id, 'claim');
      const token = c.delivery.fencingToken;
      const mine = continuation({ deliveryId: id, runId: c.delivery.runId, expiresAt: 100 });
      check(
        await store.putContinuations({ deliveryId: id, fencingToken: token, now: 0, continuations: [mine] }),
        'put',
      );
      const found = await store.findContinuation({ scope: mine.scope, kind: 'task', value: 'v1', now: 50 });
      same([found?.id, found?.metadata], [mine.id, { step: 1 }], 'found in scope');
      same(
        await store.findContinuation({ scope: 'anonymous', kind: 'task', value: 'v1', now: 50 }),
        null,
        'other scope',
      );
      same(
        await store.findContinuation({ scope: mine.scope, kind: 'task', value: 'v1', now: 100 }),
        null,
        'expired',
      );
      check(
        !(await store.putContinuations({
          deliveryId: id,
          fencingToken: token + 99,
          now: 0,
          continuations: [],
        })),
        'fenced',
      );
      const [other] = await publish(store, [draft()]);
      const oc = await claimOne(store);
      check(oc && other, 'claim other');
      let conflict: unknown;
      try {
        await store.putContinuations({
          deliveryId: other,
          fencingToken: oc.delivery.fencingToken,
          now: 50,
          continuations: [continuation({ deliveryId: other, scope: mine.scope })],
        });
      } catch (error) {
        conflict = error;
      }
      check(
        (conflict as { code?: unknown } | undefined)?.code === 'continuation_conflict',
        'a live conflict throws an error with code continuation_conflict',
      );
      const late = continuation({ deliveryId: other, scope: mine.scope });
      const put = {
        deliveryId: other,
        fencingToken: oc.delivery.fencingToken,
        now: 150,
        continuations: [late],
      };
      check(await store.putContinuations(put), 'an expired continuation is replaced');
      same(
        (await store.findContinuation({ scope: mine.scope, kind: 'task', value: 'v1', now: 150 }))?.id,
        late.id,
        'new',
      );
    },
  ],
  [
    'consuming the last continuation completes the waiting run',
    async (store) => {
      const [wake] = await publish(store, [draft()]);
      const w = await claimOne(store);
      check(w && wake, 'claim wake');
      const cont = continuation({ deliveryId: wake, runId: w.delivery.runId });
      await store.putContinuations({
        deliveryId: wake,
        fencingToken: w.delivery.fencingToken,
        now: 0,
        continuations: [cont],
      });
      await store.transition({
        deliveryId: wake,
        fencingToken: w.delivery.fencingToken,
        now: 1,
        status: 'waiting_event',
      });
      same((await store.getRun(wake))?.continuationIds, [cont.id], 'continuation ids on the run');
      const [resume] = await publish(store, [
        draft({ action: 'resume', correlation: { kind: 'task', value: 'v1' } }),
      ]);
      const r = await claimOne(store, 2);
      check(r && resume, 'claim resume');
      await store.transition({
        deliveryId: resume,
        fencingToken: r.delivery.fencingToken,
        now: 3,
        status: 'succeeded',
        consumeContinuationId: cont.id,
      });
      same(
        await store.findContinuation({ scope: cont.scope, kind: 'task', value: 'v1', now: 3 }),
        null,
        'consumed',
      );
      same((await store.getRun(wake))?.status, 'succeeded', 'waiting run completed');
    },
  ],
  [
    'drops continuations of dead-lettered and cancelled runs, keeps those of unknown outcomes',
    async (store) => {
      const ids = await publish(store, [draft(), draft(), draft()]);
      const claims = await store.claim({ workerId: 'w1', now: 0, leaseMs: 1000, limit: 3 });
      check(claims.length === 3, 'three claims');
      const statuses = ['dead_lettered', 'outcome_unknown', 'waiting_event'] as const;
      for (const [i, c] of claims.entries()) {
        const cont = continuation({ deliveryId: c.delivery.id, value: `v${i}` });
        await store.putContinuations({
          deliveryId: c.delivery.id,
          fencingToken: c.delivery.fencingToken,
          now: 0,
          continuations: [cont],
        });
        await store.transition({
          deliveryId: c.delivery.id,
          fencingToken: c.delivery.fencingToken,
          now: 1,
          status: statuses[ids.indexOf(c.delivery.id)] ?? 'succeeded',
        });
      }
      const live = async (v: string) =>
        (await store.findContinuation({ scope: 'id:t/a/u/s', kind: 'task', value: v, now: 2 })) !== null;
      const byStatus = new Map(claims.map((c, i) => [statuses[ids.indexOf(c.delivery.id)], `v${i}`]));
      same(await live(byStatus.get('dead_lettered') as string), false, 'dead letter drops');
      same(await live(byStatus.get('outcome_unknown') as string), true, 'unknown outcome keeps');
      same(await live(byStatus.get('waiting_event') as string), true, 'waiting keeps');
      const waiting = claims.find((c) => statuses[ids.indexOf(c.delivery.id)] === 'waiting_event');
      same(
        (await store.cancel({ id: waiting?.delivery.runId as string, now: 3 }))?.status,
        'cancelled',
        'cancel waiting',
      );
      same(await live(byStatus.get('waiting_event') as string), false, 'cancel drops');
    },
  ],
  [
    'redrives a dead-lettered sink write without touching the run',
    async (store) => {
      const [id] = await publish(store, [draft()]);
      const c = await claimOne(store);
      check(c && id, 'claim');
      await store.transition({
        deliveryId: id,
        fencingToken: c.delivery.fencingToken,
        now: 1,
        status: 'succeeded',
        output: 'out',
        sinks: [{ id: uid('dlv'), sinkId: 'hook' }],
      });
      const s = await claimOne(store, 2);
      check(s, 'sink claim');
      await store.transition({
        deliveryId: s.delivery.id,
        fencingToken: s.delivery.fencingToken,
        now: 3,
        status: 'dead_lettered',
        deadLetter: { id: 'dls', reason: 'sink_failed' },
      });
      same(
        (await store.listDeadLetters()).map((l) => [l.kind, l.sinkId, l.runId]),
        [['sink', 'hook', c.delivery.runId]],
        'sink dead letter',
      );
      same(await store.redrive({ deadLetterId: 'dls', now: 4 }), s.delivery.id, 'sink redriven');
      const again = await claimOne(store, 4);
      same([again?.delivery.kind, again?.delivery.attempt], ['sink', 1], 'sink claimable again');
      same((await store.getRun(id))?.status, 'succeeded', 'the run stays succeeded');
    },
  ],
  [
    'cancels queued runs at once and flags running ones',
    async (store) => {
      const [queued, running] = await publish(store, [draft({ dueAt: 100 }), draft()]);
      check(queued && running, 'ids');
      same((await store.cancel({ id: queued, now: 1 }))?.status, 'cancelled', 'queued cancelled');
      const c = await claimOne(store, 1);
      check(c?.delivery.id === running, 'claim running');
      same((await store.cancel({ id: c.delivery.runId, now: 2 }))?.status, 'claimed', 'still claimed');
      const beat = await store.heartbeat({
        deliveryId: running,
        fencingToken: c.delivery.fencingToken,
        leaseUntil: 999,
      });
      same(beat, { held: true, cancelRequested: true }, 'cancel is visible on heartbeat');
      same(await store.cancel({ id: 'nope', now: 2 }), null, 'unknown run');
      same(
        await store.claim({ workerId: 'w', now: 500, leaseMs: 10, limit: 5 }),
        [],
        'cancelled is never claimed',
      );
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
  [
    'prunes expired continuations and old finished runs',
    async (store) => {
      const [id] = await publish(store, [draft()]);
      const c = await claimOne(store);
      check(c && id, 'claim');
      const cont = continuation({ deliveryId: id, expiresAt: 10 });
      await store.putContinuations({
        deliveryId: id,
        fencingToken: c.delivery.fencingToken,
        now: 0,
        continuations: [cont],
      });
      await store.transition({
        deliveryId: id,
        fencingToken: c.delivery.fencingToken,
        now: 1,
        status: 'succeeded',
      });
      const result = await store.prune({ now: 20 });
      same(result.continuations, 1, 'expired continuation pruned');
      const later = await store.prune({ now: 1000 * 60 * 60 * 24 * 365 });
      check(later.deliveries >= 1, 'finished run pruned after retention');
      same(await store.getRun(id), null, 'run gone');
    },
  ],
];

/** Register the conformance suite with your test runner. */
export function runEventStoreConformance(options: EventStoreConformanceOptions): void {
  options.describe(options.name ?? 'EventStore conformance', () => {
    for (const [title, body] of cases) {
      options.it(title, async () => {
        const store = await options.create();
        try {
          await body(store);
        } finally {
          await (options.dispose ? options.dispose(store) : store.close());
        }
      });
    }
  });
}
