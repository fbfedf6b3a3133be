/**
 * Smoke tests of the test peers in test/servers, driven by the OFFICIAL client SDKs (v2
 * `@modelcontextprotocol/client` and v1 `@modelcontextprotocol/sdk`) and raw fetch, to prove each
 * peer behaves as documented before our own client is tested against it.
 */
import { Client, SSEClientTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ALL_CONTENT_META,
  EMBEDDED_BLOB_BASE64,
  TINY_PNG_BASE64,
  TINY_WAV_BASE64,
} from './servers/content.js';
import { everythingStdioCommand, startEverythingServer } from './servers/everything.js';
import { type HostileServer, startHostileServer } from './servers/hostile.js';
import { LEGACY_V1_TOOL_NAMES, type LegacyV1Server, startLegacyV1Server } from './servers/legacy-v1.js';
import {
  LEGACY_V2_TOOL_NAMES,
  type LegacyV2Server,
  LOG_TOOL_LEVELS,
  startLegacyV2Server,
} from './servers/legacy-v2.js';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const POST_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** Polls `check` until it returns true (bounded). */
async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

function v2Client(): Client {
  return new Client(
    { name: 'smoke', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } },
  );
}

/** Reads SSE events from a fetch response until `stop` says so (bounded by the caller's signal). */
async function readSse(
  response: Response,
  stop: (event: { id?: string; data: string }) => boolean,
): Promise<Array<{ id?: string; data: string }>> {
  const events: Array<{ id?: string; data: string }> = [];
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return events;
      buffer += value;
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf('\n\n');
        const event: { id?: string; data: string } = { data: '' };
        for (const line of block.split('\n')) {
          if (line.startsWith('id:')) event.id = line.slice(3).trim();
          if (line.startsWith('data:')) event.data += line.slice(5).trim();
        }
        if (block.startsWith(':')) continue;
        events.push(event);
        if (stop(event)) return events;
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

describe('legacy-v2 peer (v2 server SDK)', () => {
  let server: LegacyV2Server;
  const clients: Array<{ close(): Promise<void> }> = [];
  beforeAll(async () => {
    server = await startLegacyV2Server({
      toolCount: 1000,
      pageSize: 50,
      resourceCount: 120,
      retryInterval: 100,
    });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
  });
  afterAll(async () => {
    await server.close();
  });

  /** Connects a v2 client and waits until its GET stream is open (unsolicited messages go there). */
  async function connect(): Promise<Client> {
    const client = v2Client();
    const transport = new StreamableHTTPClientTransport(new URL(server.url));
    await client.connect(transport);
    clients.push(client);
    await until(() => server.stats.getStreams.has(transport.sessionId!));
    return client;
  }

  it('lists 1000+ tools across pages with opaque cursors (v1 client walks the pages)', async () => {
    const client = new V1Client({ name: 'walker', version: '1' });
    await client.connect(new V1StreamableHTTPClientTransport(new URL(server.url)));
    clients.push(client);
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      expect(page.tools.length).toBeLessThanOrEqual(50);
      names.push(...page.tools.map((t) => t.name));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined);
    expect(names.length).toBe(1000 + LEGACY_V2_TOOL_NAMES.length);
    expect(new Set(names).size).toBe(names.length);
    expect(pages).toBe(Math.ceil(names.length / 50));
    expect(names.slice(0, LEGACY_V2_TOOL_NAMES.length)).toEqual([...LEGACY_V2_TOOL_NAMES]);
    expect(names).toContain('bulk_0999');
    await expect(client.listTools({ cursor: 'bm90LWEtY3Vyc29y' })).rejects.toMatchObject({ code: -32602 });
    const resources = await client.listResources();
    expect(resources.resources.length).toBe(50);
    const second = await client.listResources({ cursor: resources.nextCursor! });
    expect(second.resources[0]?.uri).toBe('res://item/0049');
  });

  it('v2 client aggregates every page and calls the all-content tool', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.length).toBe(1000 + LEGACY_V2_TOOL_NAMES.length);
    const allContent = tools.find((t) => t.name === 'all_content');
    expect(allContent?.outputSchema?.type).toBe('object');
    const result = await client.callTool({ name: 'all_content', arguments: {} });
    const content = result.content as Array<Record<string, unknown>>;
    expect(content.map((c) => c.type)).toEqual([
      'text',
      'image',
      'audio',
      'resource_link',
      'resource',
      'resource',
    ]);
    expect(content[1]).toMatchObject({ data: TINY_PNG_BASE64, mimeType: 'image/png' });
    expect(content[2]).toMatchObject({ data: TINY_WAV_BASE64, mimeType: 'audio/wav' });
    expect(content[5]).toMatchObject({ resource: { blob: EMBEDDED_BLOB_BASE64 } });
    expect(result.structuredContent).toEqual({ kinds: expect.any(Array), count: 6 });
    expect(result._meta).toMatchObject(ALL_CONTENT_META);
    const failed = await client.callTool({ name: 'fail', arguments: {} });
    expect(failed.isError).toBe(true);
    expect(server.stats.toolCalls).toContain('all_content');
  });

  it('reports progress and honours notifications/cancelled', async () => {
    const client = await connect();
    const progress: number[] = [];
    const done = await client.callTool(
      { name: 'slow', arguments: { steps: 3, delayMs: 10 } },
      { onprogress: (p) => progress.push(p.progress) },
    );
    expect(done.content).toEqual([{ type: 'text', text: 'completed 3 steps' }]);
    expect(progress).toEqual([1, 2, 3]);

    const abort = new AbortController();
    const before = server.stats.cancelledToolCalls;
    const call = client.callTool(
      { name: 'slow', arguments: { steps: 100, delayMs: 50 } },
      { signal: abort.signal, onprogress: () => abort.abort('enough') },
    );
    await expect(call).rejects.toThrow();
    await until(() => server.stats.cancelledToolCalls > before);
    expect(server.stats.methods.get('notifications/cancelled')).toBeGreaterThanOrEqual(1);
    expect(server.stats.cancellations.at(-1)?.requestId).toBeDefined();
  });

  it('makes sampling, elicitation and roots requests to the client', async () => {
    const client = await connect();
    client.setRequestHandler('sampling/createMessage', async (request) => ({
      role: 'assistant',
      model: 'scripted',
      content: { type: 'text', text: `echo:${JSON.stringify(request.params.messages[0]?.content)}` },
    }));
    const schemas: unknown[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      schemas.push(request.params);
      return { action: 'accept', content: { name: 'Grace', age: 85 } };
    });
    client.setRequestHandler('roots/list', async () => ({
      roots: [{ uri: 'file:///tmp/root', name: 'tmp' }],
    }));

    const sampled = await client.callTool({ name: 'sample', arguments: { prompt: 'hi there' } });
    expect(JSON.stringify(sampled.content)).toContain('scripted');
    expect(JSON.stringify(sampled.content)).toContain('hi there');
    const standalone = await client.callTool({
      name: 'sample',
      arguments: { prompt: 'p2', standalone: true },
    });
    expect(JSON.stringify(standalone.content)).toContain('scripted');
    const elicited = await client.callTool({ name: 'elicit', arguments: {} });
    expect(JSON.stringify(elicited.content)).toContain('Grace');
    await client.callTool({ name: 'elicit_defaults', arguments: {} });
    expect(JSON.stringify(schemas[1])).toContain('"default":"Ada"');
    const roots = await client.callTool({ name: 'roots', arguments: {} });
    expect(JSON.stringify(roots.content)).toContain('file:///tmp/root');
  });

  it('emits log messages filtered by logging/setLevel', async () => {
    const client = await connect();
    const levels: string[] = [];
    client.setNotificationHandler('notifications/message', (n) => {
      levels.push(n.params.level);
    });
    await client.callTool({ name: 'log', arguments: {} });
    expect(levels).toEqual([...LOG_TOOL_LEVELS]);
    levels.length = 0;
    await client.setLoggingLevel('warning');
    await client.callTool({ name: 'log', arguments: {} });
    expect(levels).toEqual(['warning', 'error', 'critical']);
    expect([...server.stats.logLevels.values()]).toContain('warning');
  });

  it('serves prompts and completions', async () => {
    const client = await connect();
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual(['greeting', 'plain']);
    const prompt = await client.getPrompt({ name: 'greeting', arguments: { name: 'Ada', style: 'formal' } });
    expect(prompt.messages[0]?.content).toEqual({ type: 'text', text: 'Say hello to Ada (formal).' });
    const names = await client.complete({
      ref: { type: 'ref/prompt', name: 'greeting' },
      argument: { name: 'name', value: 'Al' },
    });
    expect(names.completion.values).toEqual(['Alan', 'Alonzo']);
    const ids = await client.complete({
      ref: { type: 'ref/resource', uri: 'res://item/{id}' },
      argument: { name: 'id', value: '011' },
    });
    expect(ids.completion.values).toEqual([
      '0110',
      '0111',
      '0112',
      '0113',
      '0114',
      '0115',
      '0116',
      '0117',
      '0118',
      '0119',
    ]);
  });

  it('pages resources, reads text and blob, and delivers subscribed updates', async () => {
    const client = await connect();
    const all = await client.listResources();
    expect(all.resources.length).toBe(122);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['res://item/{id}']);
    const blob = await client.readResource({ uri: 'res://blob/pixel' });
    expect(blob.contents[0]).toMatchObject({ blob: TINY_PNG_BASE64, mimeType: 'image/png' });
    const item = await client.readResource({ uri: 'res://item/0007' });
    expect(item.contents[0]).toMatchObject({ text: 'Item 0007' });
    await expect(client.readResource({ uri: 'res://item/9999' })).rejects.toThrow();

    const updates: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (n) => {
      updates.push(n.params.uri);
    });
    await client.subscribeResource({ uri: 'res://text/hello' });
    expect([...server.stats.subscriptions.values()].some((set) => set.has('res://text/hello'))).toBe(true);
    server.setResourceText('res://text/hello', 'changed');
    expect(await server.emitResourceUpdated('res://text/hello')).toBe(1);
    await until(() => updates.length > 0);
    expect(updates).toEqual(['res://text/hello']);
    const reread = await client.readResource({ uri: 'res://text/hello' });
    expect(reread.contents[0]).toMatchObject({ text: 'changed' });
    await client.unsubscribeResource({ uri: 'res://text/hello' });
    expect(await server.emitResourceUpdated('res://text/hello')).toBe(0);
  });

  it('adds a tool at runtime and announces tools/list_changed', async () => {
    const client = await connect();
    let changed = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      changed++;
    });
    server.addTool('late_tool', 'late answer');
    await until(() => changed > 0);
    const { tools } = await client.listTools();
    expect(tools.at(-1)?.name).toBe('late_tool');
    const result = await client.callTool({ name: 'late_tool', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'late answer' }]);
    await server.emitListChanged('prompts');
  });

  it('replays missed events on GET with Last-Event-ID (no 409 after a disconnect)', async () => {
    const init = await fetch(server.url, {
      method: 'POST',
      headers: POST_HEADERS,
      body: JSON.stringify(INIT),
    });
    const sessionId = init.headers.get('mcp-session-id')!;
    await init.text();
    const headers = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
    const initialized = await fetch(server.url, {
      method: 'POST',
      headers: { ...POST_HEADERS, ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    expect(initialized.status).toBe(202);

    const abort = new AbortController();
    const get = await fetch(server.url, {
      headers: { ...headers, accept: 'text/event-stream' },
      signal: abort.signal,
    });
    expect(get.status).toBe(200);
    const pending = readSse(get, (e) => e.data.includes('list_changed'));
    await server.emitListChanged('tools');
    const [seen] = await pending;
    abort.abort();
    expect(seen?.id).toBeTypeOf('string');
    await server.emitListChanged('prompts');
    await new Promise((r) => setTimeout(r, 50));

    const resumed = await fetch(server.url, {
      headers: { ...headers, accept: 'text/event-stream', 'last-event-id': seen!.id! },
      signal: AbortSignal.timeout(5_000),
    });
    expect(resumed.status).toBe(200);
    const [replayed] = await readSse(resumed, () => true);
    expect(replayed?.data).toContain('notifications/prompts/list_changed');
    expect(server.stats.lastEventIds).toContain(seen!.id);
    await fetch(server.url, { method: 'DELETE', headers });
  });

  it('restart drops every session: the old session id gets 404, a new initialize works', async () => {
    const client = await connect();
    const transport = new StreamableHTTPClientTransport(new URL(server.url));
    const other = v2Client();
    await other.connect(transport);
    clients.push(other);
    const oldSession = transport.sessionId!;
    expect(server.stats.sessions.has(oldSession)).toBe(true);
    const initsBefore = server.stats.initializeCount;
    await server.restart();
    expect(server.stats.sessions.size).toBe(0);
    const stale = await fetch(server.url, {
      method: 'POST',
      headers: { ...POST_HEADERS, 'mcp-session-id': oldSession, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list' }),
    });
    expect(stale.status).toBe(404);
    expect(await stale.json()).toMatchObject({ error: { code: -32001 } });
    await expect(client.listTools()).rejects.toThrow();
    const fresh = await connect();
    expect((await fresh.callTool({ name: 'echo', arguments: { message: 'again' } })).content).toEqual([
      { type: 'text', text: 'again' },
    ]);
    expect(server.stats.initializeCount).toBe(initsBefore + 1);
  });
});

describe('legacy-v1 peer (v1 SDK)', () => {
  let server: LegacyV1Server;
  beforeAll(async () => {
    server = await startLegacyV1Server({ retryInterval: 100 });
  });
  afterAll(async () => {
    await server.close();
  });

  it('serves tools, prompts, resources and subscriptions; restart gives 404', async () => {
    const client = new V1Client({ name: 'v1', version: '1' });
    const transport = new V1StreamableHTTPClientTransport(new URL(server.url));
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual([...LEGACY_V1_TOOL_NAMES]);
      const result = await client.callTool({ name: 'all_content', arguments: {} });
      expect((result.content as Array<{ type: string }>).map((c) => c.type)).toEqual([
        'text',
        'image',
        'audio',
        'resource_link',
        'resource',
        'resource',
      ]);
      expect(result._meta).toMatchObject(ALL_CONTENT_META);
      const progress: number[] = [];
      await client.callTool({ name: 'slow', arguments: { steps: 2, delayMs: 5 } }, undefined, {
        onprogress: (p) => progress.push(p.progress),
      });
      expect(progress).toEqual([1, 2]);
      const completion = await client.complete({
        ref: { type: 'ref/prompt', name: 'greeting' },
        argument: { name: 'name', value: 'Gr' },
      });
      expect(completion.completion.values).toEqual(['Grace']);
      const { resources } = await client.listResources();
      expect(resources.map((r) => r.uri)).toContain('res://item/0002');
      await expect(client.readResource({ uri: 'res://item/0009' })).rejects.toMatchObject({ code: -32002 });

      const updates: string[] = [];
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        updates.push(n.params.uri);
      });
      await until(() => server.stats.getStreams.has(transport.sessionId!));
      await client.subscribeResource({ uri: 'res://text/hello' });
      expect(await server.emitResourceUpdated('res://text/hello')).toBe(1);
      await until(() => updates.length > 0);
      expect(updates).toEqual(['res://text/hello']);
      expect(server.stats.methods.get('resources/subscribe')).toBe(1);

      const old = transport.sessionId!;
      await server.restart();
      const stale = await fetch(server.url, {
        method: 'POST',
        headers: { ...POST_HEADERS, 'mcp-session-id': old, 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
      });
      expect(stale.status).toBe(404);
    } finally {
      await client.close();
    }
  });
});

