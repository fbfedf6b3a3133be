import type { JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '../protocol/jsonrpc.js';
import { ConnectedSession, type SessionConnection } from './connected-session.js';
import type { AxMCPReconnectOptions } from './session-loss.js';
import type { AxMCPEventStream, AxMCPSendOptions, AxMCPTransportHandlers } from './types.js';

/**
 * What the transports whose connection is the session (HTTP+SSE, WebSocket) have in common:
 * every {@link AxMCPTransport} call goes to one {@link ConnectedSession}; a subclass only says
 * how to open a connection ({@link openConnection}).
 */
export abstract class ConnectedTransport {
  abstract readonly endpoint: string;
  /** The backoff between reconnects, read once, on first use. */
  protected abstract readonly reconnect: AxMCPReconnectOptions | undefined;
  #session: ConnectedSession | undefined;

  // Created on first use: a subclass sets `endpoint` in its constructor, after this one ran.
  get #connected(): ConnectedSession {
    this.#session ??= new ConnectedSession({
      endpoint: this.endpoint,
      open: (closing) => this.openConnection(closing),
      ...(this.reconnect ? { reconnect: this.reconnect } : {}),
    });
    return this.#session;
  }

  /** Opens one connection; `closing` aborts when the transport closes. */
  protected abstract openConnection(closing: AbortSignal): Promise<SessionConnection>;

  /**
   * The current connection's session id (the server's, or a local name when it gave none);
   * after the connection dropped, the lost session's, until a new `initialize` succeeded.
   */
  get sessionId(): string | undefined {
    return this.#connected.sessionId;
  }

  setHandlers(handlers: AxMCPTransportHandlers): void {
    this.#connected.setHandlers(handlers);
  }

  /** Connects now rather than on the first message. Idempotent. */
  start(signal?: AbortSignal): Promise<void> {
    return this.#connected.start(signal);
  }

  request(message: JSONRPCRequest, options?: AxMCPSendOptions): Promise<JSONRPCResponse> {
    return this.#connected.request(message, options);
  }

  notify(message: JSONRPCNotification, options?: AxMCPSendOptions): Promise<void> {
    return this.#connected.notify(message, options);
  }

  respond(message: JSONRPCResponse, options?: AxMCPSendOptions): Promise<void> {
    return this.#connected.respond(message, options);
  }

  /** Gives up the current session; the next `initialize` goes over a new connection. */
  resetSession(): void {
    this.#connected.resetSession();
  }

  /**
   * A stream that ends when the connection drops (server messages reach the handlers directly);
   * fails with `session_expired` while a dropped session is not restored.
   */
  openEventStream(options: { signal: AbortSignal }): Promise<AxMCPEventStream> {
    return this.#connected.openEventStream(options);
  }

  /** Closes the connection; pending requests reject with code `closed`. Idempotent. */
  close(): Promise<void> {
    return this.#connected.close();
  }
}
