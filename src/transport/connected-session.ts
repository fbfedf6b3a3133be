/**
 * The shared core of transports whose connection is the session: the 2024-11-05 HTTP+SSE
 * transport (the GET stream carries the session) and WebSocket. It opens connections on
 * demand, correlates messages through an {@link AxMCPMessageChannel} per connection, and
 * turns a dropped connection into the same signals the Streamable HTTP transport gives, so
 * the client's recovery (re-`initialize`, restored subscriptions, retried safe requests)
 * works unchanged:
 *
 * - A connection that carried `initialize` holds a legacy session. When it drops, every
 *   later message except a new `initialize` fails with {@link AxMCPSessionExpiredError}
 *   until {@link ConnectedSession.resetSession}; the client then re-initializes.
 * - A connection without a session (2026-07-28 is stateless) is reopened on the next message.
 * - {@link ConnectedSession.openEventStream} gives the client's standalone listener a stream
 *   that ends when the connection drops, so it notices at once and restores the session.
 *
 * Isomorphic: no `node:` imports.
 */

import { raceAbort } from '../protocol/abort.js';
import { AxMCPSessionExpiredError, AxMCPTransportError } from '../protocol/errors.js';
import type { JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '../protocol/jsonrpc.js';
import type { AxMCPMessageChannel } from './message-channel.js';
import type {
  AxMCPEventStream,
  AxMCPSendOptions,
  AxMCPStreamMessage,
  AxMCPTransportHandlers,
} from './types.js';

/** One open connection, as a binding reports it to {@link ConnectedSession}. */
export interface SessionConnection {
  /** Correlates this connection's messages; the binding closes it (with a reason) when the peer ends. */
  readonly channel: AxMCPMessageChannel;
  /** A name for the session this connection carries (SSE: the server's `sessionId`), for recovery bookkeeping. */
  readonly sessionId: string;
  /** Settles when the connection ended, for any reason. */
  readonly ended: Promise<void>;
  /** Closes the connection locally; pending requests reject with code `closed`. */
  close(): void;
}

/** How {@link ConnectedSession} opens connections. */
export interface ConnectedSessionOptions {
  endpoint: string;
  /** Opens one connection; rejects with a typed error. The signal aborts the opening. */
  open(signal: AbortSignal): Promise<SessionConnection>;
  /** How long the listener waits before restoring a dropped session (default 100 ms). */
  reconnectDelayMs?: number;
}

interface Live {
  connection: SessionConnection;
  /** `initialize` went over this connection: it holds a legacy session. */
  session: boolean;
  ended: boolean;
}

/** See the module comment. */
export class ConnectedSession {
  readonly #options: ConnectedSessionOptions;
  readonly #closing = new AbortController();
  #handlers: AxMCPTransportHandlers | undefined;
  #live: Live | undefined;
  #opening: Promise<Live> | undefined;
  /** The session of a connection that dropped, until `resetSession()` or a new `initialize`. */
  #lost: string | undefined;

  constructor(options: ConnectedSessionOptions) {
    this.#options = options;
  }

  /** The session name of the current connection, if one is open. */
  get sessionId(): string | undefined {
    const live = this.#live;
    return live && !live.ended ? live.connection.sessionId : undefined;
  }

  /** True once {@link ConnectedSession.close} was called. */
  get closed(): boolean {
    return this.#closing.signal.aborted;
  }

  setHandlers(handlers: AxMCPTransportHandlers): void {
    this.#handlers = handlers;
    if (this.#live) this.#live.connection.channel.setHandlers(handlers);
  }

  /** Opens a connection unless one is open. Idempotent. */
  async start(signal?: AbortSignal): Promise<void> {
    await this.#connection(signal);
  }

  async request(message: JSONRPCRequest, options: AxMCPSendOptions = {}): Promise<JSONRPCResponse> {
    const initialize = message.method === 'initialize';
    if (initialize) this.#lost = undefined;
    const live = await this.#ready(message.method, options.signal);
    if (initialize) live.session = true;
    return live.connection.channel.request(message, withSignal(options.signal));
  }

  async notify(message: JSONRPCNotification, options: AxMCPSendOptions = {}): Promise<void> {
    const live = await this.#ready(message.method, options.signal);
    await live.connection.channel.notify(message, withSignal(options.signal));
  }

  async respond(message: JSONRPCResponse, options: AxMCPSendOptions = {}): Promise<void> {
    const live = await this.#ready('response', options.signal);
    await live.connection.channel.respond(message, withSignal(options.signal));
  }

  /** Forgets the session: the current connection is closed and the next message opens a fresh one. */
  resetSession(): void {
    this.#lost = undefined;
    const live = this.#live;
    this.#live = undefined;
    live?.connection.close();
  }

  /**
   * A stream that carries no messages (they reach the handlers directly) and ends when the
   * connection drops. Fails with {@link AxMCPSessionExpiredError} once the session is lost,
   * which is the client listener's cue to re-initialize and restore subscriptions.
   */
  async openEventStream(options: { signal: AbortSignal }): Promise<AxMCPEventStream> {
    const live = await this.#ready('the event stream', options.signal);
    const retryMs = this.#options.reconnectDelayMs ?? 100;
    const closing = this.#closing.signal;
    async function* watch(): AsyncGenerator<AxMCPStreamMessage> {
      await new Promise<void>((resolve) => {
        const done = () => {
          options.signal.removeEventListener('abort', done);
          closing.removeEventListener('abort', done);
          resolve();
        };
        options.signal.addEventListener('abort', done, { once: true });
        closing.addEventListener('abort', done, { once: true });
        live.connection.ended.then(done, done);
      });
    }
    return { messages: watch(), retryMs, lastEventId: undefined };
  }

  /** Closes the current connection; pending requests reject with code `closed`. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.#closing.abort(new AxMCPTransportError('closed', 'The transport was closed', this.#where()));
    await this.#opening?.catch(() => undefined);
    const live = this.#live;
    this.#live = undefined;
    live?.connection.close();
    await live?.connection.ended;
  }

  #ready(what: string, signal: AbortSignal | undefined): Promise<Live> {
    if (this.closed) return Promise.reject(this.#closedError(what));
    if (this.#lost !== undefined) {
      return Promise.reject(
        new AxMCPSessionExpiredError(
          `The connection to ${this.#options.endpoint} dropped, and its session with it`,
          {
            ...this.#where(),
            sessionId: this.#lost,
          },
        ),
      );
    }
    return this.#connection(signal);
  }

  #connection(signal: AbortSignal | undefined): Promise<Live> {
    if (this.closed) return Promise.reject(this.#closedError('connecting'));
    const live = this.#live;
    if (live && !live.ended) return Promise.resolve(live);
    this.#opening ??= this.#open().finally(() => {
      this.#opening = undefined;
    });
    return raceAbort(
      this.#opening,
      signal,
      `Connecting to ${this.#options.endpoint}`,
      this.#options.endpoint,
    );
  }

  async #open(): Promise<Live> {
    const connection = await this.#options.open(this.#closing.signal);
    if (this.closed) {
      connection.close();
      throw this.#closedError('connecting');
    }
    const live: Live = { connection, session: false, ended: false };
    if (this.#handlers) connection.channel.setHandlers(this.#handlers);
    this.#live = live;
    connection.ended.then(() => {
      live.ended = true;
      if (this.#live !== live) return;
      this.#live = undefined;
      if (live.session && !this.closed) this.#lost = connection.sessionId;
    });
    return live;
  }

  #where(): { endpoint: string } {
    return { endpoint: this.#options.endpoint };
  }

  #closedError(what: string): AxMCPTransportError {
    return new AxMCPTransportError(
      'closed',
      `${this.#options.endpoint}: the transport is closed (${what})`,
      this.#where(),
    );
  }
}

function withSignal(signal: AbortSignal | undefined): { signal?: AbortSignal } {
  return signal ? { signal } : {};
}
