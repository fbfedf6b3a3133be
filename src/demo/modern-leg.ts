/**
 * The 2026-07-28 leg: the SDK's `createMcpHandler(factory, { legacy: 'reject' })`, with what the
 * SDK lacks put in front of it — the demo's own header check, the `-32021` gate of the
 * task-only tool, and listen streams that ask for `taskIds`. Tracks every open listen stream.
 */
import {
  classifyInboundRequest,
  createMcpHandler,
  isJsonContentType,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import {
  type AxMCPDemoHeaderViolation,
  checkParamHeaders,
  checkStandardHeaders,
  headerMismatchBody,
} from './headers.js';
import { jsonResponse, type TrackedStream, trackStream } from './http.js';
import { honourFilter, openTaskListen, type TaskListenStream } from './listen.js';
import { buildModernServer, PARAM_HEADERS, START_REINDEX, type SurfaceDeps } from './mcp-surface.js';
import {
  asRequest,
  declaresTasks,
  isRecord,
  MODERN_VERSION,
  metaOf,
  missingTasksCapability,
  PROTOCOL_VERSION_KEY,
  type RpcRequest,
} from './rpc.js';

/** An open modern listen stream, as `GET /control/state` reports it. */
export interface AxMCPDemoListenStream {
  /** The listen request's JSON-RPC id (= the subscription id). */
  readonly id: string | number;
  /** `sdk`: served by the SDK's listen router; `tasks`: served by the demo (the filter has `taskIds`). */
  readonly servedBy: 'sdk' | 'tasks';
  /** The filter the client asked for. */
  readonly requested: unknown;
  /** What the demo honoured (only known for `tasks` streams; the SDK's ack says it for the others). */
  readonly honoured?: unknown;
  readonly openedAt: string;
}

/** Options of {@link ModernLeg}. */
export interface ModernLegOptions {
  readonly deps: SurfaceDeps;
  readonly checkHeaders: boolean;
  readonly keepAliveMs: number;
  readonly onViolation: (violation: AxMCPDemoHeaderViolation) => void;
  readonly maxStreams: number;
}

interface OpenStream {
  readonly info: AxMCPDemoListenStream;
  drop(): void;
}

/** The modern half of the endpoint. */
export class ModernLeg {
  readonly handler: McpHttpHandler;
  readonly #options: ModernLegOptions;
  readonly #streams = new Set<OpenStream>();
  readonly #taskStreams = new Set<TaskListenStream>();

  constructor(options: ModernLegOptions) {
    this.#options = options;
    this.handler = createMcpHandler(() => buildModernServer(options.deps), {
      legacy: 'reject',
      keepAliveMs: options.keepAliveMs,
      maxSubscriptions: options.maxStreams,
    });
  }

  /** Open listen streams. */
  streams(): AxMCPDemoListenStream[] {
    return [...this.#streams].map((s) => s.info);
  }

  /** Serves one request that is not legacy (or every request on a modern-only endpoint). */
  async serve(request: Request, parsed: unknown): Promise<Response> {
    const rpc = asRequest(parsed);
    if (
      rpc !== undefined &&
      request.method === 'POST' &&
      isJsonContentType(request.headers.get('content-type'))
    ) {
      const early = this.#beforeSdk(request, rpc);
      if (early !== undefined) return early;
    }
    const response = await this.handler.fetch(request);
    if (
      rpc?.method === 'subscriptions/listen' &&
      response.status === 200 &&
      response.headers.get('content-type')?.includes('text/event-stream') === true
    ) {
      return this.#track(response, {
        id: rpc.id,
        servedBy: 'sdk',
        requested: rpc.params.notifications,
        openedAt: new Date().toISOString(),
      });
    }
    return response;
  }

  /** Ends every listen stream without its final result; returns how many. */
  dropStreams(): number {
    const all = [...this.#streams];
    for (const stream of all) stream.drop();
    return all.length;
  }

  /** Ends every stream gracefully and closes the SDK handler. */
  async close(): Promise<void> {
    for (const stream of [...this.#taskStreams]) stream.close();
    // The SDK ends its listen streams with the final result; the tracked wrappers pass it on.
    await this.handler.close();
  }

  #rejectHeaders(violation: AxMCPDemoHeaderViolation | undefined, rpc: RpcRequest): Response | undefined {
    if (violation === undefined) return undefined;
    this.#options.onViolation(violation);
    return jsonResponse(400, headerMismatchBody(rpc.id, violation));
  }

  /** The checks and gates in SDK ladder order: standard headers, capabilities, `Mcp-Param-*`. */
  #beforeSdk(request: Request, rpc: RpcRequest): Response | undefined {
    // Requests without the envelope claim are legacy-classified: the SDK answers them as it does.
    const meta = metaOf(rpc);
    if (meta === undefined || !(PROTOCOL_VERSION_KEY in meta)) return undefined;
    const check = this.#options.checkHeaders;
    const standard = this.#rejectHeaders(check ? checkStandardHeaders(request.headers, rpc) : undefined, rpc);
    if (standard !== undefined) return standard;
    // Only requests the SDK would serve reach the gates below; everything else keeps the SDK's answer.
    const route = classifyInboundRequest({
      httpMethod: 'POST',
      protocolVersionHeader: request.headers.get('mcp-protocol-version') ?? undefined,
      mcpMethodHeader: request.headers.get('mcp-method') ?? undefined,
      mcpNameHeader: request.headers.get('mcp-name') ?? undefined,
      body: { jsonrpc: '2.0', id: rpc.id, method: rpc.method, params: rpc.params },
    });
    if (route.kind !== 'modern' || route.classification.revision !== MODERN_VERSION) return undefined;
    if (rpc.method === 'tools/call' && rpc.params.name === START_REINDEX && !declaresTasks(rpc)) {
      const { status, body } = missingTasksCapability(rpc.id);
      return jsonResponse(status, body);
    }
    const params = this.#rejectHeaders(
      check ? checkParamHeaders(request.headers, rpc, PARAM_HEADERS) : undefined,
      rpc,
    );
    if (params !== undefined) return params;
    const filter = rpc.params.notifications;
    if (rpc.method === 'subscriptions/listen' && isRecord(filter) && filter.taskIds !== undefined) {
      return this.#taskListen(request, rpc);
    }
    return undefined;
  }

  #taskListen(request: Request, rpc: RpcRequest): Response {
    if (!declaresTasks(rpc)) {
      const { status, body } = missingTasksCapability(rpc.id);
      return jsonResponse(status, body);
    }
    const error = (code: number, message: string) =>
      jsonResponse(200, { jsonrpc: '2.0', id: rpc.id, error: { code, message } });
    if (this.#streams.size >= this.#options.maxStreams) return error(-32603, 'Subscription limit reached');
    const honoured = honourFilter(rpc, this.#options.deps.tasks);
    if (honoured === undefined) {
      return error(
        -32602,
        "Invalid params: 'notifications' is required and must be a valid SubscriptionFilter",
      );
    }
    const { response, stream } = openTaskListen(rpc, honoured, {
      bus: this.handler.bus,
      tasks: this.#options.deps.tasks,
      keepAliveMs: this.#options.keepAliveMs,
      signal: request.signal,
      onEnd: (ended) => this.#taskStreams.delete(ended),
    });
    this.#taskStreams.add(stream);
    return this.#track(
      response,
      {
        id: rpc.id,
        servedBy: 'tasks',
        requested: rpc.params.notifications,
        honoured,
        openedAt: stream.openedAt,
      },
      () => stream.drop(),
    );
  }

  #track(response: Response, info: AxMCPDemoListenStream, drop?: () => void): Response {
    const entry: OpenStream = {
      info,
      drop: () => {
        drop?.();
        tracked.drop();
      },
    };
    const tracked: TrackedStream = trackStream(response, () => this.#streams.delete(entry));
    this.#streams.add(entry);
    return tracked.response;
  }
}