describe('server-everything (child process)', () => {
  it('streamableHttp: a v2 client lists and calls tools; close ends the process', async () => {
    const server = await startEverythingServer({ mode: 'streamableHttp' });
    const client = v2Client();
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('echo');
      const echoed = await client.callTool({ name: 'echo', arguments: { message: 'hi' } });
      expect(JSON.stringify(echoed.content)).toContain('hi');
    } finally {
      await client.close();
      await server.close();
    }
    expect(() => process.kill(server.pid, 0)).toThrow();
  });

  it('sse: a v2 SSEClientTransport connects', async () => {
    const server = await startEverythingServer({ mode: 'sse' });
    const client = v2Client();
    try {
      await client.connect(new SSEClientTransport(new URL(server.url)));
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('get-sum');
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('stdio: everythingStdioCommand runs under a stdio client transport', async () => {
    const client = v2Client();
    await client.connect(new StdioClientTransport({ ...everythingStdioCommand(), stderr: 'ignore' }));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('echo');
    } finally {
      await client.close();
    }
  });
});

describe('hostile peer (raw fetch)', () => {
  let server: HostileServer;
  beforeAll(async () => {
    server = await startHostileServer({ keepAliveMs: 20 });
  });
  afterAll(async () => {
    await server.close();
  });

  async function post(body: unknown, init: RequestInit = {}) {
    return fetch(server.url, {
      method: 'POST',
      headers: { ...POST_HEADERS, 'mcp-session-id': server.sessionId },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(5_000),
      ...init,
    });
  }
  const list = (id: number | string) => ({ jsonrpc: '2.0', id, method: 'tools/list' });

  it('completes initialize with a session id and records requests', async () => {
    server.setMode('invalid-json');
    const init = await post(INIT, { headers: POST_HEADERS });
    expect(init.headers.get('mcp-session-id')).toBe(server.sessionId);
    expect(await init.json()).toMatchObject({ id: 1, result: { protocolVersion: '2025-11-25' } });
    expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
    const last = server.requests.at(-1)!;
    expect(last.rpcMethod).toBe('notifications/initialized');
    expect(last.headers.get('mcp-session-id')).toBe(server.sessionId);
  });

  it('answers each mode as documented', async () => {
    server.setMode('invalid-json');
    await expect((await post(list(2))).json()).rejects.toThrow();

    server.setMode('bad-jsonrpc-version');
    expect(await (await post(list(3))).json()).toMatchObject({ jsonrpc: '1.0', id: 3 });

    server.setMode('unknown-id');
    expect(((await (await post(list(4))).json()) as { id: unknown }).id).not.toBe(4);

    server.setMode('oversized');
    const big = await post(list(5));
    expect(Number(big.headers.get('content-length'))).toBeGreaterThan(2 * 1024 * 1024);
    expect((await big.text()).length).toBeGreaterThan(2 * 1024 * 1024);
    server.setMode('oversized-chunked');
    const chunked = await post(list(6));
    expect(chunked.headers.get('content-length')).toBeNull();
    expect((await chunked.arrayBuffer()).byteLength).toBeGreaterThan(2 * 1024 * 1024);

    server.setMode('proto-key');
    const proto = await (await post(list('p-7'))).text();
    expect(proto).toBe('{"jsonrpc":"2.0","id":"p-7","result":{"tools":[],"__proto__":{"polluted":true}}}');

    server.setMode('html-500');
    const html = await post(list(8));
    expect(html.status).toBe(500);
    expect(html.headers.get('content-type')).toContain('text/html');
    await html.text();

    server.setMode('retry-503', { times: 2 });
    const first = await post(list(9));
    expect([first.status, first.headers.get('retry-after')]).toEqual([503, '1']);
    await first.text();
    expect((await post(list(10))).status).toBe(503);
    expect(await (await post(list(11))).json()).toMatchObject({
      id: 11,
      result: { tools: [{ name: 'ok_tool' }] },
    });

    server.setMode('ok-sse');
    const sse = await post(list(12));
    expect(sse.headers.get('content-type')).toBe('text/event-stream');
    expect((await readSse(sse, () => false))[0]?.data).toContain('"ok_tool"');

    server.setMode('html-500', { includeInitialize: true });
    expect((await post(INIT, { headers: POST_HEADERS })).status).toBe(500);

    server.setMode('ok');
    expect(await (await post(list(13))).json()).toMatchObject({
      id: 13,
      result: { tools: [{ name: 'ok_tool' }] },
    });
  });

  it('sse-forever keeps streaming until the client disconnects, then stops server-side', async () => {
    server.setMode('sse-forever');
    const abort = new AbortController();
    const response = await post(list(20), { signal: abort.signal });
    const reader = response.body!.getReader();
    let bytes = 0;
    while (bytes < 100) bytes += (await reader.read()).value?.length ?? 0;
    expect(server.openStreams()).toBe(1);
    abort.abort();
    await until(() => server.openStreams() === 0);
    server.setMode('ok');
  });

  it('sse-resume: priming event then close; GET with Last-Event-ID gets the answer', async () => {
    server.setMode('sse-resume');
    const primed = await readSse(await post(list(30)), () => false);
    expect(primed).toEqual([{ id: 'e1', data: '' }]);
    const resumed = await fetch(server.url, {
      headers: { accept: 'text/event-stream', 'mcp-session-id': server.sessionId, 'last-event-id': 'e1' },
      signal: AbortSignal.timeout(5_000),
    });
    const [event] = await readSse(resumed, () => true);
    expect(JSON.parse(event!.data)).toMatchObject({ id: 30, result: { tools: [{ name: 'ok_tool' }] } });
    expect(server.requests.at(-1)?.headers.get('last-event-id')).toBe('e1');
    server.setMode('ok');
  });
});

describe('lifetime', () => {
  it('close() of each in-process peer leaves no server, socket or timer behind', async () => {
    const handles = () =>
      process
        .getActiveResourcesInfo()
        .filter((r) => ['TCPServerWrap', 'TCPSocketWrap', 'Timeout'].includes(r)).length;
    await new Promise((r) => setTimeout(r, 100));
    const before = handles();
    const v2 = await startLegacyV2Server();
    const v1 = await startLegacyV1Server();
    const hostile = await startHostileServer({ keepAliveMs: 10 });
    const client = v2Client();
    await client.connect(new StreamableHTTPClientTransport(new URL(v2.url)));
    const slow = client
      .callTool({ name: 'slow', arguments: { steps: 100, delayMs: 50 } })
      .catch((e: unknown) => e);
    hostile.setMode('sse-forever');
    const forever = await fetch(hostile.url, {
      method: 'POST',
      headers: POST_HEADERS,
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    const pending = forever.text().catch((e: unknown) => e);
    await until(() => hostile.openStreams() === 1 && v2.stats.toolCalls.includes('slow'));
    expect(handles()).toBeGreaterThan(before);
    await Promise.all([v2.close(), v1.close(), hostile.close()]);
    await client.close();
    await pending;
    expect(hostile.openStreams()).toBe(0);
    expect(await slow).toBeInstanceOf(Error);
    await until(() => handles() <= before);
    expect(handles()).toBe(before);
  });
});
