/**
 * A connection that dies before the server answers (a keep-alive socket the server closed, a
 * reset) is retried alike by both HTTP entries: safe requests, notifications and responses go
 * again with backoff, and nothing else does. The node entry used to retry none of them: its
 * connection errors were not the `TypeError` the fetch entry reports, so the documented retry
 * of network failures silently did not apply, and a `notifications/initialized` lost on either
 * entry failed the whole connect.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AxMCPDemoServer } from '../src/demo.js';
import { AxMCPClient, AxMCPStreamableHTTPTransport, type AxMCPTransport } from '../src/index.js';
import { AxMCPNodeHTTPTransport } from '../src/node.js';

let demo: AxMCPDemoServer;
let proxy: Server;
let url: string;
/** The JSON-RPC method (or HTTP method) of every exchange that reached the proxy, in order. */
const seen: string[] = [];
/** Exchanges carrying this method have their connection destroyed, `cuts` more times. */
let cut: { method: string; cuts: number } | undefined;

beforeAll(async () => {
  demo = new AxMCPDemoServer({ era: 'legacy', keepAliveMs: 0 });
  const target = new URL(await demo.start());
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const method = /"method":"([^"]+)"/.exec(body.toString())?.[1] ?? req.method ?? '';
      seen.push(method);
      if (cut && cut.method === method && cut.cuts > 0) {
        cut.cuts--;
        req.socket.destroy(); // no status, no byte: the client sees a reset connection
        return;
      }
      const upstream = request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  proxy.closeAllConnections();
  await new Promise((resolve) => proxy.close(resolve));
  await demo.close();
});

const retry = { attempts: 2, baseDelayMs: 1, maxDelayMs: 5 };
const entries: [string, (options: { retry: typeof retry | false }) => AxMCPTransport][] = [
  [
    'the fetch entry',
    (o) => new AxMCPStreamableHTTPTransport(url, { ...o, ssrfProtection: { allowLoopback: true } }),
  ],
  [
    'the node entry',
    (o) => new AxMCPNodeHTTPTransport(url, { ...o, ssrfProtection: { allowLoopback: true } }),
  ],
];

async function withClient<T>(
  transport: AxMCPTransport,
  use: (client: AxMCPClient) => Promise<T>,
): Promise<T> {
  const client = new AxMCPClient(transport, { namespace: 'inventory', era: 'legacy', timeoutMs: 10_000 });
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

const count = (method: string) => seen.filter((m) => m === method).length;

describe.each(entries)('%s, a connection reset before any answer', (_entry, make) => {
  it('a safe request goes again, and its answer arrives', async () => {
    seen.length = 0;
    cut = { method: 'tools/list', cuts: 1 };
    const catalog = await withClient(make({ retry }), (client) => client.inspectCatalog());
    expect(catalog.tools.map((tool) => tool.name)).toContain('get_stock');
    expect(count('tools/list')).toBe(2);
  });

  it('a lost notifications/initialized goes again: the connect succeeds', async () => {
    seen.length = 0;
    cut = { method: 'notifications/initialized', cuts: 1 };
    const catalog = await withClient(make({ retry }), (client) => client.inspectCatalog());
    expect(catalog.serverInfo).toBeDefined();
    expect(count('notifications/initialized')).toBe(2);
  });

  it('a tools/call never goes twice: it fails as a transport error', async () => {
    await withClient(make({ retry }), async (client) => {
      await client.inspectCatalog();
      seen.length = 0;
      cut = { method: 'tools/call', cuts: 1 };
      await expect(client.callTool('get_stock', { sku: 'widget-a' })).rejects.toMatchObject({
        code: 'transport_error',
      });
      expect(count('tools/call')).toBe(1);
    });
  });

  it('retry: false sends a safe request once', async () => {
    seen.length = 0;
    cut = { method: 'tools/list', cuts: 1 };
    await expect(
      withClient(make({ retry: false }), (client) => client.inspectCatalog()),
    ).rejects.toMatchObject({ code: 'transport_error' });
    expect(count('tools/list')).toBe(1);
  });

  it('gives up after its attempts, with the network failure', async () => {
    seen.length = 0;
    cut = { method: 'tools/list', cuts: 10 };
    await expect(withClient(make({ retry }), (client) => client.inspectCatalog())).rejects.toMatchObject({
      code: 'transport_error',
    });
    expect(count('tools/list')).toBe(1 + retry.attempts);
    cut = undefined;
  });
});
