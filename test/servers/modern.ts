/**
 * A modern-only (2026-07-28) test peer on the official SDK's `createMcpHandler`, for protocol
 * edge cases our client must handle: `x-mcp-header` annotations (valid string / integer /
 * boolean / nested ones, and one INVALID tool a client must drop), a tool that reports the
 * `Mcp-Param-*` headers it received, MRTR tools (one round, two rounds, never-ending) and an
 * MRTR resource, a `-32020` injector, a `-32022` injector, cache hints, and live stats.
 */
import { randomUUID } from 'node:crypto';
import {
  acceptedContent,
  type CacheHint,
  type CallToolResult,
  createMcpHandler,
  inputRequired,
  inputResponse,
  McpServer,
  type ServerContext,
  type ServerNotifier,
} from '@modelcontextprotocol/server';
import * as z from 'zod';
import {
  disconnectSignal,
  listenLoopback,
  parseJson,
  readBody,
  rpcErrorResponse,
  toWebRequest,
  writeWebResponse,
} from './node-http.js';

type CacheableOperation =
  | 'server/discover'
  | 'tools/list'
  | 'prompts/list'
  | 'resources/list'
  | 'resources/templates/list'
  | 'resources/read';

/** Options of {@link startModernServer}. */
export interface ModernPeerOptions {
  /** Cache hints per cacheable operation (defaults: see {@link MODERN_PEER_CACHE_HINTS}). */
  cacheHints?: Partial<Record<CacheableOperation, CacheHint>>;
  /** Tools whose FIRST `tools/call` is answered 400 `-32020` (default `['flaky']`). */
  headerMismatchOnce?: readonly string[];
  /** `-32022` injector: requests naming one of `versions` get 400 with `data.supported`. */
  rejectVersions?: VersionRejection;
  /** Response shaping of the SDK handler. Default `auto`. */
  responseMode?: 'auto' | 'sse' | 'json';
}

/** A `-32022` injection. */
export interface VersionRejection {
  readonly versions: readonly string[];
  readonly supported: readonly string[];
}

/** Default cache hints: distinct values per operation, so tests can tell them apart. */
export const MODERN_PEER_CACHE_HINTS: Readonly<Record<CacheableOperation, CacheHint>> = {
  'server/discover': { ttlMs: 120_000, cacheScope: 'public' },
  'tools/list': { ttlMs: 60_000, cacheScope: 'public' },
  'prompts/list': { ttlMs: 45_000, cacheScope: 'public' },
  'resources/list': { ttlMs: 30_000, cacheScope: 'public' },
  'resources/templates/list': { ttlMs: 20_000, cacheScope: 'public' },
  'resources/read': { ttlMs: 5_000, cacheScope: 'private' },
};

/** What one HTTP request carried. */
export interface ModernPeerRequest {
  readonly method: string;
  readonly id: unknown;
  /** `mcp-*` headers (lowercased names) as received. */
  readonly headers: Readonly<Record<string, string>>;
  /** `params._meta` as received. */
  readonly meta: unknown;
}

/** Live observations; read at assertion time. */
export interface ModernPeerStats {
  /** JSON-RPC methods received. */
  readonly methods: Map<string, number>;
  /** Every JSON-RPC message received (bounded). */
  readonly requests: ModernPeerRequest[];
  /** `tools/call` attempts per tool, injected failures included. */
  readonly toolCalls: Map<string, number>;
  /** `Mcp-Param-*` headers the `record_params` tool saw, per call (lowercased names). */
  readonly paramHeaders: Array<Readonly<Record<string, string>>>;
  /** Injected `-32020` answers. */
  headerMismatches: number;
  /** Injected `-32022` answers. */
  versionRejections: number;
  /** MRTR rounds per tool or resource (`mrtr_forever`, `mrtr://confirm`, …). */
  readonly mrtrRounds: Map<string, number>;
  /** requestState values that came back exactly as minted. */
  requestStateEchoes: number;
  /** requestState values that came back altered or unknown. */
  requestStateMismatches: number;
}

/** A running modern peer. */
export interface ModernPeer {
  /** `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  readonly port: number;
  readonly stats: ModernPeerStats;
  /** The SDK's listen notifier (`toolsChanged`, `resourcesChanged`, `resourceUpdated(uri)`). */
  readonly notify: ServerNotifier;
  /** Sets (or with `undefined` clears) the `-32022` injector. */
  setVersionRejection(rejection: VersionRejection | undefined): void;
  /** Arms one more `-32020` for the next `tools/call` of `tool`. */
  armHeaderMismatch(tool: string): void;
  close(): Promise<void>;
}

