import { delay } from '../protocol/abort.js';
import { AxMCPProtocolError, AxMCPTransportError, AxMCPUnsupportedError, RPC } from '../protocol/errors.js';
import { isObject } from '../protocol/json.js';
import { modernHeaders } from '../protocol/mcp-headers.js';
import type {
  AxMCPClientCapabilities,
  AxMCPImplementation,
  AxMCPLoggingLevel,
  AxMCPServerCapabilities,
  AxMCPTool,
} from '../protocol/messages.js';
import { META } from '../protocol/meta.js';
import { MODERN_PROTOCOL_VERSIONS } from '../protocol/versions.js';
import type { AxMCPTransport } from '../transport/types.js';
import type { InFlightRequests, SendRequest } from './in-flight.js';
import { answerInputRequests, type InputFulfiller } from './input-requests.js';
import { ListenStream } from './listen-stream.js';
import type { AxMCPListenOptions } from './listening.js';
import { ModernTasks } from './tasks/modern-tasks.js';
import type { TaskDeps } from './tasks/protocol.js';
import { ToolHeaderIndex } from './tool-headers.js';
import type { NotificationHost, NotificationStream, ServerIdentity, Wire } from './wire.js';

/** Safe reads that go again as a new request when their response stream breaks. */
const REISSUABLE = new Set([
  'server/discover',
  'tools/list',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'completion/complete',
  'tasks/get',
]);
const MAX_REISSUES = 2;
const REISSUE_DELAYS_MS = [100, 400];

/** Methods whose results may ask for input (multi round-trip requests). */
const INPUT_METHODS = new Set(['tools/call', 'prompts/get', 'resources/read']);

export interface ModernWireOptions {
  transport: AxMCPTransport;
  requests: InFlightRequests;
  clientInfo: AxMCPImplementation;
  capabilities: () => AxMCPClientCapabilities;
  /** The log level carried in every request's `_meta` until `setLogLevel` changes it. */
  logLevel: AxMCPLoggingLevel | undefined;
  /** Answers input requests with the client's handlers. */
  fulfil: InputFulfiller;
  namespace: string;
  maxInputRounds: number;
  /** Warnings about what the server sent (a tool dropped for invalid header annotations). */
  onWarning: (message: string) => void;
  /** The server rejected our headers (`-32020`): refresh the tool list. */
  onHeaderMismatch: () => Promise<void>;
  /** A cached discovery to start from instead of asking the server. */
  cachedDiscover?: Record<string, unknown>;
  taskDeps: Omit<TaskDeps, 'send'>;
}

/** The shape of a `server/discover` result this client relies on. */
export function parseDiscover(result: Record<string, unknown>): {
  supportedVersions: string[];
  capabilities: AxMCPServerCapabilities;
  serverInfo: AxMCPImplementation | undefined;
  instructions: string | undefined;
} {
  const versions = result.supportedVersions;
  if (
    !Array.isArray(versions) ||
    !versions.every((v) => typeof v === 'string') ||
    !isObject(result.capabilities)
  ) {
    throw new AxMCPProtocolError(
      RPC.invalidParams,
      'Server sent an invalid server/discover result',
      undefined,
      {
        code: 'invalid_message',
      },
    );
  }
  const meta = isObject(result._meta) ? result._meta : {};
  const info = meta[META.serverInfo];
  return {
    supportedVersions: versions as string[],
    capabilities: result.capabilities as AxMCPServerCapabilities,
    serverInfo: isObject(info) && typeof info.name === 'string' ? (info as AxMCPImplementation) : undefined,
    instructions: typeof result.instructions === 'string' ? result.instructions : undefined,
  };
}

/**
 * The stateless 2026-07-28 wire: no handshake; every request carries the protocol
 * version, client capabilities and client info in `_meta` and the `Mcp-*` headers;
 * results carry a `resultType`, and `input_required` is answered and retried here.
 */
export class ModernWire implements Wire {
  readonly era = 'modern' as const;
  readonly tasks: ModernTasks;
  readonly #options: ModernWireOptions;
  #version: string = MODERN_PROTOCOL_VERSIONS[0] as string;
  #discover: Record<string, unknown> | undefined;
  #logLevel: AxMCPLoggingLevel | undefined;
  /** The `x-mcp-header` annotations of the current catalog's tools. */
  readonly #toolHeaders: ToolHeaderIndex;
  readonly cachesReads = true;
  readonly serverRequestsOnStream = false;

