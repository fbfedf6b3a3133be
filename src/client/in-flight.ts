import { linkAbort, linkedSignalOptions } from '../protocol/abort.js';
import { AxMCPError, AxMCPTimeoutError } from '../protocol/errors.js';
import { isErrorResponse, type JSONRPCId, type JSONRPCRequest, rpcError } from '../protocol/jsonrpc.js';
import type { AxMCPProgress } from '../protocol/messages.js';
import type { AxMCPSendOptions, AxMCPTransport } from '../transport/types.js';
import { traceContextMeta } from './trace-context.js';

/** Options of one request, as the client's methods accept them. */
export interface AxMCPCallOptions {
  signal?: AbortSignal;
  /**
   * Deadline in ms; every progress notification for the request restarts it.
   * `0` disables it. Default: the client's `timeoutMs` (60 000).
   */
  timeoutMs?: number;
  /** Progress notifications for this request. */
  onProgress?: (progress: AxMCPProgress) => void;
}

/** What a wire adds to one send. */
export interface SendRequest extends AxMCPCallOptions {
  method: string;
  params?: Record<string, unknown>;
  headers?: Record<string, string>;
  idempotent?: boolean;
  /** Attach a progress token (default true; off for `initialize` and `ping`). */
  progress?: boolean;
  /** Told the HTTP status of the exchange, where there is one. */
  onStatus?: (status: number) => void;
  /** Do not re-initialize a lost session for this request (requests made while restoring one). */
  noRecovery?: boolean;
  /** Told the JSON-RPC id the request goes out with (a listen stream is known by it). */
  onId?: (id: number) => void;
  /** Told when the answer needed input rounds (such results are never cached). */
  onInputRound?: () => void;
}

/** The per-call options of a client method, as a request carries them. */
export function callOptions(options: AxMCPCallOptions): Partial<SendRequest> {
  const out: Partial<SendRequest> = {};
  if (options.signal) out.signal = options.signal;
  if (options.timeoutMs !== undefined) out.timeoutMs = options.timeoutMs;
  if (options.onProgress) out.onProgress = options.onProgress;
  return out;
}

interface Tracked {
  resetTimer(): void;
  onProgress: ((progress: AxMCPProgress) => void) | undefined;
}

/**
 * The client's requests in flight: ids, deadlines that progress extends,
 * cancellation, and the mapping of JSON-RPC errors to typed ones.
 */
export class InFlightRequests {
  readonly #transport: AxMCPTransport;
  readonly #defaultTimeoutMs: number;
  readonly #onCancel: (id: JSONRPCId, reason: string) => void;
  readonly #byToken = new Map<string | number, Tracked>();
  #nextId = 1;

  constructor(
    transport: AxMCPTransport,
    defaultTimeoutMs: number,
    onCancel: (id: JSONRPCId, reason: string) => void,
  ) {
    this.#transport = transport;
    this.#defaultTimeoutMs = defaultTimeoutMs;
    this.#onCancel = onCancel;
  }

  get size(): number {
    return this.#byToken.size;
  }

  /** Sends a request; resolves with its result or throws a typed error. */
  async send(
    request: SendRequest,
    decorate?: (message: JSONRPCRequest) => void,
  ): Promise<Record<string, unknown>> {
    const id = this.#nextId++;
    const message: JSONRPCRequest = { jsonrpc: '2.0', id, method: request.method };
    const traced = traceContextMeta();
    if (request.progress === false && !traced) {
      if (request.params) message.params = request.params;
    } else {
      const params: Record<string, unknown> = { ...request.params };
      // The caller's own _meta keys win over the trace context.
      params._meta = {
        ...traced,
        ...(params._meta as Record<string, unknown> | undefined),
        ...(request.progress === false ? {} : { progressToken: id }),
      };
      message.params = params;
    }
    decorate?.(message);
    request.onId?.(id);

    const link = linkAbort(request.signal);
    const timeoutMs = request.timeoutMs ?? this.#defaultTimeoutMs;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let timedOut = false;
    const resetTimer = () => {
      if (timeoutMs <= 0 || !Number.isFinite(timeoutMs)) return;
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        link.abort(
          new AxMCPTimeoutError(`"${request.method}" timed out after ${timeoutMs} ms`, { timeoutMs }),
        );
      }, timeoutMs);
    };
    this.#byToken.set(id, { resetTimer, onProgress: request.onProgress });
    resetTimer();
    try {
      // The signal is made only if the transport reads it (ax-mcp's own follow the link).
      const sendOptions: AxMCPSendOptions = linkedSignalOptions(link);
      if (request.headers) sendOptions.headers = request.headers;
      if (request.idempotent) sendOptions.idempotent = true;
      if (request.onStatus) sendOptions.onStatus = request.onStatus;
      const response = await this.#transport.request(message, sendOptions);
      if (isErrorResponse(response)) throw rpcError(response.error);
      return response.result;
    } catch (error) {
      if (link.aborted) {
        this.#onCancel(id, timedOut ? 'timeout' : 'aborted by the caller');
        if (timedOut) throw link.reason;
        throw new AxMCPTimeoutError(`"${request.method}" was aborted`, {
          aborted: true,
          cause: link.reason,
        });
      }
      throw error instanceof AxMCPError ? error : wrap(error, request.method);
    } finally {
      clearTimeout(timer);
      link.dispose();
      this.#byToken.delete(id);
    }
  }

  /** Routes a progress notification to its request; false when no request owns the token. */
  progress(progress: AxMCPProgress): boolean {
    const tracked = this.#byToken.get(progress.progressToken);
    if (!tracked) return false;
    tracked.resetTimer();
    try {
      tracked.onProgress?.(progress);
    } catch {
      // A caller's progress callback cannot break the request.
    }
    return true;
  }
}

function wrap(error: unknown, method: string): AxMCPError {
  const message = error instanceof Error ? error.message : String(error);
  return new AxMCPError('transport_error', `"${method}" failed: ${message}`, { cause: error });
}
