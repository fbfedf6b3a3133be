/** Continuations: scoped, expiring, fenced and conflict-free; consumed by a resume; dropped with their run. */
import { type Case, check, claimOne, continuation, draft, publish, publishAndClaim, same } from './kit.js';

export const continuationCases: Case[] = [
  [
    'scopes continuations, expires them, and refuses conflicts',
    async (store) => {
      const { id, c } = await publishAndClaim(store);
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
];
