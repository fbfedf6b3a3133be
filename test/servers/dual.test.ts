/**
 * Smoke tests of the demo server (`src/demo`, all three eras) and the modern test peer
 * (`test/servers/modern.ts`), driven by the OFFICIAL client `@modelcontextprotocol/client` 2.4.0
 * and by raw fetch (the SDK client cannot do tasks), to prove each behaves as documented
 * before our own client is tested against them.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { demoOptionsFromEnv, startDemoFromEnv } from '../../src/demo/main.js';
import { AxMCPDemoServer, type AxMCPDemoState } from '../../src/demo.js';
import { type ModernPeer, startModernServer } from './modern.js';

const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const CURRENT = 'inventory://warehouse/current';
const BERLIN = 'inventory://warehouse/berlin';
const RECOGNISED_MODERN_CODES = [-32020, -32021, -32022];

type Json = Record<string, unknown>;
let nextId = 1;

/** Polls `check` until true (bounded). */
async function until(
  check: () => boolean | Promise<boolean>,
  what = 'condition',
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Reads JSON-RPC messages off an SSE response, one at a time, with timeouts. */
class SseReader {
  readonly #reader: ReadableStreamDefaultReader<string>;
  #buffer = '';
  #pending: Promise<ReadableStreamReadResult<string>> | undefined;
  #ended = false;

  constructor(response: Response) {
    this.#reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  }

  /** The next event with a JSON payload (priming events and comments skipped); undefined at the end. */
  async next(timeoutMs = 5_000): Promise<{ id?: string; message: Json } | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = this.#buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = this.#buffer.slice(0, end);
        this.#buffer = this.#buffer.slice(end + 2);
        let id: string | undefined;
        let data = '';
        for (const line of block.split('\n')) {
          if (line.startsWith('id:')) id = line.slice(3).trim();
          if (line.startsWith('data:')) data += line.slice(5).trim();
        }
        if (data === '') continue;
        return { ...(id === undefined ? {} : { id }), message: JSON.parse(data) as Json };
      }
      if (this.#ended) return undefined;
      this.#pending ??= this.#reader.read();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - Date.now()));
      });
      const result = await Promise.race([this.#pending, timeout]);
      clearTimeout(timer);
      if (result === 'timeout') throw new Error('Timed out waiting for an SSE event');
      this.#pending = undefined;
      if (result.done) this.#ended = true;
      else this.#buffer += result.value;
    }
  }

  /** The next message matching `match`, skipping others. */
  async nextMatching(match: (message: Json) => boolean, timeoutMs = 5_000): Promise<Json> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const event = await this.next(Math.max(1, deadline - Date.now()));
      if (event === undefined) throw new Error('SSE stream ended before the expected message');
      if (match(event.message)) return event.message;
    }
  }

  async close(): Promise<void> {
    await this.#reader.cancel().catch(() => {});
  }
}

function modernMeta(capabilities: Json = {}): Json {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': capabilities,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  };
}

/** POSTs a modern request with correct standard headers; `headers` overrides (null removes). */
function modernPost(
  url: string,
  method: string,
  params: Json,
  options: { capabilities?: Json; headers?: Record<string, string | null>; id?: number } = {},
): Promise<Response> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
  };
  const name = params.name ?? params.uri ?? params.taskId;
  if (typeof name === 'string') headers['mcp-name'] = name;
  for (const [key, value] of Object.entries(options.headers ?? {})) {
    if (value === null) delete headers[key.toLowerCase()];
    else headers[key.toLowerCase()] = value;
  }
  return fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: options.id ?? nextId++,
      method,
      params: { ...params, _meta: modernMeta(options.capabilities) },
    }),
  });
}

/** The JSON-RPC response of a request answered as JSON or SSE. */
async function rpcBody(response: Response): Promise<Json> {
  if (response.headers.get('content-type')?.includes('text/event-stream')) {
    const reader = new SseReader(response);
    try {
      return await reader.nextMatching((m) => m.id !== undefined);
    } finally {
      await reader.close();
    }
  }
  return (await response.json()) as Json;
}

async function modernCall(url: string, method: string, params: Json, capabilities: Json = {}) {
  const response = await modernPost(url, method, params, { capabilities });
  return { status: response.status, body: await rpcBody(response) };
}

async function state(url: string): Promise<AxMCPDemoState> {
  const response = await fetch(url.replace(/\/mcp$/, '/control/state'));
  expect(response.status).toBe(200);
  return (await response.json()) as AxMCPDemoState;
}

function control(url: string, path: string): Promise<Response> {
  return fetch(url.replace(/\/mcp$/, `/control/${path}`), { method: 'POST' });
}

/** A raw 2025-11-25 session. */
class LegacySession {
  readonly url: string;
  sessionId = '';

  constructor(url: string) {
    this.url = url;
  }

  headers(): Record<string, string> {
    return {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': this.sessionId,
      'mcp-protocol-version': LEGACY,
    };
  }

