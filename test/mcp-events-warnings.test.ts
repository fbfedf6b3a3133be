/**
 * Loud, never silent, for MCP events: against the demo server, the runtime warns (once per
 * source and route) when an `AxMCPEventSource` publishes anonymous or untrusted events that
 * only authenticated routes want, and when its resource policy selects nothing while a route
 * waits for `mcp.resource.updated` — and says nothing when the wiring is right.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AxMCPDemoServer } from '../src/demo.js';
import {
  type AxEventIdentity,
  type AxEventRouteDefinition,
  type AxEventTrust,
  type AxEventWarning,
  type AxMCPClient,
  AxMCPEventSource,
  type AxMCPResourceSubscriptionPolicy,
  axMCPEventRoutes,
  eventRoute,
  eventRuntime,
  eventTarget,
  MCP_EVENT_TYPES,
} from '../src/index.js';
import { httpClient } from './helpers/clients.js';

const NS = 'inv';
const IDENTITY: AxEventIdentity = { tenantId: 'acme', userId: 'ops' };

let server: AxMCPDemoServer;
let url: string;
beforeAll(async () => {
  server = new AxMCPDemoServer({ era: 'modern', keepAliveMs: 0 });
  url = await server.start();
});
afterAll(async () => {
  await server.close();
});

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close().catch(() => {});
});

interface Wiring {
  policy?: AxMCPResourceSubscriptionPolicy;
  identity?: AxEventIdentity;
  trust?: AxEventTrust;
  /** Subscribe through the client directly, as another owner, before the runtime starts. */
  manual?: string;
  /** Routes beside the default ones and restock-on-update. */
  routes?: AxEventRouteDefinition[];
}

async function wire(options: Wiring) {
  const client: AxMCPClient = httpClient(url, { namespace: NS, timeoutMs: 10_000 });
  open.push(client);
  if (options.manual) await client.subscribeResource(options.manual);
  const source = new AxMCPEventSource({
    client,
    ...(options.policy === undefined ? {} : { resourceSubscriptions: options.policy }),
    ...(options.identity ? { identity: options.identity } : {}),
    ...(options.trust ? { trust: options.trust } : {}),
  });
  const warnings: { message: string; details: AxEventWarning }[] = [];
  const restock = eventTarget('restock')
    .invoke(() => ({ ok: true }))
    .build();
  const runtime = eventRuntime({
    sources: [source],
    allowVolatile: true,
    onWarning: (message, details) => warnings.push({ message, details }),
    routes: [
      ...axMCPEventRoutes({ client }),
      eventRoute('restock-on-update')
        .types(MCP_EVENT_TYPES.resourceUpdated)
        .authenticated()
        .wake(restock)
        .build(),
      ...(options.routes ?? []),
    ],
  });
  open.push(runtime);
  await runtime.start();
  return { warnings, source, client };
}

describe('AxMCPEventSource warnings', () => {
  it('anonymous, untrusted events for an authenticated route: reported once, naming the route and what to set', async () => {
    const { warnings } = await wire({ policy: 'all' });
    expect(warnings.map((w) => w.details)).toEqual([
      {
        code: 'unauthenticated_source',
        sourceId: `mcp:${NS}`,
        routeId: 'restock-on-update',
        type: MCP_EVENT_TYPES.resourceUpdated,
      },
    ]);
    const message = warnings[0]?.message;
    expect(message).toContain('Route restock-on-update');
    expect(message).toContain('anonymous and untrusted');
    expect(message).toContain('set identity and trust');
  });

  it("the default policy 'none' while a route waits for mcp.resource.updated", async () => {
    const { warnings, source } = await wire({ identity: IDENTITY, trust: 'authenticated' });
    expect(source.subscriptions).toEqual([]);
    expect(warnings.map((w) => w.details)).toEqual([
      {
        code: 'withheld_type',
        sourceId: `mcp:${NS}`,
        routeId: 'restock-on-update',
        type: MCP_EVENT_TYPES.resourceUpdated,
      },
    ]);
    expect(warnings[0]?.message).toContain("its resourceSubscriptions policy is 'none' (the default)");
    expect(warnings[0]?.message).toContain(
      "set resourceSubscriptions to 'all', a list of URIs or { select(resource) }",
    );
  });

  it('a selector whose selection came out empty', async () => {
    const { warnings, source } = await wire({
      policy: { select: (resource) => resource.uri.startsWith('inventory://nowhere/') },
      identity: IDENTITY,
      trust: 'authenticated',
    });
    expect(source.subscriptions).toEqual([]);
    expect(warnings.map((w) => w.details.code)).toEqual(['withheld_type']);
    expect(warnings[0]?.message).toContain(`selected no resource of the ${NS} catalog`);
  });

  it('a misspelled mcp.* type: reported once per route, with the type it was likely meant to be', async () => {
    const observe = () => {};
    const { warnings } = await wire({
      policy: 'all',
      identity: IDENTITY,
      trust: 'authenticated',
      routes: [
        eventRoute('typo').types('mcp.resource.update').observe(observe).build(),
        eventRoute('typo-among-good').types('mcp.logging', 'mcp.tasks.*').observe(observe).build(),
        // Under mcp.* and right, outside it, or narrowed to another source: nothing to say.
        eventRoute('tasks').types('mcp.task.*').observe(observe).build(),
        eventRoute('all-mcp').types('mcp.*').observe(observe).build(),
        eventRoute('app').types('app.order.created').observe(observe).build(),
        eventRoute('elsewhere').sources('mcp://other').types('mcp.resource.update').observe(observe).build(),
      ],
    });
    expect(warnings.map((w) => w.details)).toEqual([
      { code: 'unknown_type', sourceId: `mcp:${NS}`, routeId: 'typo', type: 'mcp.resource.update' },
      { code: 'unknown_type', sourceId: `mcp:${NS}`, routeId: 'typo-among-good', type: 'mcp.tasks.*' },
    ]);
    expect(warnings[0]?.message).toBe(
      `Route typo waits for mcp.resource.update (did you mean mcp.resource.updated?), which source mcp:${NS} ` +
        `never publishes: its mcp.* types are ${Object.values(MCP_EVENT_TYPES).join(', ')}`,
    );
    expect(warnings[1]?.message).toContain('Route typo-among-good waits for mcp.tasks.*, which source');
  });

  it('a misspelled mcp.* type is reported while resource updates are withheld too', async () => {
    const { warnings } = await wire({
      identity: IDENTITY,
      trust: 'authenticated',
      routes: [
        eventRoute('typo')
          .types('mcp.resource.updatd')
          .observe(() => {})
          .build(),
      ],
    });
    // The withheld type still counts as one of the source's types: the typo is named as such.
    expect(warnings.map((w) => [w.details.code, w.details.routeId])).toEqual([
      ['unknown_type', 'typo'],
      ['withheld_type', 'restock-on-update'],
    ]);
    expect(warnings[0]?.message).toContain('(did you mean mcp.resource.updated?)');
  });

  it('nothing when everything is wired right', async () => {
    const { warnings, source } = await wire({ policy: 'all', identity: IDENTITY, trust: 'authenticated' });
    expect(source.subscriptions.length).toBeGreaterThan(0);
    expect(warnings).toEqual([]);
  });

  it("nothing for 'none' when the client holds another owner's subscription (its updates still arrive)", async () => {
    const { warnings, client } = await wire({
      manual: 'inventory://warehouse/berlin',
      identity: IDENTITY,
      trust: 'authenticated',
    });
    expect(client.subscriptions.map((entry) => entry.uri)).toEqual(['inventory://warehouse/berlin']);
    expect(warnings).toEqual([]);
  });
});
