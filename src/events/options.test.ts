/**
 * Loud, never silent: every options object of the event runtime is checked once, at
 * construction or `build()`, and a mistake throws `invalid_options` with the path as the user
 * wrote it and, for a misspelled key, the nearest known name — before anything starts or runs.
 */
import { describe, expect, it, vi } from 'vitest';
import { expectRefusal, refusalOf } from '../../test/helpers/options.js';
import { AxEventConfigError } from './errors.js';
import { eventInput } from './input.js';
import { AxMemoryEventStore } from './memory-store.js';
import { eventPath } from './path.js';
import type { AxEventRouteDefinition } from './route.js';
import { eventRoute } from './route-builder.js';
import { AxEventRuntime, eventRuntime } from './runtime.js';
import { type AxEventSource, AxPushEventSource, AxTimerEventSource } from './source.js';
import { AxMemoryEventStateStore } from './state.js';
import type { AxEventTargetDefinition } from './target.js';
import { eventTarget } from './target-builder.js';

const invoked = vi.fn();
const started = vi.fn();
const target: AxEventTargetDefinition = { id: 't', invoke: invoked };
/** A source that records being started: a configuration error must start nothing. */
const source: AxEventSource = { id: 'watch', start: started, close: () => {} };
const ok = (id: string): AxEventRouteDefinition => ({ id, match: { types: ['x'] }, action: 'wake', target });

/** Misuse of a type-checked API, as JavaScript or configuration read from a file would do it. */
// biome-ignore lint/suspicious/noExplicitAny: the point is to pass what the types forbid
const loose = (value: unknown): any => value;

interface Case {
  name: string;
  make: () => unknown;
  path: string;
  suggestion?: string;
  message?: RegExp;
}