  constructor(options: ModernWireOptions) {
    this.#options = options;
    this.#toolHeaders = new ToolHeaderIndex(options.onWarning);
    this.#logLevel = options.logLevel;
    this.#discover = options.cachedDiscover;
    this.tasks = new ModernTasks({ ...options.taskDeps, send: (request) => this.request(request) });
  }

  get protocolVersion(): string {
    return this.#version;
  }

  /** The last `server/discover` result. */
  get discoverResult(): Record<string, unknown> | undefined {
    return this.#discover;
  }

  async connect(signal?: AbortSignal): Promise<ServerIdentity> {
    await this.#options.transport.start?.(signal);
    this.#options.transport.setProtocolVersion?.(undefined);
    const result = this.#discover ?? (await this.discover(signal));
    const parsed = parseDiscover(result);
    const mutual = MODERN_PROTOCOL_VERSIONS.find((version) => parsed.supportedVersions.includes(version));
    if (!mutual) {
      throw new AxMCPUnsupportedError(
        `Server speaks ${parsed.supportedVersions.join(', ').slice(0, 200)}; this client speaks ${MODERN_PROTOCOL_VERSIONS.join(', ')}`,
        { endpoint: this.#options.transport.endpoint },
      );
    }
    this.#version = mutual;
    return {
      protocolVersion: mutual,
      serverInfo: parsed.serverInfo,
      capabilities: parsed.capabilities,
      instructions: parsed.instructions,
    };
  }

  /** Stateless: there is no session to lose. */
  async recover(): Promise<void> {}

  /** Nothing to send: the listen stream's filter carries owned URIs. */
  async subscribe(): Promise<void> {}

  async unsubscribe(): Promise<void> {}

  /** The `subscriptions/listen` stream, whose filter follows `host.filter()`. */
  openNotifications(host: NotificationHost, options: AxMCPListenOptions): NotificationStream {
    const stream = new ListenStream(
      {
        send: (request) => this.request(request),
        filter: () => host.filter(),
        lifecycle: (state, error, resumed) => host.lifecycle(state, error, resumed),
      },
      options,
    );
    return {
      ready: stream.ready,
      done: stream.done,
      close: () => stream.close(),
      update: () => stream.update(),
      accept: (message) => stream.accept(message),
    };
  }

  admitTools(tools: AxMCPTool[], revision: number): AxMCPTool[] {
    return this.#toolHeaders.admit(tools, revision, this.#options.namespace);
  }

  callableTools(tools: AxMCPTool[]): AxMCPTool[] {
    return this.#toolHeaders.callable(tools);
  }

  droppedToolReason(name: string): string | undefined {
    return this.#toolHeaders.droppedReason(name);
  }

  /** Nothing to send: 2026-07-28 removed the notification; each request that needs roots asks for them. */
  async notifyRootsChanged(): Promise<void> {}

  async ping(options: Partial<SendRequest>): Promise<void> {
    await this.discover(options.signal);
  }

  async setLogLevel(level: AxMCPLoggingLevel): Promise<void> {
    this.#logLevel = level;
  }

  /** Asks the server to describe itself (`server/discover`). */
  async discover(
    signal?: AbortSignal,
    onStatus?: (status: number) => void,
  ): Promise<Record<string, unknown>> {
    const result = await this.#sendRecovering({
      method: 'server/discover',
      idempotent: true,
      progress: false,
      ...(signal ? { signal } : {}),
      ...(onStatus ? { onStatus } : {}),
    });
    parseDiscover(result);
    this.#discover = result;
    return result;
  }

  async request(request: SendRequest): Promise<Record<string, unknown>> {
    let result = await this.#sendRecovering(request);
    const rounds = this.#options.maxInputRounds;
    for (let round = 1; resultTypeOf(result) === 'input_required'; round++) {
      if (!INPUT_METHODS.has(request.method)) {
        throw invalidResult(`"${request.method}" cannot ask for input`);
      }
      if (round > rounds) {
        throw new AxMCPProtocolError(
          RPC.internalError,
          `"${request.method}" still asked for input after ${rounds} rounds (maxInputRounds)`,
          undefined,
          { code: 'input_rounds_exhausted' },
        );
      }
      request.onInputRound?.();
      const retryParams: Record<string, unknown> = { ...request.params };
      if (result.inputRequests === undefined && result.requestState === undefined) {
        throw invalidResult('input_required without inputRequests or requestState');
      }
      if (result.inputRequests !== undefined) {
        retryParams.inputResponses = await answerInputRequests(result.inputRequests, this.#options.fulfil, {
          namespace: this.#options.namespace,
          signal: request.signal ?? new AbortController().signal,
        });
      }
      if (result.requestState !== undefined) {
        if (typeof result.requestState !== 'string') throw invalidResult('requestState must be a string');
        retryParams.requestState = result.requestState;
      }
      result = await this.#sendRecovering({ ...request, params: retryParams });
    }
    const type = resultTypeOf(result);
    if (type !== 'complete' && type !== 'task')
      throw invalidResult(`unknown resultType "${String(type).slice(0, 40)}"`);
    return result;
  }

  async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    await this.#options.transport.notify(
      params ? { jsonrpc: '2.0', method, params } : { jsonrpc: '2.0', method },
    );
  }

  cancel(requestId: string | number, reason: string): void {
    // Over HTTP, closing the request's stream is the cancellation; elsewhere say it.
    if (this.#options.transport.kind === 'http') return;
    this.notify('notifications/cancelled', { requestId, reason }).catch(() => {});
  }

  async end(): Promise<void> {
    // Stateless: nothing lives on the server.
  }

  /**
   * One request with the wire's three recoveries, in one frame (a call is one `await` here, not
   * one per recovery): `-32022` names the versions the server speaks, so the request goes again
   * once with a mutual one; `-32020` on a tool call means our `Mcp-Param-*` view of the tool is
   * stale, so the tool list is refreshed and the request goes again once (with a fresh version
   * retry); a response stream that breaks before its answer cannot be resumed in this era (no
   * event ids), so a safe read goes again as a new request, at most twice per attempt, while
   * `tools/call` and every other method with effects never does (the outcome is unknown).
   */
  async #sendRecovering(request: SendRequest): Promise<Record<string, unknown>> {
    let headersRefreshed = false;
    let versionRetried = false;
    let reissues = 0;
    for (;;) {
      try {
        return await this.#sendOnce(request);
      } catch (error) {
        if (error instanceof AxMCPTransportError) {
          const broken = error.code === 'stream_ended';
          if (
            !broken ||
            !REISSUABLE.has(request.method) ||
            reissues >= MAX_REISSUES ||
            request.signal?.aborted
          )
            throw error;
          await delay(REISSUE_DELAYS_MS[reissues] ?? 500, request.signal);
          reissues++;
          continue;
        }
        if (!(error instanceof AxMCPProtocolError)) throw error;
        if (error.rpcCode === RPC.unsupportedVersion && !versionRetried) {
          const supported =
            isObject(error.data) && Array.isArray(error.data.supported) ? error.data.supported : [];
          // The server may list the very version it refused (a transient refusal): one retry either way.
          const mutual = MODERN_PROTOCOL_VERSIONS.find((version) => supported.includes(version));
          if (mutual) {
            this.#version = mutual;
            versionRetried = true;
            reissues = 0;
            continue;
          }
        }
        if (error.rpcCode === RPC.headerMismatch && request.method === 'tools/call' && !headersRefreshed) {
          await this.#options.onHeaderMismatch();
          headersRefreshed = true;
          versionRetried = false;
          reissues = 0;
          continue;
        }
        throw error;
      }
    }
  }

  #sendOnce(request: SendRequest): Promise<Record<string, unknown>> {
    const params: Record<string, unknown> = { ...request.params };
    const meta: Record<string, unknown> = {
      ...(params._meta as Record<string, unknown> | undefined),
      [META.protocolVersion]: this.#version,
      [META.clientCapabilities]: this.#options.capabilities(),
      [META.clientInfo]: this.#options.clientInfo,
    };
    if (this.#logLevel) meta[META.logLevel] = this.#logLevel;
    params._meta = meta;
    // A fresh object of its own: extended in place.
    const headers = modernHeaders(request.method, params, this.#version) as unknown as Record<string, string>;
    if (request.method === 'tools/call' && typeof params.name === 'string') {
      Object.assign(headers, this.#toolHeaders.valuesFor(params.name, params.arguments));
    }
    if (request.headers) Object.assign(headers, request.headers);
    return this.#options.requests.send({ ...request, params, headers });
  }
}

/** A missing `resultType` (a pre-2026 server) means `complete`. */
export function resultTypeOf(result: Record<string, unknown>): unknown {
  return result.resultType ?? 'complete';
}

function invalidResult(reason: string): AxMCPProtocolError {
  return new AxMCPProtocolError(RPC.invalidParams, `Server sent an invalid result: ${reason}`, undefined, {
    code: 'invalid_message',
  });
}
