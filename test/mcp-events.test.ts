/**
 * MCP events end to end: `AxMCPEventSource` and `axMCPEventRoutes` against the demo server in
 * each era — legacy (2025-11-25), modern (2026-07-28), and the dual endpoint both auto-classified
 * (modern) and pinned to legacy — and against server-everything for what the demo server does not
 * emit (progress, logging).
 *
 * Covered: every subscription policy (`none`, `all`, a URI list, `{ select }` by name, URI and
 * MIME type) checked on the wire (`server.state()`: legacy session subscriptions, modern listen
 * filters); reconcile after `resources/list_changed` happening before `mcp.catalog.changed` is
 * published; a throwing selector keeping the last selection; partial wire failures kept and
 * retried on the next change; `close()` releasing only the source's own URIs; the shape of every
 * event type; attribution (`identity`, `trust`, `resolveIdentity`) against an authenticated wake
 * route; the task flow (the terminal status resumes exactly the owning continuation, in its
 * identity scope, and nothing else); redelivered notifications deduplicated by their event ids;
 * resource updates waking nothing by default.
 *
 * Every wait is bounded. Wire faults are injected at the HTTP boundary (the transport's `fetch`).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AxMCPDemoServer } from '../src/demo.js';
import {
  type AxEventErrorReport,
  type AxEventIdentity,
  type AxEventIngress,
  type AxEventReceipt,
  type AxEventRouteDefinition,
  type AxEventRuntime,
  type AxEventTrust,
  type AxMCPClient,
  type AxMCPClientEvent,
  AxMCPEventSource,
  type AxMCPEventSourceOptions,
  type AxMCPResourceSubscriptionPolicy,
  AxMemoryEventStore,
  AxPushEventSource,
  axMCPEventRoutes,
  eventPath,
  eventRoute,
  eventRuntime,
  eventTarget,
  MCP_EVENT_TYPES,
  MCP_TASK_CORRELATION,
  mcpTaskKey,
} from '../src/index.js';
import { eventually, httpClient } from './helpers/clients.js';
import { type EverythingServer, startEverythingServer } from './servers/everything.js';

const NS = 'inv';
const SOURCE = `mcp://${NS}`;
const BERLIN = 'inventory://warehouse/berlin';
const LISBON = 'inventory://warehouse/lisbon';
const CURRENT = 'inventory://warehouse/current';
const PORTO = 'inventory://warehouse/porto';
const TEMPLATE = 'inventory://warehouse/{warehouseId}';
const IDENTITY: AxEventIdentity = { tenantId: 'acme', userId: 'ops' };
const INTRUDER: AxEventIdentity = { tenantId: 'intruder', userId: 'mallory' };

type Wire = 'legacy' | 'modern';

interface EraCase {
  label: string;
  server: 'legacy' | 'modern' | 'dual';
  client: 'auto' | 'legacy';
  wire: Wire;
}

const ERAS: EraCase[] = [
  { label: 'legacy server (2025-11-25)', server: 'legacy', client: 'auto', wire: 'legacy' },
  { label: 'modern server (2026-07-28)', server: 'modern', client: 'auto', wire: 'modern' },
  { label: 'dual server, auto-classified (modern)', server: 'dual', client: 'auto', wire: 'modern' },
  { label: 'dual server, client pinned to legacy', server: 'dual', client: 'legacy', wire: 'legacy' },
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sorted = (values: Iterable<string>) => [...values].sort();

/** What the server holds on the wire for its (single) client: legacy subscriptions or the newest listen filter. */
function wireSubscriptions(server: AxMCPDemoServer, wire: Wire): string[] {
  const state = server.state();
  if (wire === 'legacy') return sorted(new Set(state.sessions.flatMap((session) => session.subscriptions)));
  let newest: (typeof state.listenStreams)[number] | undefined;
  for (const stream of state.listenStreams) {
    if (newest === undefined || Number(stream.id) > Number(newest.id)) newest = stream;
  }
  const requested = newest?.requested as { resourceSubscriptions?: string[] } | undefined;
  return sorted(requested?.resourceSubscriptions ?? []);
}

/** Waits (bounded) until the wire holds exactly `expected`, then asserts it. */
async function expectWire(server: AxMCPDemoServer, wire: Wire, expected: string[]): Promise<void> {
  const want = sorted(expected);
  await eventually(
    () => JSON.stringify(wireSubscriptions(server, wire)) === JSON.stringify(want),
    5_000,
    `the wire to hold ${JSON.stringify(want)} (has ${JSON.stringify(wireSubscriptions(server, wire))})`,
  ).catch(() => {});
  expect(wireSubscriptions(server, wire)).toEqual(want);
}

/** A JSON-RPC request body the client POSTs, or undefined. */
function rpcOf(
  init: RequestInit | undefined,
): { id: unknown; method: string; params: Record<string, unknown> } | undefined {
  if (init?.method !== 'POST' || typeof init.body !== 'string') return undefined;
  try {
    const body = JSON.parse(init.body) as unknown;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
    const message = body as { id?: unknown; method?: unknown; params?: unknown };
    if (typeof message.method !== 'string' || message.id === undefined) return undefined;
    const params =
      message.params !== null && typeof message.params === 'object'
        ? (message.params as Record<string, unknown>)
        : {};
    return { id: message.id, method: message.method, params };
  } catch {
    return undefined;
  }
}

/** A `fetch` that answers a JSON-RPC error instead of forwarding requests `refuse` picks. */
function refusingFetch(refuse: (method: string, params: Record<string, unknown>) => boolean): {
  fetch: typeof fetch;
  refused: string[];
} {
  const refused: string[] = [];
  const wrapped = (async (input: string | URL | Request, init?: RequestInit) => {
    const rpc = rpcOf(init);
    if (rpc && refuse(rpc.method, rpc.params)) {
      refused.push(`${rpc.method} ${JSON.stringify(rpc.params.uri ?? rpc.params.notifications ?? null)}`);
      return new Response(
        JSON.stringify({
          jsonrpc: '2.0',
          id: rpc.id,
          error: { code: -32602, message: 'Refused by the test' },
        }),
        { status: 200, headers: { 'content-type': 'application/json' } },
      );
    }
    return fetch(input, init);
  }) as typeof fetch;
  return { fetch: wrapped, refused };
}

interface Published {
  ingress: AxEventIngress;
  receipt: AxEventReceipt;
  /** The source's subscriptions and the wire at the moment the event was published. */
  sourceAtPublish: string[];
  wireAtPublish: string[];
}

interface RigOptions {
  era: EraCase;
  policy?: AxMCPResourceSubscriptionPolicy;
  /** `null`: anonymous. Default {@link IDENTITY}. */
  identity?: AxEventIdentity | null;
  /** Default `'authenticated'`; `'default'` leaves it to the source. */
  trust?: AxEventTrust | 'default';
  resolveIdentity?: AxMCPEventSourceOptions['resolveIdentity'];
  sourceId?: string;
  /** Routes besides `axMCPEventRoutes`. */
  routes?: (client: AxMCPClient) => AxEventRouteDefinition[];
  onCatalogInvalidated?: Parameters<typeof axMCPEventRoutes>[0]['onCatalogInvalidated'];
  fetch?: typeof fetch;
  server?: AxMCPDemoServer;
  store?: AxMemoryEventStore;
  extraSources?: (client: AxMCPClient) => AxMCPEventSource[];
  app?: AxPushEventSource;
}

