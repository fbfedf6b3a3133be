import { describe, expect, it, vi } from 'vitest';
import { AxManualEventClock } from './clock.js';
import { type AxEventIngress, identityScope, isAnonymous } from './envelope.js';
import { AxEventConfigError, AxEventInputError } from './errors.js';
import { eventInput } from './input.js';
import { AxMemoryEventStore } from './memory-store.js';
import { eventPath } from './path.js';
import type { AxEventRouteDefinition } from './route.js';
import { eventRoute } from './route-builder.js';
import { AxEventRuntime, eventRuntime } from './runtime.js';
import { AxPushEventSource, AxTimerEventSource } from './source.js';
import type { AxEventContext, AxEventProgram } from './target.js';
import { eventTarget } from './target-builder.js';

const user = { tenantId: 't1', userId: 'u1' };
let n = 0;
function ingress(type: string, data: unknown = {}, extra: Partial<AxEventIngress> = {}): AxEventIngress {
  return { event: { id: `e${++n}`, source: 'app://test', type, data }, ...extra };
}

function hostRuntime(routes: AxEventRouteDefinition[], extra = {}) {
  const clock = new AxManualEventClock(1_000);
  const store = new AxMemoryEventStore();
  const runtime = eventRuntime({ routes, clock, store, scheduling: 'host', random: () => 0, ...extra });
  return { clock, store, runtime };
}

describe("the runtime's calls check their options", () => {
  it('refuses a misspelt or malformed option with invalid_options, naming it, and does nothing', async () => {
    const invoke = vi.fn();
    const target = eventTarget('t').invoke(invoke).build();
    const { runtime, store } = hostRuntime([eventRoute('r').types('t').wake(target).build()]);
    await runtime.publish(ingress('t'));
    await runtime.publish(ingress('t'));
    const calls: [string, () => Promise<unknown>, string, string?][] = [
      // It ran everything due, not one.
      ['runDue', () => runtime.runDue({ limt: 1 } as never), 'limt', 'limit'],
      ['runDue', () => runtime.runDue({ limit: -1 }), 'limit'],
      // It waited for ever.
      ['waitForIdle', () => runtime.waitForIdle({ timeoutMS: 10 } as never), 'timeoutMS', 'timeoutMs'],
      ['listDeadLetters', () => runtime.listDeadLetters({ limit: 0 }), 'limit'],
      [
        'publish',
        () => runtime.publish(ingress('t'), { signl: new AbortController().signal } as never),
        'signl',
        'signal',
      ],
      ['publishMany', () => runtime.publishMany([ingress('t')], { signal: 'x' } as never), 'signal'],
      // It drained.
      ['close', () => runtime.close({ drian: false } as never), 'drian', 'drain'],
    ];
    for (const [method, call, path, suggestion] of calls) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, method).toBeInstanceOf(AxEventConfigError);
      expect(error).toMatchObject({
        code: 'invalid_options',
        path,
        message: expect.stringContaining(`${method} options`),
      });
      if (suggestion) expect((error as AxEventConfigError).suggestion).toBe(suggestion);
    }
    expect(invoke).not.toHaveBeenCalled();
    const { runs } = await store.listRuns({});
    expect(runs).toHaveLength(2);
    // Still open, and the right spellings work.
    expect(await runtime.runDue({ limit: 1 })).toEqual({ executed: 1 });
    await runtime.publish(ingress('t'), { signal: new AbortController().signal });
    await runtime.close({ drain: true });
    expect(invoke).toHaveBeenCalledTimes(3);
  });
});

