/**
 * What the client drops as malformed, and errors nobody awaits, are told somewhere: to the
 * transport's `onProtocolError`, else the client's `onError`, else once per kind through
 * `onWarning`. Before, a malformed event on the notification stream, an update without a `uri`
 * and a failed subscription restore all vanished unless the transport itself had
 * `onProtocolError` — the same server looked silent instead of broken.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AxMCPClient,
  type AxMCPClientOptions,
  AxMCPMemoryEraStore,
  AxMCPProtocolError,
  AxMCPStreamableHTTPTransport,
  type AxMCPTransport,
} from '../src/index.js';
import { AxMCPNodeHTTPTransport, AxMCPStdioTransport } from '../src/node.js';
import { AxMCPRecordingTransport } from '../src/testing.js';
import { eventually, LOOPBACK } from './helpers/clients.js';

/**
 * A 2025-11-25 server whose notification stream (GET) sends, in order: an event whose data is
 * not JSON, `notifications/resources/updated` without a uri, then a good update of `res://ok`.
 */
function startServer(get: 'events' | 'refuse' | 'cut' = 'events'): Promise<{ url: string; server: Server }> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET' && get === 'refuse') {
      res.writeHead(500, { 'content-type': 'text/plain' }).end('the stream is broken here');
      return;
    }
    if (req.method === 'GET' && get === 'cut') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(': open\n\n', () => setTimeout(() => req.socket.destroy(), 20));
      return;
    }
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write('id: 1\ndata: {"jsonrpc":"2.0","method":\n\n');
      res.write(
        `id: 2\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: {} })}\n\n`,
      );
      res.write(
        `id: 3\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'res://ok' } })}\n\n`,
      );
      return; // held open until the client goes
    }
    if (req.method === 'DELETE') {
      res.writeHead(200).end();
      return;
    }
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      const message = JSON.parse(body) as { id?: number; method: string };
      if (message.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      const result =
        message.method === 'initialize'
          ? {
              protocolVersion: '2025-11-25',
              capabilities: { resources: { subscribe: true } },
              serverInfo: { name: 'unheard', version: '1.0.0' },
            }
          : {};
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'session-1' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, server }),
    ),
  );
}

const ENTRIES: [string, (url: string, onProtocolError?: (error: unknown) => void) => AxMCPTransport][] = [
  [
    'the core entry (fetch)',
    (url, onProtocolError) =>
      new AxMCPStreamableHTTPTransport(url, {
        ssrfProtection: LOOPBACK,
        ...(onProtocolError ? { onProtocolError } : {}),
      }),
  ],
  [
    'the node entry',
    (url, onProtocolError) =>
      new AxMCPNodeHTTPTransport(url, {
        ssrfProtection: LOOPBACK,
        ...(onProtocolError ? { onProtocolError } : {}),
      }),
  ],
  [
    // A wrapper that passed on only onMessage and onClose: what the transport dropped went nowhere.
    'the core entry, recorded (AxMCPRecordingTransport)',
    (url, onProtocolError) =>
      new AxMCPRecordingTransport(
        new AxMCPStreamableHTTPTransport(url, {
          ssrfProtection: LOOPBACK,
          ...(onProtocolError ? { onProtocolError } : {}),
        }),
      ),
  ],
];

