/**
 * Unit tests of the fault proxy against a tiny node:http target: forwarding and streaming, each
 * fault, the counters, the bounds, and a close() that leaves nothing open.
 */
import { createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FaultProxy, loopbackTarget, midEventOffset, startFaultProxy } from './proxy.js';

interface Target {
  url: string;
  /** SSE responses open right now. */
  streams: Set<ServerResponse>;
  /** Requests the target saw: method, path, body. */
  seen: { method: string; path: string; body: string }[];
  /** Writes one event to every open SSE stream. */
  send(id: string, data: unknown): void;
  close(): Promise<void>;
}

async function startTarget(): Promise<Target> {
  const streams = new Set<ServerResponse>();
  const seen: Target['seen'] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
    const body = Buffer.concat(chunks).toString('utf8');
    seen.push({ method: req.method ?? '', path: req.url ?? '', body });
    if (req.url === '/sse') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      streams.add(res);
      res.once('close', () => streams.delete(res));
      return;
    }
    if (req.url === '/big') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.alloc(2000, 0x61));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'x-target': 'yes' });
    res.end(JSON.stringify({ method: req.method, body, lastEventId: req.headers['last-event-id'] ?? null }));
  });
  server.keepAliveTimeout = 200;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    streams,
    seen,
    send(id, data) {
      for (const res of streams) res.write(`event: message\nid: ${id}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

interface Received {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Body bytes so far, with the time each chunk arrived. */
  chunks: { at: number; data: Buffer }[];
  text(): string;
  /** Settles when the body ended (`'end'`) or broke (`'error'`). */
  done: Promise<'end' | 'error'>;
  started: number;
  abort(): void;
}

/** A request without connection pooling, so every socket it opens is its own. */
function send(
  url: string,
  options: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<Received> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers, agent: false });
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Received['chunks'] = [];
      const done = new Promise<'end' | 'error'>((settle) => {
        res.on('data', (data: Buffer) => chunks.push({ at: Date.now(), data }));
        res.on('end', () => settle('end'));
        res.on('error', () => settle('error'));
        res.on('aborted', () => settle('error'));
        res.on('close', () => settle(res.complete ? 'end' : 'error'));
      });
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        chunks,
        text: () => Buffer.concat(chunks.map((c) => c.data)).toString('utf8'),
        done,
        started,
        abort: () => req.destroy(),
      });
    });
    req.end(options.body);
  });
}

async function until(check: () => boolean, timeoutMs = 3000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const RPC = (method: string, id = 1) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params: { uri: 'res://x' } });

describe('fault proxy', () => {
  let target: Target;
  let proxy: FaultProxy;

  beforeEach(async () => {
    target = await startTarget();
    proxy = await startFaultProxy(`${target.url}/mcp`);
  });

  afterEach(async () => {
    await proxy.close();
    await target.close();
  });

  it('refuses targets that are not loopback http', () => {
    expect(() => loopbackTarget('http://example.com/mcp')).toThrow(RangeError);
    expect(() => loopbackTarget('http://10.0.0.1:80/')).toThrow(RangeError);
    expect(() => loopbackTarget('http://128.0.0.1/')).toThrow(RangeError);
    expect(() => loopbackTarget('https://127.0.0.1/')).toThrow(RangeError);
    expect(loopbackTarget('http://localhost:8080/x').host).toBe('127.0.0.1');
    expect(loopbackTarget('http://127.0.0.2:8080/x').port).toBe(8080);
    expect(loopbackTarget('http://[::1]:9/').host).toBe('::1');
  });

  it('rejects a non-loopback target at start', async () => {
    await expect(startFaultProxy('http://192.168.1.1/mcp')).rejects.toThrow(RangeError);
  });

  it('forwards method, path, headers and body, and counts HTTP and JSON-RPC methods', async () => {
    expect(proxy.url).toBe(`http://127.0.0.1:${proxy.port}/mcp`);
    const post = await send(proxy.url, {
      method: 'POST',
      body: RPC('resources/subscribe'),
      headers: { 'content-type': 'application/json' },
    });
    expect(await post.done).toBe('end');
    expect(post.status).toBe(200);
    expect(post.headers['x-target']).toBe('yes');
    expect(JSON.parse(post.text())).toEqual({
      method: 'POST',
      body: RPC('resources/subscribe'),
      lastEventId: null,
    });
    const get = await send(proxy.url, { headers: { 'last-event-id': 'ev-7' } });
    await get.done;
    expect(JSON.parse(get.text()).lastEventId).toBe('ev-7');
    expect(target.seen.map((s) => `${s.method} ${s.path}`)).toEqual(['POST /mcp', 'GET /mcp']);
    expect(proxy.stats.httpMethods.get('POST')).toBe(1);
    expect(proxy.stats.httpMethods.get('GET')).toBe(1);
    expect(proxy.stats.rpcMethods.get('resources/subscribe')).toBe(1);
    expect(proxy.stats.log.map((e) => [e.method, e.status, e.lastEventId])).toEqual([
      ['POST', 200, undefined],
      ['GET', 200, 'ev-7'],
    ]);
    expect(proxy.stats.log[0]?.rpc).toEqual([{ method: 'resources/subscribe', uri: 'res://x' }]);
  });

  it('streams an SSE response as it comes, without waiting for its end', async () => {
    const stream = await send(`${target.url.replace(/:\d+$/, `:${proxy.port}`)}/sse`);
    expect(stream.headers['content-type']).toBe('text/event-stream');
    await until(() => target.streams.size === 1);
    expect(proxy.stats.openStreams).toBe(1);
    target.send('e1', { n: 1 });
    await until(() => stream.text().includes('"n":1'), 2000, 'first event');
    target.send('e2', { n: 2 });
    await until(() => stream.text().includes('"n":2'), 2000, 'second event');
    stream.abort();
    // The client left: the target's response is closed too.
    await until(() => target.streams.size === 0, 2000, 'target stream closed');
    await until(() => proxy.stats.openStreams === 0);
  });

  it('cuts a stream after an exact number of bytes, on both sides', async () => {
    const stream = await send(`http://127.0.0.1:${proxy.port}/sse`);
    await until(() => target.streams.size === 1);
    target.send('e1', { n: 1 });
    await until(() => stream.text().includes('"n":1'));
    const before = Buffer.byteLength(stream.text());
    const cut = proxy.faults.cutNextStream({ afterBytes: 10 });
    target.send('e2', { n: 2 });
    const report = await cut;
    expect(await stream.done).toBe('error');
    expect(Buffer.byteLength(stream.text())).toBe(before + 10);
    expect(report).toMatchObject({ method: 'GET', bytesDelivered: before + 10, partialEvent: 'event: mes' });
    await until(() => target.streams.size === 0, 2000, 'target stream closed');
    expect(proxy.stats.cuts).toBe(1);
  });

  it('cuts in the middle of an event: its id line passes, its end does not', async () => {
    const stream = await send(`http://127.0.0.1:${proxy.port}/sse`);
    await until(() => target.streams.size === 1);
    const cut = proxy.faults.cutNextStream({ midEvent: true, method: 'GET' });
    target.send('e1', { n: 1, padding: 'x'.repeat(40) });
    const report = await cut;
    expect(await stream.done).toBe('error');
    const text = stream.text();
    expect(text).toContain('id: e1\ndata: {');
    expect(text).not.toContain('\n\n');
    expect(report.partialEvent).toBe(text);
    expect(midEventOffset(Buffer.from('id: 1\ndata: \n\nid: 2\ndata: {"a":1}\n\n'))).toBe(
      'id: 1\ndata: \n\nid: 2\ndata: '.length + 3,
    );
  });

  it('applies a cut filtered by method only to that method', async () => {
    const cut = proxy.faults.cutNextStream({ afterBytes: 0, method: 'POST' });
    const stream = await send(`http://127.0.0.1:${proxy.port}/sse`);
    await until(() => target.streams.size === 1);
    target.send('e1', { n: 1 });
    await until(() => stream.text().includes('"n":1'));
    expect(proxy.stats.cuts).toBe(0);
    stream.abort();
    proxy.faults.reset();
    await expect(cut).rejects.toThrow(/disarmed/);
  });

  it('stalls responses for the given time, then delivers them', async () => {
    const stall = proxy.faults.stall(300);
    const response = await send(proxy.url, { method: 'POST', body: RPC('ping') });
    await response.done;
    await stall;
    expect(response.chunks[0]!.at - response.started).toBeGreaterThanOrEqual(280);
    expect(JSON.parse(response.text()).method).toBe('POST');
    // A stream already open is held as well.
    const stream = await send(`http://127.0.0.1:${proxy.port}/sse`);
    await until(() => target.streams.size === 1);
    const held = proxy.faults.stall(250);
    const sentAt = Date.now();
    target.send('e1', { n: 1 });
    await until(() => stream.text().includes('"n":1'), 2000);
    expect(stream.chunks[0]!.at - sentAt).toBeGreaterThanOrEqual(200);
    await held;
    stream.abort();
  });

  it('releases what piled up during a stall in one burst', async () => {
    const stream = await send(`http://127.0.0.1:${proxy.port}/sse`);
    await until(() => target.streams.size === 1);
    const stall = proxy.faults.stall(200);
    for (let n = 1; n <= 3; n++) target.send(`e${n}`, { n });
    await stall;
    await until(() => stream.text().includes('"n":3'), 2000, 'the burst');
    expect(stream.chunks).toHaveLength(1);
    stream.abort();
  });

  it('tells a hook about each request once its body was read, before the target answers', async () => {
    const seen: string[] = [];
    proxy.onRequest = (entry) => {
      seen.push(`${entry.method} ${entry.rpc.map((m) => m.method).join(',')} ${entry.status ?? '-'}`);
      if (entry.rpc.some((m) => m.method === 'slow/one')) void proxy.faults.stall(250);
    };
    const started = Date.now();
    const response = await send(proxy.url, { method: 'POST', body: RPC('slow/one') });
    await response.done;
    expect(Date.now() - started).toBeGreaterThanOrEqual(230);
    proxy.faults.failNext(1, 500);
    await (await send(proxy.url)).done;
    expect(seen).toEqual(['POST slow/one -', 'GET  500']);
  });

  it('answers a burst of injected failures without forwarding them, then forwards again', async () => {
    proxy.faults.failNext(2, 503, { method: 'POST', retryAfterSeconds: 1 });
    const get = await send(proxy.url);
    await get.done;
    expect(get.status).toBe(200);
    const first = await send(proxy.url, { method: 'POST', body: RPC('ping') });
    const second = await send(proxy.url, { method: 'POST', body: RPC('ping') });
    await Promise.all([first.done, second.done]);
    expect([first.status, second.status]).toEqual([503, 503]);
    expect(first.headers['retry-after']).toBe('1');
    expect(first.text()).toContain('injected 503');
    const third = await send(proxy.url, { method: 'POST', body: RPC('ping') });
    await third.done;
    expect(third.status).toBe(200);
    expect(target.seen.map((s) => s.method)).toEqual(['GET', 'POST']);
    expect(proxy.stats.injectedFailures).toBe(2);
    expect(proxy.stats.log.filter((e) => e.injected).length).toBe(2);
    expect(() => proxy.faults.failNext(0)).toThrow(RangeError);
    expect(() => proxy.faults.failNext(1, 200)).toThrow(RangeError);
  });

  it('drops every open stream on both sides', async () => {
    const a = await send(`http://127.0.0.1:${proxy.port}/sse`);
    const b = await send(`http://127.0.0.1:${proxy.port}/sse`);
    await until(() => target.streams.size === 2);
    expect(proxy.faults.dropAllStreams()).toBe(2);
    expect(await a.done).toBe('error');
    expect(await b.done).toBe('error');
    await until(() => target.streams.size === 0, 2000, 'target streams closed');
    expect(proxy.stats.openStreams).toBe(0);
    expect(proxy.stats.dropped).toBe(2);
  });

  it('throttles delivery for a slow consumer', async () => {
    proxy.faults.slowConsumer(8000);
    const started = Date.now();
    const big = await send(`http://127.0.0.1:${proxy.port}/big`);
    expect(await big.done).toBe('end');
    expect(big.text()).toBe('a'.repeat(2000));
    // 2000 bytes at 8000 B/s: at least ~250 ms.
    expect(Date.now() - started).toBeGreaterThanOrEqual(220);
    expect(big.chunks.length).toBeGreaterThan(5);
    proxy.faults.slowConsumer(undefined);
    const fast = Date.now();
    await (await send(`http://127.0.0.1:${proxy.port}/big`)).done;
    expect(Date.now() - fast).toBeLessThan(200);
    expect(() => proxy.faults.slowConsumer(-1)).toThrow(RangeError);
  });

  it('answers 502 when the target is unreachable', async () => {
    await target.close();
    const response = await send(proxy.url, { method: 'POST', body: RPC('ping') });
    await response.done;
    expect(response.status).toBe(502);
  });

  it('caps client connections', async () => {
    const capped = await startFaultProxy(`${target.url}/mcp`, { maxConnections: 2 });
    try {
      const a = await send(`http://127.0.0.1:${capped.port}/sse`);
      const b = await send(`http://127.0.0.1:${capped.port}/sse`);
      await until(() => capped.stats.openConnections === 2);
      await expect(send(`http://127.0.0.1:${capped.port}/sse`)).rejects.toThrow();
      expect(capped.stats.refusedConnections).toBe(1);
      a.abort();
      b.abort();
    } finally {
      await capped.close();
    }
  });
});

