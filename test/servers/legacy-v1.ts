/**
 * A sessionful 2025-11-25 Streamable HTTP peer on the older official SDK (`@modelcontextprotocol/sdk`
 * 1.32.2: `McpServer` + node `StreamableHTTPServerTransport`), in-process on 127.0.0.1. The core
 * content of the legacy-v2 peer, smaller: a second, independent legacy implementation. With
 * `transport: 'sse'` the same server speaks the deprecated 2024-11-05 HTTP+SSE transport instead
 * (the SDK's `SSEServerTransport`: `GET /sse`, then `POST /messages?sessionId=…`).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  McpError,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { SessionEventStore } from '../../src/demo/event-store.js';
import { allContentResult, GREETING_NAMES, TINY_PNG_BASE64, textResult } from './content.js';
import { listenLoopback, onHeadersSent, parseJson, readBody, sendJsonRpcError } from './node-http.js';
import {
  createPeerStats,
  forgetSession,
  isInitializeBody,
  type PeerStats,
  recordHttp,
  recordMessages,
  trackGetStream,
} from './stats.js';

/** Options of {@link startLegacyV1Server}. */
export interface LegacyV1Options {
  /** SSE `retry:` in priming events, ms. Default 1000. */
  retryInterval?: number;
  /** Answer POSTs with JSON instead of SSE. Default false. */
  jsonResponse?: boolean;
  /** `streamable` (default): Streamable HTTP at `/mcp`. `sse`: the 2024-11-05 HTTP+SSE transport at `/sse`. */
  transport?: 'streamable' | 'sse';
}

