/**
 * A WebSocket MCP peer: a `ws` server on 127.0.0.1 whose every connection is served by the
 * official v2 server SDK. Each socket becomes an SDK `Transport` handed to `serveStdio`
 * (which accepts any transport and decides the era from the opening exchange), so one peer
 * serves both 2025-11-25 (initialize, sessions, resources/subscribe) and 2026-07-28.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { type StdioServerHandle, serveStdio } from '@modelcontextprotocol/server/stdio';
import { type WebSocket, WebSocketServer } from 'ws';
import * as z from 'zod';
import { listenLoopback } from './node-http.js';

type SdkTransport = NonNullable<Parameters<typeof serveStdio>[1]>['transport'] & object;
type SdkMessage = Parameters<SdkTransport['send']>[0];

/** What the peer saw. */
export interface WebSocketPeerStats {
  /** Sockets accepted so far. */
  connections: number;
  /** `resources/subscribe` calls, in order (URIs). */
  subscribes: string[];
  /** JSON-RPC methods received, in order. */
  methods: string[];
  /** `notifications/cancelled` request ids received. */
  cancelled: unknown[];
}

/** A running WebSocket peer. */
export interface WebSocketPeer {
  /** `ws://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  readonly stats: WebSocketPeerStats;
  /** Terminates every open socket (an abrupt network drop, no close frame). */
  dropConnections(): void;
  /** Sends `notifications/resources/updated` for `uri` to every legacy connection subscribed to it. */
  emitResourceUpdated(uri: string): Promise<number>;
  close(): Promise<void>;
}

/** Adapts one `ws` socket to the SDK's `Transport`. */
function socketTransport(socket: WebSocket, stats: WebSocketPeerStats): SdkTransport {
  const transport: SdkTransport = {
    async start() {
      socket.on('message', (data, isBinary) => {
        if (isBinary) return;
        let message: SdkMessage;
        try {
          message = JSON.parse(String(data)) as SdkMessage;
        } catch {
          return;
        }
        if ('method' in message && typeof message.method === 'string') {
          stats.methods.push(message.method);
          if (message.method === 'notifications/cancelled') stats.cancelled.push(message.params?.requestId);
        }
        transport.onmessage?.(message);
      });
      socket.on('close', () => transport.onclose?.());
      socket.on('error', (error) => transport.onerror?.(error));
    },
    async send(message) {
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
    },
    async close() {
      socket.close();
    },
  };
  return transport;
}

/** Starts the peer. */
export async function startWebSocketServer(): Promise<WebSocketPeer> {
  const stats: WebSocketPeerStats = { connections: 0, subscribes: [], methods: [], cancelled: [] };
  const http = await listenLoopback((_req, res) => {
    res.statusCode = 426;
    res.end('WebSocket only');
  });
  const wss = new WebSocketServer({
    server: http.server,
    path: '/mcp',
    handleProtocols: (protocols) => (protocols.has('mcp') ? 'mcp' : false),
  });
  const sockets = new Set<WebSocket>();
  const handles = new Set<StdioServerHandle>();
  /** Legacy instances and the URIs each subscribed to. */
  const subscribed = new Map<McpServer, Set<string>>();
  let counter = 0;

  const build = (era: string): McpServer => {
    const mcp = new McpServer(
      { name: 'ws-peer', version: '1.0.0' },
      { capabilities: { tools: {}, resources: { subscribe: true } } },
    );
    mcp.registerTool('echo', { inputSchema: z.object({ message: z.string() }) }, async ({ message }) => ({
      content: [{ type: 'text', text: `echo: ${message}` }],
    }));
    mcp.registerTool('bump', {}, async () => {
      counter++;
      return { content: [{ type: 'text', text: String(counter) }] };
    });
    mcp.registerTool('slow', { inputSchema: z.object({ ms: z.number() }) }, async ({ ms }, ctx) => {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        ctx.mcpReq.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      return { content: [{ type: 'text', text: 'slow done' }] };
    });
    mcp.registerResource('counter', 'mem://counter', { mimeType: 'text/plain' }, async (uri) => ({
      contents: [{ uri: uri.href, text: String(counter) }],
    }));
    if (era === 'legacy') {
      const uris = new Set<string>();
      subscribed.set(mcp, uris);
      mcp.server.setRequestHandler('resources/subscribe', async (request) => {
        stats.subscribes.push(request.params.uri);
        uris.add(request.params.uri);
        return {};
      });
      mcp.server.setRequestHandler('resources/unsubscribe', async (request) => {
        uris.delete(request.params.uri);
        return {};
      });
    }
    return mcp;
  };

  wss.on('connection', (socket) => {
    stats.connections++;
    sockets.add(socket);
    const handle = serveStdio(({ era }) => build(era), {
      transport: socketTransport(socket, stats),
      onerror: () => undefined,
    });
    handles.add(handle);
    socket.on('close', () => {
      sockets.delete(socket);
      handles.delete(handle);
      handle.close().catch(() => undefined);
    });
  });

  return {
    url: http.url('/mcp').replace('http:', 'ws:'),
    stats,
    dropConnections() {
      for (const socket of sockets) socket.terminate();
    },
    async emitResourceUpdated(uri) {
      let count = 0;
      for (const [mcp, uris] of subscribed) {
        if (!uris.has(uri) || !mcp.isConnected()) continue;
        await mcp.server.sendResourceUpdated({ uri }).catch(() => undefined);
        count++;
      }
      return count;
    },
    async close() {
      for (const socket of sockets) socket.terminate();
      await Promise.all([...handles].map((handle) => handle.close().catch(() => undefined)));
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await http.close();
    },
  };
}
