import { describe, expect, it } from 'vitest';
import type { AxMCPReadResourceResult } from '../protocol/messages.js';
import { CatalogChanges } from './catalog-changes.js';
import { Inbound } from './inbound.js';
import type { AxMCPClientOptions } from './options.js';
import { ReadCache } from './read-cache.js';
import { LEGACY_INITIALIZE, scriptedCatalog, scriptedConnection } from './scripted-transport.fixture.js';
import { ServerStream } from './server-stream.js';
import { ElicitationCompletions } from './url-elicitation.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

function rigWith(options: Partial<AxMCPClientOptions> = {}) {
  let tools = [{ name: 'a', inputSchema: { type: 'object' as const } }];
  const rig = scriptedConnection(
    {
      initialize: () => LEGACY_INITIALIZE({ tools: { listChanged: true } }),
      'tools/list': () => ({ tools }),
    },
    options,
  );
  const catalog = scriptedCatalog(rig.connection);
  rig.connection.setHooks({
    adopted: (identity) => catalog.reset(identity.capabilities),
    replaced: () => {},
    restored: async () => {},
    serverRequestsNeedStream: () => {},
    headerMismatch: async () => {},
  });
  const readCache = new ReadCache();
  const catalogChanges = new CatalogChanges(rig.connection, catalog);
  const inbound: Inbound = new Inbound({
    connection: rig.connection,
    stream: new ServerStream({
      connection: rig.connection,
      taskWakers: rig.taskWakers,
      dispatch: (message, context) => inbound.receive(message, context),
      lookAfterReconnect: () => {},
    }),
    catalogChanges,
    readCache,
    taskWakers: rig.taskWakers,
    elicitationCompletions: new ElicitationCompletions(),
  });
  return {
    ...rig,
    inbound,
    readCache,
    catalog,
    catalogChanges,
    setTools: (next: typeof tools) => {
      tools = next;
    },
  };
}

describe('Inbound', () => {
  it('handles messages handed over together in one later turn, in order', async () => {
    const rig = rigWith();
    await rig.connection.init();
    rig.inbound.receive({ jsonrpc: '2.0', method: 'notifications/first' }, {});
    rig.inbound.receive({ jsonrpc: '2.0', method: 'notifications/second' }, { eventId: '7' });
    expect(rig.seen).toEqual([]);
    await tick();
    expect(rig.seen.map((event) => (event as { method?: string }).method)).toEqual([
      'notifications/first',
      'notifications/second',
    ]);
  });

  it('a resource update forgets the cached read and becomes a resource_updated event with its event id', async () => {
    const rig = rigWith();
    await rig.connection.init();
    rig.readCache.keep('res://a', { contents: [], ttlMs: 60_000 } as unknown as AxMCPReadResourceResult);
    rig.inbound.receive(
      { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'res://a' } },
      { eventId: 'e1' },
    );
    await tick();
    expect(rig.readCache.get('res://a')).toBeUndefined();
    expect(rig.seen).toEqual([{ type: 'resource_updated', namespace: 'ns', uri: 'res://a', eventId: 'e1' }]);
  });

  it('answers a server request through the handler the options give', async () => {
    const rig = rigWith({ roots: [{ uri: 'file:///work', name: 'work' }] });
    await rig.connection.init();
    rig.inbound.receive({ jsonrpc: '2.0', id: 9, method: 'roots/list' }, {});
    await tick();
    await tick();
    expect(rig.responded).toEqual([
      { jsonrpc: '2.0', id: 9, result: { roots: [{ uri: 'file:///work', name: 'work' }] } },
    ]);
  });

  it("a handler that throws is told to onError as well as answered; a request refused as malformed is not the caller's", async () => {
    const rig = rigWith({
      sampling: () => {
        throw new Error('the model API is down');
      },
    });
    await rig.connection.init();
    rig.inbound.receive(
      { jsonrpc: '2.0', id: 's1', method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } },
      {},
    );
    rig.inbound.receive({ jsonrpc: '2.0', id: 's2', method: 'sampling/createMessage', params: {} }, {});
    await tick();
    await tick();
    const answered = rig.responded.map(
      (answer) => (answer as { error?: { message: string } }).error?.message,
    );
    expect(answered.sort()).toEqual([
      'Client failed to handle the request',
      'sampling/createMessage needs messages and maxTokens',
    ]);
    // Before, only the server heard, and only that the client failed.
    expect(rig.reported.map((error) => (error as Error).message)).toEqual(['the model API is down']);
  });

  it('a cancelled server request is never answered', async () => {
    let release!: () => void;
    const rig = rigWith({
      sampling: () =>
        new Promise((resolve) => {
          release = () => resolve({ role: 'assistant', content: { type: 'text', text: 'late' }, model: 'm' });
        }),
    });
    await rig.connection.init();
    rig.inbound.receive(
      { jsonrpc: '2.0', id: 'r1', method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } },
      {},
    );
    await tick();
    rig.inbound.receive(
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'r1' } },
      {},
    );
    await tick();
    release();
    await tick();
    expect(rig.responded).toEqual([]);
  });
});

describe('CatalogChanges', () => {
  it("announces the server's list_changed always, and a look of ours only when the list differs", async () => {
    const rig = rigWith();
    await rig.connection.init();
    await rig.catalog.load(['tools']);
    const announced = () => rig.seen.filter((event) => event.type === 'catalog_changed');
    rig.catalogChanges.refresh(['tools'], { onlyIfChanged: true });
    await tick();
    expect(announced()).toHaveLength(0);
    rig.inbound.receive({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }, {});
    await tick();
    await tick();
    expect(announced()).toHaveLength(1);
    rig.setTools([{ name: 'b', inputSchema: { type: 'object' } }]);
    rig.catalogChanges.refresh(['tools'], { onlyIfChanged: true });
    await tick();
    expect(announced()).toHaveLength(2);
    expect(rig.catalog.tool('b')).toBeDefined();
  });
});