  async open(capabilities: Json = {}): Promise<Json> {
    const response = await fetch(this.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: nextId++,
        method: 'initialize',
        params: { protocolVersion: LEGACY, capabilities, clientInfo: { name: 'raw-legacy', version: '1' } },
      }),
    });
    expect(response.status).toBe(200);
    this.sessionId = response.headers.get('mcp-session-id') ?? '';
    expect(this.sessionId).not.toBe('');
    const init = await rpcBody(response);
    const ack = await fetch(this.url, {
      method: 'POST',
      headers: this.headers(),
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    expect(ack.status).toBe(202);
    return init;
  }

  post(method: string, params: Json, id = nextId++): Promise<Response> {
    return fetch(this.url, {
      method: 'POST',
      headers: this.headers(),
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
  }

  async call(method: string, params: Json): Promise<Json> {
    return rpcBody(await this.post(method, params));
  }

  async getStream(lastEventId?: string): Promise<Response> {
    const headers: Record<string, string> = { ...this.headers(), accept: 'text/event-stream' };
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    return fetch(this.url, { headers });
  }

  async close(): Promise<void> {
    await fetch(this.url, { method: 'DELETE', headers: this.headers() }).catch(() => {});
  }
}

function sdkClient(mode: 'auto' | 'legacy' | { pin: string }): Client {
  return new Client(
    { name: 'dual-smoke', version: '1.0.0' },
    {
      capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} },
      versionNegotiation: { mode },
    },
  );
}