const CASES: Case[] = [
  {
    name: 'a misspelled match key, three routes in',
    make: () =>
      eventRuntime({
        sources: [source],
        routes: [ok('a'), ok('b'), loose({ id: 'c', match: { tpyes: ['x'] }, action: 'wake', target })],
      }),
    path: 'routes[2].match.tpyes',
    suggestion: 'types',
  },
  {
    name: 'types as a string, not a list',
    make: () => eventRuntime({ routes: [ok('a'), loose({ ...ok('b'), match: { types: 'x' } })] }),
    path: 'routes[1].match.types',
  },
  {
    // No event can carry it (publish refuses the name), so the route would match nothing, ever.
    name: 'an extension name events cannot carry',
    make: () => eventRoute('e').types('x').extensions({ Level: 'info' }).wake(target).build(),
    path: 'match.extensions.Level',
  },
  {
    name: 'an extension named like an event attribute',
    make: () =>
      eventRuntime({ routes: [{ ...ok('a'), match: { types: ['x'], extensions: { subject: 's' } } }] }),
    path: 'routes[0].match.extensions.subject',
  },
  {
    name: 'an empty types list',
    make: () => eventRuntime({ routes: [{ ...ok('a'), match: { types: [] } }] }),
    path: 'routes[0].match.types',
  },
  {
    // Only a trailing `*` is a wildcard: this would be compared as text and match nothing, ever.
    name: 'a type pattern with a `*` inside it',
    make: () => eventRuntime({ routes: [{ ...ok('a'), match: { types: ['x', 'mcp.*.updated'] } }] }),
    path: 'routes[0].match.types[1]',
    message: /exact or a prefix ending in one `\*` \(`app\.order\.\*`\), got 'mcp\.\*\.updated'/,
  },
  {
    name: 'a source pattern with two stars, from the builder',
    make: () => eventRoute('r').sources('mcp://**').types('x').wake(target).build(),
    path: 'match.sources[0]',
    message: /got 'mcp:\/\/\*\*'/,
  },
  {
    name: 'a subject pattern with a leading `*`',
    make: () => eventRoute('r').subjects('*.png').types('x').wake(target).build(),
    path: 'match.subjects[0]',
  },
  {
    name: 'a record target whose invoke is not a function',
    make: () => eventRuntime({ sources: [source], targets: [loose({ id: 't2', invoke: 'run' })] }),
    path: 'targets[0].invoke',
  },
  {
    name: 'a misspelled invoke',
    make: () => eventRuntime({ targets: [loose({ id: 't2', invoek: invoked })] }),
    path: 'targets[0].invoek',
    suggestion: 'invoke',
  },
  {
    name: 'coordination outside its enumeration',
    make: () => eventRuntime({ sources: [source], coordination: loose('multi') }),
    path: 'coordination',
    suggestion: "'multi-worker'",
    message: /'single' or 'multi-worker', got 'multi'/,
  },
  {
    name: 'a misspelled runtime option',
    make: () => eventRuntime(loose({ routes: [ok('a')], workerConcurency: 2 })),
    path: 'workerConcurency',
    suggestion: 'workerConcurrency',
  },
  {
    name: 'retryJitter out of range',
    make: () => eventRuntime({ retryJitter: 2 }),
    path: 'retryJitter',
    message: /≤ 1, got 2/,
  },
  {
    name: 'retry.jitter out of range',
    make: () => eventRuntime({ retry: { jitter: 2 } }),
    path: 'retry.jitter',
    message: /≤ 1, got 2/,
  },
  {
    name: 'a misspelled retry field',
    make: () => eventRuntime({ retry: loose({ baseDelayMs: 10 }) }),
    path: 'retry.baseDelayMs',
    suggestion: 'baseMs',
  },
  {
    name: 'a deprecated flat retry name and its retry field with different values',
    make: () => eventRuntime({ maxAttempts: 3, retry: { maxAttempts: 5 } }),
    path: 'retry.maxAttempts',
    message: /maxAttempts is the deprecated name of retry\.maxAttempts.*got 5, and maxAttempts: 3/,
  },
  {
    name: 'the constructor form: retryBaseMs against retry.baseMs',
    make: () => new AxEventRuntime([], { retryBaseMs: 10, retry: { baseMs: 20 } }),
    path: 'retry.baseMs',
  },
  {
    name: 'a wake route without a target (a rule beyond shapes, at its path)',
    make: () =>
      eventRuntime({ routes: [ok('a'), loose({ id: 'b', match: { types: ['x'] }, action: 'wake' })] }),
    path: 'routes[1].target',
  },
  {
    name: 'an action outside its enumeration',
    make: () => eventRuntime({ routes: [loose({ ...ok('a'), action: 'invoke' })] }),
    path: 'routes[0].action',
  },
  {
    name: 'requireAuthenticated as a string',
    make: () => eventRuntime({ routes: [loose({ ...ok('a'), requireAuthenticated: 'yes' })] }),
    path: 'routes[0].requireAuthenticated',
  },
  {
    name: 'a route id defined twice',
    make: () => eventRuntime({ routes: [ok('a'), ok('a')] }),
    path: 'routes[1].id',
    message: /defined twice/,
  },
  {
    name: 'routes in the options of the constructor form',
    make: () => new AxEventRuntime([], loose({ routes: [ok('a')] })),
    path: 'routes',
  },
  {
    name: 'a callback as the record form input of a nested target',
    make: () =>
      eventRuntime({
        routes: [{ ...ok('a'), target: loose({ id: 't3', invoke: invoked, input: (i: unknown) => i }) }],
      }),
    path: 'routes[0].target.input',
    message: /eventInput\(\) plan/,
  },
  {
    name: 'an instance key that is not an eventPath',
    make: () => eventRuntime({ routes: [loose({ ...ok('a'), instanceKey: 'data.orderId' })] }),
    path: 'routes[0].instanceKey',
  },
  {
    name: 'coalesce without debounceMs',
    make: () => eventRuntime({ routes: [{ ...ok('a'), coalesce: 'latest' }] }),
    path: 'routes[0].debounceMs',
  },
  {
    name: 'a source without start and close',
    make: () => eventRuntime({ sources: [loose({ id: 's' })] }),
    path: 'sources[0]',
  },
  {
    name: 'a source id given twice',
    make: () => eventRuntime({ sources: [source, { ...source }] }),
    path: 'sources[1].id',
  },
  {
    name: 'the builder: debounce options outside the enumeration',
    make: () =>
      eventRoute('r')
        .types('x')
        .debounce(10, loose({ coalesce: 'first' })),
    path: 'coalesce',
  },
  {
    name: 'the builder: a negative debounce',
    make: () => eventRoute('r').types('x').debounce(-1).wake(target).build(),
    path: 'debounceMs',
  },
  {
    name: 'the builder: an input callback that returns nothing',
    make: () =>
      eventTarget('t4')
        .input(
          loose((input: ReturnType<typeof eventInput>) => {
            input.field('uri', eventPath.data('uri'));
          }),
        )
        .invoke(invoked)
        .build(),
    path: 'input',
    message: /returned nothing/,
  },
  {
    name: 'the builder: an input that is neither a plan nor a callback',
    make: () =>
      eventTarget('t5')
        .input(loose({ steps: [] }))
        .invoke(invoked)
        .build(),
    path: 'input',
  },
  {
    name: 'the builder: a plan field the target does not declare',
    make: () =>
      eventTarget('t6')
        .inputFields([{ name: 'uri', type: 'string' }])
        .input(eventInput().field('url', eventPath.data('uri')))
        .invoke(invoked)
        .build(),
    path: 'input',
    message: /field 'url'/,
  },
  {
    name: 'the builder: a misspelled waitFor option',
    make: () =>
      eventTarget('t7')
        .waitFor('job', eventPath.data('job'), loose({ expiresInMS: 100 }))
        .invoke(invoked)
        .build(),
    path: 'waitFor[0].expiresInMS',
    suggestion: 'expiresInMs',
  },
  {
    name: 'the builder: ai() on an invoke target',
    make: () => eventTarget('t8').invoke(invoked).ai({}).build(),
    path: 'ai',
  },
  {
    name: 'registerTarget: retrySafety outside its enumeration',
    make: () =>
      new AxEventRuntime().registerTarget(loose({ id: 't9', invoke: invoked, retrySafety: 'safe' })),
    path: 'retrySafety',
  },
  {
    name: 'AxPushEventSource: an id in the wrong case',
    make: () => new AxPushEventSource(loose({ ID: 'app' })),
    path: 'ID',
    suggestion: 'id',
  },
  {
    name: 'AxPushEventSource: requiresDurable as a string',
    make: () => new AxPushEventSource(loose({ id: 'app', requiresDurable: 'yes' })),
    path: 'requiresDurable',
  },
  {
    name: 'AxTimerEventSource: intervalMs for everyMs',
    make: () =>
      new AxTimerEventSource(loose({ id: 'tick', intervalMs: 100, event: { source: 's', type: 't' } })),
    path: 'intervalMs',
    suggestion: 'everyMs',
  },
  {
    name: 'AxTimerEventSource: a fixed event id (every tick would be a duplicate)',
    make: () =>
      new AxTimerEventSource(
        loose({ id: 'tick', everyMs: 100, event: { id: 'same', source: 's', type: 't' } }),
      ),
    path: 'event.id',
  },
  {
    name: 'AxMemoryEventStore: a misspelled limit',
    make: () => new AxMemoryEventStore(loose({ maxPendingDeliveres: 5 })),
    path: 'maxPendingDeliveres',
    suggestion: 'maxPendingDeliveries',
  },
  {
    name: 'AxMemoryEventStore: a fractional count',
    make: () => new AxMemoryEventStore({ maxPendingDeliveries: 1.5 }),
    path: 'maxPendingDeliveries',
  },
  {
    name: 'AxMemoryEventStateStore: an option it does not have',
    make: () => new AxMemoryEventStateStore(loose({ maxEntries: 10 })),
    path: 'maxEntries',
  },
];

