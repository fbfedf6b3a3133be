import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AxManualEventClock } from './clock.js';
import { type AxEventIdentity, type AxEventTrust, identityScope } from './envelope.js';
import { AxMemoryEventStore } from './memory-store.js';
import { eventPath } from './path.js';
import type { AxEventRouteDefinition } from './route.js';
import { eventRoute } from './route-builder.js';
import { eventRuntime } from './runtime.js';
import { eventTarget } from './target-builder.js';

const part = fc.option(fc.constantFrom('a', 'b', 'a/b', '%2F', 'ü'), { nil: undefined });
// Anonymous identities are drawn as often as attributed ones.
const identity: fc.Arbitrary<AxEventIdentity> = fc.oneof(
  fc.constant({}),
  fc
    .record({ tenantId: part, accountId: part, userId: part, sessionId: part })
    .map((i) => Object.fromEntries(Object.entries(i).filter(([, v]) => v !== undefined))),
);
const trust: fc.Arbitrary<AxEventTrust | undefined> = fc.constantFrom(
  'trusted',
  'authenticated',
  'untrusted',
  undefined,
);

function runtimeWith(routes: AxEventRouteDefinition[]) {
  return eventRuntime({
    routes,
    clock: new AxManualEventClock(0),
    store: new AxMemoryEventStore({ maxPendingDeliveries: 100_000 }),
    scheduling: 'host',
  });
}

describe('properties', () => {
  it('anonymous or untrusted events never reach an authenticated route', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(identity, trust), { minLength: 1, maxLength: 12 }),
        async (events) => {
          const reached: string[] = [];
          const target = eventTarget('t')
            .invoke((_i, ctx) => void reached.push(ctx.event.id))
            .build();
          const runtime = runtimeWith([
            eventRoute('secure').types('x').authenticated().wake(target).build(),
            eventRoute('secure-obs')
              .types('x')
              .requireAuthenticated()
              .observe((i) => void reached.push(i.event.id))
              .build(),
          ]);
          const allowed = new Set<string>();
          for (const [index, [id, t]] of events.entries()) {
            const eventId = `e${index}`;
            const receipt = await runtime.publish({
              event: { id: eventId, source: 's', type: 'x' },
              identity: id,
              trust: t,
            });
            const anonymous = identityScope(id) === 'anonymous';
            const untrusted = t === undefined || t === 'untrusted';
            if (anonymous || untrusted) expect(receipt.deliveryIds).toEqual([]);
            else allowed.add(eventId);
          }
          await runtime.runDue();
          for (const eventId of reached) expect(allowed.has(eventId)).toBe(true);
          expect(reached.length).toBe(allowed.size * 2);
          await runtime.close();
        },
      ),
      { numRuns: 60 },
    );
  });

  it('resume never crosses identity scopes', async () => {
    await fc.assert(
      fc.asyncProperty(
        identity,
        fc.array(fc.tuple(identity, fc.constantFrom('k1', 'k2')), { minLength: 1, maxLength: 6 }),
        async (owner, attempts) => {
          const resumedBy: string[] = [];
          const target = eventTarget('owner')
            .waitFor('job', eventPath.data('job'))
            .invoke((_i, ctx) => {
              if (ctx.action === 'resume') resumedBy.push(ctx.identityScope);
            })
            .build();
          const runtime = runtimeWith([
            eventRoute('w').types('start').wake(target).build(),
            eventRoute('r').types('done').correlate('job', eventPath.data('job')).resume().build(),
          ]);
          await runtime.publish({
            event: { id: 'w', source: 's', type: 'start', data: { job: 'k1' } },
            identity: owner,
          });
          await runtime.runDue();
          for (const [index, [who, job]] of attempts.entries()) {
            const event = { id: `r${index}`, source: 's', type: 'done', data: { job } };
            await runtime.publish({ event, identity: who });
            await runtime.runDue();
          }
          const ownerScope = identityScope(owner);
          for (const scope of resumedBy) expect(scope).toBe(ownerScope);
          const eligible = attempts.some(([who, job]) => job === 'k1' && identityScope(who) === ownerScope);
          expect(resumedBy.length).toBe(eligible ? 1 : 0);
          await runtime.close();
        },
      ),
      { numRuns: 60 },
    );
  });

  it('dedupe never drops a distinct event', async () => {
    const key = fc.tuple(identity, fc.constantFrom('s1', 's2', 's1/'), fc.constantFrom('1', '2', '3'));
    await fc.assert(
      fc.asyncProperty(fc.array(key, { minLength: 1, maxLength: 30 }), async (keys) => {
        const seen: string[] = [];
        const route = eventRoute('all')
          .match(() => true)
          .observe((i) => void seen.push(i.event.id))
          .build();
        const runtime = runtimeWith([route]);
        const distinct = new Map<string, number>();
        for (const [id, source, eventId] of keys) {
          const k = JSON.stringify([identityScope(id), source, eventId]);
          const receipt = await runtime.publish({ event: { id: eventId, source, type: 't' }, identity: id });
          expect(receipt.duplicate).toBe(distinct.has(k));
          distinct.set(k, (distinct.get(k) ?? 0) + 1);
        }
        await runtime.runDue();
        expect(seen.length).toBe(distinct.size);
        await runtime.close();
      }),
      { numRuns: 80 },
    );
  });
});
