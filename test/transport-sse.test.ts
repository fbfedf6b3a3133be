/**
 * AxMCPHTTPSSETransport (the deprecated 2024-11-05 HTTP+SSE transport) against
 * `@modelcontextprotocol/server-everything` in `sse` mode: the endpoint event, POSTs, server
 * requests on the GET stream, progress, the `legacySSEFallback` of era classification, and the
 * same-origin rule for the announced endpoint (against a raw node:http peer that breaks it).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AxMCPClient,
  type AxMCPClientEvent,
  type AxMCPClientOptions,
  AxMCPHTTPFallbackTransport,
  AxMCPHTTPSSETransport,
  type AxMCPHTTPSSETransportOptions,
  AxMCPHTTPStatusError,
  AxMCPMemoryEraStore,
  AxMCPSSRFError,
  axMCPHTTPTransport,
} from '../src/index.js';
import type { AxMCPTransport } from '../src/transport/index.js';
import { startFaultProxy } from './fault/proxy.js';
import { eventually } from './helpers/clients.js';
import { type EverythingServer, startEverythingServer } from './servers/everything.js';
import { listenLoopback } from './servers/node-http.js';

const LOOPBACK = { allowHTTP: true, allowLoopback: true } as const;

let server: EverythingServer;
beforeAll(async () => {
  server = await startEverythingServer({ mode: 'sse' });
});
afterAll(async () => {
  await server?.close();
});

function clientFor(transport: AxMCPTransport, options: Partial<AxMCPClientOptions> = {}): AxMCPClient {
  return new AxMCPClient(transport, {
    namespace: 'sse',
    eraStore: new AxMCPMemoryEraStore(),
    timeoutMs: 15_000,
    ...options,
  });
}

function texts(result: { content: ReadonlyArray<{ type: string; [key: string]: unknown }> }): string {
  return result.content.map((block) => (block.type === 'text' ? String(block.text) : '')).join('\n');
}

describe('AxMCPHTTPSSETransport against server-everything (sse mode)', () => {
  it('connects without a probe, lists, calls, reports progress and answers sampling over the GET stream', async () => {
    const transport = new AxMCPHTTPSSETransport(server.url, { ssrfProtection: LOOPBACK });
    const sent: string[] = [];
    const request = transport.request.bind(transport);
    transport.request = (message, options) => {
      sent.push(message.method);
      return request(message, options);
    };
    const client = clientFor(transport, {
      era: 'auto',
      sampling: () => ({ role: 'assistant', content: { type: 'text', text: 'sse sample' }, model: 'm' }),
    });
    try {
      await client.init();
      expect(transport.kind).toBe('sse');
      expect(sent[0]).toBe('initialize');
      expect(client.getEra()).toBe('legacy');
      expect(client.serverInfo).toMatchObject({ name: 'mcp-servers/everything' });
      expect(transport.sessionId).toMatch(/\S+/);

      const catalog = await client.inspectCatalog();
      expect(catalog.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['echo', 'get-sum']));
      expect(texts(await client.callTool('get-sum', { a: 2, b: 40 }))).toContain('42');

      const progress: number[] = [];
      const long = await client.callTool(
        'trigger-long-running-operation',
        { duration: 0.6, steps: 3 },
        { onProgress: (p) => progress.push(p.progress) },
      );
      expect(texts(long)).toContain('Long running operation completed');
      expect(progress).toEqual([1, 2, 3]);

      // Capability-dependent tools appear after initialized (tools/list_changed on the stream).
      const deadline = Date.now() + 5_000;
      while (!(await client.inspectCatalog()).tools.some((t) => t.name === 'trigger-sampling-request')) {
        if (Date.now() > deadline) throw new Error('trigger-sampling-request never appeared');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const sampled = await client.callTool('trigger-sampling-request', { prompt: 'hi', maxTokens: 5 });
      expect(texts(sampled)).toContain('sse sample');
    } finally {
      await client.close();
    }
  });

  it("era 'auto' falls back from Streamable HTTP to HTTP+SSE only when legacySSEFallback allows it", async () => {
    const refused = clientFor(axMCPHTTPTransport(server.url, { ssrfProtection: LOOPBACK }), { era: 'auto' });
    const error = await refused.init().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AxMCPHTTPStatusError);
    expect([400, 404, 405]).toContain((error as AxMCPHTTPStatusError).status);
    await refused.close();

    const transport = axMCPHTTPTransport(server.url, { ssrfProtection: LOOPBACK, legacySSEFallback: true });
    expect(transport).toBeInstanceOf(AxMCPHTTPFallbackTransport);
    expect(transport.kind).toBe('http');
    const client = clientFor(transport, { era: 'auto' });
    try {
      await client.init();
      expect(transport.kind).toBe('sse');
      expect((transport as AxMCPHTTPFallbackTransport).usesLegacySSE).toBe(true);
      expect(client.getEra()).toBe('legacy');
      expect(texts(await client.callTool('echo', { message: 'fell back' }))).toContain('fell back');
    } finally {
      await client.close();
    }
  });
});

describe('axMCPHTTPTransport: what the HTTP+SSE fallback keeps', () => {
  it('authenticates HTTP+SSE with the oauth strategy it was given, the same tokens', async () => {
    const sent: { method: string; authorization: string | null }[] = [];
    const recording: typeof fetch = (input, init) => {
      sent.push({
        method: init?.method ?? 'GET',
        authorization: new Headers(init?.headers).get('authorization'),
      });
      return fetch(input, init);
    };
    const tokens = {
      accessToken: 'tok-fallback',
      tokenType: 'Bearer' as const,
      scopes: [],
      requestedScopes: [],
      issuer: 'https://as.example',
      resource: server.url,
    };
    const asked: string[] = [];
    const tokenStore = {
      get: (key: string) => {
        asked.push(key);
        return { tokens };
      },
      set: () => {},
      delete: () => {},
    };
    const transport = axMCPHTTPTransport(server.url, {
      ssrfProtection: LOOPBACK,
      fetch: recording,
      oauth: { tokenStore },
      legacySSEFallback: true,
    });
    const client = clientFor(transport, { era: 'auto' });
    try {
      await client.init();
      expect(transport.kind).toBe('sse');
      const before = sent.length;
      expect(texts(await client.callTool('echo', { message: 'with a token' }))).toContain('with a token');
      const afterFallback = sent.slice(before);
      expect(afterFallback.length).toBeGreaterThan(0);
      // Every HTTP+SSE request went with the token, as the Streamable HTTP ones did.
      expect(afterFallback.every((request) => request.authorization === 'Bearer tok-fallback')).toBe(true);
      expect(sent[0]?.authorization).toBe('Bearer tok-fallback');
      expect(asked.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it('keeps maxRedirects: 0 refuses the redirect to the SSE stream, the default follows it', async () => {
    // The old address answers 307 to the stream's own; the hop stays on the server's origin.
    const old = `${server.url}?old=1`;
    const redirecting: typeof fetch = (input, init) =>
      String(input) === old
        ? Promise.resolve(new Response(null, { status: 307, headers: { location: server.url } }))
        : fetch(input, init);
    const via = (extra: { maxRedirects?: number }) =>
      clientFor(
        axMCPHTTPTransport(server.url, {
          ssrfProtection: LOOPBACK,
          fetch: redirecting,
          legacySSEFallback: { url: old },
          ...extra,
        }),
        { era: 'auto' },
      );
    const refusing = via({ maxRedirects: 0 });
    const failure = await refusing.init().catch((error: unknown) => error);
    await refusing.close();
    expect(String((failure as Error)?.message)).toMatch(/Too many redirects/);
    const following = via({});
    try {
      await following.init();
      expect(following.transport.kind).toBe('sse');
    } finally {
      await following.close();
    }
    const direct = clientFor(
      new AxMCPHTTPSSETransport(old, { ssrfProtection: LOOPBACK, fetch: redirecting, maxRedirects: 0 }),
      { era: 'legacy' },
    );
    const refused = await direct.init().catch((error: unknown) => error);
    await direct.close();
    expect(String((refused as Error)?.message)).toMatch(/Too many redirects/);
  });
});

describe('AxMCPHTTPSSETransport: retries', () => {
  /** A legacy client over HTTP+SSE through `proxy`, with `retry`. */
  const sseClient = (proxy: { url: string }, retry: AxMCPHTTPSSETransportOptions['retry']) =>
    clientFor(new AxMCPHTTPSSETransport(proxy.url, { ssrfProtection: LOOPBACK, retry }), { era: 'legacy' });

  it('posts a safe request again after a 503, never a tools/call; retry: false posts once', async () => {
    const proxy = await startFaultProxy(server.url);
    const client = sseClient(proxy, { attempts: 3, baseDelayMs: 1, maxDelayMs: 20 });
    const once = sseClient(proxy, false);
    const count = (method: string) => proxy.stats.rpcMethods.get(method) ?? 0;
    try {
      await client.init();
      await once.init();
      const pings = count('ping');
      proxy.faults.failNext(2, 503, { method: 'POST' });
      await client.ping();
      // Two answered 503 by the proxy (never forwarded), the third reached the server.
      expect(proxy.stats.injectedFailures).toBe(2);
      expect(count('ping') - pings).toBe(1);

      const calls = count('tools/call');
      proxy.faults.failNext(1, 503, { method: 'POST' });
      const refused = await client.callTool('echo', { message: 'once' }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(AxMCPHTTPStatusError);
      expect((refused as AxMCPHTTPStatusError).status).toBe(503);
      // Posted once: the 503 took it, nothing reached the server.
      expect(proxy.stats.injectedFailures).toBe(3);
      expect(count('tools/call') - calls).toBe(0);

      proxy.faults.failNext(1, 503, { method: 'POST' });
      const unretried = await once.ping().catch((error: unknown) => error);
      expect((unretried as AxMCPHTTPStatusError).status).toBe(503);
      expect(proxy.stats.injectedFailures).toBe(4);
      expect(texts(await client.callTool('echo', { message: 'after' }))).toContain('after');
    } finally {
      await client.close();
      await once.close();
      await proxy.close();
    }
  });

  it('does not post a safe request again once its caller gave up during the backoff', async () => {
    const proxy = await startFaultProxy(server.url);
    const client = sseClient(proxy, { attempts: 3, baseDelayMs: 400, maxDelayMs: 400 });
    try {
      await client.init();
      const pings = proxy.stats.rpcMethods.get('ping') ?? 0;
      proxy.faults.failNext(1, 503, { method: 'POST' });
      const controller = new AbortController();
      const pending = client.ping({ signal: controller.signal }).catch((error: unknown) => error);
      await eventually(() => proxy.stats.injectedFailures === 1, 5000, 'the 503');
      controller.abort();
      expect(await pending).toBeInstanceOf(Error);
      // Past the longest backoff: nothing more was posted for it.
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(proxy.stats.rpcMethods.get('ping') ?? 0).toBe(pings);
      await client.ping();
      expect(proxy.stats.rpcMethods.get('ping')).toBe(pings + 1);
    } finally {
      await client.close();
      await proxy.close();
    }
  });
});