describe('options are checked once, loudly, before anything runs', () => {
  it.each(CASES)('$name', async ({ make, path, suggestion, message }) => {
    const error = await refusalOf(make);
    expectRefusal(error, AxEventConfigError, { path, suggestion, message });
    expect((error as Error).message).toContain(path);
    expect(invoked).not.toHaveBeenCalled();
    expect(started).not.toHaveBeenCalled();
  });

  it('takes exact patterns, a prefix before one trailing `*`, and `*` alone', async () => {
    const seen: string[] = [];
    const route = (id: string, ...types: string[]) =>
      eventRoute(id)
        .types(...types)
        .observe(() => {
          seen.push(id);
        })
        .build();
    const runtime = eventRuntime({
      routes: [route('exact', 'app.order.created'), route('prefix', 'app.order.*'), route('any', '*')],
      scheduling: 'host',
    });
    await runtime.publish({ event: { id: '1', source: 'app://shop', type: 'app.order.created' } });
    await runtime.publish({ event: { id: '2', source: 'app://shop', type: 'app.cart.created' } });
    await runtime.runDue();
    expect(seen.sort()).toEqual(['any', 'any', 'exact', 'prefix']);
    await runtime.close();
  });

  it('has at least fifteen wrong configurations', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(15);
  });

  it('accepts every key of the options it declares', async () => {
    const runtime = eventRuntime({
      routes: [
        {
          id: 'all',
          match: { types: ['x.*'], sources: ['app://*'], subjects: ['s'], extensions: { level: 'info' } },
          action: 'wake',
          target: {
            id: 'full',
            retrySafety: 'idempotent',
            inputFields: [{ name: 'a', type: 'string', optional: true, description: 'd' }],
            wakeInput: eventInput().field('a', eventPath.data('a')),
            resumeInput: eventInput().project(eventPath.data()),
            invoke: invoked,
            waitFor: [{ kind: 'job', path: eventPath.data('job'), expiresInMs: 10, metadata: { n: 1 } }],
            sinks: [{ id: 'out', write: () => {} }],
            maxAttempts: 2,
          },
          requireAuthenticated: true,
          authorize: () => true,
          instanceKey: eventPath.data('k'),
          debounceMs: 5,
          coalesce: 'latest',
          ordering: 'relaxed',
        },
        {
          id: 'resume',
          match: () => true,
          action: 'resume',
          correlation: { kind: 'job', path: eventPath.data('j') },
        },
        { id: 'seen', match: { types: ['y'] }, action: 'observe', observe: () => {} },
        { id: 'gone', match: { types: ['z'] }, action: 'invalidate', invalidate: () => {} },
      ],
      targets: [target],
      sources: [new AxPushEventSource({ id: 'app', requiresDurable: false })],
      store: new AxMemoryEventStore({ maxPendingDeliveries: 10, retentionMs: 0 }),
      stateStore: new AxMemoryEventStateStore({}),
      clock: { now: () => 0, sleep: async () => {} },
      allowVolatile: true,
      coordination: 'single',
      scheduling: 'host',
      workerConcurrency: 2,
      retry: { maxAttempts: 3, baseMs: 0, maxMs: 10, jitter: 0 },
      maxAttempts: 3,
      retryBaseMs: 0,
      retryMaxMs: 10,
      retryJitter: 0,
      random: () => 0,
      publishTimeoutMs: 0,
      leaseMs: 10,
      pollIntervalMs: 1,
      pruneIntervalMs: 1,
      maxEventBytes: 1000,
      workerId: 'w',
      onError: () => {},
      onWarning: () => {},
    });
    await runtime.close();
  });
});