interface Rig {
  server: AxMCPDemoServer;
  client: AxMCPClient;
  source: AxMCPEventSource;
  runtime: AxEventRuntime;
  published: Published[];
  errors: { error: unknown; report: AxEventErrorReport }[];
  clientEvents: AxMCPClientEvent[];
  wire(): string[];
  of(type: string): Published[];
  close(): Promise<void>;
}

const rigs: Rig[] = [];

async function startRig(options: RigOptions): Promise<Rig> {
  const server = options.server ?? new AxMCPDemoServer({ era: options.era.server, keepAliveMs: 0 });
  const url = await server.start();
  const client = httpClient(
    url,
    { namespace: NS, era: options.era.client, timeoutMs: 10_000 },
    options.fetch ? { fetch: options.fetch } : {},
  );
  const clientEvents: AxMCPClientEvent[] = [];
  client.subscribeEvents((event) => clientEvents.push(event));
  const identity = options.identity === undefined ? IDENTITY : options.identity;
  const source = new AxMCPEventSource({
    client,
    resourceSubscriptions: options.policy ?? 'none',
    ...(options.trust === 'default' ? {} : { trust: options.trust ?? 'authenticated' }),
    ...(identity === null ? {} : { identity }),
    ...(options.resolveIdentity ? { resolveIdentity: options.resolveIdentity } : {}),
    ...(options.sourceId ? { id: options.sourceId } : {}),
  });
  const errors: Rig['errors'] = [];
  const published: Published[] = [];
  const runtime = eventRuntime({
    sources: [source, ...(options.extraSources?.(client) ?? []), ...(options.app ? [options.app] : [])],
    allowVolatile: true,
    retryBaseMs: 10,
    ...(options.store ? { store: options.store } : {}),
    onError: (error, report) => errors.push({ error, report }),
    routes: [
      ...axMCPEventRoutes({
        client,
        ...(options.onCatalogInvalidated ? { onCatalogInvalidated: options.onCatalogInvalidated } : {}),
      }),
      ...(options.routes?.(client) ?? []),
    ],
  });
  // Every publish (the source's and the application's) is recorded with its receipt, and with
  // what the source and the server held at that moment.
  const publish = runtime.publish.bind(runtime);
  runtime.publish = async (ingress, publishOptions) => {
    const sourceAtPublish = source.subscriptions;
    const wireAtPublish = wireSubscriptions(server, options.era.wire);
    const receipt = await publish(ingress, publishOptions);
    published.push({ ingress, receipt, sourceAtPublish, wireAtPublish });
    return receipt;
  };
  const rig: Rig = {
    server,
    client,
    source,
    runtime,
    published,
    errors,
    clientEvents,
    wire: () => wireSubscriptions(server, options.era.wire),
    of: (type) => published.filter((entry) => entry.ingress.event.type === type),
    close: async () => {
      await runtime.close().catch(() => {});
      await client.close().catch(() => {});
      if (!options.server) await server.close();
    },
  };
  rigs.push(rig);
  await runtime.start();
  return rig;
}

afterEach(async () => {
  for (const rig of rigs.splice(0).reverse()) await rig.close();
});

function sourceErrors(rig: Rig): unknown[] {
  return rig.errors.filter((entry) => entry.report.phase === 'source').map((entry) => entry.error);
}

function messageOf(error: unknown): string {
  if (error instanceof AggregateError)
    return `${error.message}: ${error.errors.map((inner) => messageOf(inner)).join('; ')}`;
  return error instanceof Error ? error.message : String(error);
}

/** A wake target that records every invocation. */
function recordingTarget(id: string) {
  const calls: {
    action: string;
    subject: string | undefined;
    scope: string;
    trust: string;
    eventId: string;
  }[] = [];
  const target = eventTarget(id)
    .invoke((_input, context) => {
      calls.push({
        action: context.action,
        subject: context.event.subject,
        scope: context.identityScope,
        trust: context.trust,
        eventId: context.event.id,
      });
      return { ok: true };
    })
    .build();
  return { target, calls };
}

