/**
 * The reusable core of message-stream transports (stdio, WebSocket): one JSON-RPC
 * message in, one out, no HTTP. It correlates responses with pending requests, hands
 * server requests and notifications to the client, and turns everything a peer can
 * get wrong into a report instead of a crash. Isomorphic: no `node:` imports.
 */
import {
  AxMCPError,
  AxMCPProtocolError,
  AxMCPTimeoutError,
  AxMCPTransportError,
  RPC,
} from '../protocol/errors.js';
import { parseUntrustedJSON } from '../protocol/json.js';
import {
  isErrorResponse,
  isResponse,
  type JSONRPCId,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type JSONRPCResponse,
  toJSONRPCMessage,
} from '../protocol/jsonrpc.js';
import { LostAnswers, peekMessage } from './lost-answers.js';
import type { AxMCPMessageContext, AxMCPTransportHandlers } from './types.js';

export { OVERSIZED_PREFIX_BYTES } from './lost-answers.js';

/** How a {@link AxMCPMessageChannel} writes to its peer and reports what it drops. */
export interface AxMCPMessageChannelOptions {
  /** A human-readable endpoint for errors, with no credentials. */
  endpoint: string;
  /**
   * Writes one message to the peer. Resolves once the message is handed to the
   * binding; rejects (preferably with an {@link AxMCPTransportError}) if it cannot be sent.
   * `sending` is what the caller said of it: a binding that may send it again (HTTP+SSE posts
   * after a 503) does so only when it is `idempotent` and `signal` has not fired.
   */
  send(message: JSONRPCMessage, sending: AxMCPChannelSendOptions): Promise<void> | void;
  /**
   * Called for every incoming message the channel drops: text that is not JSON, JSON that
   * is not JSON-RPC, a response nobody waits for, or a handler that threw. Must not throw.
   * Without it, the handlers' `onProtocolError` (the client's) is told.
   */
  onProtocolError?(error: AxMCPError): void;
}

/** Per-message options of {@link AxMCPMessageChannel}. */
export interface AxMCPChannelSendOptions {
  /** Aborting rejects the pending request and forgets it; the client sends `notifications/cancelled`. */
  signal?: AbortSignal;
  /** The request is safe to send again (the client's own mark); notifications and responses always are. */
  idempotent?: boolean;
}

interface PendingRequest {
  /** Unique per request sent over this channel (an id may be reused once settled). */
  key: number;
  method: string;
  resolve(response: JSONRPCResponse): void;
  reject(error: unknown): void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/** How many ids of aborted requests are remembered, so their late responses are dropped quietly. */
const ABORTED_ID_MEMORY = 256;

/**
 * Correlates JSON-RPC requests and responses over a message stream.
 *
 * The binding calls {@link AxMCPMessageChannel.receiveText} (or {@link AxMCPMessageChannel.receive})
 * for every message that arrives, and {@link AxMCPMessageChannel.close} when the stream ends.
 * Responses settle the pending request with the same id (a JSON-RPC error response is a
 * resolved value); requests and notifications go to {@link AxMCPTransportHandlers.onMessage}.
 *
 * @example
 * ```ts
 * const channel = new AxMCPMessageChannel({ endpoint: 'ws://…', send: (m) => socket.send(JSON.stringify(m)) });
 * socket.onmessage = (event) => channel.receiveText(String(event.data));
 * socket.onclose = () => channel.close(new AxMCPTransportError('stream_ended', 'Socket closed'));
 * const response = await channel.request({ jsonrpc: '2.0', id: 1, method: 'ping' });
 * ```
 */
export class AxMCPMessageChannel {
  readonly endpoint: string;
  readonly #send: (message: JSONRPCMessage, sending: AxMCPChannelSendOptions) => Promise<void> | void;
  readonly #onProtocolError: ((error: AxMCPError) => void) | undefined;
  readonly #pending = new Map<JSONRPCId, PendingRequest>();
  /** Aborted requests whose late answer may still come (bounded), by id: their request key. */
  readonly #abortedIds = new Map<JSONRPCId, number>();
  /** Answers dropped as oversized whose id could not be read. */
  readonly #lost = new LostAnswers();
  #handlers: AxMCPTransportHandlers | undefined;
  #closed = false;
  #nextKey = 0;

