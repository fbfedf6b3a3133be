/**
 * MCP events against `@modelcontextprotocol/server-everything` (the reference server, legacy era
 * only, Streamable HTTP): the `'all'` policy subscribes every concrete resource and no template,
 * `toggle-subscriber-updates` updates become attributed `mcp.resource.updated` events that an
 * authenticated wake route (and only it) acts on, and `gzip-file-as-resource` (a new session
 * resource, announced with `resources/list_changed`) is reconciled before `mcp.catalog.changed`
 * is published. The server's simulated updates come every ~5 s after a first immediate batch:
 * the tests wait only for that first batch and stop the simulation at once.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type AxEventIdentity,
  type AxEventIngress,
  type AxEventReceipt,
  type AxEventRuntime,
  type AxMCPClient,
  type AxMCPClientEvent,
  AxMCPEventSource,
  axMCPEventRoutes,
  eventRoute,
  eventRuntime,
  eventTarget,
  MCP_EVENT_TYPES,
} from '../src/index.js';
import { eventually, httpClient } from './helpers/clients.js';
import { type EverythingServer, startEverythingServer } from './servers/everything.js';

const NS = 'everything';
const SOURCE = `mcp://${NS}`;
const IDENTITY: AxEventIdentity = { tenantId: 'acme', userId: 'ops' };

interface Published {
  ingress: AxEventIngress;
  receipt: AxEventReceipt;
  /** The source's subscriptions when the event was published. */
  sourceAtPublish: string[];
}

interface Rig {
  client: AxMCPClient;
  source: AxMCPEventSource;
  runtime: AxEventRuntime;
  published: Published[];
  clientEvents: AxMCPClientEvent[];
  woken: { subject: string | undefined; trust: string; scope: string }[];
  sourceErrors: unknown[];
  of(type: string): Published[];
}

let server: EverythingServer;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  server = await startEverythingServer({ mode: 'streamableHttp' });
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  await server?.close();
});

/** A fresh legacy session with an `'all'` source, the default routes and an authenticated wake route. */
async function startRig(options: { identity?: AxEventIdentity; trust?: 'authenticated' | 'untrusted' } = {}) {
  const client = httpClient(server.url, { namespace: NS, era: 'legacy', timeoutMs: 15_000 });
  const clientEvents: AxMCPClientEvent[] = [];
  client.subscribeEvents((event) => clientEvents.push(event));
  const source = new AxMCPEventSource({
    client,
    resourceSubscriptions: 'all',
    trust: options.trust ?? 'authenticated',
    ...(options.identity ? { identity: options.identity } : {}),
  });
  const woken: Rig['woken'] = [];
  const sourceErrors: unknown[] = [];
  const target = eventTarget('on-update')
    .invoke((_input, context) => {
      woken.push({ subject: context.event.subject, trust: context.trust, scope: context.identityScope });
      return null;
    })
    .build();
  const runtime = eventRuntime({
    sources: [source],
    allowVolatile: true,
    onError: (error, report) => {
      if (report.phase === 'source') sourceErrors.push(error);
    },
    routes: [
      ...axMCPEventRoutes({ client }),
      eventRoute('wake-on-update')
        .types(MCP_EVENT_TYPES.resourceUpdated)
        .authenticated()
        .wake(target)
        .build(),
    ],
  });
  const published: Published[] = [];
  const publish = runtime.publish.bind(runtime);
  runtime.publish = async (ingress, publishOptions) => {
    const sourceAtPublish = source.subscriptions;
    const receipt = await publish(ingress, publishOptions);
    published.push({ ingress, receipt, sourceAtPublish });
    return receipt;
  };
  cleanups.push(async () => {
    await runtime.close().catch(() => {});
    await client.close().catch(() => {});
  });
  await runtime.start();
  const rig: Rig = {
    client,
    source,
    runtime,
    published,
    clientEvents,
    woken,
    sourceErrors,
    of: (type) => published.filter((entry) => entry.ingress.event.type === type),
  };
  return rig;
}

function texts(result: { content: unknown[] }): string {
  return result.content.map((block) => (block as { type?: string; text?: string }).text ?? '').join('\n');
}

/** Turns the simulated updates on, waits for the first batch (sent at once), and turns them off again. */
async function firstUpdateBatch(rig: Rig, count: number): Promise<void> {
  const started = await rig.client.callTool('toggle-subscriber-updates');
  expect(texts(started)).toContain('Started simulated resource updated');
  try {
    await eventually(
      () => rig.of(MCP_EVENT_TYPES.resourceUpdated).length >= count,
      4_000,
      `${count} resource updates (have ${rig.of(MCP_EVENT_TYPES.resourceUpdated).length})`,
    );
  } finally {
    const stopped = await rig.client.callTool('toggle-subscriber-updates');
    expect(texts(stopped)).toContain('Stopped simulated resource updates');
  }
}

