/**
 * AxMCPWebSocketTransport against a `ws` server bridged to the official v2 server SDK
 * (`serveStdio` over a custom transport, serving both eras): calls in both eras, ids,
 * pending calls rejected on close, a dropped connection re-initialized with its
 * subscription restored, and cancellation by `notifications/cancelled`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import {
  AxMCPClient,
  type AxMCPClientEvent,
  AxMCPMemoryEraStore,
  AxMCPTransportError,
  AxMCPWebSocketTransport,
} from '../src/index.js';
import { eventually } from './helpers/clients.js';
import { startWebSocketServer, type WebSocketPeer } from './servers/websocket.js';

const LOOPBACK = { allowHTTP: true, allowLoopback: true } as const;

let peer: WebSocketPeer;
beforeAll(async () => {
  peer = await startWebSocketServer();
});
afterAll(async () => {
  await peer?.close();
});

function wsClient(era: 'auto' | 'legacy' | 'modern') {
  const transport = new AxMCPWebSocketTransport(peer.url, { WebSocket, ssrfProtection: LOOPBACK });
  const client = new AxMCPClient(transport, {
    namespace: 'ws',
    era,
    eraStore: new AxMCPMemoryEraStore(),
    timeoutMs: 10_000,
    probeTimeoutMs: 3_000,
  });
  return { transport, client };
}

function text(result: { content: ReadonlyArray<{ type: string; [key: string]: unknown }> }): string {
  return result.content.map((block) => (block.type === 'text' ? String(block.text) : '')).join('');
}

describe('AxMCPWebSocketTransport against an official-SDK server over ws', () => {
  it.each([
    ['auto', 'modern', '2026-07-28'],
    ['legacy', 'legacy', '2025-11-25'],
  ] as const)('era %s speaks %s: lists, calls, reads', async (era, expected, version) => {
    const { transport, client } = wsClient(era);
    try {
      await client.init();
      expect(client.getEra()).toBe(expected);
      expect(client.protocolVersion).toBe(version);
      expect(transport.kind).toBe('websocket');
      const catalog = await client.inspectCatalog();
      expect(catalog.tools.map((tool) => tool.name).sort()).toEqual(['bump', 'echo', 'slow']);
      const results = await Promise.all(['a', 'b', 'c'].map((m) => client.callTool('echo', { message: m })));
      expect(results.map(text)).toEqual(['echo: a', 'echo: b', 'echo: c']);
      const read = await client.readResource('mem://counter');
      expect(read.contents[0]?.uri).toBe('mem://counter');
    } finally {
      await client.close();
    }
  });

  it('sends unique ids, and rejects pending calls when the transport closes', async () => {
    const { transport, client } = wsClient('legacy');
    const ids: unknown[] = [];
    const request = transport.request.bind(transport);
    transport.request = (message, options) => {
      ids.push(message.id);
      return request(message, options);
    };
    await client.init();
    await Promise.all([client.ping(), client.ping(), client.listTools()]);
    expect(new Set(ids).size).toBe(ids.length);
    const pending = client.callTool('slow', { ms: 5_000 }).catch((e: unknown) => e);
    await eventually(() => peer.stats.methods.includes('tools/call'), 5_000, 'the slow call to arrive');
    await transport.close();
    const error = await pending;
    expect(error).toBeInstanceOf(AxMCPTransportError);
    expect((error as AxMCPTransportError).code).toBe('closed');
    await client.close();
  });

  it('cancels an aborted call with notifications/cancelled (modern era over a socket)', async () => {
    const { client } = wsClient('modern');
    try {
      await client.init();
      const stop = new AbortController();
      const call = client.callTool('slow', { ms: 5_000 }, { signal: stop.signal });
      await eventually(
        () => peer.stats.methods.filter((m) => m === 'tools/call').length > 0,
        5_000,
        'the call',
      );
      const before = peer.stats.cancelled.length;
      stop.abort();
      await expect(call).rejects.toMatchObject({ code: 'aborted' });
      await eventually(() => peer.stats.cancelled.length > before, 5_000, 'notifications/cancelled');
    } finally {
      await client.close();
    }
  });

  it('reconnects after a drop: re-initializes and restores the resource subscription', async () => {
    const { client } = wsClient('legacy');
    const events: AxMCPClientEvent[] = [];
    client.subscribeEvents((event) => events.push(event));
    try {
      await client.subscribeResource('mem://counter');
      const subscribesBefore = peer.stats.subscribes.length;
      const connectionsBefore = peer.stats.connections;
      expect(await peer.emitResourceUpdated('mem://counter')).toBeGreaterThan(0);
      await eventually(() => events.some((e) => e.type === 'resource_updated'), 5_000, 'the first update');

      peer.dropConnections();
      await eventually(
        () => events.some((e) => e.type === 'lifecycle' && e.state === 'session_restored'),
        10_000,
        'the session to be restored',
      );
      expect(peer.stats.connections).toBe(connectionsBefore + 1);
      expect(peer.stats.subscribes.length).toBe(subscribesBefore + 1);
      expect(peer.stats.subscribes.at(-1)).toBe('mem://counter');

      const updates = events.filter((e) => e.type === 'resource_updated').length;
      expect(await peer.emitResourceUpdated('mem://counter')).toBeGreaterThan(0);
      await eventually(
        () => events.filter((e) => e.type === 'resource_updated').length > updates,
        5_000,
        'an update over the new connection',
      );
      expect(text(await client.callTool('echo', { message: 'again' }))).toBe('echo: again');
    } finally {
      await client.close();
    }
  });
});