describe('demo server, dual era', () => {
  let demo: AxMCPDemoServer;
  let url: string;
  const cleanups: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    demo = new AxMCPDemoServer({ era: 'dual', retryIntervalMs: 100, taskPollIntervalMs: 50, keepAliveMs: 0 });
    url = await demo.start();
  });
  afterEach(async () => {
    await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
  });
  afterAll(async () => {
    await demo.close();
  });

  async function connect(mode: 'auto' | 'legacy' | { pin: string }): Promise<Client> {
    const client = sdkClient(mode);
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    cleanups.push(() => client.close());
    return client;
  }

  it('binds 127.0.0.1 and answers the official client in the modern era (auto): discover, lists, reads, tools, prompt', async () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = await connect('auto');
    expect(client.getProtocolEra()).toBe('modern');
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    const discover = client.getDiscoverResult();
    expect(discover?.capabilities).toMatchObject({
      resources: { subscribe: true, listChanged: true },
      extensions: { 'io.modelcontextprotocol/tasks': {} },
    });

    const tools = await client.listTools();
    const byName = new Map(tools.tools.map((t) => [t.name, t]));
    expect([...byName.keys()].sort()).toEqual(['adjust_stock', 'count_stock', 'get_stock', 'start_reindex']);
    expect(byName.get('get_stock')?.annotations?.readOnlyHint).toBe(true);
    expect(byName.get('adjust_stock')?.annotations?.destructiveHint).toBe(true);
    expect(byName.get('start_reindex')?.inputSchema).toMatchObject({
      properties: { scope: { type: 'string', 'x-mcp-header': 'Scope' } },
    });

    const resources = await client.listResources();
    expect(resources.resources.map((r) => r.uri)).toEqual(
      expect.arrayContaining([CURRENT, BERLIN, 'inventory://warehouse/lisbon']),
    );
    const templates = await client.listResourceTemplates();
    expect(templates.resourceTemplates.map((t) => t.uriTemplate)).toContain(
      'inventory://warehouse/{warehouseId}',
    );

    const current = await client.readResource({ uri: CURRENT });
    const doc = JSON.parse((current.contents[0] as { text: string }).text) as {
      warehouses: Record<string, Record<string, number>>;
      totals: Record<string, number>;
    };
    expect(doc.totals['widget-a']).toBe(
      doc.warehouses.berlin!['widget-a']! + doc.warehouses.lisbon!['widget-a']!,
    );
    const viaTemplate = await client.readResource({ uri: 'inventory://warehouse/lisbon' });
    expect(JSON.parse((viaTemplate.contents[0] as { text: string }).text)).toMatchObject({
      warehouseId: 'lisbon',
    });

    const stock = await client.callTool({ name: 'get_stock', arguments: { sku: 'gadget-x' } });
    expect(stock.structuredContent).toEqual({
      sku: 'gadget-x',
      warehouses: { berlin: 40, lisbon: 3 },
      total: 43,
    });

    const prompt = await client.getPrompt({ name: 'restock_plan', arguments: { warehouseId: 'lisbon' } });
    expect(JSON.stringify(prompt.messages[0])).toContain('gadget-x (3)');

    // The SDK client has no tasks: without the extension the task-only tool is refused with -32021.
    await expect(
      client.callTool({ name: 'start_reindex', arguments: { scope: 'all' } }),
    ).rejects.toMatchObject({
      code: -32021,
    });
    expect((await state(url)).methodCounts.modern['server/discover']).toBeGreaterThanOrEqual(1);
  });

  it('listen (pinned modern): ack, resources/updated after /control/resource and adjust_stock, list_changed after catalog/add, drop', async () => {
    const client = await connect({ pin: MODERN });
    expect(client.getProtocolEra()).toBe('modern');
    const updated: string[] = [];
    let listChanged = 0;
    client.setNotificationHandler('notifications/resources/updated', (n) => {
      updated.push(n.params.uri);
    });
    client.setNotificationHandler('notifications/resources/list_changed', () => {
      listChanged++;
    });
    const sub = await client.listen({ resourceSubscriptions: [BERLIN, CURRENT], resourcesListChanged: true });
    expect(sub.honoredFilter).toEqual({
      resourceSubscriptions: [BERLIN, CURRENT],
      resourcesListChanged: true,
    });
    await until(
      async () => (await state(url)).listenStreams.some((s) => s.servedBy === 'sdk'),
      'listen stream',
    );

    expect((await control(url, `resource?uri=${encodeURIComponent(BERLIN)}`)).status).toBe(200);
    await until(() => updated.includes(BERLIN), 'resources/updated from control');

    updated.length = 0;
    const adjusted = await client.callTool({
      name: 'adjust_stock',
      arguments: { warehouseId: 'berlin', sku: 'widget-b', delta: 5 },
    });
    expect(adjusted.structuredContent).toMatchObject({ before: 8, after: 13 });
    await until(
      () => updated.includes(BERLIN) && updated.includes(CURRENT),
      'resources/updated from adjust_stock',
    );

    const added = await control(
      url,
      'catalog/add?uri=inventory%3A%2F%2Fwarehouse%2Fporto&name=warehouse-porto',
    );
    expect(added.status).toBe(201);
    await until(() => listChanged === 1, 'resources/list_changed');
    expect((await client.listResources()).resources.map((r) => r.uri)).toContain(
      'inventory://warehouse/porto',
    );
    expect((await control(url, 'catalog/remove?uri=inventory%3A%2F%2Fwarehouse%2Fporto')).status).toBe(200);
    await until(() => listChanged === 2, 'second resources/list_changed');

    const drop = (await (await control(url, 'drop')).json()) as { dropped: { modern: number } };
    expect(drop.dropped.modern).toBeGreaterThanOrEqual(1);
    expect(await sub.closed).toBe('remote');
    await until(async () => (await state(url)).listenStreams.length === 0, 'listen streams gone');
  });

  it('legacy era through the official client: initialize, subscribe, resources/updated, list_changed', async () => {
    const client = await connect('legacy');
    expect(client.getProtocolEra()).toBe('legacy');
    const updated: string[] = [];
    let listChanged = 0;
    client.setNotificationHandler('notifications/resources/updated', (n) => {
      updated.push(n.params.uri);
    });
    client.setNotificationHandler('notifications/resources/list_changed', () => {
      listChanged++;
    });
    const tools = await client.listTools();
    expect(tools.tools.find((t) => t.name === 'start_reindex')?.execution).toEqual({
      taskSupport: 'required',
    });
    await client.subscribeResource({ uri: CURRENT });
    await until(async () => {
      const s = await state(url);
      return s.sessions.some((x) => x.subscriptions.includes(CURRENT) && x.getStreams === 1);
    }, 'subscription and GET stream');

    await client.callTool({
      name: 'adjust_stock',
      arguments: { warehouseId: 'lisbon', sku: 'gadget-x', delta: 7 },
    });
    await until(() => updated.includes(CURRENT), 'legacy resources/updated');
    expect(updated).not.toContain('inventory://warehouse/lisbon');

    expect(
      (await control(url, 'catalog/add?uri=inventory%3A%2F%2Freport%2Fdaily&name=daily-report')).status,
    ).toBe(201);
    await until(() => listChanged >= 1, 'legacy resources/list_changed');
    const listed = await client.listResources();
    expect(listed.resources.map((r) => r.uri)).toContain('inventory://report/daily');
    const report = await client.readResource({ uri: 'inventory://report/daily' });
    expect(JSON.parse((report.contents[0] as { text: string }).text)).toMatchObject({ name: 'daily-report' });
    expect((await control(url, 'catalog/remove?uri=inventory%3A%2F%2Freport%2Fdaily')).status).toBe(200);
  });

  it('modern tasks through raw requests: -32021, task creation, listen with taskIds, input, update, complete, cancel, fail', async () => {
    const missing = await modernCall(url, 'tools/call', {
      name: 'start_reindex',
      arguments: { scope: 'berlin' },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
    });

    const noScopeHeader = await modernPost(
      url,
      'tools/call',
      { name: 'start_reindex', arguments: { scope: 'berlin' } },
      { capabilities: TASKS },
    );
    expect(noScopeHeader.status).toBe(400);
    expect(((await noScopeHeader.json()) as Json).error).toMatchObject({ code: -32020 });

    const created = await modernPost(
      url,
      'tools/call',
      { name: 'start_reindex', arguments: { scope: 'Zürich' } },
      {
        capabilities: TASKS,
        headers: { 'mcp-param-scope': `=?base64?${Buffer.from('Zürich').toString('base64')}?=` },
      },
    );
    expect(created.status).toBe(200);
    const task = ((await rpcBody(created)).result ?? {}) as Json;
    expect(task).toMatchObject({
      resultType: 'task',
      status: 'working',
      ttlMs: expect.any(Number),
      pollIntervalMs: 50,
    });
    const taskId = task.taskId as string;

    const listen = await modernPost(
      url,
      'subscriptions/listen',
      { notifications: { taskIds: [taskId, 'no-such-task'], resourcesListChanged: true } },
      { capabilities: TASKS },
    );
    expect(listen.headers.get('content-type')).toContain('text/event-stream');
    const events = new SseReader(listen);
    cleanups.push(() => events.close());
    const ack = await events.nextMatching((m) => m.method === 'notifications/subscriptions/acknowledged');
    expect(ack.params).toMatchObject({ notifications: { taskIds: [taskId], resourcesListChanged: true } });
    expect((await state(url)).listenStreams.some((s) => s.servedBy === 'tasks')).toBe(true);

    expect((await control(url, `task/input?taskId=${taskId}`)).status).toBe(200);
    const inputNote = await events.nextMatching((m) => m.method === 'notifications/tasks');
    expect(inputNote.params).toMatchObject({
      taskId,
      status: 'input_required',
      inputRequests: { 'confirm-1': {} },
    });
    expect((inputNote.params as Json)._meta).toMatchObject({
      'io.modelcontextprotocol/subscriptionId': expect.anything(),
    });

    const polled = await modernCall(url, 'tasks/get', { taskId }, TASKS);
    expect(polled.body.result).toMatchObject({
      resultType: 'complete',
      status: 'input_required',
      inputRequests: { 'confirm-1': { method: 'elicitation/create', params: { mode: 'form' } } },
    });
    const update = await modernCall(
      url,
      'tasks/update',
      {
        taskId,
        inputResponses: { 'confirm-1': { action: 'accept', content: { confirm: true } }, stale: {} },
      },
      TASKS,
    );
    expect(update.body.result).toMatchObject({ resultType: 'complete' });
    expect((await events.nextMatching((m) => m.method === 'notifications/tasks')).params).toMatchObject({
      status: 'working',
    });
    const snapshot = (await state(url)).tasks.find((t) => t.taskId === taskId);
    expect(snapshot?.inputResponses).toEqual({
      'confirm-1': { action: 'accept', content: { confirm: true } },
    });

    expect((await control(url, 'task/complete')).status).toBe(200);
    const done = await events.nextMatching((m) => m.method === 'notifications/tasks');
    expect(done.params).toMatchObject({
      status: 'completed',
      result: { structuredContent: { scope: 'Zürich' } },
    });
    const finished = await modernCall(url, 'tasks/get', { taskId }, TASKS);
    expect(finished.body.result).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: expect.stringContaining('Zürich') }] },
    });
    expect((await control(url, `task/complete?taskId=${taskId}`)).status).toBe(409);
    expect((await control(url, 'task/complete?taskId=unknown')).status).toBe(404);

    const start = async () => {
      const r = await modernPost(
        url,
        'tools/call',
        { name: 'start_reindex', arguments: { scope: 'lisbon' } },
        { capabilities: TASKS, headers: { 'mcp-param-scope': 'lisbon' } },
      );
      return ((await rpcBody(r)).result as Json).taskId as string;
    };
    const toCancel = await start();
    const cancelled = await modernCall(url, 'tasks/cancel', { taskId: toCancel }, TASKS);
    expect(cancelled.body.result).toMatchObject({ resultType: 'complete' });
    expect((await modernCall(url, 'tasks/get', { taskId: toCancel }, TASKS)).body.result).toMatchObject({
      status: 'cancelled',
    });
    const toFail = await start();
    expect((await control(url, `task/fail?taskId=${toFail}&message=disk%20full`)).status).toBe(200);
    expect((await modernCall(url, 'tasks/get', { taskId: toFail }, TASKS)).body.result).toMatchObject({
      status: 'failed',
      error: { code: -32603, message: 'disk full' },
    });
    expect((await modernCall(url, 'tasks/get', { taskId: 'nope' }, TASKS)).body.error).toMatchObject({
      code: -32602,
    });

    const noCapListen = await modernPost(url, 'subscriptions/listen', {
      notifications: { taskIds: [taskId] },
    });
    expect(noCapListen.status).toBe(400);
    expect(((await noCapListen.json()) as Json).error).toMatchObject({ code: -32021 });
  });

  it('legacy tasks through raw requests: execution.taskSupport, {task}, tasks/get|list|result|cancel, notifications/tasks/status, input', async () => {
    const session = new LegacySession(url);
    cleanups.push(() => session.close());
    const init = await session.open({ elicitation: {} });
    expect(init.result).toMatchObject({
      protocolVersion: LEGACY,
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
    });
    const untasked = await session.call('tools/call', { name: 'start_reindex', arguments: { scope: 'all' } });
    expect(untasked.error).toMatchObject({ code: -32601 });

    const created = await session.call('tools/call', {
      name: 'start_reindex',
      arguments: { scope: 'all' },
      task: { ttl: 60_000 },
    });
    const task = (created.result as { task: Json }).task;
    expect(task).toMatchObject({ status: 'working', ttl: 60_000, pollInterval: 50 });
    expect(created.result).not.toHaveProperty('content');
    const taskId = task.taskId as string;

    const stream = new SseReader(await session.getStream());
    cleanups.push(() => stream.close());
    await until(async () =>
      (await state(url)).sessions.some((s) => s.sessionId === session.sessionId && s.getStreams === 1),
    );

    expect((await session.call('tasks/get', { taskId })).result).toMatchObject({ taskId, status: 'working' });
    const list = (await session.call('tasks/list', {})).result as { tasks: Json[] };
    expect(list.tasks.map((t) => t.taskId)).toEqual([taskId]);

    // tasks/result blocks; meanwhile the task asks for input, which arrives as elicitation/create.
    const resultResponse = await session.post('tasks/result', { taskId });
    const resultStream = new SseReader(resultResponse);
    cleanups.push(() => resultStream.close());
    expect((await control(url, `task/input?taskId=${taskId}`)).status).toBe(200);
    const status = await stream.nextMatching((m) => m.method === 'notifications/tasks/status');
    expect(status.params).toMatchObject({ taskId, status: 'input_required' });
    const elicit = await resultStream.nextMatching((m) => m.method === 'elicitation/create');
    expect(elicit.params).toMatchObject({
      mode: 'form',
      _meta: { 'io.modelcontextprotocol/related-task': { taskId } },
    });
    const answered = await fetch(url, {
      method: 'POST',
      headers: session.headers(),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: elicit.id,
        result: { action: 'accept', content: { confirm: true } },
      }),
    });
    expect(answered.status).toBe(202);
    await until(async () => (await state(url)).tasks.find((t) => t.taskId === taskId)?.status === 'working');

    expect((await control(url, 'task/complete')).status).toBe(200);
    const outcome = await resultStream.nextMatching((m) => m.id !== undefined);
    expect(outcome.result).toMatchObject({
      content: [{ type: 'text', text: expect.stringContaining('Reindexed') }],
      _meta: { 'io.modelcontextprotocol/related-task': { taskId } },
    });
    expect(
      (await stream.nextMatching((m) => m.method === 'notifications/tasks/status')).params,
    ).toMatchObject({
      status: 'working',
    });
    expect((await session.call('tasks/cancel', { taskId })).error).toMatchObject({ code: -32602 });

    const second = await session.call('tools/call', {
      name: 'start_reindex',
      arguments: { scope: 'berlin' },
      task: {},
    });
    const secondId = ((second.result as { task: Json }).task.taskId as string) ?? '';
    expect((await session.call('tasks/cancel', { taskId: secondId })).result).toMatchObject({
      status: 'cancelled',
    });

    // A task is visible only in its own session, and never to the modern era.
    const other = new LegacySession(url);
    cleanups.push(() => other.close());
    await other.open();
    expect((await other.call('tasks/get', { taskId })).error).toMatchObject({ code: -32602 });
    expect((await modernCall(url, 'tasks/get', { taskId }, TASKS)).body.error).toMatchObject({
      code: -32602,
    });
  });

  it('legacy GET stream resumes with Last-Event-ID after /control/drop', async () => {
    const session = new LegacySession(url);
    cleanups.push(() => session.close());
    await session.open();
    expect((await session.call('resources/subscribe', { uri: BERLIN })).result).toEqual({});
    const first = new SseReader(await session.getStream());
    await until(async () =>
      (await state(url)).sessions.some((s) => s.sessionId === session.sessionId && s.getStreams === 1),
    );
    await demo.emitResourceUpdated(BERLIN);
    const seen = await first.next();
    expect(seen?.message).toMatchObject({
      method: 'notifications/resources/updated',
      params: { uri: BERLIN },
    });
    expect(seen?.id).toBeDefined();

    const dropped = (await (await control(url, 'drop')).json()) as { dropped: { legacy: number } };
    expect(dropped.dropped.legacy).toBeGreaterThanOrEqual(1);
    expect(await first.next()).toBeUndefined();
    await first.close();
    await until(async () =>
      (await state(url)).sessions.some((s) => s.sessionId === session.sessionId && s.getStreams === 0),
    );

    await demo.emitResourceUpdated(BERLIN);
    const resumed = new SseReader(await session.getStream(seen!.id));
    cleanups.push(() => resumed.close());
    const replayed = await resumed.next();
    expect(replayed?.message).toMatchObject({
      method: 'notifications/resources/updated',
      params: { uri: BERLIN },
    });
    expect(replayed?.id).not.toBe(seen?.id);
  });

  it('sessions: unknown session → 404, no session → 400, DELETE ends a session', async () => {
    const unknown = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': 'not-a-session',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(unknown.status).toBe(404);
    const none = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(none.status).toBe(400);
    const session = new LegacySession(url);
    await session.open();
    expect((await fetch(url, { method: 'DELETE', headers: session.headers() })).status).toBe(200);
    expect((await session.post('tools/list', {})).status).toBe(404);
  });

  it('checkHeaders: mismatches get 400 -32020 and are recorded; base64 Mcp-Name is decoded', async () => {
    const before = (await state(url)).headerViolations.length;
    const wrongMethod = await modernPost(
      url,
      'tools/list',
      {},
      { headers: { 'mcp-method': 'prompts/list' } },
    );
    expect(wrongMethod.status).toBe(400);
    expect(((await wrongMethod.json()) as Json).error).toMatchObject({ code: -32020 });
    const wrongName = await modernPost(
      url,
      'tools/call',
      { name: 'get_stock', arguments: { sku: 'widget-a' } },
      { headers: { 'mcp-name': 'adjust_stock' } },
    );
    expect(wrongName.status).toBe(400);
    const noVersion = await modernPost(url, 'tools/list', {}, { headers: { 'mcp-protocol-version': null } });
    expect(noVersion.status).toBe(400);
    const violations = (await state(url)).headerViolations.slice(before);
    expect(violations.map((v) => v.header)).toEqual(['Mcp-Method', 'Mcp-Name', 'MCP-Protocol-Version']);

    // An unsupported version with consistent headers passes our check; the SDK answers -32022.
    const future = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2099-01-01',
        'mcp-method': 'tools/list',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2099-01-01',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    expect(future.status).toBe(400);
    expect(((await future.json()) as Json).error).toMatchObject({
      code: -32022,
      data: { supported: [MODERN] },
    });

    const encoded = await modernPost(
      url,
      'resources/read',
      { uri: BERLIN },
      {
        headers: { 'mcp-name': `=?base64?${Buffer.from(BERLIN).toString('base64')}?=` },
      },
    );
    expect(encoded.status).toBe(200);
    expect(((await rpcBody(encoded)).result as Json).contents).toHaveLength(1);
  });

  it('control endpoints: state, validation, unknown paths and methods, Host check', async () => {
    const s = await state(url);
    expect(s.era).toBe('dual');
    expect(s.url).toBe(url);
    expect(s.resources[0]).toMatchObject({ uri: CURRENT, mimeType: 'application/json' });
    expect(s.methodCounts.legacy.initialize).toBeGreaterThanOrEqual(1);
    expect((await control(url, 'catalog/add?uri=not%20a%20uri&name=x')).status).toBe(400);
    expect((await control(url, `catalog/add?uri=${encodeURIComponent(CURRENT)}&name=again`)).status).toBe(
      409,
    );
    expect((await control(url, 'catalog/remove?uri=inventory%3A%2F%2Fnone')).status).toBe(404);
    expect((await control(url, 'resource')).status).toBe(400);
    expect((await control(url, 'nope')).status).toBe(404);
    expect((await fetch(url.replace(/\/mcp$/, '/control/drop'))).status).toBe(405);
    const rebinding = await fetch(url.replace(/\/mcp$/, '/control/state'), {
      headers: { origin: 'http://evil.example' },
    });
    expect(rebinding.status).toBe(403);
  });
});

