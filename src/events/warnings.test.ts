/**
 * Warnings: a source that says what it publishes (`describe()`) lets the runtime report routes
 * its events can never reach — once per (source, route) — and say nothing when the wiring is
 * right.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AxManualEventClock } from './clock.js';
import { AxEventConfigError } from './errors.js';
import type { AxEventRouteDefinition } from './route.js';
import { eventRoute } from './route-builder.js';
import { eventRuntime } from './runtime.js';
import type { AxEventRuntimeOptions, AxEventWarning } from './runtime-options.js';
import { type AxEventSource, type AxEventSourceDescription, AxTimerEventSource } from './source.js';
import { eventTarget } from './target-builder.js';

const target = eventTarget('t').invoke(vi.fn()).build();

/** A source that publishes nothing here and describes itself as told. */
function described(id: string, description: AxEventSourceDescription | (() => never)): AxEventSource {
  return {
    id,
    start: () => {},
    close: () => {},
    describe: typeof description === 'function' ? description : () => description,
  };
}

const runtimes: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close();
  vi.restoreAllMocks();
});

async function started(
  sources: AxEventSource[],
  routes: AxEventRouteDefinition[],
  extra: AxEventRuntimeOptions = {},
) {
  const warnings: { message: string; details: AxEventWarning }[] = [];
  const runtime = eventRuntime({
    sources,
    routes,
    clock: new AxManualEventClock(0),
    scheduling: 'host',
    onWarning: (message, details) => warnings.push({ message, details }),
    ...extra,
  });
  runtimes.push(runtime);
  await runtime.start();
  return { runtime, warnings };
}

const authenticated = (id: string, ...types: string[]) =>
  eventRoute(id)
    .types(...types)
    .authenticated()
    .wake(target)
    .build();

describe('a source whose events only authenticated routes want, but that are anonymous or untrusted', () => {
  it('is reported once per (source, route), naming the route and what to set', async () => {
    const timer = new AxTimerEventSource({
      id: 'tick',
      everyMs: 1000,
      event: { source: 'app://cron', type: 'cron.tick' },
    });
    const app = described('app', {
      sources: ['app://shop'],
      types: ['order.created', 'order.updated'],
      identity: 'identified',
      trust: 'untrusted',
    });
    const { runtime, warnings } = await started(
      [timer, app],
      [authenticated('nightly', 'cron.tick'), authenticated('orders', 'order.*')],
    );
    expect(warnings.map((w) => w.details)).toEqual([
      { code: 'unauthenticated_source', sourceId: 'tick', routeId: 'nightly', type: 'cron.tick' },
      { code: 'unauthenticated_source', sourceId: 'app', routeId: 'orders', type: 'order.created' },
    ]);
    expect(warnings[0]?.message).toMatch(/Route nightly takes only authenticated events/);
    expect(warnings[0]?.message).toMatch(/anonymous/);
    expect(warnings[0]?.message).toMatch(/set identity and trust/);
    expect(warnings[1]?.message).toMatch(/untrusted/);
    // A route added later is checked against the started sources; earlier warnings are not repeated.
    runtime.addRoute(authenticated('late', 'order.updated'));
    expect(warnings.map((w) => w.details.routeId)).toEqual(['nightly', 'orders', 'late']);
  });

  it('is not reported when the source attributes its events from verified authentication', async () => {
    const app = described('app', {
      sources: ['app://shop'],
      types: ['order.created'],
      identity: 'identified',
      trust: 'authenticated',
    });
    const { warnings } = await started([app], [authenticated('orders', 'order.*')]);
    expect(warnings).toEqual([]);
  });

  it('is not reported when attribution varies per event, or a route without authentication takes the type', async () => {
    const varies = described('varies', { types: ['order.created'], identity: 'varies', trust: 'varies' });
    const anonymous = described('anon', {
      types: ['audit.entry'],
      identity: 'anonymous',
      trust: 'untrusted',
    });
    const { warnings } = await started(
      [varies, anonymous],
      [
        authenticated('orders', 'order.*'),
        authenticated('audit-wake', 'audit.entry'),
        eventRoute('audit-log').types('audit.*').observe(vi.fn()).build(),
      ],
    );
    expect(warnings).toEqual([]);
  });

  it('reads a route narrowed to other sources as not wanting the events', async () => {
    const app = described('app', {
      sources: ['app://shop'],
      types: ['order.created'],
      identity: 'anonymous',
    });
    const { warnings } = await started(
      [app],
      [
        eventRoute('billing')
          .types('order.created')
          .sources('app://billing')
          .authenticated()
          .wake(target)
          .build(),
      ],
    );
    expect(warnings).toEqual([]);
  });
});