describe('fault proxy lifetime', () => {
  it('close() destroys open streams and leaves no server, socket or timer behind', async () => {
    const kinds = ['TCPServerWrap', 'TCPSocketWrap', 'Timeout'];
    const handles = () => process.getActiveResourcesInfo().filter((r) => kinds.includes(r)).length;
    const target = await startTarget();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const before = handles();
    const proxy = await startFaultProxy(`${target.url}/mcp`);
    const stream = await send(`http://127.0.0.1:${proxy.port}/sse`);
    await until(() => target.streams.size === 1);
    const stall = proxy.faults.stall(10_000);
    proxy.faults.slowConsumer(10);
    const pendingCut = proxy.faults.cutNextStream({ midEvent: true }).catch((error: unknown) => error);
    expect(handles()).toBeGreaterThan(before);
    const closing = Date.now();
    await proxy.close();
    await stall;
    expect(Date.now() - closing).toBeLessThan(2000);
    expect(await stream.done).toBe('error');
    expect(await pendingCut).toBeInstanceOf(Error);
    await until(() => target.streams.size === 0, 2000, 'target stream closed');
    // Other tests' keep-alive timers may still be expiring, so the count may even fall below the baseline.
    await until(() => handles() <= before, 3000, 'handles released');
    expect(proxy.stats.openConnections).toBe(0);
    expect(proxy.stats.openExchanges).toBe(0);
    await target.close();
  });
});