describe('AxMCPHTTPSSETransport: a dropped GET stream', () => {
  it('rejects the pending call, re-initializes over a new stream and restores the subscription', async () => {
    const proxy = await startFaultProxy(server.url);
    const transport = new AxMCPHTTPSSETransport(proxy.url, { ssrfProtection: LOOPBACK });
    const client = clientFor(transport, { era: 'legacy' });
    const events: AxMCPClientEvent[] = [];
    client.subscribeEvents((event) => events.push(event));
    const count = (method: string) => proxy.stats.rpcMethods.get(method) ?? 0;
    try {
      await client.subscribeResource('demo://resource/static/document/features.md');
      const firstSession = transport.sessionId;
      expect(count('resources/subscribe')).toBe(1);
      const pending = client
        .callTool('trigger-long-running-operation', { duration: 5, steps: 5 })
        .catch((e: unknown) => e);
      await eventually(() => count('tools/call') === 1, 5_000, 'the call to be posted');
      expect(proxy.faults.dropAllStreams()).toBeGreaterThan(0);
      expect(await pending).toMatchObject({ code: 'closed' });
      await eventually(
        () => events.some((e) => e.type === 'lifecycle' && e.state === 'session_restored'),
        10_000,
        'the session to be restored',
      );
      expect(transport.sessionId).not.toBe(firstSession);
      expect(count('initialize')).toBe(2);
      expect(count('resources/subscribe')).toBe(2);
      expect(client.subscriptions).toEqual([
        { uri: 'demo://resource/static/document/features.md', owners: ['manual'] },
      ]);
      expect(texts(await client.callTool('echo', { message: 'after the drop' }))).toContain('after the drop');
    } finally {
      await client.close();
      await proxy.close();
    }
  });
});

