/**
 * A full, sessionful 2025-11-25 Streamable HTTP peer built on the official v2 server SDK
 * (`@modelcontextprotocol/server` 2.4.0), in-process on 127.0.0.1. One McpServer and one
 * `WebStandardStreamableHTTPServerTransport` per session, with an in-memory event store (GET +
 * Last-Event-ID replays) and hand-written pagination (McpServer does not paginate lists).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type CallToolResult,
  completable,
  type LoggingLevel,
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  ResourceTemplate,
  type ServerContext,
  type Tool,
  type ToolCallback,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import * as z from 'zod';
import { SessionEventStore } from '../../src/demo/event-store.js';
import {
  allContentResult,
  ELICIT_DEFAULTS_SCHEMA,
  ELICIT_SCHEMA,
  GREETING_NAMES,
  GREETING_STYLES,
  paginate,
  TINY_PNG_BASE64,
  textResult,
} from './content.js';
import {
  disconnectSignal,
  listenLoopback,
  parseJson,
  readBody,
  rpcErrorResponse,
  sendJsonRpcError,
  toWebRequest,
  writeWebResponse,
} from './node-http.js';
import {
  createPeerStats,
  forgetSession,
  isInitializeBody,
  type PeerStats,
  recordHttp,
  recordMessages,
  trackGetStream,
} from './stats.js';

/** Options of {@link startLegacyV2Server}. */
export interface LegacyV2Options {
  /** Generated `bulk_NNNN` tools, in addition to the fixed tools. Default 10. */
  toolCount?: number;
  /** Generated `res://item/NNNN` resources. Default 5. */
  resourceCount?: number;
  /** Page size of `tools/list` and `resources/list`. Default 50. */
  pageSize?: number;
  /** SSE `retry:` in priming events, ms. Default 1000. */
  retryInterval?: number;
  /** Answer POSTs with JSON instead of SSE. Default false. */
  jsonResponse?: boolean;
  /** SSE keep-alive comment interval, ms (0 = off). Default 15000 (the SDK's). */
  keepAliveMs?: number;
  /** Timeout of the server→client requests the tools make, ms. Default 10000. */
  clientRequestTimeoutMs?: number;
}

/** A running legacy-v2 peer. */
export interface LegacyV2Server {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  readonly port: number;
  /** Live observations (see {@link PeerStats}). */
  readonly stats: PeerStats;
  /**
   * Simulates a restart: drops every session (old session ids then get 404, open streams end) and
   * keeps the port. `dropConnections` also destroys every TCP connection (a crash; the next request
   * on a pooled connection may then fail with a socket error instead of 404).
   */
  restart(options?: { dropConnections?: boolean }): Promise<void>;
  /** Stops the server; nothing stays open. */
  close(): Promise<void>;
  /** Sends `notifications/resources/updated` to each session subscribed to `uri`; returns how many. */
  emitResourceUpdated(uri: string): Promise<number>;
  /** Sends `notifications/<kind>/list_changed` to every session. */
  emitListChanged(kind: 'tools' | 'prompts' | 'resources'): Promise<void>;
  /** Adds a tool (answers `text`) to every session, current and future; sessions get `tools/list_changed`. */
  addTool(name: string, text?: string): void;
  /** Replaces the text of `res://text/hello` or a `res://item/NNNN` resource. */
  setResourceText(uri: string, text: string): void;
  /** Closes each session's standalone GET stream, so clients must reconnect (with Last-Event-ID). */
  closeStandaloneStreams(): void;
}

/** Names of the fixed tools (the `bulk_NNNN` and added tools come after them in `tools/list`). */
export const LEGACY_V2_TOOL_NAMES = [
  'echo',
  'all_content',
  'fail',
  'slow',
  'sample',
  'elicit',
  'elicit_defaults',
  'roots',
  'log',
] as const;

/** Levels the `log` tool emits, in order. */
export const LOG_TOOL_LEVELS: readonly LoggingLevel[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
];

interface Session {
  id?: string;
  readonly mcp: McpServer;
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly subscriptions: Set<string>;
}

