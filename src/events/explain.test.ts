/**
 * `runtime.explain(event, ingress)`: for every route, whether it would take the event and the
 * first reason it would not — decided by the code `publish()` routes with — without storing
 * anything or running a target. And the two forms of `.input()` giving the same deliveries.
 */
import { describe, expect, it, vi } from 'vitest';
import { AxManualEventClock } from './clock.js';
import type { AxEvent, AxEventIdentity, AxEventIngress } from './envelope.js';
import { eventInput } from './input.js';
import { AxMemoryEventStore } from './memory-store.js';
import { eventPath } from './path.js';
import type { AxEventRouteDefinition } from './route.js';
import { eventRoute } from './route-builder.js';
import { eventRuntime } from './runtime.js';
import { eventTarget } from './target-builder.js';

const alice: AxEventIdentity = { tenantId: 't1', userId: 'alice' };

function hostRuntime(routes: AxEventRouteDefinition[]) {
  const store = new AxMemoryEventStore();
  const runtime = eventRuntime({ routes, store, clock: new AxManualEventClock(1_000), scheduling: 'host' });
  return { runtime, store };
}

let n = 0;
const event = (type: string, extra: Partial<AxEvent> = {}): AxEvent => ({
  id: `e${++n}`,
  source: 'app://shop',
  type,
  ...extra,
});

describe('runtime.explain()', () => {
  const invoke = vi.fn();
  const target = eventTarget('t').invoke(invoke).build();
  const owner = eventTarget('owner').waitFor('job', eventPath.data('job')).invoke(invoke).build();
  const other = eventTarget('other').invoke(invoke).build();
  const denied = vi.fn(() => false);
  const routes = [
    eventRoute('by-type').types('order.created').wake(target).build(),
    eventRoute('by-source').types('order.*').sources('app://billing').wake(target).build(),
    eventRoute('by-subject').types('order.*').subjects('catalog').wake(target).build(),
    eventRoute('by-extension').types('order.*').extensions({ level: 'info' }).wake(target).build(),
    eventRoute('by-predicate')
      .match(() => false)
      .wake(target)
      .build(),
    eventRoute('authenticated').types('order.*').authenticated().wake(target).build(),
    eventRoute('hook').types('order.*').authorize(denied).wake(target).build(),
    eventRoute('hook-throws')
      .types('order.*')
      .authorize(() => {
        throw new Error('no tenant');
      })
      .wake(target)
      .build(),
    eventRoute('start').types('job.started').wake(owner).build(),
    eventRoute('resume')
      .types('order.*', 'job.done')
      .correlate('job', eventPath.data('job'))
      .resume()
      .build(),
    eventRoute('resume-other')
      .types('job.done')
      .correlate('job', eventPath.data('job'))
      .resume(other)
      .build(),
  ];

  it('names the first reason of every route that would not take the event, as publish() decides', async () => {
    const { runtime, store } = hostRuntime(routes);
    runtime.registerTarget(other);
    const e = event('order.updated', {
      subject: 'cart',
      extensions: { level: 'debug' },
      data: { job: 'J1' },
    });
    const why = await runtime.explain(e, { identity: alice, trust: 'untrusted' });
    const byId = Object.fromEntries(why.map((entry) => [entry.routeId, entry]));
    expect(why.map((entry) => entry.routeId)).toEqual(routes.map((route) => route.id));
    expect(byId['by-type']?.reason).toMatchObject({
      code: 'type',
      message: expect.stringContaining('order.updated'),
    });
    expect(byId['by-source']?.reason).toMatchObject({
      code: 'source',
      message: expect.stringContaining('app://billing'),
    });
    expect(byId['by-subject']?.reason).toMatchObject({
      code: 'subject',
      message: expect.stringContaining("'cart'"),
    });
    expect(byId['by-extension']?.reason?.code).toBe('extension');
    expect(byId['by-predicate']?.reason?.code).toBe('predicate');
    expect(byId.authenticated?.reason).toMatchObject({
      code: 'trust',
      message: expect.stringContaining('untrusted'),
    });
    expect(byId.hook?.reason?.code).toBe('authorize');
    expect(byId['hook-throws']?.reason).toMatchObject({
      code: 'authorize',
      message: expect.stringContaining('no tenant'),
    });
    expect(byId.start?.reason?.code).toBe('type');
    expect(byId.resume?.reason).toMatchObject({
      code: 'continuation',
      message: expect.stringContaining('J1'),
    });
    expect(byId.resume?.matches).toBe(false);
    // It published nothing and ran nothing; the same event is not a duplicate afterwards.
    expect(await store.countPending()).toBe(0);
    expect(invoke).not.toHaveBeenCalled();
    expect(denied).toHaveBeenCalledTimes(1);
    const receipt = await runtime.publish({ event: e, identity: alice, trust: 'untrusted' });
    expect(receipt.duplicate).toBe(false);
    // publish() made a delivery exactly where explain() said the route takes the event, plus the
    // resume that misses its continuation (dead-lettered, so the miss is recorded).
    expect(receipt.deliveryIds).toHaveLength(1);
    await runtime.runDue();
    expect(await runtime.getRun(receipt.deliveryIds[0] as string)).toMatchObject({
      routeId: 'resume',
      status: 'dead_lettered',
    });
    expect((await runtime.listDeadLetters())[0]?.reason).toBe('continuation_not_found');
    await runtime.close();
  });

  it('anonymous events never match authenticated routes (identity comes first)', async () => {
    const { runtime } = hostRuntime(routes);
    const why = await runtime.explain(event('order.created'), { trust: 'authenticated' });
    const auth = why.find((entry) => entry.routeId === 'authenticated');
    expect(auth).toMatchObject({ matches: false, reason: { code: 'identity' } });
    expect(auth?.reason?.message).toMatch(/anonymous/);
    expect(why.find((entry) => entry.routeId === 'by-type')).toEqual({ routeId: 'by-type', matches: true });
    await runtime.close();
  });

  it('a resume route: no correlation, no live continuation, another owner, then a match', async () => {
    const { runtime } = hostRuntime(routes);
    runtime.registerTarget(other);
    const ingress = { identity: alice, trust: 'authenticated' } as const;
    const resumeOf = async (e: AxEvent) =>
      Object.fromEntries((await runtime.explain(e, ingress)).map((entry) => [entry.routeId, entry]));
    expect((await resumeOf(event('job.done', { data: {} }))).resume?.reason).toMatchObject({
      code: 'continuation',
      message: expect.stringContaining('no correlation of kind job'),
    });
    expect((await resumeOf(event('job.done', { data: { job: 'J2' } }))).resume?.reason?.code).toBe(
      'continuation',
    );
    await runtime.publish({ event: event('job.started', { data: { job: 'J2' } }), ...ingress });
    await runtime.runDue();
    const now = await resumeOf(event('job.done', { data: { job: 'J2' } }));
    expect(now.resume).toEqual({ routeId: 'resume', matches: true });
    expect(now['resume-other']?.reason).toMatchObject({
      code: 'continuation',
      message: expect.stringContaining('belongs to target owner'),
    });
    // Another identity scope never sees the continuation.
    const intruder = await runtime.explain(event('job.done', { data: { job: 'J2' } }), {
      identity: { tenantId: 't2' },
      trust: 'authenticated',
    });
    expect(intruder.find((entry) => entry.routeId === 'resume')?.reason?.code).toBe('continuation');
    await runtime.close();
  });

  it('refuses a malformed event as publish() would', async () => {
    const { runtime } = hostRuntime(routes);
    await expect(runtime.explain({ id: '', source: 's', type: 't' })).rejects.toMatchObject({
      code: 'invalid_event',
    });
    await runtime.close();
  });
});