describe('a route waiting for a type the source withholds', () => {
  it('is reported with the reason the source gives, once', async () => {
    const feed = described('feed', {
      sources: ['app://feed'],
      types: ['feed.changed'],
      identity: 'identified',
      trust: 'trusted',
      withheld: [{ type: 'feed.item', reason: 'it follows no feed: set feeds on the source' }],
    });
    const { runtime, warnings } = await started(
      [feed],
      [
        eventRoute('items').types('feed.item').wake(target).build(),
        // Also takes what the source does publish: not waiting in vain.
        eventRoute('everything').types('feed.*').observe(vi.fn()).build(),
      ],
    );
    expect(warnings).toEqual([
      {
        message:
          'Route items waits for feed.item, but source feed does not publish it: it follows no feed: set feeds on the source',
        details: { code: 'withheld_type', sourceId: 'feed', routeId: 'items', type: 'feed.item' },
      },
    ]);
    await runtime.close();
  });
});

describe('a route pattern under a prefix the source speaks for in full', () => {
  const feed = (extra: Partial<AxEventSourceDescription> = {}) =>
    described('feed', {
      sources: ['app://feed'],
      types: ['feed.changed', 'feed.item.added'],
      identity: 'identified',
      trust: 'trusted',
      typePrefixes: ['feed.'],
      ...extra,
    });
  const observing = (id: string, ...types: string[]) =>
    eventRoute(id)
      .types(...types)
      .observe(vi.fn())
      .build();

  it('that matches none of its types is reported, with the nearest type for an exact one', async () => {
    const { warnings } = await started(
      [feed()],
      [
        observing('typo', 'feed.chaned'),
        observing('prefix', 'feed.items.*'),
        observing('fine', 'feed.item.*', 'feed.changed', 'other.thing'),
        eventRoute('predicate').match(vi.fn()).observe(vi.fn()).build(),
      ],
    );
    expect(warnings).toEqual([
      {
        message:
          'Route typo waits for feed.chaned (did you mean feed.changed?), which source feed never publishes: its feed.* types are feed.changed, feed.item.added',
        details: { code: 'unknown_type', sourceId: 'feed', routeId: 'typo', type: 'feed.chaned' },
      },
      {
        message:
          'Route prefix waits for feed.items.*, which source feed never publishes: its feed.* types are feed.changed, feed.item.added',
        details: { code: 'unknown_type', sourceId: 'feed', routeId: 'prefix', type: 'feed.items.*' },
      },
    ]);
  });

  it('is not reported for a source that claims no prefix, or for a route narrowed to other sources', async () => {
    const { warnings } = await started(
      [
        feed({ typePrefixes: undefined }),
        described('other', { sources: ['app://other'], typePrefixes: ['feed.'] }),
      ],
      [eventRoute('narrowed').sources('app://feed').types('feed.chaned').observe(vi.fn()).build()],
    );
    expect(warnings).toEqual([]);
  });
});

describe('a description that does not fit its shape', () => {
  it('is reported as the source error, typed, and read no further', async () => {
    const errors: unknown[] = [];
    const { runtime, warnings } = await started(
      [
        // biome-ignore lint/suspicious/noExplicitAny: the point is a description the types forbid
        described('feed', { types: ['feed.changed'], typePrefixes: 'feed.' } as any),
      ],
      [eventRoute('typo').types('feed.chaned').observe(vi.fn()).build()],
      { onError: (error, report) => errors.push([report.phase, report.sourceId, error]) },
    );
    expect(warnings).toEqual([]);
    expect(errors).toHaveLength(1);
    const [phase, sourceId, error] = errors[0] as [string, string, AxEventConfigError];
    expect([phase, sourceId]).toEqual(['source', 'feed']);
    expect(error).toBeInstanceOf(AxEventConfigError);
    expect(error.message).toBe(
      'Source feed: describe(): typePrefixes: expected an array of non-empty strings, got a string',
    );
    await expect(runtime.publish({ event: { id: '1', source: 's', type: 'x' } })).resolves.toMatchObject({
      accepted: true,
    });
  });
});

describe('the warning channel', () => {
  it('defaults to console.warn, like AxMCPClient', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const source = described('anon', { types: ['x'], identity: 'anonymous', trust: 'untrusted' });
    const runtime = eventRuntime({
      sources: [source],
      routes: [authenticated('r', 'x')],
      scheduling: 'host',
    });
    runtimes.push(runtime);
    await runtime.start();
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]?.[0]).toMatch(/Route r takes only authenticated events/);
  });

  it('a describe() that throws is reported as a source error; a throwing onWarning breaks nothing', async () => {
    const errors: unknown[] = [];
    const broken = described('broken', () => {
      throw new Error('cannot say');
    });
    const anonymous = described('anon', { types: ['x'], identity: 'anonymous' });
    const { runtime } = await started([broken, anonymous], [authenticated('r', 'x')], {
      onError: (error, report) => errors.push([report.phase, report.sourceId, (error as Error).message]),
      onWarning: () => {
        throw new Error('handler failed');
      },
    });
    expect(errors).toEqual([['source', 'broken', 'cannot say']]);
    await expect(runtime.publish({ event: { id: '1', source: 's', type: 'x' } })).resolves.toMatchObject({
      accepted: true,
    });
  });
});