describe('demo server, modern-only and legacy-only', () => {
  const servers: AxMCPDemoServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });
  async function start(era: 'modern' | 'legacy'): Promise<string> {
    const server = new AxMCPDemoServer({ era, keepAliveMs: 0 });
    servers.push(server);
    return server.start();
  }

  it('modern-only: initialize gets 400 -32022 naming 2026-07-28, GET and DELETE get 405, discover works', async () => {
    const url = await start('modern');
    const init = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    });
    expect(init.status).toBe(400);
    expect(((await init.json()) as Json).error).toMatchObject({
      code: -32022,
      data: { supported: [MODERN] },
    });
    expect((await fetch(url, { headers: { accept: 'text/event-stream' } })).status).toBe(405);
    expect((await fetch(url, { method: 'DELETE' })).status).toBe(405);
    const discover = await modernCall(url, 'server/discover', {});
    expect(discover.body.result).toMatchObject({
      supportedVersions: [MODERN],
      resultType: 'complete',
      ttlMs: 60_000,
    });
    const client = sdkClient('auto');
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    expect(client.getProtocolEra()).toBe('modern');
    await client.close();
    const legacyClient = sdkClient('legacy');
    await expect(legacyClient.connect(new StreamableHTTPClientTransport(new URL(url)))).rejects.toMatchObject(
      {
        message: expect.stringContaining('-32022'),
      },
    );
    await legacyClient.close();
  });

  it('legacy-only: a modern discover gets a legacy-looking 4xx; auto falls back to initialize, pin fails', async () => {
    const url = await start('legacy');
    const discover = await modernPost(url, 'server/discover', {});
    expect(discover.status).toBeGreaterThanOrEqual(400);
    expect(discover.status).toBeLessThan(500);
    const body = (await discover.json()) as { error?: { code?: number } };
    expect(RECOGNISED_MODERN_CODES).not.toContain(body.error?.code);
    expect(discover.status === 404 && body.error?.code === -32601).toBe(false);

    const client = sdkClient('auto');
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    expect(client.getProtocolEra()).toBe('legacy');
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('start_reindex');
    await client.close();
    const pinned = sdkClient({ pin: MODERN });
    await expect(pinned.connect(new StreamableHTTPClientTransport(new URL(url)))).rejects.toMatchObject({
      code: 'ERA_NEGOTIATION_FAILED',
    });
    await pinned.close();
  });

  it('programmatic controls mirror the endpoints and report typed errors', async () => {
    const server = new AxMCPDemoServer({ era: 'modern', taskCompletesAfterPolls: 2, keepAliveMs: 0 });
    servers.push(server);
    const url = await server.start();
    expect(() => server.completeTask()).toThrow(
      expect.objectContaining({ code: 'invalid_argument', status: 409 }),
    );
    const created = await modernPost(
      url,
      'tools/call',
      { name: 'start_reindex', arguments: { scope: 'x' } },
      { capabilities: TASKS, headers: { 'mcp-param-scope': 'x' } },
    );
    const taskId = ((await rpcBody(created)).result as Json).taskId as string;
    expect((await modernCall(url, 'tasks/get', { taskId }, TASKS)).body.result).toMatchObject({
      status: 'working',
    });
    expect((await modernCall(url, 'tasks/get', { taskId }, TASKS)).body.result).toMatchObject({
      status: 'completed',
    });
    expect(server.state().tasks[0]).toMatchObject({ taskId, polls: 2, status: 'completed' });
    expect(server.addResource({ uri: 'inventory://warehouse/oslo', name: 'oslo' })).toMatchObject({
      mimeType: 'application/json',
    });
    expect(server.removeResource('inventory://warehouse/oslo')).toBe(true);
    expect(server.removeResource('inventory://warehouse/oslo')).toBe(false);
  });
});

