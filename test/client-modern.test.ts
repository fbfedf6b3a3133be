/**
 * AxMCPClient in the 2026-07-28 (modern, stateless) era against real peers on the official v2
 * server SDK: the modern test peer (test/servers/modern.ts), the dual-era and modern-only demo
 * (src/demo) and a legacy-only peer (test/servers/legacy-v2.ts). Covered: `auto` era
 * classification and the era store, `-32022` version negotiation, the `MCP-Protocol-Version` /
 * `Mcp-Method` / `Mcp-Name` / `Mcp-Param-*` headers and the per-request `_meta` (asserted by what
 * the server received), the `-32020` retry, MRTR (elicitation, sampling, roots, the round cap, a
 * missing handler), cache hints and freshness, and tools dropped for invalid `x-mcp-header`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AxMCPDemoServer } from '../src/demo/index.js';
import {
  type AxMCPClient,
  type AxMCPClientOptions,
  type AxMCPCreateMessageParams,
  type AxMCPElicitParams,
  AxMCPError,
  AxMCPMemoryEraStore,
  AxMCPProtocolError,
  RPC,
  TASKS_EXTENSION,
} from '../src/index.js';
import { eventually, httpClient } from './helpers/clients.js';
import { type LegacyV2Server, startLegacyV2Server } from './servers/legacy-v2.js';
import {
  MODERN_PEER_CACHE_HINTS,
  type ModernPeer,
  type ModernPeerRequest,
  startModernServer,
} from './servers/modern.js';

const MODERN = '2026-07-28';
const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';

/** What the server must receive for a value sent as `=?base64?…?=`. */
function b64(value: string): string {
  return `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** A client with a unique `clientInfo` name, so the peer's request log can be filtered by it. */
let clientSeq = 0;
function modernClient(
  url: string,
  options: Partial<AxMCPClientOptions> = {},
  transport: Parameters<typeof httpClient>[2] = {},
): { client: AxMCPClient; name: string } {
  const name = `modern-test-${++clientSeq}`;
  const client = httpClient(
    url,
    {
      era: 'auto',
      timeoutMs: 10_000,
      clientInfo: { name, version: '9.9.9' },
      // The peer's invalid_header tool is dropped with a warning; keep the test output quiet.
      onWarning: () => {},
      ...options,
    },
    transport,
  );
  return { client, name };
}

/** The requests the peer received from the client called `name`. */
function requestsOf(peer: ModernPeer, name: string): ModernPeerRequest[] {
  return peer.stats.requests.filter((request) => {
    const meta = request.meta as Record<string, unknown> | undefined;
    const info = meta?.[META_CLIENT_INFO] as { name?: unknown } | undefined;
    return info?.name === name;
  });
}

function count(map: ReadonlyMap<string, number>, key: string): number {
  return map.get(key) ?? 0;
}

function texts(result: { content: ReadonlyArray<{ type: string; [key: string]: unknown }> }): string {
  return result.content
    .filter((block) => block.type === 'text')
    .map((block) => String(block.text))
    .join('\n');
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

describe('era classification (auto)', () => {
  let peer: ModernPeer;
  let dual: AxMCPDemoServer;
  let modernOnly: AxMCPDemoServer;
  let legacy: LegacyV2Server;
  const clients: AxMCPClient[] = [];
  const track = (client: AxMCPClient) => {
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    peer = await startModernServer();
    dual = new AxMCPDemoServer({ era: 'dual', keepAliveMs: 0 });
    modernOnly = new AxMCPDemoServer({ era: 'modern', keepAliveMs: 0 });
    await dual.start();
    await modernOnly.start();
    legacy = await startLegacyV2Server({ keepAliveMs: 0 });
  });

  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => {});
    await peer?.close();
    await dual?.close();
    await modernOnly?.close();
    await legacy?.close();
  });

  it('classifies the modern peer as modern with one server/discover and no initialize', async () => {
    const { client } = modernClient(peer.url);
    track(client);
    const discovers = count(peer.stats.methods, 'server/discover');
    await client.init();
    expect(client.getEra()).toBe('modern');
    expect(client.protocolVersion).toBe(MODERN);
    expect(client.serverInfo).toMatchObject({ name: 'modern-test-peer', version: '1.0.0' });
    expect(client.instructions).toContain('modern 2026-07-28 test peer');
    expect(count(peer.stats.methods, 'server/discover') - discovers).toBe(1);
    expect(peer.stats.methods.has('initialize')).toBe(false);
    const discovered = await client.discover();
    expect(discovered.supportedVersions).toContain(MODERN);
  });

  it('classifies the dual-era demo as modern: no legacy session is opened', async () => {
    const client = track(httpClient(dual.url, { era: 'auto', timeoutMs: 10_000 }));
    await client.init();
    expect(client.getEra()).toBe('modern');
    expect(client.protocolVersion).toBe(MODERN);
    expect(client.serverInfo).toMatchObject({ name: 'ax-mcp-demo' });
    const state = dual.state();
    expect(state.methodCounts.modern['server/discover']).toBe(1);
    expect(state.methodCounts.legacy.initialize).toBeUndefined();
    expect(state.sessions).toHaveLength(0);
    const stock = await client.callTool('get_stock', { sku: 'widget-a' });
    expect(stock.structuredContent).toMatchObject({ sku: 'widget-a', total: 155 });
  });

  it('classifies the modern-only demo (GET/DELETE 405, initialize rejected) as modern', async () => {
    // The endpoint really is modern-only.
    expect((await fetch(modernOnly.url, { headers: { accept: 'text/event-stream' } })).status).toBe(405);
    expect((await fetch(modernOnly.url, { method: 'DELETE' })).status).toBe(405);
    const init = await fetch(modernOnly.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      }),
    });
    expect(init.status).toBe(400);
    expect(((await init.json()) as { error: { code: number } }).error.code).toBe(RPC.unsupportedVersion);

    const initializes = modernOnly.state().methodCounts.modern.initialize ?? 0;
    const client = track(httpClient(modernOnly.url, { era: 'auto', timeoutMs: 10_000 }));
    await client.init();
    expect(client.getEra()).toBe('modern');
    expect((await client.callTool('get_stock', { sku: 'gadget-x' })).structuredContent).toMatchObject({
      total: 43,
    });
    expect(modernOnly.state().methodCounts.modern.initialize ?? 0).toBe(initializes);

    // Pinned to legacy, the same endpoint fails with a typed error instead of hanging.
    const pinned = track(httpClient(modernOnly.url, { era: 'legacy', timeoutMs: 5_000 }));
    const error = await rejection(pinned.init());
    expect(error).toBeInstanceOf(AxMCPProtocolError);
    expect(error).toMatchObject({
      rpcCode: RPC.unsupportedVersion,
      data: { supported: [MODERN], requested: '2025-11-25' },
    });
    expect(pinned.getEra()).toBeUndefined();
  });

  it('classifies the legacy-only peer as legacy after one probe, then initializes', async () => {
    const client = track(httpClient(legacy.url, { era: 'auto', timeoutMs: 10_000 }));
    const probes = count(legacy.stats.methods, 'server/discover');
    const inits = legacy.stats.initializeCount;
    await client.init();
    expect(client.getEra()).toBe('legacy');
    expect(client.protocolVersion).toBe('2025-11-25');
    expect(count(legacy.stats.methods, 'server/discover') - probes).toBe(1);
    expect(legacy.stats.initializeCount - inits).toBe(1);
    expect((await client.callTool('echo', { message: 'from auto' })).content).toEqual([
      { type: 'text', text: 'from auto' },
    ]);
  });

  it('an era store that fails is a cache that missed: the client connects, and onError hears of it', async () => {
    const errors: unknown[] = [];
    const broken = {
      get: () => Promise.reject(new Error('era store unreachable')),
      set: () => {
        throw new Error('era store is read-only');
      },
    };
    const client = track(modernClient(peer.url, { eraStore: broken, onError: (e) => errors.push(e) }).client);
    // Before, init() failed with the store's error, the server connected and nothing kept.
    await client.init();
    expect(client.getEra()).toBe('modern');
    expect((await client.callTool('echo', { message: 'no cache' })).content).toEqual([
      { type: 'text', text: 'no cache' },
    ]);
    expect(errors.map((e) => (e as Error).message)).toEqual([
      'era store unreachable',
      'era store is read-only',
    ]);
  });

  it('a second client sharing the era store sends no server/discover (modern)', async () => {
    const eraStore = new AxMCPMemoryEraStore();
    const first = track(modernClient(peer.url, { eraStore }).client);
    const before = count(peer.stats.methods, 'server/discover');
    await first.init();
    expect(count(peer.stats.methods, 'server/discover') - before).toBe(1);
    expect(eraStore.get(first.transport.endpointKey)).toMatchObject({
      era: 'modern',
      protocolVersion: MODERN,
    });

    const second = track(modernClient(peer.url, { eraStore }).client);
    await second.init();
    expect(second.getEra()).toBe('modern');
    expect(second.protocolVersion).toBe(MODERN);
    expect(second.serverInfo).toMatchObject({ name: 'modern-test-peer' });
    expect((await second.callTool('echo', { message: 'cached era' })).content).toEqual([
      { type: 'text', text: 'cached era' },
    ]);
    expect(count(peer.stats.methods, 'server/discover') - before).toBe(1);
    // A client with its own store probes again.
    const third = track(modernClient(peer.url).client);
    await third.init();
    expect(count(peer.stats.methods, 'server/discover') - before).toBe(2);
  });

  it('a second client sharing the era store sends no probe (legacy)', async () => {
    const eraStore = new AxMCPMemoryEraStore();
    const probes = count(legacy.stats.methods, 'server/discover');
    const first = track(httpClient(legacy.url, { era: 'auto', eraStore, timeoutMs: 10_000 }));
    await first.init();
    const second = track(httpClient(legacy.url, { era: 'auto', eraStore, timeoutMs: 10_000 }));
    await second.init();
    expect(second.getEra()).toBe('legacy');
    expect(count(legacy.stats.methods, 'server/discover') - probes).toBe(1);
  });
});

describe('-32022: mutual-version negotiation', () => {
  let peer: ModernPeer;
  const clients: AxMCPClient[] = [];

  beforeAll(async () => {
    peer = await startModernServer();
  });

  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => {});
    await peer?.close();
  });

  /** A fetch that lifts the peer's version rejection once it has answered one `-32022`. */
  function transientRejection(): typeof fetch {
    return async (input, init) => {
      const response = await fetch(input, init);
      if (response.status === 400) {
        const body = await response.clone().text();
        if (body.includes('-32022')) peer.setVersionRejection(undefined);
      }
      return response;
    };
  }

  it('a transient -32022 during classification is retried with a mutual version: modern, not legacy', async () => {
    peer.setVersionRejection({ versions: [MODERN], supported: [MODERN] });
    const rejections = peer.stats.versionRejections;
    const { client, name } = modernClient(peer.url, {}, { fetch: transientRejection() });
    clients.push(client);
    await client.init();
    expect(client.getEra()).toBe('modern');
    expect(client.protocolVersion).toBe(MODERN);
    expect(peer.stats.versionRejections - rejections).toBe(1);
    expect(requestsOf(peer, name).map((request) => request.method)).toEqual([
      'server/discover',
      'server/discover',
    ]);
    expect(peer.stats.methods.has('initialize')).toBe(false);
  });

  it('a transient -32022 on a tool call is retried once with the mutual version', async () => {
    const { client, name } = modernClient(peer.url, {}, { fetch: transientRejection() });
    clients.push(client);
    await client.init();
    await client.inspectCatalog();
    peer.setVersionRejection({ versions: [MODERN], supported: ['2099-01-01', MODERN] });
    const rejections = peer.stats.versionRejections;
    const result = await client.callTool('echo', { message: 'after -32022' });
    expect(texts(result)).toBe('after -32022');
    expect(peer.stats.versionRejections - rejections).toBe(1);
    const calls = requestsOf(peer, name).filter((request) => request.method === 'tools/call');
    expect(calls).toHaveLength(2);
    expect(calls[0]?.id).not.toEqual(calls[1]?.id);
    for (const call of calls) expect(call.headers['mcp-protocol-version']).toBe(MODERN);
  });

  it('no mutual version: the -32022 surfaces as a typed error after one attempt', async () => {
    const { client } = modernClient(peer.url);
    clients.push(client);
    await client.init();
    await client.inspectCatalog();
    peer.setVersionRejection({ versions: [MODERN], supported: ['2099-01-01'] });
    const rejections = peer.stats.versionRejections;
    try {
      const error = await rejection(client.callTool('echo', { message: 'never' }));
      expect(error).toBeInstanceOf(AxMCPProtocolError);
      expect(error).toMatchObject({
        rpcCode: RPC.unsupportedVersion,
        data: { supported: ['2099-01-01'], requested: MODERN },
      });
      expect(peer.stats.versionRejections - rejections).toBe(1);
    } finally {
      peer.setVersionRejection(undefined);
    }
  });

  it('a persistent -32022 naming our version is retried exactly once, never in a loop', async () => {
    const { client } = modernClient(peer.url);
    clients.push(client);
    await client.init();
    await client.inspectCatalog();
    peer.setVersionRejection({ versions: [MODERN], supported: [MODERN] });
    const rejections = peer.stats.versionRejections;
    try {
      const error = await rejection(client.callTool('echo', { message: 'never' }));
      expect(error).toMatchObject({ rpcCode: RPC.unsupportedVersion });
      expect(peer.stats.versionRejections - rejections).toBe(2);
    } finally {
      peer.setVersionRejection(undefined);
    }
  });
});

describe('modern request headers and _meta, as the server received them', () => {
  let peer: ModernPeer;
  let client: AxMCPClient;
  let name: string;

  beforeAll(async () => {
    peer = await startModernServer();
    ({ client, name } = modernClient(peer.url, {
      elicitation: { form: () => ({ action: 'accept', content: { name: 'Ada' } }) },
      sampling: () => ({ role: 'assistant', content: { type: 'text', text: 'w' }, model: 'm' }),
      roots: [{ uri: 'file:///work' }],
    }));
    await client.inspectCatalog();
  });

  afterAll(async () => {
    await client?.close();
    await peer?.close();
  });

  function lastCall(tool: string): ModernPeerRequest {
    const calls = requestsOf(peer, name).filter(
      (request) => request.method === 'tools/call' && request.headers['mcp-name'] === tool,
    );
    const last = calls.at(-1);
    if (!last) throw new Error(`no tools/call of ${tool} arrived`);
    return last;
  }

  function paramHeaders(request: ModernPeerRequest): Record<string, string> {
    return Object.fromEntries(
      Object.entries(request.headers).filter(([header]) => header.startsWith('mcp-param-')),
    );
  }

  it('Mcp-Param-* for string, integer and boolean arguments, exactly as the tool saw them', async () => {
    const result = await client.callTool('record_params', {
      region: 'eu-west-1',
      priority: 42,
      express: true,
      note: 'not a header',
    });
    const seen = { 'mcp-param-region': 'eu-west-1', 'mcp-param-priority': '42', 'mcp-param-express': 'true' };
    expect(result.structuredContent).toEqual({ headers: seen });
    expect(peer.stats.paramHeaders.at(-1)).toEqual(seen);
    expect(paramHeaders(lastCall('record_params'))).toEqual(seen);

    await client.callTool('record_params', { region: 'x', priority: -7, express: false });
    expect(peer.stats.paramHeaders.at(-1)).toEqual({
      'mcp-param-region': 'x',
      'mcp-param-priority': '-7',
      'mcp-param-express': 'false',
    });
  });

  it('Mcp-Param-* values that are not plain ASCII are sent base64-encoded', async () => {
    const cases = ['Zürich', ' padded ', 'tab\there', '=?base64?abc?=', '東京'];
    for (const region of cases) {
      const result = await client.callTool('record_params', { region });
      expect(result.isError, `the SDK accepted ${JSON.stringify(region)}`).toBeFalsy();
      expect(peer.stats.paramHeaders.at(-1)).toEqual({ 'mcp-param-region': b64(region) });
    }
  });

  it('no Mcp-Param-* header for an absent or null argument', async () => {
    await client.callTool('record_params', { priority: 1 });
    expect(peer.stats.paramHeaders.at(-1)).toEqual({ 'mcp-param-priority': '1' });
    await client.callTool('record_params', {});
    expect(peer.stats.paramHeaders.at(-1)).toEqual({});
    // null is rejected by the tool's schema, but the request must still carry no header for it.
    await client.callTool('record_params', { region: null, express: true });
    expect(paramHeaders(lastCall('record_params'))).toEqual({ 'mcp-param-express': 'true' });
  });

  it('Mcp-Param-* for a nested property (target.id)', async () => {
    const result = await client.callTool('nested_param', { target: { id: 'sku-7' } });
    expect(texts(result)).toBe('target sku-7');
    expect(paramHeaders(lastCall('nested_param'))).toEqual({ 'mcp-param-target-id': 'sku-7' });
    await client.callTool('nested_param', { target: { id: 'ÄÖÜ' } });
    expect(paramHeaders(lastCall('nested_param'))).toEqual({ 'mcp-param-target-id': b64('ÄÖÜ') });
  });

  it('Mcp-Name carries the tool, prompt or resource name, base64 when it is not plain ASCII', async () => {
    await client.getPrompt('greet', { name: 'Grace' });
    await client.readResource('res://modern/hello');
    const unknown = await rejection(client.readResource('res://modern/grüße'));
    // Had the header not matched the body, the SDK would have answered -32020 instead.
    expect(unknown).toBeInstanceOf(AxMCPProtocolError);
    expect((unknown as AxMCPProtocolError).rpcCode).not.toBe(RPC.headerMismatch);
    const prompt = await rejection(client.getPrompt('grüß', {}));
    expect((prompt as AxMCPProtocolError).rpcCode).not.toBe(RPC.headerMismatch);

    const mine = requestsOf(peer, name);
    const named = (method: string) =>
      mine.filter((r) => r.method === method).map((r) => r.headers['mcp-name']);
    expect(named('prompts/get')).toEqual(['greet', b64('grüß')]);
    expect(named('resources/read')).toEqual(['res://modern/hello', b64('res://modern/grüße')]);
    expect(named('tools/call').every((value) => typeof value === 'string' && value.length > 0)).toBe(true);
    for (const method of ['server/discover', 'tools/list', 'prompts/list', 'resources/list']) {
      for (const request of mine.filter((r) => r.method === method)) {
        expect(request.headers['mcp-name'], method).toBeUndefined();
      }
    }
  });

  it('every request carries MCP-Protocol-Version, Mcp-Method and the _meta envelope', async () => {
    await client.callTool('mrtr_one_round', {});
    const mine = requestsOf(peer, name);
    const methods = new Set(mine.map((request) => request.method));
    for (const method of ['server/discover', 'tools/list', 'tools/call', 'prompts/get', 'resources/read']) {
      expect(methods.has(method), method).toBe(true);
    }
    for (const request of mine) {
      expect(request.headers['mcp-protocol-version'], request.method).toBe(MODERN);
      expect(request.headers['mcp-method'], request.method).toBe(request.method);
      const meta = request.meta as Record<string, unknown>;
      expect(meta[META_VERSION], request.method).toBe(MODERN);
      expect(meta[META_CLIENT_INFO], request.method).toEqual({ name, version: '9.9.9' });
      const capabilities = meta[META_CAPABILITIES] as Record<string, unknown>;
      expect(capabilities, request.method).toMatchObject({
        sampling: {},
        roots: {},
        elicitation: { form: {} },
        extensions: { [TASKS_EXTENSION]: {} },
      });
    }
    // The MRTR retry is a new request with the same envelope.
    const mrtr = mine.filter((r) => r.method === 'tools/call' && r.headers['mcp-name'] === 'mrtr_one_round');
    expect(mrtr).toHaveLength(2);
    expect(new Set(mrtr.map((request) => request.id)).size).toBe(2);
  });
});

describe('-32020 header mismatch', () => {
  let peer: ModernPeer;
  let client: AxMCPClient;

  beforeAll(async () => {
    peer = await startModernServer();
    ({ client } = modernClient(peer.url));
    await client.inspectCatalog();
  });

  afterAll(async () => {
    await client?.close();
    await peer?.close();
  });

  it('refreshes tools/list and retries once: exactly two calls arrive', async () => {
    const lists = count(peer.stats.methods, 'tools/list');
    const result = await client.callTool('flaky', { value: 'v1' });
    expect(texts(result)).toBe('flaky v1');
    expect(peer.stats.toolCalls.get('flaky')).toBe(2);
    expect(peer.stats.headerMismatches).toBe(1);
    expect(count(peer.stats.methods, 'tools/list') - lists).toBe(1);
  });

  it('a second mismatch on the retry is not retried again', async () => {
    peer.armHeaderMismatch('flaky');
    peer.armHeaderMismatch('flaky');
    const calls = peer.stats.toolCalls.get('flaky') ?? 0;
    const error = await rejection(client.callTool('flaky', { value: 'v2' }));
    expect(error).toBeInstanceOf(AxMCPProtocolError);
    expect(error).toMatchObject({ rpcCode: RPC.headerMismatch });
    expect((peer.stats.toolCalls.get('flaky') ?? 0) - calls).toBe(2);
  });
});

describe('MRTR: input_required answered by the client handlers', () => {
  let peer: ModernPeer;
  let client: AxMCPClient;
  const elicited: AxMCPElicitParams[] = [];
  const sampled: AxMCPCreateMessageParams[] = [];
  let rootsAsked = 0;

  beforeAll(async () => {
    peer = await startModernServer();
    ({ client } = modernClient(peer.url, {
      elicitation: {
        form: (params) => {
          elicited.push(params);
          if (params.message === 'Reveal the secret?')
            return { action: 'accept', content: { confirm: true } };
          return { action: 'accept', content: { name: 'Ada' } };
        },
      },
      sampling: (params) => {
        sampled.push(params);
        return {
          role: 'assistant',
          content: { type: 'text', text: 'pelican' },
          model: 'test-model',
          stopReason: 'endTurn',
        };
      },
      roots: () => {
        rootsAsked++;
        return [
          { uri: 'file:///work/a', name: 'a' },
          { uri: 'file:///work/b', name: 'b' },
        ];
      },
    }));
    await client.inspectCatalog();
  });

  afterAll(async () => {
    await client?.close();
    await peer?.close();
  });

  it('one round: a form elicitation, then the result; requestState echoed exactly', async () => {
    const echoes = peer.stats.requestStateEchoes;
    const result = await client.callTool('mrtr_one_round', {});
    expect(texts(result)).toBe('Hello, Ada');
    expect(result.isError).toBeFalsy();
    expect(peer.stats.mrtrRounds.get('mrtr_one_round')).toBe(2);
    expect(peer.stats.requestStateEchoes - echoes).toBe(1);
    expect(peer.stats.requestStateMismatches).toBe(0);
    expect(elicited.at(-1)).toMatchObject({ message: 'Who are you?', requestedSchema: { type: 'object' } });
  });

  it('two rounds: sampling, then roots', async () => {
    const result = await client.callTool('mrtr_two_round', {});
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({
      sample: 'pelican',
      roots: ['file:///work/a', 'file:///work/b'],
    });
    expect(peer.stats.mrtrRounds.get('mrtr_two_round')).toBe(3);
    expect(sampled).toHaveLength(1);
    expect(sampled[0]).toMatchObject({ maxTokens: 20 });
    expect(rootsAsked).toBe(1);
    expect(peer.stats.requestStateMismatches).toBe(0);
  });

  it('MRTR on resources/read (elicitation without requestState)', async () => {
    const read = await client.readResource('mrtr://confirm');
    expect(read.contents).toEqual([{ uri: 'mrtr://confirm', mimeType: 'text/plain', text: 'the secret' }]);
    expect(peer.stats.mrtrRounds.get('mrtr://confirm')).toBe(2);
  });

  it('the default round cap (5): mrtr_forever ends with input_rounds_exhausted after 6 requests', async () => {
    const error = await rejection(client.callTool('mrtr_forever', {}));
    expect(error).toBeInstanceOf(AxMCPProtocolError);
    expect(error).toMatchObject({ code: 'input_rounds_exhausted' });
    expect(peer.stats.mrtrRounds.get('mrtr_forever')).toBe(6);
  });

  it('maxInputRounds lowers the cap', async () => {
    const { client: capped } = modernClient(peer.url, {
      maxInputRounds: 2,
      elicitation: { form: () => ({ action: 'accept', content: { name: 'x' } }) },
    });
    try {
      const before = peer.stats.mrtrRounds.get('mrtr_forever') ?? 0;
      const error = await rejection(capped.callTool('mrtr_forever', {}));
      expect(error).toMatchObject({ code: 'input_rounds_exhausted' });
      expect((peer.stats.mrtrRounds.get('mrtr_forever') ?? 0) - before).toBe(3);
    } finally {
      await capped.close();
    }
  });

  it('a missing handler: the server gets no capability for it and refuses with a typed -32021', async () => {
    const { client: bare, name } = modernClient(peer.url);
    try {
      const error = await rejection(bare.callTool('mrtr_one_round', {}));
      expect(error).toBeInstanceOf(AxMCPProtocolError);
      expect(error).toMatchObject({
        rpcCode: RPC.missingCapability,
        data: { requiredCapabilities: { elicitation: {} } },
      });
      const calls = requestsOf(peer, name).filter((r) => r.method === 'tools/call');
      expect(calls).toHaveLength(1);
      const capabilities = ((calls[0]?.meta ?? {}) as Record<string, unknown>)[META_CAPABILITIES];
      expect(capabilities).not.toHaveProperty('elicitation');
    } finally {
      await bare.close();
    }
    // Only sampling installed: the sampling round is answered, the roots round is refused.
    const { client: partial, name: partialName } = modernClient(peer.url, {
      sampling: () => ({ role: 'assistant', content: { type: 'text', text: 'x' }, model: 'm' }),
    });
    try {
      const error = await rejection(partial.callTool('mrtr_two_round', {}));
      expect(error).toBeInstanceOf(AxMCPProtocolError);
      expect(error).toMatchObject({
        rpcCode: RPC.missingCapability,
        data: { requiredCapabilities: { roots: {} } },
      });
      expect(requestsOf(peer, partialName).filter((r) => r.method === 'tools/call')).toHaveLength(2);
    } finally {
      await partial.close();
    }
  });
});

describe('cache hints and freshness', () => {
  let peer: ModernPeer;

  beforeAll(async () => {
    peer = await startModernServer({
      cacheHints: { 'tools/list': { ttlMs: 0, cacheScope: 'private' } },
    });
  });

  afterAll(async () => {
    await peer?.close();
  });

  it('inspectCatalog().cache reports ttlMs and cacheScope per list', async () => {
    const { client } = modernClient(peer.url);
    try {
      const catalog = await client.inspectCatalog();
      expect(catalog.era).toBe('modern');
      expect(catalog.cache.tools).toMatchObject({ ttlMs: 0, cacheScope: 'private' });
      for (const [kind, method] of [
        ['prompts', 'prompts/list'],
        ['resources', 'resources/list'],
        ['resourceTemplates', 'resources/templates/list'],
      ] as const) {
        const hint = MODERN_PEER_CACHE_HINTS[method];
        const info = catalog.cache[kind];
        expect(info, kind).toMatchObject({ ttlMs: hint.ttlMs, cacheScope: hint.cacheScope });
        expect(info?.expiresAt, kind).toBe((info?.fetchedAt ?? 0) + (hint.ttlMs ?? Number.NaN));
      }
    } finally {
      await client.close();
    }
  });

  it('refresh({ force: false }) refetches only expired lists; refresh() refetches all', async () => {
    const { client } = modernClient(peer.url);
    try {
      await client.inspectCatalog();
      const lists = ['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list'];
      const snapshot = () => lists.map((method) => count(peer.stats.methods, method));
      let before = snapshot();
      await client.refresh({ force: false });
      expect(snapshot().map((n, i) => n - (before[i] ?? 0))).toEqual([1, 0, 0, 0]);
      before = snapshot();
      await client.refresh();
      expect(snapshot().map((n, i) => n - (before[i] ?? 0))).toEqual([1, 1, 1, 1]);
    } finally {
      await client.close();
    }
  });

  it('without readCache every read goes to the server', async () => {
    const { client } = modernClient(peer.url);
    try {
      const before = count(peer.stats.methods, 'resources/read');
      await client.readResource('res://modern/hello');
      await client.readResource('res://modern/hello');
      expect(count(peer.stats.methods, 'resources/read') - before).toBe(2);
    } finally {
      await client.close();
    }
  });

  it('readCache reuses a read until its TTL', async () => {
    const short = await startModernServer({
      cacheHints: { 'resources/read': { ttlMs: 400, cacheScope: 'public' } },
    });
    const { client } = modernClient(short.url, { readCache: true });
    try {
      const first = await client.readResource('res://modern/hello');
      const second = await client.readResource('res://modern/hello');
      expect(second).toEqual(first);
      expect(count(short.stats.methods, 'resources/read')).toBe(1);
      // A read result belongs to the caller: changing it does not change the cache.
      (second.contents[0] as { text?: string }).text = 'mutated';
      expect((await client.readResource('res://modern/hello')).contents[0]).toMatchObject({
        text: 'Hello from the modern peer',
      });
      expect(count(short.stats.methods, 'resources/read')).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 500));
      await client.readResource('res://modern/hello');
      expect(count(short.stats.methods, 'resources/read')).toBe(2);
    } finally {
      await client.close();
      await short.close();
    }
  });

  it('readCache drops a read on notifications/resources/updated', async () => {
    const { client } = modernClient(peer.url, { readCache: true });
    const updates: string[] = [];
    client.subscribeEvents((event) => {
      if (event.type === 'resource_updated') updates.push(event.uri);
    });
    try {
      const before = count(peer.stats.methods, 'resources/read');
      await client.subscribeResource('res://modern/hello');
      await client.readResource('res://modern/hello');
      await client.readResource('res://modern/hello');
      expect(count(peer.stats.methods, 'resources/read') - before).toBe(1);
      peer.notify.resourceUpdated('res://modern/hello');
      await eventually(() => updates.includes('res://modern/hello'), 5_000, 'resources/updated');
      await client.readResource('res://modern/hello');
      expect(count(peer.stats.methods, 'resources/read') - before).toBe(2);
    } finally {
      await client.close();
    }
  });

  it('readCache never caches an MRTR result', async () => {
    const { client } = modernClient(peer.url, {
      readCache: true,
      elicitation: { form: () => ({ action: 'accept', content: { confirm: true } }) },
    });
    try {
      const rounds = peer.stats.mrtrRounds.get('mrtr://confirm') ?? 0;
      await client.readResource('mrtr://confirm');
      await client.readResource('mrtr://confirm');
      expect((peer.stats.mrtrRounds.get('mrtr://confirm') ?? 0) - rounds).toBe(4);
    } finally {
      await client.close();
    }
  });
});

describe('tools with invalid x-mcp-header annotations', () => {
  let peer: ModernPeer;
  let client: AxMCPClient;
  const warnings: string[] = [];

  beforeAll(async () => {
    peer = await startModernServer();
    ({ client } = modernClient(peer.url, { onWarning: (message) => warnings.push(message) }));
  });

  afterAll(async () => {
    await client?.close();
    await peer?.close();
  });

  it('are dropped from the catalog and listTools with one warning per revision', async () => {
    const catalog = await client.inspectCatalog();
    const names = catalog.tools.map((tool) => tool.name);
    expect(names).toContain('record_params');
    expect(names).toContain('nested_param');
    expect(names).not.toContain('invalid_header');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('invalid_header');
    expect(warnings[0]).not.toContain('record_params');
    // Reading the catalog again or listing a page does not warn again.
    await client.inspectCatalog();
    const page = await client.listTools();
    expect(page.tools.map((tool) => tool.name)).not.toContain('invalid_header');
    expect(page.tools.map((tool) => tool.name)).toContain('echo');
    expect(warnings).toHaveLength(1);
    // A new revision of the tool list warns once more.
    await client.refresh();
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toContain('invalid_header');
  });

  it('callTool refuses a dropped tool without sending anything', async () => {
    await client.inspectCatalog();
    const sent = peer.stats.requests.length;
    const error = await rejection(client.callTool('invalid_header', { amount: 3 }));
    expect(error).toBeInstanceOf(AxMCPError);
    expect(error).toMatchObject({ code: 'invalid_argument' });
    expect((error as Error).message).toContain('invalid_header');
    expect(peer.stats.requests.length).toBe(sent);
    expect(peer.stats.toolCalls.has('invalid_header')).toBe(false);
  });
});
