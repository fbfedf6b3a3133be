import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AxMCPSSRFError, AxMCPTransportError } from '../protocol/errors.js';
import { type AxMCPFetch, createGuardedFetch, readBodyLimited, readTextLimited } from './guarded-fetch.js';

interface Hit {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

interface TestServer {
  origin: string;
  hits: Hit[];
  close(): Promise<void>;
}

const servers: TestServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A real HTTP server on 127.0.0.1 that records every request it gets. */
async function serve(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<TestServer> {
  const hits: Hit[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      hits.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const handle: TestServer = {
    origin: `http://127.0.0.1:${port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  servers.push(handle);
  return handle;
}

function redirect(res: ServerResponse, status: number, location: string): void {
  res.writeHead(status, { location });
  res.end();
}

/** Records the URLs the guarded fetch hands to the real fetch underneath. */
function recordingFetch(calls: string[], inner: AxMCPFetch = (i, init) => fetch(i, init)): AxMCPFetch {
  return (input, init) => {
    calls.push(String(input));
    return inner(input, init);
  };
}

const loopbackOnly = { allowLoopback: true };

describe('createGuardedFetch redirects (real servers on 127.0.0.1)', () => {
  it('follows a chain that stays within the policy', async () => {
    const b = await serve((req, res) => {
      if (req.url === '/mid') redirect(res, 302, '/end');
      else res.end(`done at ${req.url}`);
    });
    const a = await serve((_req, res) => redirect(res, 301, `${b.origin}/mid`));
    const calls: string[] = [];
    const guarded = createGuardedFetch({ fetch: recordingFetch(calls), ssrfProtection: loopbackOnly });
    const response = await guarded(`${a.origin}/start`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('done at /end');
    expect(calls).toEqual([`${a.origin}/start`, `${b.origin}/mid`, `${b.origin}/end`]);
  });

  it('stops a chain that hops to a refused address before connecting', async () => {
    const b = await serve((_req, res) => res.end('should not be reached'));
    const port = new URL(b.origin).port;
    const a = await serve((req, res) => {
      if (req.url === '/metadata') redirect(res, 302, 'http://169.254.169.254/latest/meta-data/');
      else redirect(res, 302, `http://0.0.0.0:${port}/`);
    });
    const calls: string[] = [];
    const guarded = createGuardedFetch({ fetch: recordingFetch(calls), ssrfProtection: loopbackOnly });

    const toMetadata = await guarded(`${a.origin}/metadata`).catch((e) => e);
    expect(toMetadata).toBeInstanceOf(AxMCPSSRFError);
    expect(toMetadata.message).toMatch(/169\.254\.169\.254.*cloud metadata address/);

    const toUnspecified = await guarded(`${a.origin}/other`).catch((e) => e);
    expect(toUnspecified).toBeInstanceOf(AxMCPSSRFError);
    expect(toUnspecified.message).toMatch(/unspecified address/);

    expect(calls).toEqual([`${a.origin}/metadata`, `${a.origin}/other`]);
    expect(b.hits).toHaveLength(0);
  });

  it('drops credentials on a cross-origin hop and keeps them on a same-origin one', async () => {
    const b = await serve((_req, res) => res.end('b'));
    const a = await serve((req, res) => {
      if (req.url === '/same') redirect(res, 307, '/landing');
      else if (req.url === '/landing') res.end('a');
      else redirect(res, 307, `${b.origin}/landing`);
    });
    const guarded = createGuardedFetch({
      ssrfProtection: loopbackOnly,
      sensitiveHeaders: ['X-Tenant-Secret'],
    });
    const headers = {
      Authorization: 'Bearer top-secret',
      Cookie: 'session=abc',
      'Proxy-Authorization': 'Basic eA==',
      'X-API-Key': 'key-123',
      DPoP: 'proof',
      'X-Tenant-Secret': 'tenant',
      'X-Trace': 'trace-1',
    };

    expect(await (await guarded(`${a.origin}/same`, { headers })).text()).toBe('a');
    const sameOrigin = a.hits.find((h) => h.url === '/landing')!;
    expect(sameOrigin.headers.authorization).toBe('Bearer top-secret');
    expect(sameOrigin.headers['x-tenant-secret']).toBe('tenant');

    expect(await (await guarded(`${a.origin}/cross`, { headers })).text()).toBe('b');
    expect(a.hits.find((h) => h.url === '/cross')!.headers.authorization).toBe('Bearer top-secret');
    expect(b.hits).toHaveLength(1);
    const received = b.hits[0]!.headers;
    for (const name of [
      'authorization',
      'cookie',
      'proxy-authorization',
      'x-api-key',
      'dpop',
      'x-tenant-secret',
    ]) {
      expect(received[name], name).toBeUndefined();
    }
    expect(received['x-trace']).toBe('trace-1');
  });

