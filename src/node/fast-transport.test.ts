import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { countAbortControllers } from '../../test/helpers/abort-controllers.js';
import { startLegacyV2Server } from '../../test/servers/legacy-v2.js';
import { startModernServer } from '../../test/servers/modern.js';
import { AxMCPClient } from '../client/client.js';
import { AxMCPMemoryEraStore } from '../client/era-store.js';
import { InFlightRequests } from '../client/in-flight.js';
import { AxMCPSSRFError, AxMCPTimeoutError } from '../protocol/errors.js';
import { AxMCPNodeHTTPTransport } from './fast-transport.js';

const LOOPBACK = { allowLoopback: true } as const;
const cleanups: (() => unknown)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function client(url: string, era: 'legacy' | 'modern'): AxMCPClient {
  const c = new AxMCPClient(new AxMCPNodeHTTPTransport(url, { ssrfProtection: LOOPBACK }), {
    namespace: 'fast',
    era,
    eraStore: new AxMCPMemoryEraStore(),
  });
  cleanups.push(() => c.close());
  return c;
}

async function serve(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void) {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => handler(req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

const until = async (check: () => boolean, what: string) => {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('AxMCPNodeHTTPTransport against the official v2 server SDK', () => {
  it('speaks 2026-07-28: calls, the catalog and a listen stream', async () => {
    const peer = await startModernServer();
    cleanups.push(() => peer.close());
    const c = client(peer.url, 'modern');
    const result = await c.callTool('echo', { message: 'hi' });
    expect(result.content).toEqual([{ type: 'text', text: 'hi' }]);
    const catalog = await c.inspectCatalog();
    expect(catalog.era).toBe('modern');
    expect(catalog.tools.map((t) => t.name)).toContain('echo');
    const updates: string[] = [];
    c.subscribeEvents((event) => {
      if (event.type === 'resource_updated') updates.push(event.uri);
    });
    await c.subscribeResource('res://modern/hello');
    for (let i = 0; i < 3; i++) peer.notify.resourceUpdated('res://modern/hello');
    await until(() => updates.length === 3, 'three updates');
    expect(updates).toEqual(['res://modern/hello', 'res://modern/hello', 'res://modern/hello']);
  });

  it('speaks 2025-11-25: SSE answers, pages, the GET stream, and a lost session', async () => {
    const server = await startLegacyV2Server({ toolCount: 120, pageSize: 50 });
    cleanups.push(() => server.close());
    const c = client(server.url, 'legacy');
    expect((await c.callTool('echo', { message: 'sse' })).content).toEqual([{ type: 'text', text: 'sse' }]);
    expect((await c.inspectCatalog()).tools.filter((t) => t.name.startsWith('bulk_'))).toHaveLength(120);
    const updates: string[] = [];
    c.subscribeEvents((event) => {
      if (event.type === 'resource_updated') updates.push(event.uri);
    });
    await c.subscribeResource('res://text/hello');
    await until(() => server.stats.getStreams.size > 0, 'the GET stream');
    await server.emitResourceUpdated('res://text/hello');
    await until(() => updates.length === 1, 'an update');
    await server.restart();
    await c.ping();
    expect((await c.callTool('echo', { message: 'again' })).content).toEqual([
      { type: 'text', text: 'again' },
    ]);
  });
});

describe('AxMCPNodeHTTPTransport on its own', () => {
  it('makes no AbortController for a request nobody aborts (JSON or SSE answer, safe or not); a deadline still ends one', async () => {
    let hang = false;
    let hungClosed = false;
    const url = await serve((req, res, body) => {
      const { id, method } = JSON.parse(body) as { id: number; method: string };
      if (hang) {
        req.socket.on('close', () => {
          hungClosed = true;
        });
        return;
      }
      const answer = JSON.stringify({ jsonrpc: '2.0', id, result: { method } });
      if (method === 'sse') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`data: ${answer}\n\n`);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(answer);
      }
    });
    const transport = new AxMCPNodeHTTPTransport(url, { ssrfProtection: LOOPBACK });
    cleanups.push(() => transport.close());
    const cancelled: string[] = [];
    const requests = new InFlightRequests(transport, 60_000, (_id, reason) => cancelled.push(reason));
    await requests.send({ method: 'json' });
    const made = await countAbortControllers(async () => {
      expect(await requests.send({ method: 'json' })).toEqual({ method: 'json' });
      expect(await requests.send({ method: 'sse' })).toEqual({ method: 'sse' });
      // A safe request goes through the retry loop, which follows the link too.
      expect(await requests.send({ method: 'json', idempotent: true })).toEqual({ method: 'json' });
    });
    // Made only when a signal is read: the direct way follows the links themselves.
    expect(made).toBe(0);
    hang = true;
    const failure = await requests.send({ method: 'json', timeoutMs: 50 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AxMCPTimeoutError);
    expect(cancelled).toEqual(['timeout']);
    await until(() => hungClosed, 'the timed-out request to be dropped');
  });

  it('returns an in-band JSON-RPC error of a 4xx as the answer', async () => {
    const url = await serve((_req, res, body) => {
      const { id } = JSON.parse(body) as { id: number };
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32602, message: 'bad params' } }));
    });
    const transport = new AxMCPNodeHTTPTransport(url, { ssrfProtection: LOOPBACK });
    cleanups.push(() => transport.close());
    const answer = await transport.request({ jsonrpc: '2.0', id: 7, method: 'tools/call' });
    expect(answer).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32602, message: 'bad params' } });
  });

  it('refuses a name that resolves to loopback unless loopback is allowed', async () => {
    const url = await serve((_req, res) => res.end('{}'));
    const port = new URL(url).port;
    const lookup = ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) =>
      options.all
        ? callback(null, [{ address: '127.0.0.1', family: 4 }])
        : callback(null, '127.0.0.1', 4)) as unknown as LookupFunction;
    const transport = new AxMCPNodeHTTPTransport(`http://looks-public.example:${port}/mcp`, {
      ssrfProtection: { allowHTTP: true },
      lookup,
      retry: false,
    });
    cleanups.push(() => transport.close());
    const failure = await transport.request({ jsonrpc: '2.0', id: 1, method: 'ping' }).catch((e) => e);
    expect(failure).toBeInstanceOf(AxMCPSSRFError);
  });

  it('aborts a request in flight with the signal, and refuses requests after close()', async () => {
    const url = await serve(() => {
      // Never answers.
    });
    const transport = new AxMCPNodeHTTPTransport(url, { ssrfProtection: LOOPBACK });
    const controller = new AbortController();
    const pending = transport.request(
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort(new Error('stop')), 20);
    await expect(pending).rejects.toThrow('stop');
    await transport.close();
    await expect(transport.request({ jsonrpc: '2.0', id: 2, method: 'ping' })).rejects.toMatchObject({
      code: 'closed',
    });
  });

  it('reads an SSE answer written byte by byte: characters split across chunks arrive whole, notifications first', async () => {
    const seen: string[] = [];
    const url = await serve(async (_req, res, body) => {
      const { id } = JSON.parse(body) as { id: number };
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const text =
        `id: 1\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'héllo ✓ 😀' } })}\n\n` +
        `id: 2\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { text: '日本語 😀' } })}\n\n`;
      const bytes = Buffer.from(text);
      for (let i = 0; i < bytes.length; i++) {
        res.write(bytes.subarray(i, i + 1));
        // A pause now and then, so the bytes really arrive as separate chunks.
        if (i % 16 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
      }
      res.end();
    });
    const transport = new AxMCPNodeHTTPTransport(url, { ssrfProtection: LOOPBACK });
    cleanups.push(() => transport.close());
    transport.setHandlers({
      onMessage: (message) => seen.push(JSON.stringify((message as { params?: unknown }).params)),
    });
    const answer = await transport.request({ jsonrpc: '2.0', id: 5, method: 'tools/call' });
    expect(answer).toEqual({ jsonrpc: '2.0', id: 5, result: { text: '日本語 😀' } });
    expect(seen).toEqual([JSON.stringify({ level: 'info', data: 'héllo ✓ 😀' })]);
  });

  it('keeps the connection of an ended SSE answer for the next request, drops one left open, and fails typed on an oversized event', async () => {
    const ports: number[] = [];
    let heldOpenClosed = false;
    const url = await serve((req, res, body) => {
      const { id, method } = JSON.parse(body) as { id: number; method: string };
      ports.push(req.socket.remotePort as number);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const answer = (result: unknown) => `data: ${JSON.stringify({ jsonrpc: '2.0', id, result })}\n\n`;
      if (method === 'big') {
        res.write(answer({ big: 'x'.repeat(4096) }));
        return;
      }
      if (method === 'hold') {
        // The answer, then the stream stays open: the client has what it needs and lets go.
        res.write(answer({}));
        req.socket.on('close', () => {
          heldOpenClosed = true;
        });
        return;
      }
      // The answer, and a moment later the end of the stream, as servers do.
      res.write(answer({}));
      setTimeout(() => res.end(), 5);
    });
    const transport = new AxMCPNodeHTTPTransport(url, { ssrfProtection: LOOPBACK, maxResponseBytes: 1024 });
    cleanups.push(() => transport.close());
    for (let id = 1; id <= 3; id++) {
      await expect(transport.request({ jsonrpc: '2.0', id, method: 'ping' })).resolves.toMatchObject({ id });
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // One connection served all three.
    expect(new Set(ports).size).toBe(1);
    await expect(transport.request({ jsonrpc: '2.0', id: 4, method: 'hold' })).resolves.toMatchObject({
      id: 4,
    });
    await until(() => heldOpenClosed, 'the answer stream left open to be dropped');
    await expect(transport.request({ jsonrpc: '2.0', id: 5, method: 'big' })).rejects.toMatchObject({
      code: 'message_too_large',
    });
  });

  it('fails an SSE answer typed when the connection breaks before the answer', async () => {
    const url = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: {} })}\n\n`,
      );
      setTimeout(() => req.socket.destroy(), 10);
    });
    const transport = new AxMCPNodeHTTPTransport(url, { ssrfProtection: LOOPBACK, retry: false });
    cleanups.push(() => transport.close());
    await expect(transport.request({ jsonrpc: '2.0', id: 1, method: 'tools/call' })).rejects.toMatchObject({
      code: 'stream_ended',
    });
  });

  it('resumes an SSE answer whose connection breaks after a priming event, with Last-Event-ID', async () => {
    const resumedWith: (string | undefined)[] = [];
    let id = 0;
    const url = await serve((req, res, body) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (req.method === 'GET') {
        resumedWith.push(req.headers['last-event-id'] as string | undefined);
        res.end(`id: 2\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { resumed: true } })}\n\n`);
        return;
      }
      id = (JSON.parse(body) as { id: number }).id;
      res.write('id: 1\nretry: 10\ndata:\n\n');
      setTimeout(() => req.socket.destroy(), 10);
    });
    const transport = new AxMCPNodeHTTPTransport(url, { ssrfProtection: LOOPBACK });
    cleanups.push(() => transport.close());
    await expect(transport.request({ jsonrpc: '2.0', id: 9, method: 'tools/call' })).resolves.toEqual({
      jsonrpc: '2.0',
      id: 9,
      result: { resumed: true },
    });
    expect(resumedWith).toEqual(['1']);
  });

  it('sends an idempotent request again once when its reused keep-alive socket was stale, a POST never', async () => {
    const served = new WeakMap<object, number>();
    const hits: { method: string; socket: object }[] = [];
    const dropped = new Set<string>();
    const url = await serve((req, res, body) => {
      const count = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, count);
      hits.push({ method: req.method ?? '', socket: req.socket });
      const kind = req.method === 'DELETE' ? 'DELETE' : body.includes('"stale"') ? 'stale POST' : undefined;
      if (kind !== undefined && count > 1 && !dropped.has(kind)) {
        dropped.add(kind);
        // The server drops the pooled socket as the request arrives on it.
        req.socket.destroy();
        return;
      }
      if (req.method === 'DELETE') {
        res.writeHead(204);
        res.end();
        return;
      }
      const { id } = JSON.parse(body) as { id: number };
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'session-1' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result: {} }));
    });
    const transport = new AxMCPNodeHTTPTransport(url, { ssrfProtection: LOOPBACK, retry: false });
    cleanups.push(() => transport.close());
    await transport.request({ jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(transport.sessionId).toBe('session-1');
    // DELETE ends the session on the pooled socket, which the server drops: sent again on a fresh one.
    await transport.terminateSession();
    const deletes = hits.filter((h) => h.method === 'DELETE');
    expect(deletes).toHaveLength(2);
    expect(deletes[0]?.socket).toBe(hits[0]?.socket);
    expect(deletes[1]?.socket).not.toBe(deletes[0]?.socket);
    // A POST on a stale socket fails; it is not sent twice.
    await transport.request({ jsonrpc: '2.0', id: 2, method: 'ping' });
    const before = hits.length;
    const failure = await transport
      .request({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'stale' } })
      .catch((e) => e);
    expect(failure).toMatchObject({ code: 'transport_error' });
    expect(failure.message).toMatch(/ECONNRESET/);
    expect(hits.slice(before).filter((h) => h.method === 'POST')).toHaveLength(1);
  });

  it('caps a JSON answer at maxResponseBytes', async () => {
    const url = await serve((_req, res, body) => {
      const { id } = JSON.parse(body) as { id: number };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result: { big: 'x'.repeat(4096) } }));
    });
    const transport = new AxMCPNodeHTTPTransport(url, { ssrfProtection: LOOPBACK, maxResponseBytes: 1024 });
    cleanups.push(() => transport.close());
    await expect(transport.request({ jsonrpc: '2.0', id: 3, method: 'ping' })).rejects.toMatchObject({
      code: 'message_too_large',
    });
  });
});