describe.each(ERAS)('AxMCPEventSource against the demo server: $label', (era) => {
  describe('subscription policies', () => {
    it("'none' (the default) subscribes to nothing: no subscription reaches the wire", async () => {
      const rig = await startRig({ era });
      expect(rig.client.getEra()).toBe(era.wire);
      expect(rig.source.subscriptions).toEqual([]);
      expect(rig.client.subscriptions).toEqual([]);
      const state = rig.server.state();
      if (era.wire === 'legacy') {
        expect(state.methodCounts.legacy['resources/subscribe']).toBeUndefined();
        expect(state.sessions.flatMap((session) => session.subscriptions)).toEqual([]);
        // The source listens all the same (catalog changes, tasks, lifecycle).
        expect(state.sessions.some((session) => session.getStreams > 0)).toBe(true);
      } else {
        expect(state.methodCounts.modern['subscriptions/listen']).toBeGreaterThanOrEqual(1);
        expect(state.listenStreams.length).toBeGreaterThanOrEqual(1);
        for (const stream of state.listenStreams) {
          expect(
            (stream.requested as { resourceSubscriptions?: unknown }).resourceSubscriptions,
          ).toBeUndefined();
        }
      }
      // An update to a resource nobody subscribed to never becomes an event.
      await rig.client.callTool('adjust_stock', { warehouseId: 'berlin', sku: 'widget-a', delta: 1 });
      await sleep(300);
      expect(rig.of(MCP_EVENT_TYPES.resourceUpdated)).toEqual([]);
      expect(rig.of(MCP_EVENT_TYPES.lifecycle).map((entry) => entry.ingress.event.data)).toContainEqual({
        namespace: NS,
        state: 'connected',
      });
    });

    it("'all' subscribes every concrete resource and never a template", async () => {
      const rig = await startRig({ era, policy: 'all' });
      const catalog = await rig.client.inspectCatalog();
      expect(catalog.resourceTemplates.map((template) => template.uriTemplate)).toContain(TEMPLATE);
      const concrete = sorted(catalog.resources.map((resource) => resource.uri));
      expect(concrete).toEqual([BERLIN, CURRENT, LISBON]);
      expect(rig.source.subscriptions).toEqual(concrete);
      expect(rig.source.subscriptions.some((uri) => uri.includes('{'))).toBe(false);
      await expectWire(rig.server, era.wire, concrete);
      expect(rig.client.subscriptions).toEqual(concrete.map((uri) => ({ uri, owners: [`mcp:${NS}`] })));
    });

    it('a listed URI the server neither lists nor could mean by a template is reported once and still subscribed; a template is not', async () => {
      const TYPO = 'inventory://warehous/berlin';
      const rig = await startRig({ era, policy: [BERLIN, TYPO, 'inventory://warehouse/porto', TEMPLATE] });
      // Before, the misspelt URI and the template were subscribed in silence; no update ever came.
      expect(sourceErrors(rig).map(messageOf).sort()).toEqual([
        `Source ${rig.source.id}: resourceSubscriptions names ${TYPO}, which the ${NS} server neither lists nor could mean by one of its URI templates: it is subscribed, but its updates may never come`,
        `Source ${rig.source.id}: resourceSubscriptions names ${TEMPLATE}, a URI template: templates are never expanded, so no resource has that URI; it is not subscribed (list concrete URIs)`,
      ]);
      expect(rig.source.subscriptions).toEqual([BERLIN, TYPO, 'inventory://warehouse/porto'].sort());
      await rig.source.reconcile();
      expect(sourceErrors(rig)).toHaveLength(2);
      await rig.close();
    });

    it('a URI list subscribes exactly those URIs, deduplicated', async () => {
      const rig = await startRig({ era, policy: [LISBON, BERLIN, LISBON] });
      expect(rig.source.subscriptions).toEqual([BERLIN, LISBON]);
      await expectWire(rig.server, era.wire, [BERLIN, LISBON]);
    });

    type Select = (resource: { uri: string; name: string; mimeType?: string }) => boolean;
    it.each<{ by: string; select: Select; expected: string[] }>([
      {
        by: 'name',
        select: (resource) => resource.name === 'warehouse-berlin',
        expected: [BERLIN],
      },
      {
        by: 'URI',
        select: (resource) => resource.uri.endsWith('/lisbon') || resource.uri === CURRENT,
        expected: [CURRENT, LISBON],
      },
      {
        by: 'MIME type',
        select: (resource) => resource.mimeType === 'text/markdown',
        expected: ['inventory://notes/readme'],
      },
    ])('{ select } chooses by $by', async ({ select, expected }) => {
      const server = new AxMCPDemoServer({ era: era.server, keepAliveMs: 0 });
      server.addResource({ uri: 'inventory://notes/readme', name: 'readme', mimeType: 'text/markdown' });
      const seenCatalogs: string[] = [];
      const rig = await startRig({
        era,
        server,
        policy: {
          select: (resource, catalog) => {
            seenCatalogs.push(catalog.namespace);
            return select(resource);
          },
        },
      });
      rig.close = ((close) => async () => {
        await close();
        await server.close();
      })(rig.close);
      expect(rig.source.subscriptions).toEqual(expected);
      await expectWire(rig.server, era.wire, expected);
      // The selector saw the listed resources with the catalog they came from.
      expect(seenCatalogs.length).toBeGreaterThanOrEqual(4);
      expect(new Set(seenCatalogs)).toEqual(new Set([NS]));
    });
  });

  it("'all' over a larger catalog reaches the wire in a bounded number of requests", async () => {
    const server = new AxMCPDemoServer({ era: era.server, keepAliveMs: 0 });
    for (let i = 0; i < 40; i++) server.addResource({ uri: `inventory://warehouse/w${i}`, name: `w${i}` });
    const rig = await startRig({ era, server, policy: 'all' });
    rig.close = ((close) => async () => {
      await close();
      await server.close();
    })(rig.close);
    expect(rig.source.subscriptions).toHaveLength(43);
    await expectWire(rig.server, era.wire, rig.source.subscriptions);
    const counts = rig.server.state().methodCounts;
    // Legacy has no batch subscribe: one request per URI is the floor. Modern can carry them all in one filter.
    if (era.wire === 'legacy') expect(counts.legacy['resources/subscribe']).toBe(43);
    // Modern: the listen stream opened by start(), the first acquisition (the client changes the
    // filter as soon as it arrives), then the other 42 merged into one more change. Acquiring one
    // URI at a time cost a listen per URI.
    else expect(counts.modern['subscriptions/listen']).toBeLessThanOrEqual(2);
  });

  it('one refused URI among many is isolated in a few wire changes, not one per URI', async () => {
    const REFUSED = 'inventory://warehouse/w17';
    const faults = refusingFetch((method, params) => {
      if (method === 'resources/subscribe') return params.uri === REFUSED;
      if (method === 'subscriptions/listen') {
        const filter = params.notifications as { resourceSubscriptions?: string[] } | undefined;
        return filter?.resourceSubscriptions?.includes(REFUSED) === true;
      }
      return false;
    });
    const server = new AxMCPDemoServer({ era: era.server, keepAliveMs: 0 });
    for (let i = 0; i < 40; i++) server.addResource({ uri: `inventory://warehouse/w${i}`, name: `w${i}` });
    const rig = await startRig({ era, server, policy: 'all', fetch: faults.fetch });
    rig.close = ((close) => async () => {
      await close();
      await server.close();
    })(rig.close);
    expect(rig.source.subscriptions).toHaveLength(42);
    expect(rig.source.subscriptions).not.toContain(REFUSED);
    await expectWire(rig.server, era.wire, rig.source.subscriptions);
    const reported = sourceErrors(rig);
    expect(reported).toHaveLength(1);
    expect((reported[0] as AggregateError).errors).toHaveLength(1);
    const counts = rig.server.state().methodCounts;
    if (era.wire === 'legacy') {
      // One request per URI; the refused one is its own failure and waits for the next change.
      expect(counts.legacy['resources/subscribe']).toBe(42);
      expect(faults.refused).toHaveLength(1);
    } else {
      // The merged change carrying the refused URI fails for all 43 in it; halving the failed set
      // finds it in about 2·log2(43) changes, each half's success or failure one listen (18 measured
      // now that every first change carries all 43). Before: one listen per URI (46).
      const listens = (counts.modern['subscriptions/listen'] ?? 0) + faults.refused.length;
      expect(listens).toBeLessThanOrEqual(20);
    }
  });

  describe('reconcile after resources/list_changed', () => {
    const warehouses = {
      select: (resource: { uri: string }) =>
        resource.uri.startsWith('inventory://warehouse/') && resource.uri !== CURRENT,
    };

    it('subscribes additions and releases removals before mcp.catalog.changed is published', async () => {
      const invalidated: { revision: number; sourceSubscriptions: string[]; wire: string[] }[] = [];
      let rig: Rig | undefined;
      rig = await startRig({
        era,
        policy: warehouses,
        onCatalogInvalidated: (ingress) => {
          invalidated.push({
            revision: (ingress.event.data as { revision: number }).revision,
            sourceSubscriptions: rig?.source.subscriptions ?? [],
            wire: rig?.wire() ?? [],
          });
        },
      });
      expect(rig.source.subscriptions).toEqual([BERLIN, LISBON]);

      rig.server.addResource({ uri: PORTO, name: 'warehouse-porto', mimeType: 'application/json' });
      await eventually(
        () => rig.of(MCP_EVENT_TYPES.catalogChanged).length === 1,
        5_000,
        'the first catalog event',
      );
      const added = rig.of(MCP_EVENT_TYPES.catalogChanged)[0] as Published;
      // At the moment of publishing, the addition was already owned and on the wire.
      expect(added.sourceAtPublish).toEqual([BERLIN, LISBON, PORTO]);
      expect(added.wireAtPublish).toEqual([BERLIN, LISBON, PORTO]);

      rig.server.removeResource(LISBON);
      await eventually(
        () => rig.of(MCP_EVENT_TYPES.catalogChanged).length === 2,
        5_000,
        'the second catalog event',
      );
      const removed = rig.of(MCP_EVENT_TYPES.catalogChanged)[1] as Published;
      expect(removed.sourceAtPublish).toEqual([BERLIN, PORTO]);
      expect(removed.wireAtPublish).toEqual([BERLIN, PORTO]);

      // The default catalog route invalidated after each reconcile, never before it.
      await rig.runtime.waitForIdle({ timeoutMs: 5_000 });
      expect(invalidated).toHaveLength(2);
      expect(invalidated[0]?.sourceSubscriptions).toEqual([BERLIN, LISBON, PORTO]);
      expect(invalidated[1]?.sourceSubscriptions).toEqual([BERLIN, PORTO]);
      expect(invalidated[1]?.wire).toEqual([BERLIN, PORTO]);
      expect(invalidated[1]?.revision).toBeGreaterThan(invalidated[0]?.revision ?? Number.POSITIVE_INFINITY);
      await expectWire(rig.server, era.wire, [BERLIN, PORTO]);
    });

    it('a selector that throws keeps the previous selection and reports the error', async () => {
      const rig = await startRig({
        era,
        policy: {
          select: (resource) => {
            if (resource.name === 'boom') throw new Error('the selector exploded');
            return warehouses.select(resource);
          },
        },
      });
      expect(rig.source.subscriptions).toEqual([BERLIN, LISBON]);

      rig.server.addResource({ uri: 'inventory://warehouse/boom', name: 'boom' });
      await eventually(() => rig.of(MCP_EVENT_TYPES.catalogChanged).length === 1, 5_000, 'the catalog event');
      expect(rig.source.subscriptions).toEqual([BERLIN, LISBON]);
      await expectWire(rig.server, era.wire, [BERLIN, LISBON]);
      const reported = sourceErrors(rig);
      expect(reported.map(messageOf)).toEqual(['the selector exploded']);
      expect(rig.errors.find((entry) => entry.report.phase === 'source')?.report.sourceId).toBe(
        rig.source.id,
      );

      // Once the selector works again, the next change reconciles as usual.
      rig.server.removeResource('inventory://warehouse/boom');
      rig.server.addResource({ uri: PORTO, name: 'warehouse-porto' });
      await eventually(() => rig.source.subscriptions.includes(PORTO), 5_000, 'porto to be subscribed');
      await expectWire(rig.server, era.wire, [BERLIN, LISBON, PORTO]);
    });

    it('an async selector, or one that answers other than true or false, is reported, not taken for "none"', async () => {
      const asynchronous = await startRig({
        era,
        policy: {
          select: (async (resource: { name: string }) => resource.name.startsWith('warehouse')) as never,
        },
      });
      // Compared with true, the promise selected nothing, and no error said why.
      expect(asynchronous.source.subscriptions).toEqual([]);
      expect(sourceErrors(asynchronous).map(messageOf)).toEqual([
        expect.stringContaining('The resourceSubscriptions selector returned a promise'),
      ]);
      await asynchronous.close();
      const truthy = await startRig({ era, policy: { select: (() => 1) as never } });
      expect(sourceErrors(truthy).map(messageOf)).toEqual([
        'The resourceSubscriptions selector returned number 1, not true or false',
      ]);
      await truthy.close();
    });

    it('a partial wire failure keeps the successes and retries the rest on the next change', async () => {
      const REFUSED = 'inventory://warehouse/refused';
      let refusing = true;
      const faults = refusingFetch((method, params) => {
        if (!refusing) return false;
        if (method === 'resources/subscribe') return params.uri === REFUSED;
        if (method === 'subscriptions/listen') {
          const filter = params.notifications as { resourceSubscriptions?: string[] } | undefined;
          return filter?.resourceSubscriptions?.includes(REFUSED) === true;
        }
        return false;
      });
      const rig = await startRig({ era, policy: [BERLIN, REFUSED, LISBON], fetch: faults.fetch });
      expect(faults.refused.length).toBeGreaterThanOrEqual(1);
      expect(rig.source.subscriptions).toEqual([BERLIN, LISBON]);
      await expectWire(rig.server, era.wire, [BERLIN, LISBON]);
      const reported = sourceErrors(rig);
      expect(reported).toHaveLength(1);
      expect(reported[0]).toBeInstanceOf(AggregateError);
      expect((reported[0] as AggregateError).errors).toHaveLength(1);

      // The next change retries what failed.
      refusing = false;
      rig.server.addResource({ uri: PORTO, name: 'warehouse-porto' });
      await eventually(() => rig.of(MCP_EVENT_TYPES.catalogChanged).length === 1, 5_000, 'the catalog event');
      expect(rig.source.subscriptions).toEqual([BERLIN, LISBON, REFUSED]);
      await expectWire(rig.server, era.wire, [BERLIN, LISBON, REFUSED]);
      expect(sourceErrors(rig)).toHaveLength(1);
    });

    it('a failed release keeps the URI owned and is retried on the next change', async () => {
      let refusing = false;
      const faults = refusingFetch((method, params) => {
        if (!refusing) return false;
        if (method === 'resources/unsubscribe') return params.uri === LISBON;
        if (method === 'subscriptions/listen') {
          const filter = params.notifications as { resourceSubscriptions?: string[] } | undefined;
          return (
            filter?.resourceSubscriptions?.includes(BERLIN) === true &&
            !filter.resourceSubscriptions.includes(LISBON)
          );
        }
        return false;
      });
      const rig = await startRig({ era, policy: warehouses, fetch: faults.fetch });
      expect(rig.source.subscriptions).toEqual([BERLIN, LISBON]);

      refusing = true;
      rig.server.removeResource(LISBON);
      await eventually(() => rig.of(MCP_EVENT_TYPES.catalogChanged).length === 1, 5_000, 'the catalog event');
      expect(faults.refused.length).toBeGreaterThanOrEqual(1);
      expect(rig.source.subscriptions).toEqual([BERLIN, LISBON]);
      expect(sourceErrors(rig)).toHaveLength(1);

      refusing = false;
      rig.server.addResource({ uri: PORTO, name: 'warehouse-porto' });
      await eventually(
        () => rig.of(MCP_EVENT_TYPES.catalogChanged).length === 2,
        5_000,
        'the second catalog event',
      );
      expect(rig.source.subscriptions).toEqual([BERLIN, PORTO]);
      await expectWire(rig.server, era.wire, [BERLIN, PORTO]);
    });

    if (era.wire === 'legacy') {
      it('a list_changed sent while the GET stream was down is replayed (Last-Event-ID) and reconciled', async () => {
        const rig = await startRig({ era, policy: 'all' });
        // One update first, so the GET stream has an event id to resume from.
        await rig.client.callTool('adjust_stock', { warehouseId: 'berlin', sku: 'widget-a', delta: 1 });
        await eventually(() => rig.of(MCP_EVENT_TYPES.resourceUpdated).length === 2, 5_000, 'the updates');
        expect(rig.server.dropStreams().legacy).toBe(1);
        rig.server.addResource({ uri: PORTO, name: 'warehouse-porto' });
        await eventually(
          () => rig.of(MCP_EVENT_TYPES.catalogChanged).length === 1,
          8_000,
          'the replayed change',
        );
        const changed = rig.of(MCP_EVENT_TYPES.catalogChanged)[0] as Published;
        expect(changed.sourceAtPublish).toEqual([BERLIN, CURRENT, LISBON, PORTO]);
        expect(changed.wireAtPublish).toEqual([BERLIN, CURRENT, LISBON, PORTO]);
        expect(
          rig
            .of(MCP_EVENT_TYPES.lifecycle)
            .map((entry) => (entry.ingress.event.data as { state: string }).state),
        ).toContain('reconnected');
      });
    }

    it('after a reconnect the source reconciles against a fresh catalog (a change lost in the gap is picked up)', async () => {
      const rig = await startRig({ era, policy: 'all' });
      expect(rig.source.subscriptions).toEqual([BERLIN, CURRENT, LISBON]);
      // Nothing was sent on the stream yet: the reconnect cannot resume, the change below is lost on the wire.
      const dropped = rig.server.dropStreams();
      expect(dropped.legacy + dropped.modern).toBeGreaterThanOrEqual(1);
      rig.server.addResource({ uri: PORTO, name: 'warehouse-porto' });
      await eventually(
        () =>
          rig
            .of(MCP_EVENT_TYPES.lifecycle)
            .some((entry) => (entry.ingress.event.data as { state: string }).state === 'reconnected'),
        8_000,
        'the reconnect',
      );
      await eventually(() => rig.source.subscriptions.includes(PORTO), 5_000, 'porto to be subscribed');
      await expectWire(rig.server, era.wire, [BERLIN, CURRENT, LISBON, PORTO]);
    });
  });

  it('close() releases only its own URIs; a manual owner and another source keep theirs', async () => {
    const other = (client: AxMCPClient) => [
      new AxMCPEventSource({ client, id: 'restock', resourceSubscriptions: [LISBON] }),
    ];
    let restock: AxMCPEventSource | undefined;
    const rig = await startRig({
      era,
      policy: 'all',
      sourceId: 'dashboard',
      extraSources: (client) => {
        const sources = other(client);
        restock = sources[0];
        return sources;
      },
    });
    await rig.client.subscribeResource(BERLIN);
    expect(rig.client.subscriptions).toEqual([
      { uri: BERLIN, owners: ['dashboard', 'manual'] },
      { uri: CURRENT, owners: ['dashboard'] },
      { uri: LISBON, owners: ['dashboard', 'restock'] },
    ]);
    await expectWire(rig.server, era.wire, [BERLIN, CURRENT, LISBON]);

    await rig.source.close();
    expect(rig.source.subscriptions).toEqual([]);
    expect(rig.client.subscriptions).toEqual([
      { uri: BERLIN, owners: ['manual'] },
      { uri: LISBON, owners: ['restock'] },
    ]);
    await expectWire(rig.server, era.wire, [BERLIN, LISBON]);

    await restock?.close();
    expect(rig.client.subscriptions).toEqual([{ uri: BERLIN, owners: ['manual'] }]);
    await expectWire(rig.server, era.wire, [BERLIN]);
    if (era.wire === 'legacy')
      expect(rig.server.state().methodCounts.legacy['resources/unsubscribe']).toBe(2);
  });

  it('a release that fails during close() is reported, not swallowed', async () => {
    let refusing = false;
    const faults = refusingFetch((method, params) => {
      if (!refusing) return false;
      if (method === 'resources/unsubscribe') return params.uri === LISBON;
      if (method === 'subscriptions/listen') {
        const filter = params.notifications as { resourceSubscriptions?: string[] } | undefined;
        return !(filter?.resourceSubscriptions ?? []).includes(LISBON);
      }
      return false;
    });
    const rig = await startRig({ era, policy: [LISBON], fetch: faults.fetch });
    expect(rig.source.subscriptions).toEqual([LISBON]);
    refusing = true;
    await rig.source.close();
    expect(faults.refused.length).toBeGreaterThanOrEqual(1);
    // The URI is still held on the wire for an owner that no longer exists...
    expect(rig.client.subscriptions).toEqual([{ uri: LISBON, owners: [`mcp:${NS}`] }]);
    // ...so the failure must at least reach the application.
    expect(sourceErrors(rig).length).toBeGreaterThanOrEqual(1);
  });

  it('publishes mcp.resource.updated, mcp.catalog.changed and mcp.lifecycle with deterministic ids', async () => {
    const rig = await startRig({ era, policy: [BERLIN] });
    await eventually(() => rig.of(MCP_EVENT_TYPES.lifecycle).length >= 1, 5_000, 'the lifecycle event');
    const lifecycle = rig.of(MCP_EVENT_TYPES.lifecycle);
    expect(lifecycle.map((entry) => entry.ingress.event.data)).toEqual([
      { namespace: NS, state: 'connected' },
    ]);
    expect(lifecycle[0]?.ingress.event.source).toBe(SOURCE);

    // adjust_stock changes berlin and the aggregate view; only berlin is subscribed.
    await rig.client.callTool('adjust_stock', { warehouseId: 'berlin', sku: 'widget-b', delta: 2 });
    await eventually(() => rig.of(MCP_EVENT_TYPES.resourceUpdated).length >= 1, 5_000, 'the update');
    await sleep(200);
    const updates = rig.of(MCP_EVENT_TYPES.resourceUpdated);
    expect(updates).toHaveLength(1);
    const update = updates[0] as Published;
    expect(update.ingress).toMatchObject({
      event: {
        source: SOURCE,
        type: MCP_EVENT_TYPES.resourceUpdated,
        subject: BERLIN,
        data: { namespace: NS, uri: BERLIN },
      },
      identity: IDENTITY,
      trust: 'authenticated',
      partitionKey: `${NS}:resource:${BERLIN}`,
    });
    const seen = rig.clientEvents.find((event) => event.type === 'resource_updated');
    if (era.wire === 'legacy') {
      // The SSE event id within the session identifies the notification.
      expect(seen && 'eventId' in seen ? seen.eventId : undefined).toMatch(/\S/);
      expect(update.ingress.event.id).toBe(
        `sse:${rig.client.transport.sessionId}:${(seen as { eventId: string }).eventId}`,
      );
    } else {
      expect(update.ingress.event.id).toMatch(/^[0-9a-f-]{36}$/);
    }

    rig.server.addResource({ uri: PORTO, name: 'warehouse-porto' });
    await eventually(() => rig.of(MCP_EVENT_TYPES.catalogChanged).length === 1, 5_000, 'the catalog event');
    const catalog = rig.of(MCP_EVENT_TYPES.catalogChanged)[0] as Published;
    expect(catalog.ingress.event).toMatchObject({
      id: expect.stringMatching(new RegExp(`^catalog:[0-9a-f-]{36}:${rig.client.catalogRevision}$`)),
      source: SOURCE,
      subject: 'catalog',
      data: { namespace: NS, revision: rig.client.catalogRevision },
    });
    expect((catalog.ingress.event.data as { kinds: string[] }).kinds).toContain('resources');
    // Default routes: the catalog change invalidates; nothing else was delivered anywhere.
    expect(catalog.receipt.deliveryIds).toHaveLength(1);
    await rig.runtime.waitForIdle({ timeoutMs: 5_000 });
    expect((await rig.runtime.getRun(catalog.receipt.deliveryIds[0] as string))?.status).toBe('succeeded');
  });

  describe('attribution', () => {
    const wakeOnUpdate = (target: ReturnType<typeof recordingTarget>['target']) => () => [
      eventRoute('restock-on-update')
        .types(MCP_EVENT_TYPES.resourceUpdated)
        .authenticated()
        .wake(target)
        .build(),
    ];

    it.each([
      {
        what: 'anonymous (no identity, trust authenticated)',
        identity: null,
        trust: 'authenticated',
        wakes: 0,
      },
      { what: 'untrusted (identity, default trust)', identity: IDENTITY, trust: 'default', wakes: 0 },
      { what: 'authenticated (identity and trust)', identity: IDENTITY, trust: 'authenticated', wakes: 1 },
    ] as const)(
      '$what events: the authenticated wake route runs $wakes time(s)',
      async ({ identity, trust, wakes }) => {
        const { target, calls } = recordingTarget('restock-agent');
        const rig = await startRig({
          era,
          policy: [BERLIN],
          identity,
          trust,
          routes: wakeOnUpdate(target),
        });
        await rig.client.callTool('adjust_stock', { warehouseId: 'berlin', sku: 'gadget-x', delta: 1 });
        await eventually(() => rig.of(MCP_EVENT_TYPES.resourceUpdated).length === 1, 5_000, 'the update');
        await rig.runtime.waitForIdle({ timeoutMs: 5_000 });
        const update = rig.of(MCP_EVENT_TYPES.resourceUpdated)[0] as Published;
        expect(update.receipt.deliveryIds).toHaveLength(wakes);
        expect(calls).toHaveLength(wakes);
        if (wakes === 1)
          expect(calls[0]).toMatchObject({ action: 'wake', subject: BERLIN, trust: 'authenticated' });
      },
    );

    /** Berlin's update attributed by `resolveIdentity` answering `answer`, the rest untrusted; Berlin stock moved. */
    async function attributedBerlin(
      answer: ReturnType<NonNullable<AxMCPEventSourceOptions['resolveIdentity']>>,
    ) {
      const { target, calls } = recordingTarget('restock-agent');
      const rig = await startRig({
        era,
        policy: [BERLIN, CURRENT],
        identity: null,
        trust: 'untrusted',
        resolveIdentity: (event) =>
          event.type === 'resource_updated' && event.uri === BERLIN ? answer : undefined,
        routes: wakeOnUpdate(target),
      });
      await rig.client.callTool('adjust_stock', { warehouseId: 'berlin', sku: 'widget-a', delta: 3 });
      return { rig, calls };
    }

    it('resolveIdentity attributes per event; only the attributed event wakes the authenticated route', async () => {
      const { rig, calls } = await attributedBerlin({ identity: IDENTITY, trust: 'authenticated' });
      await eventually(() => rig.of(MCP_EVENT_TYPES.resourceUpdated).length === 2, 5_000, 'both updates');
      await rig.runtime.waitForIdle({ timeoutMs: 5_000 });
      const bySubject = new Map(
        rig.of(MCP_EVENT_TYPES.resourceUpdated).map((entry) => [entry.ingress.event.subject, entry.ingress]),
      );
      expect(bySubject.get(BERLIN)).toMatchObject({ identity: IDENTITY, trust: 'authenticated' });
      expect(bySubject.get(CURRENT)?.identity).toBeUndefined();
      expect(bySubject.get(CURRENT)?.trust).toBe('untrusted');
      expect(calls.map((call) => call.subject)).toEqual([BERLIN]);
    });

    it('a resolveIdentity answer with a misspelt field is reported, never published under the wrong attribution', async () => {
      // The misspelt identity fell back to none: the event went out anonymous, yet 'authenticated'.
      const { rig, calls } = await attributedBerlin({ identty: IDENTITY, trust: 'authenticated' } as never);
      await eventually(() => rig.of(MCP_EVENT_TYPES.resourceUpdated).length === 1, 5_000, 'the other update');
      await eventually(() => rig.errors.length > 0, 5_000, 'the refusal reported');
      await rig.runtime.waitForIdle({ timeoutMs: 5_000 });
      expect(rig.of(MCP_EVENT_TYPES.resourceUpdated).map((entry) => entry.ingress.event.subject)).toEqual([
        CURRENT,
      ]);
      expect(rig.errors[0]?.error).toMatchObject({
        code: 'invalid_event',
        message: expect.stringContaining('identty is not an option (did you mean identity?)'),
      });
      expect(calls).toEqual([]);
    });

    it('an anonymous look-alike of an MCP event never matches the authenticated wake route', async () => {
      const { target, calls } = recordingTarget('restock-agent');
      const rig = await startRig({ era, policy: [BERLIN], routes: wakeOnUpdate(target) });
      const forged = await rig.runtime.publish({
        event: { id: 'forged-1', source: SOURCE, type: MCP_EVENT_TYPES.resourceUpdated, subject: BERLIN },
        trust: 'authenticated',
      });
      const untrusted = await rig.runtime.publish({
        event: { id: 'forged-2', source: SOURCE, type: MCP_EVENT_TYPES.resourceUpdated, subject: BERLIN },
        identity: IDENTITY,
      });
      expect(forged.deliveryIds).toEqual([]);
      expect(untrusted.deliveryIds).toEqual([]);
      // The same route does take a genuine, authenticated update.
      await rig.client.callTool('adjust_stock', { warehouseId: 'berlin', sku: 'widget-a', delta: 1 });
      await eventually(() => calls.length === 1, 5_000, 'the genuine wake');
      await rig.runtime.waitForIdle({ timeoutMs: 5_000 });
      expect(calls).toHaveLength(1);
      expect(calls[0]?.eventId).not.toMatch(/^forged/);
    });

    it('resource updates wake nothing by default (only axMCPEventRoutes installed)', async () => {
      const rig = await startRig({ era, policy: 'all' });
      await rig.client.callTool('adjust_stock', { warehouseId: 'lisbon', sku: 'widget-b', delta: -1 });
      await eventually(() => rig.of(MCP_EVENT_TYPES.resourceUpdated).length === 2, 5_000, 'both updates');
      for (const update of rig.of(MCP_EVENT_TYPES.resourceUpdated)) {
        expect(update.ingress.trust).toBe('authenticated');
        expect(update.receipt.deliveryIds).toEqual([]);
      }
      expect(
        sorted(rig.of(MCP_EVENT_TYPES.resourceUpdated).map((entry) => entry.ingress.event.subject ?? '')),
      ).toEqual([CURRENT, LISBON]);
    });
  });

  it('task flow: the terminal status resumes exactly its owner, in its identity scope, and nothing else', async () => {
    const resumed: { taskKey: string; status: string; scope: string; source: string }[] = [];
    const woken: string[] = [];
    const owner = eventTarget('reindex-owner')
      .waitFor(MCP_TASK_CORRELATION, eventPath.data('taskKey'))
      .invoke((_input, context) => {
        if (context.action === 'wake') {
          woken.push((context.event.data as { taskKey: string }).taskKey);
          return { waiting: true };
        }
        resumed.push({
          taskKey: context.continuation?.value ?? '?',
          status: (context.event.data as { status: string }).status,
          scope: context.identityScope,
          source: context.event.source,
        });
        return { resumed: true };
      })
      .build();
    const app = new AxPushEventSource({ id: 'app' });
    const rig = await startRig({
      era,
      app,
      routes: () => [
        eventRoute('reindex-started').types('app.task.started').authenticated().wake(owner).build(),
      ],
    });

    const first = await rig.client.callToolOutcome('start_reindex', { scope: 'berlin' });
    const second = await rig.client.callToolOutcome('start_reindex', { scope: 'lisbon' });
    if (first.kind !== 'task' || second.kind !== 'task')
      throw new Error('start_reindex did not create tasks');
    const keys = [first.task, second.task].map((task) => mcpTaskKey(NS, task.taskId));
    const waits: string[] = [];
    for (const key of keys) {
      const receipt = await app.push({
        event: {
          id: `started-${key}`,
          source: 'app://reindex',
          type: 'app.task.started',
          subject: key,
          data: { taskKey: key },
        },
        identity: IDENTITY,
        trust: 'authenticated',
      });
      expect(receipt.deliveryIds).toHaveLength(1);
      waits.push(receipt.deliveryIds[0] as string);
    }
    await rig.runtime.waitForIdle({ timeoutMs: 5_000 });
    expect(woken).toEqual(keys);
    for (const wait of waits) expect((await rig.runtime.getRun(wait))?.status).toBe('waiting_event');

    // Look-alikes of the terminal status from another identity, and anonymous, resume nothing.
    const forgedStatus = (id: string) => ({
      id,
      source: SOURCE,
      type: MCP_EVENT_TYPES.taskStatus,
      subject: keys[0],
      data: { namespace: NS, taskId: first.task.taskId, status: 'completed' },
    });
    const correlation = [{ kind: MCP_TASK_CORRELATION, value: keys[0] as string }];
    const intruder = await rig.runtime.publish({
      event: forgedStatus('forged-intruder'),
      identity: INTRUDER,
      trust: 'authenticated',
      correlation,
    });
    const anonymous = await rig.runtime.publish({
      event: forgedStatus('forged-anonymous'),
      trust: 'trusted',
      correlation,
    });
    await rig.runtime.waitForIdle({ timeoutMs: 5_000 });
    expect(resumed).toEqual([]);
    for (const receipt of [intruder, anonymous]) {
      expect(receipt.deliveryIds).toHaveLength(1);
      const run = await rig.runtime.getRun(receipt.deliveryIds[0] as string);
      expect(run?.status).toBe('dead_lettered');
      expect(run?.error?.code).toBe('continuation_not_found');
    }
    expect((await rig.runtime.getRun(waits[0] as string))?.status).toBe('waiting_event');

    // The real completion of the first task resumes its owner, once, in the owner's scope.
    rig.source.watchTask(first.task);
    rig.source.watchTask(second.task);
    rig.server.completeTask(first.task.taskId);
    await eventually(() => resumed.length >= 1, 10_000, 'the owner to resume');
    await rig.runtime.waitForIdle({ timeoutMs: 5_000 });
    const wakeScope = `id:${encodeURIComponent('acme')}//${encodeURIComponent('ops')}/`;
    expect(resumed).toEqual([{ taskKey: keys[0], status: 'completed', scope: wakeScope, source: SOURCE }]);
    expect((await rig.runtime.getRun(waits[0] as string))?.status).toBe('succeeded');
    expect((await rig.runtime.getRun(waits[1] as string))?.status).toBe('waiting_event');

    const statuses = rig
      .of(MCP_EVENT_TYPES.taskStatus)
      .filter(
        (entry) => entry.ingress.event.subject === keys[0] && !entry.ingress.event.id.startsWith('forged'),
      );
    const completed = statuses.filter(
      (entry) => (entry.ingress.event.data as { status: string }).status === 'completed',
    );
    expect(completed.length).toBeGreaterThanOrEqual(1);
    for (const entry of statuses) {
      expect(entry.ingress.correlation).toEqual(correlation);
      expect(entry.ingress.identity).toEqual(IDENTITY);
      const data = entry.ingress.event.data as { status: string; lastUpdatedAt?: string };
      expect(entry.ingress.event.id).toBe(`task:${first.task.taskId}:${data.status}:${data.lastUpdatedAt}`);
    }
    // Seen by polling and by notification alike, the terminal status became one delivery.
    expect(completed.filter((entry) => !entry.receipt.duplicate)).toHaveLength(1);

    // The second task's failure resumes the second owner.
    rig.server.failTask(second.task.taskId, 'disk full');
    await eventually(() => resumed.length >= 2, 10_000, 'the second owner to resume');
    await rig.runtime.waitForIdle({ timeoutMs: 5_000 });
    expect(resumed).toHaveLength(2);
    expect(resumed[1]).toMatchObject({ taskKey: keys[1], status: 'failed', scope: wakeScope });
    expect(await rig.runtime.listDeadLetters()).toHaveLength(2);
  });

  if (era.wire === 'legacy') {
    describe('redelivered notifications (SSE event ids, Last-Event-ID)', () => {
      it('a GET reconnect replays what was missed, and each update is delivered once', async () => {
        const deliveries: string[] = [];
        const rig = await startRig({
          era,
          policy: [BERLIN],
          routes: () => [
            eventRoute('count-updates')
              .types(MCP_EVENT_TYPES.resourceUpdated)
              .observe((ingress) => {
                deliveries.push(ingress.event.id);
              })
              .build(),
          ],
        });
        await rig.client.callTool('adjust_stock', { warehouseId: 'berlin', sku: 'widget-a', delta: 1 });
        await eventually(
          () => rig.of(MCP_EVENT_TYPES.resourceUpdated).length === 1,
          5_000,
          'the first update',
        );
        expect(rig.server.dropStreams().legacy).toBe(1);
        // Sent while no GET stream is open: kept by the server's event store.
        await rig.client.callTool('adjust_stock', { warehouseId: 'berlin', sku: 'widget-a', delta: 1 });
        await eventually(
          () => rig.of(MCP_EVENT_TYPES.resourceUpdated).length >= 2,
          8_000,
          'the missed update',
        );
        await sleep(300);
        await rig.runtime.waitForIdle({ timeoutMs: 5_000 });
        const ids = rig.of(MCP_EVENT_TYPES.resourceUpdated).map((entry) => entry.ingress.event.id);
        expect(new Set(ids).size).toBe(2);
        expect(sorted(deliveries)).toEqual(sorted(new Set(ids)));
        expect(
          rig
            .of(MCP_EVENT_TYPES.lifecycle)
            .map((entry) => (entry.ingress.event.data as { state: string }).state),
        ).toEqual(expect.arrayContaining(['connected', 'disconnected', 'reconnected']));
      });

      it('after a lost session the subscriptions are restored once and events keep flowing', async () => {
        const server = new AxMCPDemoServer({ era: era.server, keepAliveMs: 0, maxSessions: 1 });
        const rig = await startRig({ era, server, policy: 'all' });
        rig.close = ((close) => async () => {
          await close();
          await server.close();
        })(rig.close);
        const lost = rig.client.transport.sessionId;
        // A second legacy session evicts the first (maxSessions: 1).
        const intruder = httpClient(rig.server.url, { namespace: 'other', era: 'legacy' });
        await intruder.init();
        await intruder.close();
        await eventually(
          () => rig.client.transport.sessionId !== undefined && rig.client.transport.sessionId !== lost,
          10_000,
          'a new session',
        );
        await expectWire(rig.server, era.wire, [BERLIN, CURRENT, LISBON]);
        expect(rig.server.state().methodCounts.legacy['resources/subscribe']).toBe(6);
        await eventually(
          () =>
            rig
              .of(MCP_EVENT_TYPES.lifecycle)
              .some((entry) => (entry.ingress.event.data as { state: string }).state === 'session_restored'),
          5_000,
          'the session_restored event',
        );
        await rig.client.callTool('adjust_stock', { warehouseId: 'lisbon', sku: 'widget-a', delta: 1 });
        await eventually(() => rig.of(MCP_EVENT_TYPES.resourceUpdated).length === 2, 5_000, 'the updates');
        for (const update of rig.of(MCP_EVENT_TYPES.resourceUpdated)) {
          expect(update.ingress.event.id.startsWith(`sse:${rig.client.transport.sessionId}:`)).toBe(true);
        }
      });

      it('notifications the server sends again (rewound Last-Event-ID) are deduplicated', async () => {
        let rewindTo: string | undefined;
        const rewinds: string[] = [];
        const rewinding = ((input: string | URL | Request, init?: RequestInit) => {
          if (rewindTo !== undefined && init?.method === 'GET') {
            const headers = new Headers(init.headers);
            if (headers.has('last-event-id')) {
              rewinds.push(`${headers.get('last-event-id')} → ${rewindTo}`);
              headers.set('last-event-id', rewindTo);
              rewindTo = undefined;
              return fetch(input, { ...init, headers });
            }
          }
          return fetch(input, init);
        }) as typeof fetch;
        const deliveries: string[] = [];
        const rig = await startRig({
          era,
          policy: [BERLIN],
          fetch: rewinding,
          routes: () => [
            eventRoute('count-updates')
              .types(MCP_EVENT_TYPES.resourceUpdated)
              .observe((ingress) => {
                deliveries.push(ingress.event.id);
              })
              .build(),
          ],
        });
        for (let i = 0; i < 3; i++) {
          await rig.client.callTool('adjust_stock', { warehouseId: 'berlin', sku: 'widget-b', delta: 1 });
        }
        await eventually(() => rig.of(MCP_EVENT_TYPES.resourceUpdated).length === 3, 5_000, 'three updates');
        const sseIds = rig.clientEvents.flatMap((event) =>
          event.type === 'resource_updated' && event.eventId !== undefined ? [event.eventId] : [],
        );
        expect(sseIds).toHaveLength(3);
        // The reconnect asks for everything after the first update: the server sends the other two again.
        rewindTo = sseIds[0];
        rig.server.dropStreams();
        await eventually(
          () => rig.of(MCP_EVENT_TYPES.resourceUpdated).length === 5,
          8_000,
          'the replayed updates',
        );
        await rig.runtime.waitForIdle({ timeoutMs: 5_000 });
        expect(rewinds).toHaveLength(1);
        const receipts = rig.of(MCP_EVENT_TYPES.resourceUpdated).map((entry) => entry.receipt);
        expect(receipts.map((receipt) => receipt.duplicate)).toEqual([false, false, false, true, true]);
        expect(receipts.slice(3).map((receipt) => receipt.eventId)).toEqual(
          receipts.slice(1, 3).map((r) => r.eventId),
        );
        expect(deliveries).toHaveLength(3);
        expect(new Set(deliveries).size).toBe(3);
      });
    });
  }

  it('a restarted client on the same store: its catalog changes are not taken for duplicates', async () => {
    const store = new AxMemoryEventStore();
    const server = new AxMCPDemoServer({ era: era.server, keepAliveMs: 0 });
    try {
      const invalidations: number[] = [];
      for (const [index, uri] of [PORTO, 'inventory://warehouse/oslo'].entries()) {
        const rig = await startRig({
          era,
          server,
          store,
          policy: 'all',
          onCatalogInvalidated: () => {
            invalidations.push(index);
          },
        });
        server.addResource({ uri, name: `warehouse-${index}` });
        await eventually(
          () => rig.of(MCP_EVENT_TYPES.catalogChanged).length === 1,
          5_000,
          'the catalog event',
        );
        await rig.runtime.waitForIdle({ timeoutMs: 5_000 });
        expect(rig.of(MCP_EVENT_TYPES.catalogChanged)[0]?.receipt.duplicate).toBe(false);
        await rig.close();
        rigs.splice(rigs.indexOf(rig), 1);
      }
      expect(invalidations).toEqual([0, 1]);
    } finally {
      await server.close();
      await store.close();
    }
  });
});