/** A running legacy-v1 peer. */
export interface LegacyV1Server {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp` (HTTP+SSE: `…/sse`). */
  readonly url: string;
  readonly port: number;
  /** Live observations (see {@link PeerStats}). */
  readonly stats: PeerStats;
  /** Drops every session (old session ids then get 404); keeps the port and connections. */
  restart(): Promise<void>;
  /** Stops the server; nothing stays open. */
  close(): Promise<void>;
  /** Sends `notifications/resources/updated` to each session subscribed to `uri`; returns how many. */
  emitResourceUpdated(uri: string): Promise<number>;
  /** Sends `notifications/<kind>/list_changed` to every session. */
  emitListChanged(kind: 'tools' | 'prompts' | 'resources'): Promise<void>;
  /**
   * Cuts every open GET stream abruptly (no end of stream), as a network drop would. Over
   * HTTP+SSE the stream is the session: the SDK forgets it, and its POSTs then get 404.
   * Returns how many streams were cut.
   */
  dropStreams(): number;
}

const RESOURCE_NOT_FOUND = -32002;

/** Names of the tools, in `tools/list` order. */
export const LEGACY_V1_TOOL_NAMES = ['echo', 'all_content', 'fail', 'slow'] as const;

interface Session {
  id?: string;
  readonly mcp: McpServer;
  readonly transport: Transport;
  readonly subscriptions: Set<string>;
}

/** Starts the peer on 127.0.0.1 (port 0). */
export async function startLegacyV1Server(options: LegacyV1Options = {}): Promise<LegacyV1Server> {
  const stats = createPeerStats();
  const sessions = new Map<string, Session>();
  const getStreams = new Set<ServerResponse>();
  let generation = new AbortController();
  const itemIds = ['0001', '0002', '0003'];

  function buildServer(subscriptions: Set<string>): McpServer {
    const mcp = new McpServer(
      { name: 'legacy-v1-peer', version: '1.0.0' },
      {
        capabilities: {
          tools: { listChanged: true },
          prompts: { listChanged: true },
          resources: { subscribe: true, listChanged: true },
        },
      },
    );
    mcp.registerTool(
      'echo',
      { description: 'Echoes `message`.', inputSchema: { message: z.string() } },
      (args) => textResult(args.message),
    );
    mcp.registerTool(
      'all_content',
      {
        description: 'Returns every content block kind, structuredContent and _meta.',
        outputSchema: { kinds: z.array(z.string()), count: z.number() },
      },
      () => allContentResult(),
    );
    mcp.registerTool('fail', { description: 'Returns a tool error (isError: true).' }, () =>
      textResult('deliberate failure', true),
    );
    mcp.registerTool(
      'slow',
      {
        description: 'Runs `steps` steps of `delayMs`, reporting progress; honours cancellation.',
        inputSchema: {
          steps: z.number().int().min(1).max(1000).default(5),
          delayMs: z.number().int().min(0).max(10_000).default(100),
        },
      },
      async ({ steps, delayMs }, extra) => {
        const signal = AbortSignal.any([extra.signal, generation.signal]);
        const token = extra._meta?.progressToken;
        try {
          for (let i = 1; i <= steps; i++) {
            await sleep(delayMs, undefined, { signal });
            if (token !== undefined) {
              await extra.sendNotification({
                method: 'notifications/progress',
                params: { progressToken: token, progress: i, total: steps, message: `step ${i}/${steps}` },
              });
            }
          }
        } catch (error) {
          if (!signal.aborted) throw error;
          stats.cancelledToolCalls++;
          return textResult('cancelled', true);
        }
        return textResult(`completed ${steps} steps`);
      },
    );

    mcp.registerPrompt(
      'greeting',
      {
        description: 'Greets someone; `name` completes.',
        argsSchema: { name: completable(z.string(), (v) => GREETING_NAMES.filter((n) => n.startsWith(v))) },
      },
      ({ name }) => ({
        messages: [{ role: 'user', content: { type: 'text', text: `Say hello to ${name}.` } }],
      }),
    );

    mcp.registerResource('hello', 'res://text/hello', { mimeType: 'text/plain' }, (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Hello, world' }],
    }));
    mcp.registerResource('pixel', 'res://blob/pixel', { mimeType: 'image/png' }, (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'image/png', blob: TINY_PNG_BASE64 }],
    }));
    const template = new ResourceTemplate('res://item/{id}', {
      list: () => ({
        resources: itemIds.map((id) => ({
          uri: `res://item/${id}`,
          name: `item-${id}`,
          mimeType: 'text/plain',
        })),
      }),
      complete: { id: (value) => itemIds.filter((id) => id.startsWith(value)) },
    });
    mcp.registerResource('item', template, { mimeType: 'text/plain' }, (uri, vars) => {
      // -32002 is the 2025-11-25 resource-not-found code (the SDK itself answers -32602 for unknown URIs).
      if (!itemIds.includes(String(vars.id))) {
        throw new McpError(RESOURCE_NOT_FOUND, 'Resource not found', { uri: uri.href });
      }
      return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: `Item ${String(vars.id)}` }] };
    });
    mcp.server.setRequestHandler(SubscribeRequestSchema, (request) => {
      subscriptions.add(request.params.uri);
      return {};
    });
    mcp.server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
      subscriptions.delete(request.params.uri);
      return {};
    });
    return mcp;
  }

  /** An HTTP+SSE session: the GET stream `res` carries it. */
  async function openSSESession(res: ServerResponse): Promise<void> {
    const subscriptions = new Set<string>();
    const mcp = buildServer(subscriptions);
    const transport = new SSEServerTransport('/messages', res);
    const session: Session = { id: transport.sessionId, mcp, subscriptions, transport };
    const id = transport.sessionId;
    sessions.set(id, session);
    stats.sessions.add(id);
    stats.subscriptions.set(id, subscriptions);
    getStreams.add(res);
    trackGetStream(stats, id, (listener) => res.once('close', listener));
    res.once('close', () => getStreams.delete(res));
    mcp.server.onclose = () => {
      if (sessions.get(id) === session) sessions.delete(id);
      forgetSession(stats, id);
    };
    await mcp.connect(transport);
  }

  async function routeSSE(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/sse') return openSSESession(res);
    if (req.method !== 'POST' || url.pathname !== '/messages') {
      return sendJsonRpcError(res, 404, -32000, 'Not found');
    }
    const body = await readBody(req);
    if (body === undefined) return sendJsonRpcError(res, 413, -32000, 'Body too large');
    const parsed = parseJson(body);
    if (parsed === undefined) return sendJsonRpcError(res, 400, -32700, 'Parse error');
    const sessionId = url.searchParams.get('sessionId') ?? undefined;
    recordMessages(stats, parsed, sessionId);
    res.once('finish', () => recordHttp(stats, undefined, res.statusCode));
    const session = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (!session) return sendJsonRpcError(res, 404, -32001, 'Session not found');
    await (session.transport as SSEServerTransport).handlePostMessage(req, res, parsed);
  }

  async function openSession(): Promise<Session> {
    const subscriptions = new Set<string>();
    const mcp = buildServer(subscriptions);
    const session: Session = {
      mcp,
      subscriptions,
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: new SessionEventStore(5_000),
        retryInterval: options.retryInterval ?? 1000,
        enableJsonResponse: options.jsonResponse ?? false,
        onsessioninitialized: (id) => {
          session.id = id;
          sessions.set(id, session);
          stats.sessions.add(id);
          stats.subscriptions.set(id, subscriptions);
        },
      }),
    };
    mcp.server.onclose = () => {
      if (session.id === undefined) return;
      if (sessions.get(session.id) === session) sessions.delete(session.id);
      forgetSession(stats, session.id);
    };
    await mcp.connect(session.transport);
    return session;
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const header = (name: string) => {
      const v = req.headers[name];
      return typeof v === 'string' ? v : undefined;
    };
    if (!req.url?.startsWith('/mcp')) return sendJsonRpcError(res, 404, -32000, 'Not found');
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    if (req.method === 'POST' && body === undefined)
      return sendJsonRpcError(res, 413, -32000, 'Body too large');
    const parsed = parseJson(body);
    if (req.method === 'POST' && parsed === undefined)
      return sendJsonRpcError(res, 400, -32700, 'Parse error');
    const sessionId = header('mcp-session-id');
    recordMessages(stats, parsed, sessionId);
    res.once('finish', () => recordHttp(stats, undefined, res.statusCode));
    if (req.method === 'GET') recordHttp(stats, header('last-event-id'), undefined);

    let session = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (sessionId !== undefined && session === undefined)
      return sendJsonRpcError(res, 404, -32001, 'Session not found');
    if (session === undefined) {
      if (req.method !== 'POST' || !isInitializeBody(parsed)) {
        return sendJsonRpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      }
      session = await openSession();
    }
    if (req.method === 'GET' && sessionId !== undefined) {
      const id = sessionId;
      onHeadersSent(res, () => {
        if (res.statusCode !== 200) return;
        trackGetStream(stats, id, (listener) => res.once('close', listener));
        getStreams.add(res);
        res.once('close', () => getStreams.delete(res));
      });
    }
    await (session.transport as StreamableHTTPServerTransport).handleRequest(req, res, parsed);
  }

  const sse = options.transport === 'sse';
  const http = await listenLoopback((req, res) => {
    (sse ? routeSSE : route)(req, res).catch(() => sendJsonRpcError(res, 500, -32603, 'Internal error'));
  });

  async function dropSessions(): Promise<void> {
    generation.abort();
    generation = new AbortController();
    const all = [...sessions.values()];
    sessions.clear();
    await Promise.all(all.map((s) => s.mcp.close().catch(() => {})));
    for (const id of [...stats.sessions]) forgetSession(stats, id);
  }

  return {
    url: http.url(sse ? '/sse' : '/mcp'),
    port: http.port,
    stats,
    restart: dropSessions,
    async close() {
      await dropSessions();
      await http.close();
    },
    async emitResourceUpdated(uri) {
      const targets = [...sessions.values()].filter((s) => s.subscriptions.has(uri));
      await Promise.all(targets.map((s) => s.mcp.server.sendResourceUpdated({ uri })));
      return targets.length;
    },
    dropStreams() {
      const cut = [...getStreams];
      for (const res of cut) res.destroy();
      return cut.length;
    },
    async emitListChanged(kind) {
      for (const s of sessions.values()) {
        if (kind === 'tools') s.mcp.sendToolListChanged();
        else if (kind === 'prompts') s.mcp.sendPromptListChanged();
        else s.mcp.sendResourceListChanged();
      }
    },
  };
}