  constructor(options: AxMCPMessageChannelOptions) {
    this.endpoint = options.endpoint;
    this.#send = options.send;
    this.#onProtocolError = options.onProtocolError;
  }

  /** True once {@link AxMCPMessageChannel.close} was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** How many requests wait for a response. */
  get pendingCount(): number {
    return this.#pending.size;
  }

  /** Where server requests, notifications and the peer's close go. */
  setHandlers(handlers: AxMCPTransportHandlers): void {
    this.#handlers = handlers;
  }

  /**
   * Sends a request and resolves with the response carrying its id.
   * Rejects with `invalid_argument` if a request with the same id is still in flight,
   * with `aborted` (or `timeout` for `AbortSignal.timeout`) when the signal fires, and
   * with `closed` when the channel closes first.
   */
  request(message: JSONRPCRequest, options: AxMCPChannelSendOptions = {}): Promise<JSONRPCResponse> {
    const { signal } = options;
    if (this.#closed) return Promise.reject(this.#closedError(message.method));
    if (signal?.aborted) return Promise.reject(this.#abortError(message.method, signal));
    const id = message.id;
    if (this.#pending.has(id)) {
      return Promise.reject(
        new AxMCPError(
          'invalid_argument',
          `A request with id ${JSON.stringify(id)} is already in flight to ${this.endpoint}`,
          { endpoint: this.endpoint },
        ),
      );
    }
    this.#abortedIds.delete(id);
    return new Promise<JSONRPCResponse>((resolve, reject) => {
      const entry: PendingRequest = {
        key: this.#nextKey++,
        method: message.method,
        resolve,
        reject,
        signal,
        onAbort: undefined,
      };
      if (signal) {
        entry.onAbort = () => {
          if (this.#pending.get(id) !== entry) return;
          this.#settle(id, entry);
          this.#rememberAborted(id, entry.key);
          reject(this.#abortError(message.method, signal));
        };
        signal.addEventListener('abort', entry.onAbort, { once: true });
      }
      this.#pending.set(id, entry);
      this.#write(message, options).catch((error: unknown) => {
        if (this.#pending.get(id) !== entry) return;
        this.#settle(id, entry);
        this.#answered(entry.key);
        reject(this.#sendError(message.method, error));
      });
    });
  }

  /** Sends a notification. */
  notify(message: JSONRPCNotification, options: AxMCPChannelSendOptions = {}): Promise<void> {
    return this.#sendOneWay(message, message.method, options);
  }

  /** Answers a server-initiated request. */
  respond(message: JSONRPCResponse, options: AxMCPChannelSendOptions = {}): Promise<void> {
    return this.#sendOneWay(message, 'response', options);
  }

  /**
   * Decodes and dispatches one message (or a JSON-RPC batch) received as text.
   * Malformed input is reported through `onProtocolError` and dropped; this never throws.
   */
  receiveText(text: string): void {
    if (this.#closed) return;
    let value: unknown;
    try {
      value = parseUntrustedJSON(text);
    } catch (error) {
      this.#report(this.#attributed(error));
      return;
    }
    this.receive(value);
  }

  /**
   * Validates and dispatches one decoded JSON value: a message or a batch of messages.
   * Malformed input is reported through `onProtocolError` and dropped; this never throws.
   */
  receive(value: unknown): void {
    if (this.#closed) return;
    if (Array.isArray(value)) {
      if (value.length === 0) {
        this.#report(
          new AxMCPProtocolError(RPC.invalidRequest, 'Peer sent an empty JSON-RPC batch', undefined, {
            code: 'invalid_message',
            endpoint: this.endpoint,
          }),
        );
        return;
      }
      for (const item of value) this.#receiveOne(item);
      return;
    }
    this.#receiveOne(value);
  }

  /**
   * Tells the channel that the binding dropped a message unread because it was over its size
   * limit; `prefix` is its start ({@link OVERSIZED_PREFIX_BYTES} suffice). `error` (code
   * `message_too_large`) is reported through `onProtocolError`. When the start shows a response:
   *
   * - with a readable id, the request waiting for it fails at once with code `message_too_large`;
   * - without one, the answer belongs to one of the requests waiting now. It is attributed only
   *   when that is certain — exactly one request could own it (the only one pending, or the last
   *   one left once the others got their answers), or as many could as answers were lost — and
   *   each owner then fails with code `message_too_large`. A request whose answer may still come
   *   is never failed.
   *
   * Never throws.
   */
  dropOversized(prefix: string, error: AxMCPError): void {
    if (this.#closed) return;
    this.#report(error);
    const peeked = peekMessage(prefix);
    if (peeked.kind !== 'response' || peeked.id === null) return;
    if (peeked.id !== undefined) {
      const id = peeked.id;
      const entry = this.#pending.get(id);
      if (entry) {
        this.#settle(id, entry);
        this.#answered(entry.key);
        entry.reject(this.#tooLargeError(entry.method, error));
        return;
      }
      const aborted = this.#abortedIds.get(id);
      if (aborted !== undefined) {
        this.#abortedIds.delete(id);
        this.#answered(aborted);
      }
      return;
    }
    const candidates = [...this.#abortedIds.values()];
    for (const entry of this.#pending.values()) candidates.push(entry.key);
    this.#lost.add(candidates);
    this.#failLost(error);
  }

  /**
   * Closes the channel: every pending request is rejected with an {@link AxMCPTransportError}
   * of code `closed`, later sends reject, later input is ignored. Pass `reason` when the peer
   * ended the connection on its own: it becomes the rejections' `cause` and is handed to
   * {@link AxMCPTransportHandlers.onClose}. Without it (a local close) `onClose` is not called.
   * Idempotent.
   */
  close(reason?: AxMCPError): void {
    if (this.#closed) return;
    this.#closed = true;
    const pending = [...this.#pending];
    this.#pending.clear();
    this.#abortedIds.clear();
    this.#lost.clear();
    for (const [, entry] of pending) {
      this.#detach(entry);
      entry.reject(this.#closedError(entry.method, reason));
    }
    if (reason) {
      try {
        this.#handlers?.onClose?.(reason);
      } catch (error) {
        this.#report(this.#handlerError('onClose', error));
      }
    }
  }

  #receiveOne(value: unknown): void {
    let message: JSONRPCMessage;
    try {
      message = toJSONRPCMessage(value);
    } catch (error) {
      this.#report(this.#attributed(error));
      return;
    }
    if (isResponse(message)) {
      this.#receiveResponse(message);
      return;
    }
    const handlers = this.#handlers;
    if (!handlers) {
      this.#report(
        new AxMCPProtocolError(
          RPC.internalError,
          `Dropped "${clip(message.method)}" from the peer: no handler is set`,
          undefined,
          { endpoint: this.endpoint },
        ),
      );
      return;
    }
    const context: AxMCPMessageContext = {};
    try {
      handlers.onMessage(message, context);
    } catch (error) {
      this.#report(this.#handlerError('onMessage', error));
    }
  }

  #receiveResponse(message: JSONRPCResponse): void {
    const id = message.id;
    if (id === null) {
      const detail = isErrorResponse(message) ? `: ${clip(message.error.message)}` : '';
      this.#report(
        new AxMCPProtocolError(
          isErrorResponse(message) ? message.error.code : RPC.invalidRequest,
          `Peer sent an error response without an id${detail}`,
          isErrorResponse(message) ? message.error.data : undefined,
          { endpoint: this.endpoint },
        ),
      );
      return;
    }
    const entry = this.#pending.get(id);
    if (!entry) {
      // A late answer to a request we stopped waiting for is expected after an abort.
      const aborted = this.#abortedIds.get(id);
      if (aborted !== undefined) {
        this.#abortedIds.delete(id);
        this.#answered(aborted);
        return;
      }
      this.#report(
        new AxMCPProtocolError(
          RPC.invalidRequest,
          `Peer sent a response with unknown id ${clip(JSON.stringify(id))}`,
          undefined,
          { code: 'invalid_message', endpoint: this.endpoint },
        ),
      );
      return;
    }
    this.#settle(id, entry);
    this.#answered(entry.key);
    entry.resolve(message);
  }

  async #sendOneWay(message: JSONRPCMessage, what: string, options: AxMCPChannelSendOptions): Promise<void> {
    const { signal } = options;
    if (this.#closed) throw this.#closedError(what);
    if (signal?.aborted) throw this.#abortError(what, signal);
    try {
      await this.#write(message, options);
    } catch (error) {
      throw this.#sendError(what, error);
    }
  }

  async #write(message: JSONRPCMessage, sending: AxMCPChannelSendOptions): Promise<void> {
    await this.#send(message, sending);
  }

  #settle(id: JSONRPCId, entry: PendingRequest): void {
    this.#pending.delete(id);
    this.#detach(entry);
  }

  #detach(entry: PendingRequest): void {
    if (entry.signal && entry.onAbort) entry.signal.removeEventListener('abort', entry.onAbort);
    entry.onAbort = undefined;
  }

  #rememberAborted(id: JSONRPCId, key: number): void {
    this.#abortedIds.set(id, key);
    if (this.#abortedIds.size > ABORTED_ID_MEMORY) {
      const oldest = this.#abortedIds.keys().next();
      if (!oldest.done) this.#abortedIds.delete(oldest.value);
    }
  }

  /** Request `key` got an answer: it owns none of the lost ones, which may name the owners of those now. */
  #answered(key: number): void {
    if (this.#lost.empty) return;
    this.#lost.answered(key);
    this.#failLost();
  }

  /** Fails the pending requests now certain to have lost their answer. */
  #failLost(reason?: AxMCPError): void {
    const owners = new Set(this.#lost.owners());
    if (owners.size === 0) return;
    for (const [id, entry] of [...this.#pending]) {
      if (!owners.has(entry.key)) continue;
      this.#settle(id, entry);
      entry.reject(this.#tooLargeError(entry.method, reason));
    }
    // An aborted owner has nobody waiting; its answer will not come.
    for (const [id, key] of [...this.#abortedIds]) if (owners.has(key)) this.#abortedIds.delete(id);
  }

  /**
   * Tells of something the binding itself dropped (a frame it could not read), as the channel
   * tells of what it drops. Never throws.
   */
  reportDropped(error: AxMCPError): void {
    this.#report(error);
  }

  #report(error: AxMCPError): void {
    try {
      if (this.#onProtocolError) this.#onProtocolError(error);
      else this.#handlers?.onProtocolError?.(error);
    } catch {
      // A reporting callback must not take the channel down.
    }
  }

  #attributed(error: unknown): AxMCPError {
    if (error instanceof AxMCPError) return error.attribute({ endpoint: this.endpoint });
    return new AxMCPProtocolError(RPC.parseError, 'Peer sent an unreadable message', undefined, {
      code: 'invalid_message',
      endpoint: this.endpoint,
      cause: error,
    });
  }

  #handlerError(which: string, error: unknown): AxMCPError {
    return new AxMCPProtocolError(RPC.internalError, `The transport's ${which} handler threw`, undefined, {
      endpoint: this.endpoint,
      cause: error,
    });
  }

  #closedError(what: string, reason?: AxMCPError): AxMCPTransportError {
    const why = reason ? `: ${reason.message}` : '';
    return new AxMCPTransportError(
      'closed',
      `Connection to ${this.endpoint} closed before "${clip(what)}" completed${why}`,
      {
        endpoint: this.endpoint,
        cause: reason,
      },
    );
  }

  #tooLargeError(what: string, cause: AxMCPError | undefined): AxMCPTransportError {
    const message = cause
      ? `The answer to "${clip(what)}" was dropped unread: ${cause.message}`
      : `The answer to "${clip(what)}" from ${this.endpoint} was too large and was dropped unread`;
    return new AxMCPTransportError('message_too_large', message, { endpoint: this.endpoint, cause });
  }

  #abortError(what: string, signal: AbortSignal): AxMCPError {
    const reason: unknown = signal.reason;
    if (reason instanceof AxMCPError) return reason;
    const timedOut = isTimeoutReason(reason);
    return new AxMCPTimeoutError(
      `"${clip(what)}" to ${this.endpoint} was ${timedOut ? 'timed out' : 'aborted'}`,
      {
        aborted: !timedOut,
        endpoint: this.endpoint,
        cause: reason,
      },
    );
  }

  #sendError(what: string, error: unknown): AxMCPError {
    if (error instanceof AxMCPError) return error.attribute({ endpoint: this.endpoint });
    return new AxMCPTransportError('transport_error', `Could not send "${clip(what)}" to ${this.endpoint}`, {
      endpoint: this.endpoint,
      cause: error,
    });
  }
}

function isTimeoutReason(reason: unknown): boolean {
  return (
    typeof reason === 'object' && reason !== null && (reason as { name?: unknown }).name === 'TimeoutError'
  );
}

/** Keeps server-chosen strings short in error messages. */
function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