describe('AxMCPEventSource against server-everything: progress and logging are observed', () => {
  let everything: EverythingServer;

  beforeAll(async () => {
    everything = await startEverythingServer({ mode: 'streamableHttp' });
  });

  afterAll(async () => {
    await everything?.close();
  });

  /** A legacy client, a source with `policy`, the default routes with `onObserve`, every publish recorded. */
  async function observing(policy: AxMCPResourceSubscriptionPolicy) {
    const client = httpClient(everything.url, {
      namespace: 'everything',
      era: 'legacy',
      logLevel: 'info',
      timeoutMs: 15_000,
    });
    const observed: AxEventIngress[] = [];
    const published: { ingress: AxEventIngress; receipt: AxEventReceipt }[] = [];
    const source = new AxMCPEventSource({
      client,
      identity: IDENTITY,
      trust: 'authenticated',
      resourceSubscriptions: policy,
    });
    const runtime = eventRuntime({
      sources: [source],
      allowVolatile: true,
      routes: axMCPEventRoutes({
        client,
        onObserve: (ingress) => {
          observed.push(ingress as AxEventIngress);
        },
      }),
    });
    const publish = runtime.publish.bind(runtime);
    runtime.publish = async (ingress, options) => {
      const receipt = await publish(ingress, options);
      published.push({ ingress, receipt });
      return receipt;
    };
    cleanups.push(async () => {
      await runtime.close();
      await client.close();
    });
    await runtime.start();
    const logs = () => observed.filter((ingress) => ingress.event.type === MCP_EVENT_TYPES.logging);
    return { client, source, runtime, observed, published, logs };
  }

  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it('onObserve receives mcp.progress and mcp.logging; neither wakes anything', async () => {
    const { client, runtime, observed, published, logs } = await observing('none');
    // server-everything acknowledges a subscription with an info log on the standalone stream.
    await client.subscribeResource('demo://resource/dynamic/text/2');
    await eventually(() => logs().length >= 1, 5_000, 'the logging event');
    const logged = logs()[0] as AxEventIngress;
    expect(logged.event.source).toBe('mcp://everything');
    expect(logged.event.data).toMatchObject({ namespace: 'everything', level: 'info' });
    expect(JSON.stringify(logged.event.data)).toContain('demo://resource/dynamic/text/2');
    expect(logged.identity).toEqual(IDENTITY);
    expect(logged.event.id).toMatch(new RegExp(`^sse:${client.transport.sessionId}:.`));

    const progress: number[] = [];
    await client.callTool(
      'trigger-long-running-operation',
      { duration: 0.2, steps: 2 },
      { onProgress: (update) => progress.push(update.progress) },
    );
    await eventually(
      () => observed.filter((ingress) => ingress.event.type === MCP_EVENT_TYPES.progress).length >= 2,
      5_000,
      'two progress events',
    );
    const progressEvents = observed.filter((ingress) => ingress.event.type === MCP_EVENT_TYPES.progress);
    expect(progress).toHaveLength(2);
    expect(progressEvents.map((ingress) => (ingress.event.data as { progress: number }).progress)).toEqual(
      progress,
    );
    expect(progressEvents[0]?.event.data).toMatchObject({ namespace: 'everything', total: 2 });
    expect(progressEvents[0]?.identity).toEqual(IDENTITY);
    await runtime.waitForIdle({ timeoutMs: 5_000 });
    const observable = published.filter(
      (entry) =>
        entry.ingress.event.type === MCP_EVENT_TYPES.progress ||
        entry.ingress.event.type === MCP_EVENT_TYPES.logging,
    );
    expect(observable.length).toBeGreaterThanOrEqual(3);
    for (const entry of observable) {
      expect(entry.receipt.deliveryIds).toHaveLength(1);
      const run = await runtime.getRun(entry.receipt.deliveryIds[0] as string);
      expect(run).toMatchObject({ action: 'observe', status: 'succeeded', targetId: null });
    }
  });

  it("notifications the server sends while accepting the source's initial subscriptions are observed", async () => {
    const { logs } = await observing(['demo://resource/dynamic/text/1']);
    await eventually(() => logs().length >= 1, 5_000, 'the logging event of the initial subscription');
    expect(JSON.stringify(logs()[0]?.event.data)).toContain('demo://resource/dynamic/text/1');
  });
});