describe('modern test peer (test/servers/modern.ts)', () => {
  let peer: ModernPeer;
  beforeAll(async () => {
    peer = await startModernServer();
  });
  afterAll(async () => {
    await peer.close();
  });

  it('lists annotated tools (and the invalid one), with cache hints on lists and reads', async () => {
    const tools = await modernCall(peer.url, 'tools/list', {});
    const result = tools.body.result as { tools: Json[]; ttlMs: number; cacheScope: string };
    expect(result).toMatchObject({ ttlMs: 60_000, cacheScope: 'public' });
    const byName = new Map(result.tools.map((t) => [t.name as string, t]));
    expect(byName.get('record_params')?.inputSchema).toMatchObject({
      properties: {
        region: { type: 'string', 'x-mcp-header': 'Region' },
        priority: { type: 'integer', 'x-mcp-header': 'Priority' },
        express: { type: 'boolean', 'x-mcp-header': 'Express' },
      },
    });
    expect(byName.get('invalid_header')?.inputSchema).toMatchObject({
      properties: { amount: { type: 'number', 'x-mcp-header': 'Amount' } },
    });
    const read = await modernCall(peer.url, 'resources/read', { uri: 'res://modern/hello' });
    expect(read.body.result).toMatchObject({ ttlMs: 5_000, cacheScope: 'private' });
    expect(peer.stats.requests.at(-1)?.headers['mcp-name']).toBe('res://modern/hello');
  });

  it('records Mcp-Param-* headers; injects -32020 once for flaky; -32022 on demand', async () => {
    const recorded = await modernPost(
      peer.url,
      'tools/call',
      { name: 'record_params', arguments: { region: 'eu', priority: 3, express: true } },
      { headers: { 'mcp-param-region': 'eu', 'mcp-param-priority': '3', 'mcp-param-express': 'true' } },
    );
    expect(recorded.status).toBe(200);
    expect(peer.stats.paramHeaders.at(-1)).toEqual({
      'mcp-param-region': 'eu',
      'mcp-param-priority': '3',
      'mcp-param-express': 'true',
    });
    const call = () =>
      modernPost(
        peer.url,
        'tools/call',
        { name: 'flaky', arguments: { value: 'v' } },
        { headers: { 'mcp-param-value': 'v' } },
      );
    const first = await call();
    expect(first.status).toBe(400);
    expect(((await first.json()) as Json).error).toMatchObject({ code: -32020 });
    expect((await call()).status).toBe(200);
    expect(peer.stats.toolCalls.get('flaky')).toBe(2);
    expect(peer.stats.headerMismatches).toBe(1);

    peer.setVersionRejection({ versions: [MODERN], supported: ['2099-01-01'] });
    const rejected = await modernCall(peer.url, 'tools/list', {});
    expect(rejected.status).toBe(400);
    expect(rejected.body.error).toMatchObject({
      code: -32022,
      data: { supported: ['2099-01-01'], requested: MODERN },
    });
    peer.setVersionRejection(undefined);
    expect((await modernCall(peer.url, 'tools/list', {})).status).toBe(200);
  });

  it('MRTR through the official client: one round, two rounds, the round cap, a resource read', async () => {
    const client = sdkClient({ pin: MODERN });
    client.setRequestHandler('elicitation/create', () => ({
      action: 'accept',
      content: { name: 'Ada', confirm: true },
    }));
    client.setRequestHandler('sampling/createMessage', () => ({
      role: 'assistant',
      content: { type: 'text', text: 'banana' },
      model: 'test',
    }));
    client.setRequestHandler('roots/list', () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }));
    await client.connect(new StreamableHTTPClientTransport(new URL(peer.url)));
    try {
      const one = await client.callTool({ name: 'mrtr_one_round', arguments: {} });
      expect(one.content).toEqual([{ type: 'text', text: 'Hello, Ada' }]);
      const two = await client.callTool({ name: 'mrtr_two_round', arguments: {} });
      expect(two.structuredContent).toEqual({ sample: 'banana', roots: ['file:///work'] });
      expect(peer.stats.requestStateEchoes).toBe(3);
      expect(peer.stats.requestStateMismatches).toBe(0);
      await expect(client.callTool({ name: 'mrtr_forever', arguments: {} })).rejects.toMatchObject({
        code: 'INPUT_REQUIRED_ROUNDS_EXCEEDED',
      });
      // The SDK client's default cap is 10 retries after the first round.
      expect(peer.stats.mrtrRounds.get('mrtr_forever')).toBe(11);
      const secret = await client.readResource({ uri: 'mrtr://confirm' });
      expect(secret.contents[0]).toMatchObject({ text: 'the secret' });
      expect(peer.stats.mrtrRounds.get('mrtr://confirm')).toBe(2);
    } finally {
      await client.close();
    }
  });
});

