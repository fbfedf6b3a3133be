import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, LookupFunction, Server, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createGuardedFetch } from '../net/guarded-fetch.js';
import { AxMCPSSRFError, AxMCPTransportError } from '../protocol/errors.js';
import { type AxMCPNodeFetch, createNodeFetch } from './node-fetch.js';

interface Hit {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  socket: Socket;
}

interface TestServer {
  origin: string;
  port: number;
  server: Server;
  hits: Hit[];
  close(): Promise<void>;
}

const cleanups: (() => unknown)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<TestServer> {
  const hits: Hit[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      hits.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        socket: req.socket,
      });
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  cleanups.push(close);
  return { origin: `http://127.0.0.1:${port}`, port, server, hits, close };
}

function nodeFetchFor(
  options: Parameters<typeof createNodeFetch>[0] = { ssrfProtection: { allowLoopback: true } },
) {
  const fetch = createNodeFetch(options);
  cleanups.push(() => fetch.close());
  return fetch;
}

/** A DNS stand-in: `names` maps a hostname to the addresses it "resolves" to. */
function fakeLookup(names: Record<string, string[]>, calls: string[] = []): LookupFunction {
  return (hostname, options, callback) => {
    calls.push(hostname);
    const addresses = names[hostname];
    if (addresses === undefined) {
      const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
      error.code = 'ENOTFOUND';
      callback(error, '');
      return;
    }
    const entries = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    if (options.all) callback(null, entries);
    else callback(null, entries[0]!.address, entries[0]!.family);
  };
}

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('createNodeFetch', () => {
  it('returns status, multi-valued headers, body and url', async () => {
    const server = await serve((_req, res) => {
      res.statusCode = 201;
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.setHeader('x-multi', ['one', 'two']);
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
    const fetch = nodeFetchFor();
    const response = await fetch(`${server.origin}/path?q=1`);
    expect(response.status).toBe(201);
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(response.headers.get('x-multi')).toBe('one, two');
    expect(response.url).toBe(`${server.origin}/path?q=1`);
    expect(await response.json()).toEqual({ ok: true });
    expect(server.hits[0]!.url).toBe('/path?q=1');
  });

  it('sends string and byte bodies with their length and headers', async () => {
    const server = await serve((req, res, body) => {
      res.end(
        JSON.stringify({ body, type: req.headers['content-type'], length: req.headers['content-length'] }),
      );
    });
    const fetch = nodeFetchFor();
    const text = await fetch(`${server.origin}/`, { method: 'post', body: 'héllo' });
    expect(await text.json()).toEqual({ body: 'héllo', type: 'text/plain;charset=UTF-8', length: '6' });
    const bytes = await fetch(new URL(`${server.origin}/`), {
      method: 'PUT',
      body: new TextEncoder().encode('{"a":1}'),
      headers: [['Content-Type', 'application/json']],
    });
    expect(await bytes.json()).toEqual({ body: '{"a":1}', type: 'application/json', length: '7' });
    expect(server.hits.map((h) => h.method)).toEqual(['POST', 'PUT']);
  });

  it('streams the body without waiting for the end of the response', async () => {
    let serverResponse: ServerResponse | undefined;
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('first');
      serverResponse = res;
    });
    const fetch = nodeFetchFor();
    const response = await fetch(`${server.origin}/sse`);
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('first');
    expect(serverResponse!.writableEnded).toBe(false);
    serverResponse!.end('second');
    let rest = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(rest).toBe('second');
  });

  it('returns 3xx responses without following them, and null bodies for HEAD and 204', async () => {
    const server = await serve((req, res) => {
      if (req.url === '/moved') {
        res.writeHead(302, { location: '/elsewhere' });
        res.end();
      } else {
        res.writeHead(204);
        res.end();
      }
    });
    const fetch = nodeFetchFor();
    const moved = await fetch(`${server.origin}/moved`);
    expect(moved.status).toBe(302);
    expect(moved.headers.get('location')).toBe('/elsewhere');
    expect((await fetch(`${server.origin}/none`)).body).toBeNull();
    expect((await fetch(`${server.origin}/none`, { method: 'HEAD' })).body).toBeNull();
    expect(server.hits.map((h) => h.url)).toEqual(['/moved', '/none', '/none']);
  });

  it('refuses loopback by default and allows it with allowLoopback', async () => {
    const server = await serve((_req, res) => res.end('hi'));
    const guarded = nodeFetchFor({});
    const error = await guarded(`${server.origin}/`).catch((e) => e);
    expect(error).toBeInstanceOf(AxMCPSSRFError);
    expect(error.message).toMatch(/loopback address/);
    const alsoHTTP = nodeFetchFor({ ssrfProtection: { allowHTTP: true } });
    await expect(alsoHTTP(`${server.origin}/`)).rejects.toThrow(/loopback address/);
    expect(server.hits).toHaveLength(0);
    const allowed = nodeFetchFor({ ssrfProtection: { allowLoopback: true } });
    expect(await (await allowed(`${server.origin}/`)).text()).toBe('hi');
  });

  it('refuses a hostname that resolves to loopback (DNS rebinding)', async () => {
    const server = await serve((req, res) => res.end(`host ${req.headers.host}`));
    const calls: string[] = [];
    const lookup = fakeLookup(
      {
        'evil.test': ['127.0.0.1'],
        'mixed.test': ['93.184.216.34', '127.0.0.1'],
        localhost: ['93.184.216.34'],
      },
      calls,
    );
    const fetch = nodeFetchFor({ ssrfProtection: { allowHTTP: true }, lookup });
    const error = await fetch(`http://evil.test:${server.port}/`).catch((e) => e);
    expect(error).toBeInstanceOf(AxMCPSSRFError);
    expect(error.message).toMatch(/evil\.test: resolves to 127\.0\.0\.1: loopback address/);
    await expect(fetch(`http://mixed.test:${server.port}/`)).rejects.toThrow(/resolves to 127\.0\.0\.1/);
    expect(calls).toEqual(['evil.test', 'mixed.test']);
    expect(server.hits).toHaveLength(0);

    // With loopback allowed the same lookup is used to connect, and the request gets through.
    const allowing = nodeFetchFor({ ssrfProtection: { allowHTTP: true, allowLoopback: true }, lookup });
    expect(await (await allowing(`http://evil.test:${server.port}/`)).text()).toBe(
      `host evil.test:${server.port}`,
    );
    // A localhost name must resolve to loopback.
    await expect(allowing(`http://localhost:${server.port}/`)).rejects.toThrow(/localhost name resolved to/);
  });

  it('lets the guarded fetch stop a redirect to a name that resolves to loopback', async () => {
    const target = await serve((_req, res) => res.end('internal'));
    const lookup = fakeLookup({ 'public.test': ['93.184.216.34'], 'rebind.test': ['127.0.0.1'] });
    const ssrfProtection = { allowHTTP: true, allowedHosts: ['127.0.0.1'] };
    const nodeFetch = nodeFetchFor({ ssrfProtection, lookup });
    const start = await serve((_req, res) => {
      res.writeHead(307, { location: `http://rebind.test:${target.port}/secret` });
      res.end();
    });
    const fetch = createGuardedFetch({ fetch: nodeFetch, ssrfProtection });
    const error = await fetch(`${start.origin}/`).catch((e) => e);
    expect(error).toBeInstanceOf(AxMCPSSRFError);
    expect(error.message).toMatch(/rebind\.test: resolves to 127\.0\.0\.1/);
    expect(start.hits).toHaveLength(1);
    expect(target.hits).toHaveLength(0);
  });

  it('aborts a request waiting for its response', async () => {
    let serverSawClose: () => void = () => {};
    const closed = new Promise<void>((resolve) => (serverSawClose = resolve));
    const server = await serve((_req, res) => res.on('close', () => serverSawClose()));
    const fetch = nodeFetchFor();
    const controller = new AbortController();
    const pending = fetch(`${server.origin}/slow`, { signal: controller.signal });
    await until(() => server.hits.length === 1, 'the request to arrive');
    controller.abort(new Error('stop waiting'));
    await expect(pending).rejects.toThrow('stop waiting');
    await closed;
  });

  it('aborts a response body mid-stream', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200);
      res.write('part');
    });
    const fetch = nodeFetchFor();
    const controller = new AbortController();
    const response = await fetch(`${server.origin}/`, { signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    const next = reader.read();
    controller.abort(new Error('enough'));
    await expect(next).rejects.toThrow('enough');
    await expect(fetch(`${server.origin}/`, { signal: controller.signal })).rejects.toThrow('enough');
  });

  it('reports a connection closed mid-body as stream_ended', async () => {
    const server = await serve((req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial');
      setTimeout(() => req.socket.destroy(), 20);
    });
    const response = await nodeFetchFor()(`${server.origin}/`);
    const error = await response.text().catch((e) => e);
    expect(error).toBeInstanceOf(AxMCPTransportError);
    expect(error.code).toBe('stream_ended');
  });

  it('reuses keep-alive sockets and retries an idempotent request once on a stale one', async () => {
    const served = new WeakMap<Socket, number>();
    const server = await serve((req, res) => {
      const count = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, count);
      if (req.url === '/stale' && count > 1) {
        req.socket.destroy();
        return;
      }
      res.end(`request ${count} on this socket`);
    });
    const fetch = nodeFetchFor();
    expect(await (await fetch(`${server.origin}/a`)).text()).toBe('request 1 on this socket');
    expect(await (await fetch(`${server.origin}/b`)).text()).toBe('request 2 on this socket');
    expect(server.hits[0]!.socket).toBe(server.hits[1]!.socket);
    // The server drops the reused socket: a GET is sent again on a fresh one.
    expect(await (await fetch(`${server.origin}/stale`)).text()).toBe('request 1 on this socket');
    const stale = server.hits.filter((h) => h.url === '/stale');
    expect(stale).toHaveLength(2);
    // A POST is never repeated.
    await fetch(`${server.origin}/warm`, { method: 'POST', body: 'x' }).then((r) => r.text());
    const error = await fetch(`${server.origin}/stale`, { method: 'POST', body: 'x' }).catch((e) => e);
    expect(error).toBeInstanceOf(AxMCPTransportError);
    expect(error.message).toMatch(/ECONNRESET/);
    expect(server.hits.filter((h) => h.url === '/stale' && h.method === 'POST')).toHaveLength(1);
  });

  it('leaves no open sockets after close', async () => {
    const server = await serve((_req, res) => res.end('ok'));
    const fetch: AxMCPNodeFetch = createNodeFetch({ ssrfProtection: { allowLoopback: true } });
    await (await fetch(`${server.origin}/`)).text();
    await (await fetch(`${server.origin}/`)).text();
    const connections = () =>
      new Promise<number>((resolve, reject) =>
        server.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
      );
    // One pooled keep-alive connection, reused by both requests.
    expect(await connections()).toBe(1);
    fetch.close();
    // The server sees the client's socket go away.
    await until(async () => (await connections()) === 0, 'the pooled socket to close');
    const error = await fetch(`${server.origin}/`).catch((e) => e);
    expect(error).toBeInstanceOf(AxMCPTransportError);
    expect(error.code).toBe('closed');
  });

  it('fails in-flight requests on close', async () => {
    const server = await serve(() => {});
    const fetch = createNodeFetch({ ssrfProtection: { allowLoopback: true } });
    const pending = fetch(`${server.origin}/hang`);
    await until(() => server.hits.length === 1, 'the request to arrive');
    const socket = server.hits[0]!.socket;
    const tcpSockets = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;
    // The busy client socket and its server side both keep the event loop alive…
    const busy = tcpSockets();
    expect(busy).toBeGreaterThanOrEqual(2);
    fetch.close();
    await expect(pending).rejects.toMatchObject({ code: 'closed' });
    await until(() => socket.destroyed, 'the server to see the connection close');
    // …and after close neither does.
    await until(() => tcpSockets() <= busy - 2, 'both socket handles to go');
  });

  it('refuses a body on GET and unsupported body types', async () => {
    const fetch = nodeFetchFor();
    await expect(fetch('http://127.0.0.1:1/', { body: 'x' })).rejects.toMatchObject({
      code: 'invalid_argument',
    });
    await expect(
      fetch('http://127.0.0.1:1/', { method: 'POST', body: new ReadableStream() }),
    ).rejects.toMatchObject({ code: 'unsupported' });
  });
});