/** Names of the tools, in `tools/list` order. */
export const MODERN_PEER_TOOLS = [
  'echo',
  'record_params',
  'nested_param',
  'invalid_header',
  'flaky',
  'mrtr_one_round',
  'mrtr_two_round',
  'mrtr_forever',
  'numbers',
  'answer',
  'sample_with_tools',
] as const;

const MAX_LOG = 2_000;
const NAME_FORM = z.object({ name: z.string().describe('Your name') });

function text(value: string, isError = false): CallToolResult {
  return { content: [{ type: 'text', text: value }], ...(isError ? { isError: true } : {}) };
}

function push<T>(list: T[], value: T): void {
  if (list.length >= MAX_LOG) list.shift();
  list.push(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Starts the peer on 127.0.0.1 (port 0). */
export async function startModernServer(options: ModernPeerOptions = {}): Promise<ModernPeer> {
  const stats: ModernPeerStats = {
    methods: new Map(),
    requests: [],
    toolCalls: new Map(),
    paramHeaders: [],
    headerMismatches: 0,
    versionRejections: 0,
    mrtrRounds: new Map(),
    requestStateEchoes: 0,
    requestStateMismatches: 0,
  };
  const armed = new Map<string, number>();
  for (const tool of options.headerMismatchOnce ?? ['flaky']) armed.set(tool, (armed.get(tool) ?? 0) + 1);
  let versionRejection = options.rejectVersions;
  const issuedStates = new Set<string>();

  const round = (key: string) => stats.mrtrRounds.set(key, (stats.mrtrRounds.get(key) ?? 0) + 1);
  const mint = (prefix: string): string => {
    const state = `${prefix}:${randomUUID()}`;
    issuedStates.add(state);
    if (issuedStates.size > MAX_LOG) issuedStates.delete(issuedStates.values().next().value!);
    return state;
  };
  /** The echoed requestState when it is one we minted with `prefix`, else undefined (counted). */
  const echoed = (ctx: ServerContext, prefix: string): string | undefined => {
    const state = ctx.mcpReq.requestState<string>();
    if (typeof state === 'string' && state.startsWith(`${prefix}:`) && issuedStates.has(state)) {
      issuedStates.delete(state);
      stats.requestStateEchoes++;
      return state;
    }
    stats.requestStateMismatches++;
    return undefined;
  };

  function build(): McpServer {
    const mcp = new McpServer(
      { name: 'modern-test-peer', version: '1.0.0' },
      {
        capabilities: {
          tools: { listChanged: true },
          prompts: { listChanged: true },
          logging: {},
          resources: { subscribe: true, listChanged: true },
        },
        instructions: 'ax-mcp modern 2026-07-28 test peer (official v2 server SDK).',
        cacheHints: { ...MODERN_PEER_CACHE_HINTS, ...options.cacheHints },
      },
    );
    mcp.registerTool(
      'echo',
      { description: 'Echoes `message`.', inputSchema: z.object({ message: z.string() }) },
      ({ message }) => text(message),
    );
    mcp.registerTool(
      'record_params',
      {
        description:
          'Mirrors region/priority/express into Mcp-Param-* headers; returns the headers it received.',
        inputSchema: z.object({
          region: z.string().meta({ 'x-mcp-header': 'Region' }).optional(),
          priority: z.number().int().meta({ 'x-mcp-header': 'Priority' }).optional(),
          express: z.boolean().meta({ 'x-mcp-header': 'Express' }).optional(),
          note: z.string().optional(),
        }),
      },
      (_args, ctx) => {
        const seen: Record<string, string> = {};
        ctx.http?.req?.headers.forEach((value, name) => {
          if (name.startsWith('mcp-param-')) seen[name] = value;
        });
        push(stats.paramHeaders, seen);
        return { ...text(JSON.stringify(seen)), structuredContent: { headers: seen } };
      },
    );
    mcp.registerTool(
      'nested_param',
      {
        description: 'A header on a nested property (target.id → Mcp-Param-Target-Id).',
        inputSchema: z.object({
          target: z.object({ id: z.string().meta({ 'x-mcp-header': 'Target-Id' }) }),
        }),
      },
      ({ target }) => text(`target ${target.id}`),
    );
    mcp.registerTool(
      'invalid_header',
      {
        description: 'INVALID: x-mcp-header on a number property. Conforming clients drop this tool.',
        inputSchema: z.object({ amount: z.number().meta({ 'x-mcp-header': 'Amount' }) }),
      },
      ({ amount }) => text(`amount ${amount}`),
    );
    mcp.registerTool(
      'flaky',
      {
        description: 'Its first call is answered 400 -32020 by the peer; later calls succeed.',
        inputSchema: z.object({ value: z.string().meta({ 'x-mcp-header': 'Value' }) }),
      },
      ({ value }) => text(`flaky ${value}`),
    );
    mcp.registerTool(
      'mrtr_one_round',
      { description: 'Asks for a name (form elicitation), then greets.', inputSchema: z.object({}) },
      (_args, ctx) => {
        round('mrtr_one_round');
        const answer = acceptedContent(ctx.mcpReq.inputResponses, 'name');
        if (answer === undefined) {
          return inputRequired({
            inputRequests: {
              name: inputRequired.elicit({ message: 'Who are you?', requestedSchema: NAME_FORM }),
            },
            requestState: mint('one'),
          });
        }
        if (echoed(ctx, 'one') === undefined) return text('requestState did not round-trip', true);
        return text(`Hello, ${String(answer.name)}`);
      },
    );
    mcp.registerTool(
      'mrtr_two_round',
      { description: 'Asks for a sampling answer, then for roots; returns both.', inputSchema: z.object({}) },
      (_args, ctx) => {
        round('mrtr_two_round');
        const responses = ctx.mcpReq.inputResponses;
        const sampled = inputResponse(responses, 'sample');
        const roots = inputResponse(responses, 'roots');
        if (roots.kind === 'roots') {
          const state = echoed(ctx, 'two-b');
          if (state === undefined) return text('requestState did not round-trip', true);
          const sampleText = Buffer.from(state.split(':')[1] ?? '', 'base64url').toString('utf8');
          return {
            ...text(`sampled ${sampleText}; roots ${roots.roots.map((r) => r.uri).join(',')}`),
            structuredContent: { sample: sampleText, roots: roots.roots.map((r) => r.uri) },
          };
        }
        if (sampled.kind === 'sampling') {
          if (echoed(ctx, 'two-a') === undefined) return text('requestState did not round-trip', true);
          const content = sampled.result.content;
          const sampleText = !Array.isArray(content) && content.type === 'text' ? content.text : '(non-text)';
          // The sampling answer rides in the state: the retry carries only the new responses.
          const carried = Buffer.from(sampleText, 'utf8').toString('base64url');
          return inputRequired({
            inputRequests: { roots: inputRequired.listRoots() },
            requestState: mint(`two-b:${carried}`),
          });
        }
        return inputRequired({
          inputRequests: {
            sample: inputRequired.createMessage({
              messages: [{ role: 'user', content: { type: 'text', text: 'Say a word' } }],
              maxTokens: 20,
            }),
          },
          requestState: mint('two-a'),
        });
      },
    );
    mcp.registerTool(
      'mrtr_forever',
      {
        description: 'Always answers input_required (tests the client round cap).',
        inputSchema: z.object({}),
      },
      () => {
        round('mrtr_forever');
        return inputRequired({
          inputRequests: {
            again: inputRequired.elicit({ message: 'Once more?', requestedSchema: NAME_FORM }),
          },
        });
      },
    );
    // SEP-2106: structuredContent may be any JSON value; the SDK passes arrays and scalars through.
    mcp.registerTool(
      'numbers',
      {
        description: 'The first `count` squares, as an array of structuredContent.',
        inputSchema: z.object({ count: z.number().int().min(0).max(100) }),
        outputSchema: z.array(z.number()),
      },
      ({ count }) => {
        const squares = Array.from({ length: count }, (_, i) => (i + 1) ** 2);
        return { content: [{ type: 'text', text: squares.join(', ') }], structuredContent: squares };
      },
    );
    mcp.registerTool(
      'answer',
      {
        description: 'A scalar structuredContent with no content.',
        inputSchema: z.object({}),
        outputSchema: z.number(),
      },
      () => ({ content: [], structuredContent: 42 }) as unknown as CallToolResult,
    );

    // Sampling with tools (2026-07-28: in-band, as an input request of a multi round-trip call).
    mcp.registerTool(
      'sample_with_tools',
      {
        description: 'Asks the client to sample with a weather tool offered, then reports the answer.',
        inputSchema: z.object({}),
      },
      (_args, ctx) => {
        const answer = (ctx.mcpReq.inputResponses as Record<string, unknown> | undefined)?.sample;
        if (answer === undefined) {
          return inputRequired({
            inputRequests: {
              sample: inputRequired.createMessage({
                messages: [{ role: 'user', content: { type: 'text', text: 'Weather in Lisbon?' } }],
                maxTokens: 50,
                tools: [
                  {
                    name: 'get_weather',
                    description: 'Current weather of a city',
                    inputSchema: {
                      type: 'object',
                      properties: { city: { type: 'string' } },
                      required: ['city'],
                    },
                  },
                ],
                toolChoice: { mode: 'auto' },
              }),
            },
          });
        }
        return text(`sampled: ${JSON.stringify(answer)}`);
      },
    );

    mcp.registerResource(
      'hello',
      'res://modern/hello',
      { mimeType: 'text/plain', description: 'A plain text resource.' },
      (uri) => ({
        contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Hello from the modern peer' }],
      }),
    );
    mcp.registerResource(
      'confirm',
      'mrtr://confirm',
      { mimeType: 'text/plain', description: 'Reading it asks for confirmation (MRTR on resources/read).' },
      (uri, ctx) => {
        round('mrtr://confirm');
        const answer = acceptedContent(ctx.mcpReq.inputResponses, 'confirm');
        if (answer?.confirm !== true) {
          return inputRequired({
            inputRequests: {
              confirm: inputRequired.elicit({
                message: 'Reveal the secret?',
                requestedSchema: {
                  type: 'object',
                  properties: { confirm: { type: 'boolean' } },
                  required: ['confirm'],
                },
              }),
            },
          });
        }
        return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'the secret' }] };
      },
    );
    mcp.registerPrompt(
      'greet',
      { description: 'Greets someone.', argsSchema: z.object({ name: z.string() }) },
      ({ name }) => ({
        messages: [{ role: 'user', content: { type: 'text', text: `Greet ${name}.` } }],
      }),
    );
    return mcp;
  }

  const handler = createMcpHandler(build, {
    legacy: 'reject',
    ...(options.responseMode === undefined ? {} : { responseMode: options.responseMode }),
  });

  function record(body: unknown, headers: Headers): void {
    for (const message of Array.isArray(body) ? body : [body]) {
      if (!isRecord(message) || typeof message.method !== 'string') continue;
      stats.methods.set(message.method, (stats.methods.get(message.method) ?? 0) + 1);
      const mcpHeaders: Record<string, string> = {};
      headers.forEach((value, name) => {
        if (name.startsWith('mcp-')) mcpHeaders[name] = value;
      });
      const params = isRecord(message.params) ? message.params : {};
      push(stats.requests, {
        method: message.method,
        id: message.id,
        headers: mcpHeaders,
        meta: params._meta,
      });
      if (message.method === 'tools/call' && typeof params.name === 'string') {
        stats.toolCalls.set(params.name, (stats.toolCalls.get(params.name) ?? 0) + 1);
      }
    }
  }

  /** The injectors, answered before the SDK sees the request. */
  function inject(body: unknown): Response | undefined {
    if (!isRecord(body) || typeof body.method !== 'string' || body.id === undefined) return undefined;
    const id = typeof body.id === 'string' || typeof body.id === 'number' ? body.id : null;
    const params = isRecord(body.params) ? body.params : {};
    const meta = isRecord(params._meta) ? params._meta : {};
    const version = meta['io.modelcontextprotocol/protocolVersion'];
    if (
      versionRejection !== undefined &&
      typeof version === 'string' &&
      versionRejection.versions.includes(version)
    ) {
      stats.versionRejections++;
      return Response.json(
        {
          jsonrpc: '2.0',
          id,
          error: {
            code: -32022,
            message: `Unsupported protocol version: ${version}`,
            data: { supported: [...versionRejection.supported], requested: version },
          },
        },
        { status: 400 },
      );
    }
    const tool = body.method === 'tools/call' && typeof params.name === 'string' ? params.name : undefined;
    const left = tool === undefined ? 0 : (armed.get(tool) ?? 0);
    if (tool !== undefined && left > 0) {
      armed.set(tool, left - 1);
      stats.headerMismatches++;
      return Response.json(
        {
          jsonrpc: '2.0',
          id,
          error: {
            code: -32020,
            message: 'Bad Request: the request headers and body disagree (injected)',
            data: { mismatch: { header: 'Mcp-Param-Value', body: 'injected by the test peer' } },
          },
        },
        { status: 400 },
      );
    }
    return undefined;
  }

  const http = await listenLoopback((req, res) => {
    void (async () => {
      if (!req.url?.startsWith('/mcp'))
        return writeWebResponse(res, rpcErrorResponse(404, -32601, 'Not found'));
      const body = req.method === 'POST' ? await readBody(req) : undefined;
      if (req.method === 'POST' && body === undefined) {
        return writeWebResponse(res, rpcErrorResponse(413, -32000, 'Body too large'));
      }
      const request = toWebRequest(req, body, disconnectSignal(res));
      const parsed = parseJson(body);
      record(parsed, request.headers);
      const response = inject(parsed) ?? (await handler.fetch(request));
      await writeWebResponse(res, response);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });

  return {
    url: http.url('/mcp'),
    port: http.port,
    stats,
    notify: handler.notify,
    setVersionRejection(rejection) {
      versionRejection = rejection;
    },
    armHeaderMismatch(tool) {
      armed.set(tool, (armed.get(tool) ?? 0) + 1);
    },
    async close() {
      await handler.close();
      await http.close();
    },
  };
}
