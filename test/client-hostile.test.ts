/**
 * AxMCPClient against a misbehaving Streamable HTTP peer (test/servers/hostile.ts): every
 * misbehaviour must surface as a typed error with a stable code, never crash the process, and
 * leave the same client usable for the next call.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type AxMCPClient,
  type AxMCPError,
  AxMCPHTTPStatusError,
  AxMCPProtocolError,
  AxMCPTimeoutError,
  AxMCPTransportError,
  RPC,
} from '../src/index.js';
import { eventually, httpClient } from './helpers/clients.js';
import { type HostileMode, type HostileServer, startHostileServer } from './servers/hostile.js';

const MAX_RESPONSE_BYTES = 64 * 1024;

describe('AxMCPClient against a hostile Streamable HTTP peer', () => {
  let server: HostileServer;
  let client: AxMCPClient;
  const unreported: unknown[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    server = await startHostileServer({ keepAliveMs: 20 });
    client = httpClient(
      server.url,
      { era: 'legacy', timeoutMs: 10_000, onError: (error) => unreported.push(error) },
      { maxResponseBytes: MAX_RESPONSE_BYTES },
    );
    // Connect in mode `ok`: the session is set up once and every test reuses it.
    await client.inspectCatalog();
  });

  beforeEach(() => {
    server.setMode('ok');
  });

  afterEach(async () => {
    // The SAME client must still work after whatever the test provoked.
    server.setMode('ok');
    const { tools } = await client.listTools(undefined, { timeoutMs: 5_000 });
    expect(tools.map((tool) => tool.name)).toEqual(['ok_tool']);
    const result = await client.callTool('ok_tool', {}, { timeoutMs: 5_000 });
    expect(result.content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(unhandled).toEqual([]);
  });

  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await client?.close();
    await server?.close();
  });

  /** Requests of one JSON-RPC method that reached the server since `from`. */
  function posts(method: string, from: number): number {
    return server.requests.slice(from).filter((request) => request.rpcMethod === method).length;
  }

  /** Sets `mode`, makes one `tools/list`, and returns what it threw. */
  async function listFails(mode: HostileMode, timeoutMs = 5_000): Promise<unknown> {
    server.setMode(mode);
    const error = await client.listTools(undefined, { timeoutMs }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error, `mode ${mode} must fail`).toBeDefined();
    return error;
  }

  it('connected once with a session and sends it on every request', () => {
    expect(client.getEra()).toBe('legacy');
    expect(client.serverInfo?.name).toBe('hostile-peer');
    const later = server.requests.filter((request) => request.rpcMethod !== 'initialize');
    expect(later.length).toBeGreaterThan(0);
    for (const request of later) expect(request.headers.get('mcp-session-id')).toBe(server.sessionId);
  });

  it('invalid JSON → AxMCPProtocolError invalid_message (-32700)', async () => {
    const error = await listFails('invalid-json');
    expect(error).toBeInstanceOf(AxMCPProtocolError);
    expect(error).toMatchObject({ code: 'invalid_message', rpcCode: RPC.parseError });
    expect((error as AxMCPError).endpoint).toBe(server.url);
    expect((error as AxMCPError).namespace).toBe('test');
  });

  it('"jsonrpc": "1.0" → AxMCPProtocolError invalid_message', async () => {
    const error = await listFails('bad-jsonrpc-version');
    expect(error).toBeInstanceOf(AxMCPProtocolError);
    expect(error).toMatchObject({ code: 'invalid_message', rpcCode: RPC.invalidRequest });
    expect((error as Error).message).toContain('jsonrpc');
  });

  it('a JSON response with an unknown id → AxMCPTransportError at once, not a hang until timeoutMs', async () => {
    const started = Date.now();
    const error = await listFails('unknown-id', 2_000);
    // A JSON body is the whole answer to a POST: once it ended without our id, the answer cannot
    // come any more, so the transport fails the request then instead of waiting for the deadline.
    expect(error).toBeInstanceOf(AxMCPTransportError);
    expect(error).toMatchObject({ code: 'transport_error' });
    expect((error as Error).message).toContain('did not carry its id');
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it.each(['oversized', 'oversized-chunked'] as const)(
    '%s response over maxResponseBytes → AxMCPTransportError message_too_large, not retried',
    async (mode) => {
      const from = server.requests.length;
      const error = await listFails(mode);
      expect(error).toBeInstanceOf(AxMCPTransportError);
      expect((error as AxMCPError).code).toBe('message_too_large');
      expect(posts('tools/list', from)).toBe(1);
    },
  );

  it('__proto__ keys → AxMCPProtocolError unsafe_key; nothing is polluted', async () => {
    const error = await listFails('proto-key');
    expect(error).toBeInstanceOf(AxMCPProtocolError);
    expect((error as AxMCPError).code).toBe('unsafe_key');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('a never-ending SSE stream → AxMCPTimeoutError timeout, and the server sees the stream closed', async () => {
    server.setMode('sse-forever');
    const from = server.requests.length;
    const call = client.listTools(undefined, { timeoutMs: 400 });
    await eventually(() => server.openStreams() === 1, 3_000, 'the SSE stream to open');
    const error = await call.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(AxMCPTimeoutError);
    expect(error).toMatchObject({ code: 'timeout', timeoutMs: 400 });
    await eventually(() => server.openStreams() === 0, 3_000, 'the server to see the stream closed');
    // The server is told the request was abandoned.
    await eventually(() => posts('notifications/cancelled', from) === 1, 3_000, 'notifications/cancelled');
  });

  it('HTML 500 → AxMCPHTTPStatusError 500 with only a bounded snippet of the body', async () => {
    const from = server.requests.length;
    const error = await listFails('html-500');
    expect(error).toBeInstanceOf(AxMCPHTTPStatusError);
    const status = error as AxMCPHTTPStatusError;
    expect(status.code).toBe('http_status');
    expect(status.status).toBe(500);
    expect(status.bodySnippet.length).toBeLessThanOrEqual(500);
    expect(status.bodySnippet).toContain('500 Internal Server Error');
    // The body stays in the snippet: the message names the exchange, not the HTML.
    expect(status.message).not.toContain('<');
    expect(status.message).toContain('500');
    // 500 is not a transient status: no retry.
    expect(posts('tools/list', from)).toBe(1);
  });

  it('503 + Retry-After: a safe tools/list is retried after the advertised delay', async () => {
    server.setMode('retry-503', { times: 1 });
    const from = server.requests.length;
    const started = Date.now();
    const { tools } = await client.listTools(undefined, { timeoutMs: 10_000 });
    expect(tools.map((tool) => tool.name)).toEqual(['ok_tool']);
    expect(posts('tools/list', from)).toBe(2);
    // Retry-After: 1 is honoured (not the 250 ms default backoff).
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('503 + Retry-After: a tools/call is NOT retried', async () => {
    server.setMode('retry-503', { times: 1 });
    const from = server.requests.length;
    const error = await client.callTool('ok_tool', {}, { timeoutMs: 10_000 }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(AxMCPHTTPStatusError);
    expect(error).toMatchObject({ code: 'http_status', status: 503, retryAfterMs: 1000 });
    expect(posts('tools/call', from)).toBe(1);
  });

  it('a failed initialize is a typed error, and the same client connects on the next call', async () => {
    const fresh = httpClient(server.url, { era: 'legacy', timeoutMs: 5_000 });
    try {
      server.setMode('html-500', { includeInitialize: true });
      await expect(fresh.ping()).rejects.toBeInstanceOf(AxMCPHTTPStatusError);
      server.setMode('invalid-json', { includeInitialize: true });
      await expect(fresh.ping()).rejects.toMatchObject({ code: 'invalid_message' });
      expect(fresh.getEra()).toBeUndefined();
      server.setMode('ok');
      await fresh.ping();
      expect(fresh.getEra()).toBe('legacy');
      expect(fresh.serverInfo?.name).toBe('hostile-peer');
    } finally {
      await fresh.close();
    }
  });

  it('SSE priming then an early close is resumed with GET Last-Event-ID', async () => {
    server.setMode('sse-resume');
    const from = server.requests.length;
    const { tools } = await client.listTools(undefined, { timeoutMs: 5_000 });
    expect(tools.map((tool) => tool.name)).toEqual(['ok_tool']);
    const seen = server.requests.slice(from);
    const post = seen.findIndex((request) => request.method === 'POST' && request.rpcMethod === 'tools/list');
    expect(post).toBeGreaterThanOrEqual(0);
    const gets = seen.slice(post + 1).filter((request) => request.method === 'GET');
    expect(gets).toHaveLength(1);
    const get = gets[0]!;
    expect(get.headers.get('last-event-id')).toMatch(/^e\d+$/);
    expect(get.headers.get('accept')).toContain('text/event-stream');
    expect(get.headers.get('mcp-session-id')).toBe(server.sessionId);
    expect(get.headers.get('mcp-protocol-version')).toBe('2025-11-25');
    // The POST was sent once: resuming is not re-sending.
    expect(posts('tools/list', from)).toBe(1);
  });

  it('a tools/call whose stream closes early is resumed with GET, never sent again', async () => {
    server.setMode('sse-resume');
    const from = server.requests.length;
    const result = await client.callTool('ok_tool', {}, { timeoutMs: 5_000 });
    expect(result.content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(posts('tools/call', from)).toBe(1);
    const gets = server.requests.slice(from).filter((request) => request.method === 'GET');
    expect(gets.map((request) => request.headers.get('last-event-id'))).toEqual([
      expect.stringMatching(/^e\d+$/),
    ]);
  });

  it('a normal answer on an SSE stream is read', async () => {
    server.setMode('ok-sse');
    const { tools } = await client.listTools(undefined, { timeoutMs: 5_000 });
    expect(tools.map((tool) => tool.name)).toEqual(['ok_tool']);
  });

  it('close() during a never-ending stream rejects the call with a typed error and frees the stream', async () => {
    const fresh = httpClient(server.url, { era: 'legacy', timeoutMs: 0 });
    await fresh.init();
    server.setMode('sse-forever');
    const call = fresh.listTools().then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    await eventually(() => server.openStreams() === 1, 3_000, 'the SSE stream to open');
    const deletes = server.requests.filter((request) => request.method === 'DELETE').length;
    await fresh.close();
    const error = await call;
    expect(error).toBeInstanceOf(AxMCPTransportError);
    expect(error).toMatchObject({ code: 'closed' });
    await eventually(() => server.openStreams() === 0, 3_000, 'the server to see the stream closed');
    // The session was ended on the server.
    expect(server.requests.filter((request) => request.method === 'DELETE').length - deletes).toBe(1);
  });
});
