/** What becomes of a run: output and sink writes, dead letters and their redrive, cancellation, pruning. */
import {
  type Case,
  check,
  claimOne,
  continuation,
  draft,
  publish,
  publishAndClaim,
  same,
  uid,
} from './kit.js';

export const runCases: Case[] = [
  [
    'saves output, creates sink writes on success, and shows them on the run',
    async (store) => {
      const { id, c } = await publishAndClaim(store);
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
      const { id, c } = await publishAndClaim(store);
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
    'redrives a dead-lettered sink write without touching the run',
    async (store) => {
      const { id, c } = await publishAndClaim(store);
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
    'prunes expired continuations and old finished runs',
    async (store) => {
      const { id, c } = await publishAndClaim(store);
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
