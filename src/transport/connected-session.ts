/**
 * The shared core of transports whose connection is the session: the 2024-11-05 HTTP+SSE
 * transport (the GET stream carries the session) and WebSocket. It opens connections on
 * demand, correlates messages through an {@link AxMCPMessageChannel} per connection, and
 * reports a dropped connection the way the Streamable HTTP transport reports a lost session
 * (see {@link SessionLoss}), so the client's one recovery — re-`initialize` once for every
 * waiter, restore subscriptions, retry safe requests — works unchanged:
 *
 * - A connection that carried `initialize` holds a legacy session. When it drops, every later
 *   message except a new `initialize` fails with {@link AxMCPSessionExpiredError} (and
 *   `sessionId` still names the lost session) until an `initialize` over a new connection
 *   succeeded; safe requests in flight fail with the same error, others with code `closed`.
 * - A connection without a session (2026-07-28 is stateless) is reopened on the next message.
 * - New connections after a drop are spaced by capped, jittered backoff.
 * - {@link ConnectedSession.openEventStream} gives the client's standalone listener a stream
 *   that ends when the connection drops, so it notices at once and restores the session.
 *
 * Isomorphic: no `node:` imports.
 */

import { raceAbort } from '../protocol/abort.js';
import { AxMCPTransportError } from '../protocol/errors.js';
import type { JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '../protocol/jsonrpc.js';
import type { AxMCPChannelSendOptions, AxMCPMessageChannel } from './message-channel.js';
import {
  type AxMCPReconnectOptions,
  endedByPeer,
  type SessionEnd,
  SessionLoss,
  streamUntilEnded,
} from './session-loss.js';
import type { AxMCPEventStream, AxMCPSendOptions, AxMCPTransportHandlers } from './types.js';

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
  /** The backoff between reconnects. */
  reconnect?: AxMCPReconnectOptions;
}

interface Live {
  connection: SessionConnection;
  /** `initialize` went over this connection: it holds a legacy session. */
  session: boolean;
  /** Set once the connection stopped carrying its session: `reset` before closing it, `dropped` when the peer ended it. */
  end: SessionEnd | undefined;
}

/** See the module comment. */
export class ConnectedSession {
  readonly #options: ConnectedSessionOptions;
  readonly #closing = new AbortController();
  readonly #loss: SessionLoss;
  #handlers: AxMCPTransportHandlers | undefined;
  #live: Live | undefined;
  #opening: Promise<Live> | undefined;

  constructor(options: ConnectedSessionOptions) {
    this.#options = options;
    this.#loss = new SessionLoss(options.endpoint, options.reconnect);
  }

  /** The session of the current connection; while a dropped session is not restored, that one. */
  get sessionId(): string | undefined {
    const live = this.#current();
    return this.#loss.lost ?? live?.connection.sessionId;
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
    const live = await this.#ready(message.method, options.signal, initialize);
    if (initialize) live.session = true;
    let response: JSONRPCResponse;
    try {
      const sending = withSignal(options.signal);
      if (options.idempotent) sending.idempotent = true;
      response = await live.connection.channel.request(message, sending);
    } catch (error) {
      if (this.closed) throw error;
      // The peer ended the connection: note it now, before the client looks at `sessionId`.
      if (endedByPeer(error)) this.#dropped(live);
      throw this.#loss.inFlightError(
        error,
        { method: message.method, idempotent: options.idempotent },
        { session: live.session ? live.connection.sessionId : undefined, end: live.end },
      );
    }
    this.#loss.succeeded();
    if (initialize && !('error' in response) && !live.end) this.#loss.restored();
    return response;
  }

  async notify(message: JSONRPCNotification, options: AxMCPSendOptions = {}): Promise<void> {
    const live = await this.#ready(message.method, options.signal, false);
    await live.connection.channel.notify(message, withSignal(options.signal));
  }

  async respond(message: JSONRPCResponse, options: AxMCPSendOptions = {}): Promise<void> {
    const live = await this.#ready('response', options.signal, false);
    await live.connection.channel.respond(message, withSignal(options.signal));
  }

  /**
   * Gives up the current session: a connection that carries one is closed, and until a new
   * `initialize` succeeded other messages fail with {@link AxMCPSessionExpiredError}. A
   * connection without a session is kept (the next `initialize` goes over it).
   */
  resetSession(): void {
    const live = this.#current();
    if (!live?.session) return;
    live.end = 'reset';
    this.#live = undefined;
    this.#loss.forget(live.connection.sessionId);
    live.connection.close();
  }

  /**
   * A stream that carries no messages (they reach the handlers directly) and ends when the
   * connection ends. Fails with {@link AxMCPSessionExpiredError} while the session is lost,
   * which is the client listener's cue to re-initialize and restore subscriptions.
   */
  async openEventStream(options: { signal: AbortSignal }): Promise<AxMCPEventStream> {
    const live = await this.#ready('the event stream', options.signal, false);
    return streamUntilEnded(live.connection.ended, options.signal, this.#closing.signal);
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

  #ready(what: string, signal: AbortSignal | undefined, initialize: boolean): Promise<Live> {
    if (this.closed) return Promise.reject(this.#closedError(what));
    this.#current();
    if (!initialize && this.#loss.lost !== undefined) return Promise.reject(this.#loss.expired(what));
    return this.#connection(signal);
  }

  /** The open connection, if any; one whose channel the peer closed counts as dropped at once. */
  #current(): Live | undefined {
    const live = this.#live;
    if (!live || live.end) return undefined;
    if (!live.connection.channel.closed) return live;
    this.#dropped(live);
    return undefined;
  }

  #connection(signal: AbortSignal | undefined): Promise<Live> {
    if (this.closed) return Promise.reject(this.#closedError('connecting'));
    const live = this.#current();
    if (live) return Promise.resolve(live);
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
    await this.#loss.turn(this.#closing.signal);
    let connection: SessionConnection;
    try {
      connection = await this.#options.open(this.#closing.signal);
    } catch (error) {
      if (!this.closed) this.#loss.openFailed();
      throw error;
    }
    if (this.closed) {
      connection.close();
      throw this.#closedError('connecting');
    }
    const live: Live = { connection, session: false, end: undefined };
    if (this.#handlers) connection.channel.setHandlers(this.#handlers);
    this.#live = live;
    connection.ended.then(() => this.#dropped(live));
    return live;
  }

  /** The connection ended on its own (a local close marked it first, so this does nothing then). */
  #dropped(live: Live): void {
    if (live.end) return;
    live.end = 'dropped';
    if (this.#live === live) this.#live = undefined;
    if (this.closed) return;
    this.#loss.dropped(live.session ? live.connection.sessionId : undefined);
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

function withSignal(signal: AbortSignal | undefined): AxMCPChannelSendOptions {
  return signal ? { signal } : {};
}