describe('AxMCPEventSource against server-everything (legacy, Streamable HTTP)', () => {
  it("'all' subscribes every concrete resource and never a template", async () => {
    const rig = await startRig({ identity: IDENTITY });
    expect(rig.client.getEra()).toBe('legacy');
    const catalog = await rig.client.inspectCatalog();
    const concrete = catalog.resources.map((resource) => resource.uri).sort();
    expect(concrete.length).toBeGreaterThanOrEqual(1);
    expect(catalog.resourceTemplates.length).toBeGreaterThanOrEqual(1);
    expect(rig.source.subscriptions).toEqual(concrete);
    for (const template of catalog.resourceTemplates) {
      expect(rig.source.subscriptions).not.toContain(template.uriTemplate);
    }
    expect(rig.source.subscriptions.some((uri) => uri.includes('{'))).toBe(false);
    expect(rig.client.subscriptions).toEqual(concrete.map((uri) => ({ uri, owners: [`mcp:${NS}`] })));
    expect(rig.sourceErrors).toEqual([]);
  });

  it('toggle-subscriber-updates: every subscribed resource becomes an attributed mcp.resource.updated', async () => {
    const rig = await startRig({ identity: IDENTITY });
    const subscribed = rig.source.subscriptions;
    await firstUpdateBatch(rig, subscribed.length);
    await rig.runtime.waitForIdle({ timeoutMs: 5_000 });
    const updates = rig.of(MCP_EVENT_TYPES.resourceUpdated);
    const subjects = [...new Set(updates.map((entry) => entry.ingress.event.subject ?? ''))].sort();
    expect(subjects).toEqual(subscribed);
    const sessionId = rig.client.transport.sessionId;
    for (const update of updates) {
      expect(update.ingress).toMatchObject({
        event: { source: SOURCE, data: { namespace: NS, uri: update.ingress.event.subject } },
        identity: IDENTITY,
        trust: 'authenticated',
      });
      expect(update.ingress.event.id.startsWith(`sse:${sessionId}:`)).toBe(true);
      expect(update.receipt.duplicate).toBe(false);
    }
    // Each distinct update woke the authenticated route once, in the source's identity scope.
    const distinct = updates.filter((entry) => !entry.receipt.duplicate);
    expect(rig.woken).toHaveLength(distinct.length);
    expect(new Set(rig.woken.map((wake) => wake.scope))).toEqual(new Set(['id:acme//ops/']));
  });

  it('anonymous updates never wake the authenticated route', async () => {
    const rig = await startRig({ trust: 'authenticated' });
    await firstUpdateBatch(rig, 1);
    await rig.runtime.waitForIdle({ timeoutMs: 5_000 });
    const updates = rig.of(MCP_EVENT_TYPES.resourceUpdated);
    expect(updates.length).toBeGreaterThanOrEqual(1);
    for (const update of updates) {
      expect(update.ingress.identity).toBeUndefined();
      expect(update.receipt.deliveryIds).toEqual([]);
    }
    expect(rig.woken).toEqual([]);
  });

  it('gzip-file-as-resource: the new resource is subscribed before mcp.catalog.changed is published', async () => {
    const rig = await startRig({ identity: IDENTITY });
    const before = rig.source.subscriptions;
    const name = `mcp-events-${process.pid}-${Date.now()}.txt.gz`;
    const uri = `demo://resource/session/${name}`;
    const result = await rig.client.callTool('gzip-file-as-resource', {
      name,
      data: `data:text/plain;base64,${Buffer.from('reconcile me\n').toString('base64')}`,
    });
    expect(result.content).toEqual([{ type: 'resource_link', uri, name, mimeType: 'application/gzip' }]);
    await eventually(
      () =>
        rig
          .of(MCP_EVENT_TYPES.catalogChanged)
          .some((entry) => (entry.ingress.event.data as { kinds: string[] }).kinds.includes('resources')),
      5_000,
      'the catalog event',
    );
    const changed = rig
      .of(MCP_EVENT_TYPES.catalogChanged)
      .find((entry) =>
        (entry.ingress.event.data as { kinds: string[] }).kinds.includes('resources'),
      ) as Published;
    expect(changed.sourceAtPublish).toEqual([...before, uri].sort());
    expect(changed.ingress.event).toMatchObject({ source: SOURCE, subject: 'catalog' });
    expect(rig.client.subscriptions.map((entry) => entry.uri)).toContain(uri);
    expect(changed.receipt.deliveryIds).toHaveLength(1);
    await rig.runtime.waitForIdle({ timeoutMs: 5_000 });
    const run = await rig.runtime.getRun(changed.receipt.deliveryIds[0] as string);
    expect(run).toMatchObject({ action: 'invalidate', status: 'succeeded' });

    // The new resource is live: the simulated updates now include it.
    await firstUpdateBatch(rig, rig.source.subscriptions.length);
    expect(rig.of(MCP_EVENT_TYPES.resourceUpdated).map((entry) => entry.ingress.event.subject)).toContain(
      uri,
    );
  });
});