describe('.input() takes a plan or a callback, with identical deliveries', () => {
  it('routes one event to a builder-form and a callback-form target and both get the same input', async () => {
    const seen: Record<string, unknown> = {};
    const record = (name: string) => (input: Record<string, unknown>) => {
      seen[name] = input;
    };
    const fields = [
      { name: 'uri', type: 'string' as const },
      { name: 'who', type: 'string' as const },
    ];
    const builderForm = eventTarget('builder-form')
      .inputFields(fields)
      .input(eventInput().field('uri', eventPath.data('uri')).field('who', eventPath.identity('userId')))
      .invoke(record('builder'))
      .build();
    const callbackForm = eventTarget('callback-form')
      .inputFields(fields)
      .input((input) => input.field('uri', eventPath.data('uri')).field('who', eventPath.identity('userId')))
      .invoke(record('callback'))
      .build();
    expect(callbackForm.input?.steps).toEqual(builderForm.input?.steps);
    const { runtime } = hostRuntime([
      eventRoute('a').types('resource.updated').wake(builderForm).build(),
      eventRoute('b').types('resource.updated').wake(callbackForm).build(),
    ]);
    const ingress: AxEventIngress = {
      event: event('resource.updated', { data: { uri: 'inventory://berlin', secret: 'x' } }),
      identity: alice,
      trust: 'authenticated',
    };
    const receipt = await runtime.publish(ingress);
    expect(receipt.deliveryIds).toHaveLength(2);
    await runtime.runDue();
    expect(seen.builder).toEqual({ uri: 'inventory://berlin', who: 'alice' });
    expect(seen.callback).toEqual(seen.builder);
    expect(await runtime.listDeadLetters()).toEqual([]);
    const runs = await Promise.all(receipt.deliveryIds.map((id) => runtime.getRun(id)));
    expect(runs.map((run) => run?.status)).toEqual(['succeeded', 'succeeded']);
    await runtime.close();
  });

  it('wakeInput and resumeInput take the callback form too', () => {
    const built = eventTarget('both')
      .wakeInput((input) => input.field('a', eventPath.data('a')))
      .resumeInput((input) => input.project(eventPath.continuation()))
      .invoke(() => {})
      .build();
    expect(built.wakeInput?.steps.map((step) => step.kind)).toEqual(['field']);
    expect(built.resumeInput?.steps.map((step) => step.kind)).toEqual(['project']);
  });
});