  it('repeats method and body on 307 and 308', async () => {
    const b = await serve((_req, res, body) => res.end(`got ${body}`));
    const a = await serve((req, res) => redirect(res, req.url === '/308' ? 308 : 307, `${b.origin}/target`));
    const guarded = createGuardedFetch({ ssrfProtection: loopbackOnly });
    for (const path of ['/307', '/308']) {
      const response = await guarded(`${a.origin}${path}`, {
        method: 'POST',
        body: '{"jsonrpc":"2.0"}',
        headers: { 'content-type': 'application/json' },
      });
      expect(await response.text()).toBe('got {"jsonrpc":"2.0"}');
    }
    expect(b.hits.map((h) => [h.method, h.body, h.headers['content-type']])).toEqual([
      ['POST', '{"jsonrpc":"2.0"}', 'application/json'],
      ['POST', '{"jsonrpc":"2.0"}', 'application/json'],
    ]);
  });

  it('refuses to turn a POST into a GET on 301, 302 or 303', async () => {
    const b = await serve((_req, res) => res.end('b'));
    const a = await serve((req, res) => redirect(res, Number(req.url!.slice(1)), `${b.origin}/`));
    const guarded = createGuardedFetch({ ssrfProtection: loopbackOnly });
    for (const status of [301, 302, 303]) {
      const error = await guarded(`${a.origin}/${status}`, { method: 'POST', body: 'x' }).catch((e) => e);
      expect(error).toBeInstanceOf(AxMCPTransportError);
      expect(error.code).toBe('transport_error');
      expect(error.message).toMatch(new RegExp(`POST answered with a ${status} redirect`));
    }
    expect(b.hits).toHaveLength(0);
    // GET follows them.
    expect((await guarded(`${a.origin}/303`)).status).toBe(200);
    expect(b.hits).toHaveLength(1);
  });

  it('refuses a redirect from https to http', async () => {
    const plain = await serve((_req, res) => res.end('plain'));
    const calls: string[] = [];
    // No TLS server here: the https hop is answered by a stand-in, the http hop would be real.
    const inner: AxMCPFetch = async (input, init) => {
      if (String(input).startsWith('https:')) {
        return new Response(null, { status: 302, headers: { location: `${plain.origin}/` } });
      }
      return fetch(input, init);
    };
    const guarded = createGuardedFetch({
      fetch: recordingFetch(calls, inner),
      ssrfProtection: { allowLoopback: true, allowHTTP: true },
    });
    const error = await guarded('https://mcp.example.com/mcp').catch((e) => e);
    expect(error).toBeInstanceOf(AxMCPSSRFError);
    expect(error.message).toMatch(/redirect from https: to http:/);
    expect(calls).toEqual(['https://mcp.example.com/mcp']);
    expect(plain.hits).toHaveLength(0);
  });

  it('fails after maxRedirects with a typed error', async () => {
    const loop = await serve((req, res) => {
      const n = Number(req.url!.split('/').pop());
      redirect(res, 302, `/loop/${n + 1}`);
    });
    const guarded = createGuardedFetch({ ssrfProtection: loopbackOnly, maxRedirects: 3 });
    const error = await guarded(`${loop.origin}/loop/0`).catch((e) => e);
    expect(error).toBeInstanceOf(AxMCPTransportError);
    expect(error.code).toBe('transport_error');
    expect(error.message).toMatch(/Too many redirects \(more than 3;/);
    expect(loop.hits.map((h) => h.url)).toEqual(['/loop/0', '/loop/1', '/loop/2', '/loop/3']);

    loop.hits.length = 0;
    const none = createGuardedFetch({ ssrfProtection: loopbackOnly, maxRedirects: 0 });
    await expect(none(`${loop.origin}/loop/0`)).rejects.toThrow(/more than 0/);
    expect(loop.hits).toHaveLength(1);
  });

  it('honours redirect: manual and redirect: error', async () => {
    const a = await serve((_req, res) => redirect(res, 302, '/elsewhere'));
    const guarded = createGuardedFetch({ ssrfProtection: loopbackOnly });
    const manual = await guarded(`${a.origin}/`, { redirect: 'manual' });
    expect(manual.status).toBe(302);
    expect(manual.headers.get('location')).toBe('/elsewhere');
    await expect(guarded(`${a.origin}/`, { redirect: 'error' })).rejects.toThrow(/redirect mode is "error"/);
    expect(a.hits.map((h) => h.url)).toEqual(['/', '/']);
  });

  it('checks the first URL too, and honours an aborted signal', async () => {
    const a = await serve((_req, res) => res.end('a'));
    await expect(createGuardedFetch()(`${a.origin}/`)).rejects.toThrow(/loopback address/);
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    const guarded = createGuardedFetch({ ssrfProtection: loopbackOnly });
    await expect(guarded(`${a.origin}/`, { signal: controller.signal })).rejects.toThrow('stop');
    expect(a.hits).toHaveLength(0);
  });
});