describe('route hooks that answer what they cannot mean', () => {
  it('an asynchronous predicate or a non-boolean authorize matches nothing, and is reported once per route', async () => {
    const errors: unknown[] = [];
    const invoke = vi.fn();
    const target = eventTarget('t').invoke(invoke).build();
    const { runtime } = hostRuntime(
      [
        // Compared with true, the promise never matched, without a word.
        eventRoute('async-match')
          .match((async () => true) as never)
          .wake(target)
          .build(),
        // A predicate answering the field it meant to test matched nothing, silently.
        eventRoute('number-match')
          .match(((i: AxEventIngress) => (i.event.data as { priority?: number }).priority ?? 1) as never)
          .wake(target)
          .build(),
        eventRoute('yes-authorize')
          .types('t')
          .authorize((() => 'yes') as never)
          .wake(target)
          .build(),
        eventRoute('denies')
          .types('t')
          .authorize(() => false)
          .wake(target)
          .build(),
        eventRoute('allows')
          .types('t')
          .authorize(async () => true)
          .wake(target)
          .build(),
      ],
      { onError: (error: unknown) => errors.push(error) },
    );
    const first = await runtime.publish(ingress('t'));
    await runtime.publish(ingress('t'));
    expect(first.deliveryIds).toHaveLength(1);
    expect(errors).toHaveLength(3);
    expect(errors[0]).toBeInstanceOf(AxEventConfigError);
    expect(String((errors[0] as Error).message)).toMatch(
      /^Route async-match: the match predicate returned a promise/,
    );
    expect(errors[1]).toMatchObject({
      message: 'Route number-match: the match predicate returned number 1, not true or false: no match',
    });
    expect(errors[2]).toMatchObject({
      message: "Route yes-authorize: the authorize hook returned the string 'yes', not true or false: denied",
    });
    const why = await runtime.explain(ingress('t').event);
    expect(why.find((route) => route.routeId === 'async-match')?.reason?.message).toContain(
      'returned a promise',
    );
  });
});

describe('errors with no onError to go to', () => {
  it('the first of each kind and place is written to the console; a failed delivery is not', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const target = eventTarget('t')
        .invoke(() => {
          throw new Error('target broke');
        })
        .build();
      const { runtime } = hostRuntime([
        eventRoute('async-match')
          .match((async () => true) as never)
          .wake(target)
          .build(),
        eventRoute('fails').types('t').wake(target).build(),
      ]);
      await runtime.publish(ingress('t'));
      await runtime.publish(ingress('t'));
      await runtime.runDue();
      // Before, without onError, this misuse was dropped: the route matched nothing, silently.
      expect(warn).toHaveBeenCalledTimes(1);
      const message = String(warn.mock.calls[0]?.[0]);
      expect(message).toContain(
        'ax-mcp: event runtime (phase authorize): Route async-match: the match predicate',
      );
      expect(message).toContain('Pass onError to the runtime');
    } finally {
      warn.mockRestore();
    }
  });
});