interface ToolSpec {
  readonly name: string;
  readonly definition: Tool;
  register(mcp: McpServer): void;
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Tool['inputSchema'] {
  return { ...(z.toJSONSchema(schema, { io }) as Record<string, unknown>), type: 'object' };
}

function defineTool<I extends z.ZodObject>(
  name: string,
  config: { description: string; inputSchema: I; outputSchema?: z.ZodObject },
  handler: ToolCallback<I>,
): ToolSpec {
  const definition: Tool = {
    name,
    description: config.description,
    inputSchema: jsonSchema(config.inputSchema, 'input'),
    ...(config.outputSchema ? { outputSchema: jsonSchema(config.outputSchema, 'output') } : {}),
  };
  return { name, definition, register: (mcp) => void mcp.registerTool(name, config, handler) };
}

/** Starts the peer on 127.0.0.1 (port 0). */
export async function startLegacyV2Server(options: LegacyV2Options = {}): Promise<LegacyV2Server> {
  const pageSize = options.pageSize ?? 50;
  const retryInterval = options.retryInterval ?? 1000;
  const asked = { timeout: options.clientRequestTimeoutMs ?? 10_000 };
  const stats = createPeerStats();
  const sessions = new Map<string, Session>();
  let generation = new AbortController();

  const itemIds = Array.from({ length: options.resourceCount ?? 5 }, (_, i) =>
    String(i + 1).padStart(4, '0'),
  );
  const texts = new Map<string, string>([['res://text/hello', 'Hello, world']]);
  for (const id of itemIds) texts.set(`res://item/${id}`, `Item ${id}`);

  const text = (s: string): CallToolResult => textResult(s);
  const tools: ToolSpec[] = [
    defineTool(
      'echo',
      { description: 'Echoes `message`.', inputSchema: z.object({ message: z.string() }) },
      (a) => text(a.message),
    ),
    defineTool(
      'all_content',
      {
        description: 'Returns every content block kind, structuredContent and _meta.',
        inputSchema: z.object({}),
        outputSchema: z.object({ kinds: z.array(z.string()), count: z.number() }),
      },
      () => allContentResult(),
    ),
    defineTool(
      'fail',
      { description: 'Returns a tool error (isError: true).', inputSchema: z.object({}) },
      () => textResult('deliberate failure', true),
    ),
    defineTool(
      'slow',
      {
        description: 'Runs `steps` steps of `delayMs`, reporting progress; honours cancellation.',
        inputSchema: z.object({
          steps: z.number().int().min(1).max(1000).default(5),
          delayMs: z.number().int().min(0).max(10_000).default(100),
        }),
      },
      async ({ steps, delayMs }, ctx) => slowSteps(steps, delayMs, ctx),
    ),
    defineTool(
      'sample',
      {
        description: 'Asks the client for `sampling/createMessage`; returns its answer as JSON text.',
        inputSchema: z.object({
          prompt: z.string().default('Say hi'),
          standalone: z.boolean().default(false),
        }),
      },
      async ({ prompt, standalone }, ctx) => {
        const params = {
          messages: [{ role: 'user' as const, content: { type: 'text' as const, text: prompt } }],
          maxTokens: 64,
        };
        const session = ctx.sessionId === undefined ? undefined : sessions.get(ctx.sessionId);
        const result =
          standalone && session
            ? await session.mcp.server.createMessage(params, asked)
            : await ctx.mcpReq.send({ method: 'sampling/createMessage', params }, asked);
        return text(JSON.stringify(result));
      },
    ),
    defineTool(
      'elicit',
      {
        description: 'Form elicitation (name, age); returns the answer as JSON text.',
        inputSchema: z.object({}),
      },
      async (_args, ctx) => elicit(ctx, 'Who are you?', ELICIT_SCHEMA),
    ),
    defineTool(
      'elicit_defaults',
      {
        description: 'Form elicitation whose schema has defaults; returns the answer.',
        inputSchema: z.object({}),
      },
      async (_args, ctx) => elicit(ctx, 'Confirm the defaults', ELICIT_DEFAULTS_SCHEMA),
    ),
    defineTool(
      'roots',
      { description: 'Asks the client for `roots/list`; returns it.', inputSchema: z.object({}) },
      async (_args, ctx) => text(JSON.stringify(await ctx.mcpReq.send({ method: 'roots/list' }, asked))),
    ),
    defineTool(
      'log',
      {
        description: 'Emits notifications/message at six levels (filtered by logging/setLevel).',
        inputSchema: z.object({}),
      },
      async (_args, ctx) => {
        for (const level of LOG_TOOL_LEVELS)
          await ctx.mcpReq.log(level, { message: `${level} message` }, 'legacy-v2');
        return text(`emitted ${LOG_TOOL_LEVELS.join(',')}`);
      },
    ),
  ];
  const bulkInput = z.object({ note: z.string().optional() });
  for (let i = 0; i < (options.toolCount ?? 10); i++) {
    const name = `bulk_${String(i).padStart(4, '0')}`;
    tools.push(
      defineTool(name, { description: `Bulk tool ${i}.`, inputSchema: bulkInput }, () =>
        text(`${name} called`),
      ),
    );
  }

  async function slowSteps(steps: number, delayMs: number, ctx: ServerContext): Promise<CallToolResult> {
    const signal = AbortSignal.any([ctx.mcpReq.signal, generation.signal]);
    const token = ctx.mcpReq._meta?.progressToken;
    try {
      for (let i = 1; i <= steps; i++) {
        await sleep(delayMs, undefined, { signal });
        if (token !== undefined) {
          await ctx.mcpReq.notify({
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
    return text(`completed ${steps} steps`);
  }

  async function elicit(
    ctx: ServerContext,
    message: string,
    requestedSchema: object,
  ): Promise<CallToolResult> {
    const answer = await ctx.mcpReq.send(
      { method: 'elicitation/create', params: { mode: 'form', message, requestedSchema } },
      asked,
    );
    return text(JSON.stringify(answer));
  }

  function buildServer(session: { subscriptions: Set<string> }): McpServer {
    const mcp = new McpServer(
      { name: 'legacy-v2-peer', version: '1.0.0' },
      {
        capabilities: {
          tools: { listChanged: true },
          prompts: { listChanged: true },
          resources: { subscribe: true, listChanged: true },
          logging: {},
        },
        instructions: 'ax-mcp legacy 2025-11-25 test peer (official v2 server SDK).',
      },
    );
    for (const tool of tools) tool.register(mcp);
    mcp.server.setRequestHandler('tools/list', (request) => {
      const { page, nextCursor } = pageOrThrow('tools', tools, request.params?.cursor);
      return { tools: page.map((t) => t.definition), ...(nextCursor ? { nextCursor } : {}) };
    });

    mcp.registerPrompt(
      'greeting',
      {
        description: 'Greets someone; `name` and `style` complete.',
        argsSchema: z.object({
          name: completable(z.string().describe('Who to greet'), (v) =>
            GREETING_NAMES.filter((n) => n.startsWith(v)),
          ),
          style: completable(z.string().describe('How'), (v) =>
            GREETING_STYLES.filter((s) => s.startsWith(v)),
          ).optional(),
        }),
      },
      ({ name, style }) => ({
        description: 'A greeting',
        messages: [
          {
            role: 'user',
            content: { type: 'text', text: `Say hello to ${name}${style ? ` (${style})` : ''}.` },
          },
        ],
      }),
    );
    mcp.registerPrompt('plain', { description: 'A prompt without arguments.' }, () => ({
      messages: [{ role: 'user', content: { type: 'text', text: 'A plain prompt.' } }],
    }));

    mcp.registerResource(
      'hello',
      'res://text/hello',
      { mimeType: 'text/plain', description: 'Mutable text' },
      (uri) => ({
        contents: [{ uri: uri.href, mimeType: 'text/plain', text: texts.get(uri.href) ?? '' }],
      }),
    );
    mcp.registerResource(
      'pixel',
      'res://blob/pixel',
      { mimeType: 'image/png', description: 'A 1×1 PNG' },
      (uri) => ({
        contents: [{ uri: uri.href, mimeType: 'image/png', blob: TINY_PNG_BASE64 }],
      }),
    );
    const template = new ResourceTemplate('res://item/{id}', {
      list: undefined,
      complete: { id: (value) => itemIds.filter((id) => id.startsWith(value)) },
    });
    mcp.registerResource(
      'item',
      template,
      { mimeType: 'text/plain', description: 'Generated items' },
      (uri, vars) => {
        if (!itemIds.includes(String(vars.id))) throw new ResourceNotFoundError(uri.href);
        return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: texts.get(uri.href) ?? '' }] };
      },
    );
    const listed = [
      { uri: 'res://text/hello', name: 'hello', mimeType: 'text/plain' },
      { uri: 'res://blob/pixel', name: 'pixel', mimeType: 'image/png' },
      ...itemIds.map((id) => ({ uri: `res://item/${id}`, name: `item-${id}`, mimeType: 'text/plain' })),
    ];
    mcp.server.setRequestHandler('resources/list', (request) => {
      const { page, nextCursor } = pageOrThrow('resources', listed, request.params?.cursor);
      return { resources: page, ...(nextCursor ? { nextCursor } : {}) };
    });
    mcp.server.setRequestHandler('resources/subscribe', (request) => {
      session.subscriptions.add(request.params.uri);
      return {};
    });
    mcp.server.setRequestHandler('resources/unsubscribe', (request) => {
      session.subscriptions.delete(request.params.uri);
      return {};
    });
    return mcp;
  }

  function pageOrThrow<T>(kind: string, items: readonly T[], cursor: string | undefined) {
    try {
      return paginate(kind, items, cursor, pageSize);
    } catch {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid ${kind} cursor`);
    }
  }

  async function openSession(): Promise<Session> {
    const subscriptions = new Set<string>();
    const mcp = buildServer({ subscriptions });
    const session: Session = {
      mcp,
      subscriptions,
      transport: new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: new SessionEventStore(5_000),
        retryInterval,
        enableJsonResponse: options.jsonResponse ?? false,
        ...(options.keepAliveMs !== undefined ? { keepAliveMs: options.keepAliveMs } : {}),
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
    const sessionId = header('mcp-session-id');
    const parsed = parseJson(body);
    recordMessages(stats, parsed, sessionId);
    let response: Response;
    const session = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (sessionId !== undefined && session === undefined) {
      response = rpcErrorResponse(404, -32001, 'Session not found');
    } else if (session !== undefined) {
      response = await session.transport.handleRequest(toWebRequest(req, body, disconnectSignal(res)));
    } else if (req.method === 'POST' && isInitializeBody(parsed)) {
      const fresh = await openSession();
      response = await fresh.transport.handleRequest(toWebRequest(req, body, disconnectSignal(res)));
    } else {
      response = rpcErrorResponse(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    }
    recordHttp(stats, req.method === 'GET' ? header('last-event-id') : undefined, response.status);
    if (req.method === 'GET' && response.status === 200 && sessionId !== undefined) {
      trackGetStream(stats, sessionId, (listener) => res.once('close', listener));
    }
    await writeWebResponse(res, response);
  }

  const http = await listenLoopback((req, res) => {
    route(req, res).catch(() => sendJsonRpcError(res, 500, -32603, 'Internal error'));
  });

  async function dropSessions(dropConnections = false): Promise<void> {
    generation.abort();
    generation = new AbortController();
    const all = [...sessions.values()];
    sessions.clear();
    await Promise.all(all.map((s) => s.mcp.close().catch(() => {})));
    for (const id of [...stats.sessions]) forgetSession(stats, id);
    if (dropConnections) http.server.closeAllConnections();
  }

  return {
    url: http.url('/mcp'),
    port: http.port,
    stats,
    restart: (restartOptions) => dropSessions(restartOptions?.dropConnections),
    async close() {
      await dropSessions(true);
      await http.close();
    },
    async emitResourceUpdated(uri) {
      const targets = [...sessions.values()].filter((s) => s.subscriptions.has(uri));
      await Promise.all(targets.map((s) => s.mcp.server.sendResourceUpdated({ uri })));
      return targets.length;
    },
    async emitListChanged(kind) {
      const all = [...sessions.values()];
      await Promise.all(
        all.map((s) =>
          kind === 'tools'
            ? s.mcp.server.sendToolListChanged()
            : kind === 'prompts'
              ? s.mcp.server.sendPromptListChanged()
              : s.mcp.server.sendResourceListChanged(),
        ),
      );
    },
    addTool(name, answer = `${name} called`) {
      const spec = defineTool(name, { description: `Added at runtime.`, inputSchema: z.object({}) }, () =>
        text(answer),
      );
      tools.push(spec);
      for (const s of sessions.values()) spec.register(s.mcp);
    },
    setResourceText(uri, value) {
      if (!texts.has(uri)) throw new RangeError(`No text resource ${uri}`);
      texts.set(uri, value);
    },
    closeStandaloneStreams() {
      for (const s of sessions.values()) s.transport.closeStandaloneSSEStream();
    },
  };
}