describe('demo CLI entry (src/demo/main.ts)', () => {
  it('reads PORT, ERA, HOST and TASK_POLLS, rejecting bad values', () => {
    expect(demoOptionsFromEnv({ PORT: '0', ERA: 'legacy', TASK_POLLS: '3' })).toEqual({
      era: 'legacy',
      port: 0,
      host: '127.0.0.1',
      taskCompletesAfterPolls: 3,
    });
    expect(demoOptionsFromEnv({})).toMatchObject({ era: 'dual', port: 3000 });
    expect(() => demoOptionsFromEnv({ ERA: 'future' })).toThrow(RangeError);
    expect(() => demoOptionsFromEnv({ PORT: '70000' })).toThrow(RangeError);
    expect(() => demoOptionsFromEnv({ TASK_POLLS: '0' })).toThrow(RangeError);
  });

  it('starts a server from the environment and prints its URL', async () => {
    const lines: string[] = [];
    const server = await startDemoFromEnv({ PORT: '0', ERA: 'modern' }, (line) => lines.push(line));
    try {
      expect(server.era).toBe('modern');
      expect(lines[0]).toBe(`ax-mcp demo (modern) listening on ${server.url}`);
      expect((await modernCall(server.url, 'server/discover', {})).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe('lifetime', () => {
  it('close() leaves no server, socket or timer behind', async () => {
    const handles = () =>
      process
        .getActiveResourcesInfo()
        .filter((r) => ['TCPServerWrap', 'TCPSocketWrap', 'Timeout'].includes(r)).length;
    await new Promise((r) => setTimeout(r, 200));
    const before = handles();
    const demo = new AxMCPDemoServer({ retryIntervalMs: 100 });
    const url = await demo.start();
    const peer = await startModernServer();
    const session = new LegacySession(url);
    await session.open();
    const get = await session.getStream();
    const listen = await modernPost(url, 'subscriptions/listen', {
      notifications: { resourcesListChanged: true },
    });
    const created = await modernPost(
      url,
      'tools/call',
      { name: 'start_reindex', arguments: { scope: 'a' } },
      { capabilities: TASKS, headers: { 'mcp-param-scope': 'a' } },
    );
    const taskId = ((await rpcBody(created)).result as Json).taskId as string;
    const taskListen = await modernPost(
      url,
      'subscriptions/listen',
      { notifications: { taskIds: [taskId] } },
      {
        capabilities: TASKS,
      },
    );
    const pending = [get, listen, taskListen].map((r) => r.text().catch((e: unknown) => e));
    await until(async () => (await state(url)).listenStreams.length === 2);
    expect(handles()).toBeGreaterThan(before);
    await Promise.all([demo.close(), peer.close()]);
    const [, listenText, taskListenText] = await Promise.all(pending);
    // Both kinds of listen stream end gracefully: the final result carries the subscription id.
    for (const body of [listenText, taskListenText]) {
      expect(String(body)).toMatch(
        /"result":\{"resultType":"complete","_meta":\{"io.modelcontextprotocol\/subscriptionId"/,
      );
    }
    await until(() => handles() <= before, 'handles released');
    expect(handles()).toBe(before);
  });
});