describe('publish and receipts', () => {
  it('accepts an event no route matches, with no deliveries', async () => {
    const { runtime } = hostRuntime([]);
    const receipt = await runtime.publish(ingress('nobody.cares'));
    expect(receipt).toMatchObject({
      accepted: true,
      duplicate: false,
      durability: 'volatile',
      deliveryIds: [],
    });
    expect(receipt.eventId).toBe(`e${n}`);
  });

  it('dedupes on (identity scope, source, id) and returns the original deliveries', async () => {
    const invoke = vi.fn();
    const target = eventTarget('t').invoke(invoke).build();
    const { runtime } = hostRuntime([eventRoute('r').types('order.created').wake(target).build()]);
    const event = { id: 'same', source: 'app://shop', type: 'order.created', data: {} };
    const first = await runtime.publish({ event, identity: user, trust: 'authenticated' });
    const again = await runtime.publish({ event, identity: user, trust: 'authenticated' });
    const otherUser = await runtime.publish({ event, identity: { tenantId: 't1', userId: 'u2' } });
    const anonymous = await runtime.publish({ event });
    expect(again).toMatchObject({ duplicate: true, deliveryIds: first.deliveryIds });
    expect(otherUser.duplicate).toBe(false);
    expect(anonymous.duplicate).toBe(false);
    await runtime.runDue();
    expect(invoke).toHaveBeenCalledTimes(3);
  });

  it('rejects malformed, non-JSON and oversized events', async () => {
    const { runtime } = hostRuntime([], { maxEventBytes: 500 });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const bad: unknown[] = [
      { event: { id: '', source: 's', type: 't' } },
      { event: { id: 'x', source: 's', type: 't', specversion: '0.3' } },
      { event: { id: 'x', source: 's', type: 't', data: cyclic } },
      { event: { id: 'x', source: 's', type: 't', data: { n: Number.NaN } } },
      { event: { id: 'x', source: 's', type: 't', data: { d: new Date() } } },
      { event: { id: 'x', source: 's', type: 't', time: 'yesterday' } },
      { event: { id: 'x', source: 's', type: 't', extensions: { constructor: 'x' } } },
      { event: { id: 'x', source: 's', type: 't', extensions: { Upper: 'x' } } },
      { event: { id: 'x', source: 's', type: 't', extensions: { ok: { nested: true } } } },
      { event: { id: 'x', source: 's', type: 't' }, trust: 'root' },
      { event: { id: 'x', source: 's', type: 't' }, identity: { userId: '' } },
    ];
    for (const b of bad) {
      await expect(runtime.publish(b as AxEventIngress)).rejects.toMatchObject({ code: 'invalid_event' });
    }
    await expect(runtime.publish(ingress('t', { text: 'x'.repeat(600) }))).rejects.toMatchObject({
      code: 'event_too_large',
    });
  });

  it('identityScope and isAnonymous refuse a field an identity does not have', () => {
    // It made any identity anonymous: the scope of another's state and continuations.
    expect(() => identityScope({ tenantid: 't1', userId: 'u1' } as never)).toThrow(
      expect.objectContaining({
        code: 'invalid_event',
        message: expect.stringContaining('did you mean identity.tenantId?'),
      }),
    );
    expect(() => isAnonymous({ userid: 'u1' } as never)).toThrow(AxEventInputError);
    expect(identityScope({ tenantId: 't1', userId: 'u1' })).toBe('id:t1//u1/');
    expect(isAnonymous({})).toBe(true);
  });

  it('refuses a field it would drop, naming it, and stores nothing', async () => {
    const invoke = vi.fn();
    const target = eventTarget('t').invoke(invoke).build();
    const { runtime, store } = hostRuntime([eventRoute('r').types('t').authenticated().wake(target).build()]);
    const event = { id: 'x', source: 's', type: 't' };
    const refused: [unknown, string][] = [
      // A misspelt identity made the event anonymous: the authenticated route never woke.
      [
        { event, identiy: user, trust: 'authenticated' },
        'identiy is not a field ax-mcp keeps (did you mean identity?)',
      ],
      [
        { event, identity: user, trsut: 'authenticated' },
        'trsut is not a field ax-mcp keeps (did you mean trust?)',
      ],
      [
        { event, identity: { tenantid: 't1', userId: 'u1' } },
        'identity.tenantid is not a field ax-mcp keeps (did you mean identity.tenantId?)',
      ],
      [
        { event: { ...event, dat: { n: 1 } } },
        'event.dat is not a field ax-mcp keeps (did you mean event.data?)',
      ],
      [{ event: { ...event, traceparent: '00-x' } }, 'extension attributes go in event.extensions'],
      [{ event: { ...event, data_base64: 'AAEC' } }, 'event.data_base64 is not supported'],
      [
        { event, correlation: [{ kind: 'k', vlaue: 'v', value: 'v' }] },
        'correlation[0].vlaue is not a field',
      ],
      [{ event, partitonKey: 'p' }, 'partitonKey is not a field ax-mcp keeps (did you mean partitionKey?)'],
    ];
    for (const [bad, message] of refused) {
      const publishing = runtime.publish(bad as AxEventIngress);
      await expect(publishing).rejects.toBeInstanceOf(AxEventInputError);
      await expect(publishing).rejects.toMatchObject({
        code: 'invalid_event',
        message: expect.stringContaining(message),
      });
    }
    await expect(
      runtime.publishMany([{ event }, { event, identiy: user } as AxEventIngress]),
    ).rejects.toMatchObject({
      code: 'invalid_event',
      index: 1,
    });
    expect(await store.listRuns({})).toMatchObject({ runs: [] });
    // A field left undefined is no mistake, and the right spelling routes as before.
    await runtime.publish({ event, identity: user, trust: 'authenticated', partitionKey: undefined });
    await runtime.runDue();
    expect(invoke).toHaveBeenCalledTimes(1);
  });

  it('keeps __proto__ keys in data as plain data, never as prototypes', async () => {
    const seen: unknown[] = [];
    const route = eventRoute('r')
      .types('t')
      .observe((i) => void seen.push(i.event.data))
      .build();
    const { runtime } = hostRuntime([route]);
    await runtime.publish({
      event: { id: 'p', source: 's', type: 't', data: JSON.parse('{"__proto__":{"x":1}}') },
    });
    await runtime.runDue();
    const data = seen[0] as Record<string, unknown>;
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
    expect(Object.hasOwn(data, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe('routes', () => {
  it('keeps anonymous and untrusted events away from authenticated routes', async () => {
    const invoke = vi.fn();
    const target = eventTarget('t').invoke(invoke).build();
    const { runtime } = hostRuntime([eventRoute('r').types('t').authenticated().wake(target).build()]);
    expect((await runtime.publish(ingress('t'))).deliveryIds).toEqual([]);
    expect((await runtime.publish(ingress('t', {}, { trust: 'authenticated' }))).deliveryIds).toEqual([]);
    expect((await runtime.publish(ingress('t', {}, { identity: user }))).deliveryIds).toEqual([]);
    expect(
      (await runtime.publish(ingress('t', {}, { identity: user, trust: 'trusted' }))).deliveryIds,
    ).toHaveLength(1);
    await runtime.runDue();
    expect(invoke).toHaveBeenCalledTimes(1);
  });

  it('asks authorize per route; a throwing hook denies and is reported', async () => {
    const onError = vi.fn();
    const allow = eventRoute('allow')
      .types('t')
      .authorize((i) => i.identity.tenantId === 't1')
      .observe(vi.fn())
      .build();
    const boom = eventRoute('boom')
      .types('t')
      .authorize(() => {
        throw new Error('hook down');
      })
      .observe(vi.fn())
      .build();
    const { runtime } = hostRuntime([allow, boom], { onError });
    expect((await runtime.publish(ingress('t', {}, { identity: user }))).deliveryIds).toHaveLength(1);
    expect(
      (await runtime.publish(ingress('t', {}, { identity: { tenantId: 't2' } }))).deliveryIds,
    ).toHaveLength(0);
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ message: 'hook down' }), {
      phase: 'authorize',
    });
  });

  it('fans one event out into independent deliveries with their own run records', async () => {
    const calls: string[] = [];
    const a = eventTarget('a')
      .invoke(() => void calls.push('a'))
      .build();
    const b = eventTarget('b').invoke(() => {
      calls.push('b');
      throw new Error('b fails');
    });
    const observed = vi.fn();
    const { runtime } = hostRuntime([
      eventRoute('ra').types('order.*').wake(a).build(),
      eventRoute('rb').types('order.created').wake(b.build()).build(),
      eventRoute('ro').sources('app://test').observe(observed).build(),
      eventRoute('other').types('invoice.*').wake(a).build(),
    ]);
    const receipt = await runtime.publish(ingress('order.created'));
    expect(receipt.deliveryIds).toHaveLength(3);
    await runtime.runDue();
    const runs = await Promise.all(receipt.deliveryIds.map((id) => runtime.getRun(id)));
    expect(runs.map((r) => [r?.routeId, r?.status])).toEqual([
      ['ra', 'succeeded'],
      ['rb', 'outcome_unknown'],
      ['ro', 'succeeded'],
    ]);
    expect(new Set(runs.map((r) => r?.id)).size).toBe(3);
    expect(calls.sort()).toEqual(['a', 'b']);
    expect(observed).toHaveBeenCalledTimes(1);
  });

  it('matches subjects, extensions and predicates; observe and invalidate never invoke a target', async () => {
    const invoke = vi.fn();
    const target = eventTarget('t').invoke(invoke).build();
    const invalidated = vi.fn();
    const observed = vi.fn();
    const { runtime } = hostRuntime([
      eventRoute('inv').subjects('catalog').invalidate(invalidated).build(),
      eventRoute('obs').extensions({ level: 'info' }).observe(observed).build(),
      eventRoute('pred')
        .match((i) => i.event.type === 'special')
        .wake(target)
        .build(),
    ]);
    await runtime.publish({ event: { id: 'a', source: 's', type: 'x', subject: 'catalog' } });
    await runtime.publish({ event: { id: 'b', source: 's', type: 'x', extensions: { level: 'info' } } });
    await runtime.publish({ event: { id: 'c', source: 's', type: 'x', extensions: { level: 'debug' } } });
    await runtime.runDue();
    expect(invalidated).toHaveBeenCalledTimes(1);
    expect(observed).toHaveBeenCalledTimes(1);
    expect(invoke).not.toHaveBeenCalled();
    await runtime.publish({ event: { id: 'd', source: 's', type: 'special' } });
    await runtime.runDue();
    expect(invoke).toHaveBeenCalledTimes(1);
  });

  it('refuses routes and targets that cannot work', () => {
    const t = eventTarget('t')
      .invoke(() => 1)
      .build();
    expect(() => eventRoute('r').types('x').build()).toThrow(AxEventConfigError);
    expect(() => eventRoute('r').types('x').wake(t).observe(vi.fn())).toThrow(/exactly one action/);
    expect(() => eventRoute('r').wake(t).build()).toThrow(/at least one criterion/);
    expect(() =>
      eventRoute('r')
        .types('x')
        .match(() => true)
        .wake(t)
        .build(),
    ).toThrow(/not both/);
    expect(() => eventRoute('r').types('x').debounce(-1).wake(t).build()).toThrow(/debounceMs/);
    expect(() => eventTarget('t').build()).toThrow(/invoke/);
    expect(() =>
      eventTarget('t')
        .program({ forward: async () => 1 })
        .build(),
    ).toThrow(/ai/);
    expect(() =>
      eventTarget('t')
        .invoke(() => 1)
        .mapInput(() => ({}))
        .input(eventInput())
        .build(),
    ).toThrow(/mapInput/);
    const other = eventTarget('t')
      .invoke(() => 2)
      .build();
    expect(
      () => new AxEventRuntime([eventRoute('a').types('x').wake(t).build()], { targets: [other] }),
    ).toThrow(/registered twice/);
    const r = eventRoute('a').types('x').wake(t).build();
    expect(() => new AxEventRuntime([r, r])).toThrow(/defined twice/);
  });
});

describe('targets and input plans', () => {
  it('passes only the selected fields as input; raw data stays in the event context', async () => {
    let seen: { input: unknown; context: AxEventContext } | undefined;
    const target = eventTarget('t')
      .inputFields([
        { name: 'orderId', type: 'string' },
        { name: 'total', type: 'number' },
        { name: 'who', type: 'string' },
        { name: 'note', type: 'string', optional: true },
      ])
      .input(eventInput().project(eventPath.data('order')).field('who', eventPath.identity('userId')))
      .invoke((input, context) => {
        seen = { input, context };
        return { ok: true };
      })
      .build();
    const { runtime } = hostRuntime([eventRoute('r').types('order').wake(target).build()]);
    const data = { order: { orderId: 'o1', total: 12.5, secret: 'card' }, other: 1 };
    const receipt = await runtime.publish(ingress('order', data, { identity: user, trust: 'authenticated' }));
    await runtime.runDue();
    expect(seen?.input).toEqual({ orderId: 'o1', total: 12.5, who: 'u1' });
    expect(seen?.context.event.data).toEqual(data);
    expect(seen?.context).toMatchObject({ targetId: 't', routeId: 'r', attempt: 1, trust: 'authenticated' });
    expect(seen?.context.idempotencyKey).toBe(receipt.deliveryIds[0]);
    expect(Object.isFrozen(seen?.context.event.data)).toBe(true);
    expect((await runtime.getRun(receipt.deliveryIds[0] as string))?.output).toEqual({ ok: true });
  });

  it('dead-letters an input error before anything is invoked', async () => {
    const invoke = vi.fn();
    const target = eventTarget('t')
      .inputFields([{ name: 'orderId', type: 'string' }])
      .invoke(invoke)
      .build();
    const { runtime } = hostRuntime([eventRoute('r').types('order').wake(target).build()]);
    const missing = await runtime.publish(ingress('order', { other: 1 }));
    const wrongType = await runtime.publish(ingress('order', { orderId: 7 }));
    await runtime.runDue();
    expect(invoke).not.toHaveBeenCalled();
    for (const r of [missing, wrongType]) {
      const run = await runtime.getRun(r.deliveryIds[0] as string);
      expect(run).toMatchObject({ status: 'dead_lettered', attempt: 1, error: { code: 'invalid_input' } });
    }
    const letters = await runtime.listDeadLetters();
    expect(letters.map((l) => l.reason)).toEqual(['input_error', 'input_error']);
  });

  it('rejects unsafe paths and field names when plans are built', () => {
    expect(() => eventPath.data('__proto__')).toThrow(AxEventInputError);
    expect(() => eventPath.data('a', 'constructor')).toThrow(/Unsafe/);
    expect(() => eventPath.data('prototype')).toThrow(/Unsafe/);
    expect(() => eventPath.data('')).toThrow(/Empty/);
    expect(() => eventPath.data(-1)).toThrow(/Bad array index/);
    expect(() => eventPath.data(1.5)).toThrow(/Bad array index/);
    expect(() => eventPath.continuation('__proto__')).toThrow(/Unsafe/);
    expect(() => eventPath.extension('constructor')).toThrow(/Unsafe/);
    expect(() => eventInput().field('__proto__', eventPath.id())).toThrow(/unsafe/);
    expect(() => eventInput().field('a', eventPath.id()).field('a', eventPath.type())).toThrow(/twice/);
  });

  it('uses wakeInput and resumeInput for their actions, falling back to input but never to each other', async () => {
    const inputs: unknown[] = [];
    const target = eventTarget('t')
      .wakeInput(eventInput().field('w', eventPath.constant('wake')))
      .waitFor('job', eventPath.data('job'))
      .invoke((input) => void inputs.push(input))
      .build();
    const { runtime } = hostRuntime([
      eventRoute('wake').types('start').wake(target).build(),
      eventRoute('resume').types('done').correlate('job', eventPath.data('job')).resume().build(),
    ]);
    await runtime.publish(ingress('start', { job: 'j1', x: 1 }));
    await runtime.runDue();
    await runtime.publish(ingress('done', { job: 'j1', y: 2 }));
    await runtime.runDue();
    // resume has no resumeInput and no input: the default plan projects data, not the wake plan.
    expect(inputs).toEqual([{ w: 'wake' }, { job: 'j1', y: 2 }]);
  });

  it('maps input in code, dropping fields the target does not declare', async () => {
    const invoke = vi.fn();
    const target = eventTarget('t')
      .inputFields([{ name: 'a', type: 'integer' }])
      .mapInput((i) => ({ a: (i.event.data as { n: number }).n, extra: 'dropped' }))
      .invoke(invoke)
      .build();
    const { runtime } = hostRuntime([eventRoute('r').types('x').wake(target).build()]);
    await runtime.publish(ingress('x', { n: 3 }));
    await runtime.runDue();
    expect(invoke.mock.calls[0]?.[0]).toEqual({ a: 3 });
  });

  it('runs a structural program with its AI service and keeps its state per instance', async () => {
    const calls: { ai: unknown; input: unknown; hasContext: boolean }[] = [];
    let counter = 0;
    const program: AxEventProgram = {
      inputFields: [{ name: 'text', type: 'string' }],
      async forward(ai, input, options) {
        counter++;
        calls.push({ ai, input, hasContext: options.eventContext.targetId === 'p' });
        return { count: counter, tone: options.tone };
      },
      getState: () => ({ counter }),
      setState: (s) => {
        counter = (s as { counter: number }).counter;
      },
    };
    const llm = { name: 'scripted' };
    const target = eventTarget('p').program(program).ai(llm).forwardOptions({ tone: 'dry' }).build();
    const { runtime } = hostRuntime([
      eventRoute('r').types('msg').instanceKey(eventPath.data('chat')).wake(target).build(),
    ]);
    const r1 = await runtime.publish(ingress('msg', { text: 'hi', chat: 'A' }));
    await runtime.runDue();
    const r2 = await runtime.publish(ingress('msg', { text: 'yo', chat: 'B' }));
    await runtime.runDue();
    const r3 = await runtime.publish(ingress('msg', { text: 'again', chat: 'A' }));
    await runtime.runDue();
    const outputs = await Promise.all(
      [r1, r2, r3].map(async (r) => (await runtime.getRun(r.deliveryIds[0] as string))?.output),
    );
    // Instance A restores its own counter (1 → 2); B starts from the program's live value.
    expect(outputs).toEqual([
      { count: 1, tone: 'dry' },
      { count: 2, tone: 'dry' },
      { count: 2, tone: 'dry' },
    ]);
    expect(calls[0]).toEqual({ ai: llm, input: { text: 'hi' }, hasContext: true });
    const bad = await runtime.publish(ingress('msg', { chat: 'A' }));
    await runtime.runDue();
    expect((await runtime.getRun(bad.deliveryIds[0] as string))?.status).toBe('dead_lettered');
  });
});

describe('record form, sources and lifetime', () => {
  it('works as new AxEventRuntime(routes, options) + registerTarget + addSource + start', async () => {
    const clock = new AxManualEventClock(0);
    const runtime = new AxEventRuntime([eventRoute('r').types('ping').wake('pong').build()], {
      clock,
      scheduling: 'host',
    });
    const invoke = vi.fn(async () => 'pong');
    runtime.registerTarget({ id: 'pong', retrySafety: 'idempotent', invoke });
    const push = new AxPushEventSource({ id: 'push' });
    await runtime.addSource(push);
    await expect(push.push(ingress('ping'))).rejects.toMatchObject({ code: 'closed' });
    await runtime.start();
    const receipt = await push.push(ingress('ping'));
    expect(receipt.deliveryIds).toHaveLength(1);
    await runtime.runDue();
    expect(invoke).toHaveBeenCalledTimes(1);
    await runtime.close();
    await expect(runtime.publish(ingress('ping'))).rejects.toMatchObject({ code: 'closed' });
    await expect(push.push(ingress('ping'))).rejects.toMatchObject({ code: 'closed' });
  });

  it('refuses a source that requires durability on a volatile store unless allowVolatile', async () => {
    const durable = new AxPushEventSource({ id: 'durable', requiresDurable: true });
    const strict = eventRuntime({ sources: [durable], scheduling: 'host' });
    await expect(strict.start()).rejects.toMatchObject({ code: 'durability_required' });
    await strict.close();
    const relaxed = eventRuntime({ sources: [durable], scheduling: 'host', allowVolatile: true });
    await relaxed.start();
    await relaxed.close();
    const late = eventRuntime({ scheduling: 'host' });
    await late.start();
    await expect(
      late.addSource(new AxPushEventSource({ id: 'd', requiresDurable: true })),
    ).rejects.toMatchObject({
      code: 'durability_required',
    });
    await late.close();
    expect(() => eventRuntime({ coordination: 'multi-worker' })).toThrow(/multi-worker/);
  });

  it('refuses a wake route whose target was never registered', async () => {
    const runtime = new AxEventRuntime([eventRoute('r').types('x').wake('ghost').build()], {
      scheduling: 'host',
    });
    await expect(runtime.start()).rejects.toThrow(/unknown target ghost/);
    await runtime.close();
  });

  it('publishes timer events on the manual clock and stops on close', async () => {
    const seen = vi.fn();
    const { runtime, clock } = hostRuntime([eventRoute('r').types('tick').observe(seen).build()], {
      sources: [
        new AxTimerEventSource({ id: 'timer', everyMs: 100, event: { source: 'app://timer', type: 'tick' } }),
      ],
    });
    await runtime.start();
    for (let i = 0; i < 3; i++) {
      clock.advance(100);
      await vi.waitFor(async () => expect(await runtime.store.countPending()).toBe(1));
      await runtime.runDue();
    }
    expect(seen).toHaveBeenCalledTimes(3);
    await runtime.close();
    expect(clock.pendingTimers).toBe(0);
  });

  it('runs on worker loops with the system clock and leaves nothing running after close', async () => {
    const timeouts = () =>
      (process as unknown as { getActiveResourcesInfo(): string[] })
        .getActiveResourcesInfo()
        .filter((h) => h === 'Timeout').length;
    const before = timeouts();
    const done: number[] = [];
    const target = eventTarget('t')
      .invoke(async (input) => {
        await new Promise((r) => setTimeout(r, 5));
        done.push(input.i as number);
      })
      .build();
    const runtime = eventRuntime({
      routes: [eventRoute('r').types('job').instanceKey(eventPath.data('k')).wake(target).build()],
      workerConcurrency: 3,
    });
    await runtime.start();
    for (let i = 0; i < 20; i++) await runtime.publish(ingress('job', { i, k: `k${i % 4}` }));
    await runtime.waitForIdle({ timeoutMs: 10_000 });
    expect(done.sort((a, b) => a - b)).toEqual([...Array(20).keys()]);
    await runtime.close();
    // The worker loop's sleep and every heartbeat timer are cleared by close().
    expect(timeouts()).toBeLessThanOrEqual(before);
  });
});