describe('AxMCPHTTPSSETransport: the endpoint event must stay on the origin', () => {
  let posts = 0;
  const peer = { close: async () => {}, url: (_path: string) => '' };
  beforeAll(async () => {
    const other = await listenLoopback((_req: IncomingMessage, res: ServerResponse) => {
      posts++;
      res.statusCode = 202;
      res.end();
    });
    const hostile = await listenLoopback((req: IncomingMessage, res: ServerResponse) => {
      if (req.method !== 'GET') {
        res.statusCode = 405;
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // Another port is another origin: the client must not post its messages there.
      res.write(`event: endpoint\ndata: ${other.url('/messages?sessionId=abc')}\n\n`);
    });
    peer.url = hostile.url;
    peer.close = async () => {
      await hostile.close();
      await other.close();
    };
  });
  afterAll(async () => {
    await peer.close();
  });

  it('refuses an endpoint on another origin and posts nothing there', async () => {
    const transport = new AxMCPHTTPSSETransport(peer.url('/sse'), {
      ssrfProtection: LOOPBACK,
      headers: { authorization: 'Bearer secret' },
    });
    const client = clientFor(transport, { era: 'legacy' });
    const error = await client.init().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AxMCPSSRFError);
    expect((error as Error).message).toContain('left the origin');
    expect(posts).toBe(0);
    await client.close();
  });
});