describe.each(ENTRIES)('errors nobody awaits, on %s', (_entry, transportFor) => {
  let url: string;
  let server: Server;

  beforeAll(async () => {
    ({ url, server } = await startServer());
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /** Listens until the good update arrived; returns what the client emitted for resources. */
  async function listen(transport: AxMCPTransport, options: Partial<AxMCPClientOptions>): Promise<string[]> {
    const client = new AxMCPClient(transport, {
      namespace: 'unheard',
      era: 'legacy',
      eraStore: new AxMCPMemoryEraStore(),
      ...options,
    });
    const updated: string[] = [];
    client.subscribeEvents((event) => {
      if (event.type === 'resource_updated') updated.push(event.uri);
    });
    try {
      const listening = client.startListening();
      await listening.ready;
      await eventually(() => updated.length > 0, 5000, 'the good update');
      return updated;
    } finally {
      await client.close();
    }
  }

  it('tells onError of the unreadable event and of the update without a uri, attributed', async () => {
    const errors: unknown[] = [];
    const updated = await listen(transportFor(url), { onError: (error) => errors.push(error) });
    expect(updated).toEqual(['res://ok']);
    expect(errors).toHaveLength(2);
    const [unreadable, noURI] = errors as AxMCPProtocolError[];
    expect(unreadable).toBeInstanceOf(AxMCPProtocolError);
    expect(unreadable?.code).toBe('invalid_message');
    expect(noURI).toBeInstanceOf(AxMCPProtocolError);
    expect(noURI?.message).toContain('resource update notification (uri)');
    expect(noURI?.namespace).toBe('unheard');
    expect(noURI?.endpoint).toBe(url);
  });

  it('without onError, warns once of each kind through onWarning', async () => {
    const warnings: string[] = [];
    await listen(transportFor(url), { onWarning: (message) => warnings.push(message) });
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain(`ax-mcp: client "unheard" (${url})`);
    expect(warnings[0]).toContain('Pass onError to AxMCPClient');
    expect(warnings[1]).toContain('resource update notification (uri)');
  });

  it("a transport's own onProtocolError hears what the transport drops; the client's onError the rest", async () => {
    const heardByTransport: unknown[] = [];
    const heardByClient: unknown[] = [];
    await listen(
      transportFor(url, (error) => heardByTransport.push(error)),
      { onError: (error) => heardByClient.push(error) },
    );
    expect(heardByTransport).toHaveLength(1);
    expect((heardByTransport[0] as AxMCPProtocolError).rpcCode).toBe(-32700);
    expect(heardByClient).toHaveLength(1);
    expect((heardByClient[0] as Error).message).toContain('resource update notification (uri)');
  });
});

describe.each(ENTRIES)('a notification stream held by subscriptions alone, on %s', (_entry, transportFor) => {
  const servers: Server[] = [];
  afterAll(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  async function subscribed(get: 'refuse' | 'cut', options: Partial<AxMCPClientOptions>) {
    const { url, server } = await startServer(get);
    servers.push(server);
    const client = new AxMCPClient(transportFor(url), {
      namespace: 'held',
      era: 'legacy',
      eraStore: new AxMCPMemoryEraStore(),
      ...options,
    });
    await client.subscribeResource('res://ok');
    return { client, url };
  }

  it('tells of a stream the server refuses, without any listener', async () => {
    const warnings: string[] = [];
    const { client } = await subscribed('refuse', { onWarning: (message) => warnings.push(message) });
    try {
      // Before, nothing was told: the updates were simply missing.
      await eventually(() => warnings.length > 0, 5000, 'the warning');
      expect(warnings[0]).toContain('HTTP 500');
    } finally {
      await client.close();
    }
  });

  it('a stream cut mid-body is a typed stream_ended, on both entries', async () => {
    const errors: unknown[] = [];
    const { client } = await subscribed('cut', { onError: (error) => errors.push(error) });
    try {
      await eventually(() => errors.length > 0, 5000, 'the report');
      expect(errors[0]).toMatchObject({ name: 'AxMCPTransportError', code: 'stream_ended' });
    } finally {
      await client.close();
    }
  });
});

describe('errors nobody awaits, on stdio', () => {
  const server = fileURLToPath(new URL('./servers/hostile-stdio.mjs', import.meta.url));

  it("tells the client's onError of a line on stdout that is not JSON-RPC, with where logs belong", async () => {
    const errors: unknown[] = [];
    const client = new AxMCPClient(new AxMCPStdioTransport({ command: process.execPath, args: [server] }), {
      namespace: 'stdio',
      era: 'legacy',
      eraStore: new AxMCPMemoryEraStore(),
      onError: (error) => errors.push(error),
    });
    try {
      const result = await client.callTool('log', {});
      expect(result.content).toEqual([{ type: 'text', text: 'logged' }]);
      await eventually(() => errors.length > 0, 5000, 'the report');
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(AxMCPProtocolError);
      expect((errors[0] as Error).message).toContain('"[info] handling the log tool"');
      expect((errors[0] as Error).message).toContain('its logs go to stderr');
    } finally {
      await client.close();
    }
  });
});