/** A body of `chunk`-sized pieces that counts pulls and notices cancellation. */
function countingBody(chunkSize: number, chunks = Number.POSITIVE_INFINITY) {
  const state = { pulls: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (state.pulls >= chunks) {
        controller.close();
        return;
      }
      state.pulls++;
      controller.enqueue(new Uint8Array(chunkSize).fill(state.pulls));
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

describe('readBodyLimited', () => {
  it('returns a body of exactly the cap', async () => {
    const { stream } = countingBody(5, 2);
    const bytes = await readBodyLimited(new Response(stream), 10);
    expect([...bytes]).toEqual([1, 1, 1, 1, 1, 2, 2, 2, 2, 2]);
  });

  it('cancels the body as soon as the cap is exceeded', async () => {
    const { stream, state } = countingBody(4);
    const error = await readBodyLimited(new Response(stream), 10).catch((e) => e);
    expect(error).toBeInstanceOf(AxMCPTransportError);
    expect(error.code).toBe('message_too_large');
    expect(state.cancelled).toBe(true);
    // Three 4-byte chunks cross 10 bytes; the stream may have pulled one ahead, no more.
    expect(state.pulls).toBeLessThanOrEqual(4);
  });

  it('refuses a declared Content-Length over the cap without reading', async () => {
    const { stream, state } = countingBody(4);
    const response = new Response(stream, { headers: { 'content-length': '1000' } });
    await expect(readBodyLimited(response, 10)).rejects.toMatchObject({ code: 'message_too_large' });
    expect(state.cancelled).toBe(true);
    expect(state.pulls).toBeLessThanOrEqual(1);
  });

  it('truncates on request', async () => {
    const { stream, state } = countingBody(4);
    const bytes = await readBodyLimited(new Response(stream), 10, undefined, { truncate: true });
    expect([...bytes]).toEqual([1, 1, 1, 1, 2, 2, 2, 2, 3, 3]);
    expect(state.cancelled).toBe(true);
  });

  it('handles an empty body', async () => {
    expect((await readBodyLimited(new Response(null, { status: 204 }), 10)).byteLength).toBe(0);
  });

  it('rejects with the abort reason and cancels the body', async () => {
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array([1]));
      },
      cancel() {
        cancelled = true;
      },
    });
    const controller = new AbortController();
    const reading = readBodyLimited(new Response(stream), 100, controller.signal);
    setTimeout(() => controller.abort(new Error('user gave up')), 10);
    await expect(reading).rejects.toThrow('user gave up');
    expect(cancelled).toBe(true);
  });

  it('decodes UTF-8 split across chunks', async () => {
    const bytes = new TextEncoder().encode('héllo → wörld');
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 3) controller.enqueue(bytes.slice(i, i + 3));
        controller.close();
      },
    });
    expect(await readTextLimited(new Response(stream), 100)).toBe('héllo → wörld');
  });

  it('caps a real streamed response and closes the connection', async () => {
    let serverSawClose: () => void = () => {};
    const closed = new Promise<void>((resolve) => (serverSawClose = resolve));
    const big = await serve((_req, res) => {
      res.on('close', () => serverSawClose());
      const chunk = Buffer.alloc(16 * 1024, 0x61);
      let sent = 0;
      const write = () => {
        while (sent < 1024 && res.write(chunk)) sent++;
        if (sent < 1024) res.once('drain', write);
        else res.end();
      };
      write();
    });
    const response = await createGuardedFetch({ ssrfProtection: loopbackOnly })(`${big.origin}/`);
    await expect(readTextLimited(response, 64 * 1024)).rejects.toMatchObject({ code: 'message_too_large' });
    await closed;
  });
});
