import { instance } from '../options/check.js';
import type { AxMCPError } from '../protocol/errors.js';
import type { JSONRPCId, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '../protocol/jsonrpc.js';
import type { AxMCPEra } from '../protocol/versions.js';

/** Where a server-initiated message came from, for attribution and dedupe. */
export interface AxMCPMessageContext {
  /** The SSE event id the message arrived with, if any. */
  eventId?: string;
  /** The request whose stream carried the message, if it was not the standalone stream. */
  relatedRequestId?: JSONRPCId;
}

/** Callbacks a transport uses to hand server-initiated traffic to the client. */
export interface AxMCPTransportHandlers {
  /**
   * A notification, or a request the client must answer with {@link AxMCPTransport.respond}.
   * Must not throw and must not block: the client only enqueues here.
   */
  onMessage(message: JSONRPCRequest | JSONRPCNotification, context: AxMCPMessageContext): void;
  /** The connection ended on its own (process exit, socket close), with the reason if known. */
  onClose?(error?: AxMCPError): void;
  /**
   * Told of what the transport received and dropped as malformed (a frame that is not JSON-RPC,
   * a message over the size limit) when the transport's own `onProtocolError` option is not set.
   * The client passes it to its `onError`. Must not throw.
   */
  onProtocolError?(error: AxMCPError): void;
}

/** Per-message options. */
export interface AxMCPSendOptions {
  signal?: AbortSignal;
  /**
   * Extra HTTP headers for this one message (the 2026-07-28 `Mcp-*` headers).
   * Transports without headers ignore them.
   */
  headers?: Record<string, string>;
  /**
   * The request is safe to send again after an uncertain outcome (reads, lists, ping).
   * Transports retry transient failures only for such requests; never for `tools/call`.
   */
  idempotent?: boolean;
  /** Told the HTTP status of the exchange (era classification reads it); other transports never call it. */
  onStatus?: (status: number) => void;
}

/** One message of a standalone server → client stream. */
export interface AxMCPStreamMessage {
  message: JSONRPCRequest | JSONRPCNotification;
  eventId?: string;
}

/** A standalone server → client stream (the legacy HTTP GET stream). */
export interface AxMCPEventStream {
  /** Messages until the stream ends; iterating ends when the server closes it. */
  messages: AsyncIterable<AxMCPStreamMessage>;
  /**
   * Optional, instead of iterating `messages` (a stream is read one way or the other, never
   * both): hands every message to `onMessage` synchronously as it arrives and settles when the
   * stream ends, like the iteration would. Saves a transport that receives messages in bursts
   * one `await` per message.
   */
  consume?(
    onMessage: (message: AxMCPStreamMessage['message'], eventId: string | undefined) => void,
  ): Promise<void>;
  /** The server's `retry:` hint, once seen. */
  readonly retryMs: number | undefined;
  /** The last SSE event id seen, to resume with. */
  readonly lastEventId: string | undefined;
}

/**
 * The interface a caller implements to carry MCP over its own binding.
 *
 * A transport moves JSON-RPC messages and knows nothing of catalogs or subscriptions.
 * The client assigns request ids; the transport correlates each request with its
 * response and hands everything else to {@link AxMCPTransportHandlers.onMessage}.
 *
 * @example
 * ```ts
 * const transport: AxMCPTransport = {
 *   kind: 'custom', endpoint: 'my-bus', endpointKey: 'my-bus://server-a',
 *   setHandlers(h) { bus.onServerMessage = (m) => h.onMessage(m, {}); },
 *   request: (m, o) => bus.call(m, o?.signal),
 *   notify: (m) => bus.send(m),
 *   respond: (m) => bus.send(m),
 *   close: () => bus.close(),
 * };
 * ```
 */
export interface AxMCPTransport {
  /** What kind of binding this is; `stdio` and `http` change how the era is probed. */
  readonly kind: 'http' | 'stdio' | 'websocket' | 'sse' | 'custom';
  /** A human-readable endpoint for errors, with no credentials. */
  readonly endpoint: string;
  /** A stable key for this endpoint (the full URL for HTTP), used to remember its era. */
  readonly endpointKey: string;
  /**
   * True when no server is behind this transport: it plays back recorded traffic, so calls
   * through it have no side effects (evaluation runs programs over such transports by default).
   */
  readonly replaysRecording?: boolean;

  setHandlers(handlers: AxMCPTransportHandlers): void;

  /** Opens the connection if the binding has one (spawns the process for stdio). Idempotent. */
  start?(signal?: AbortSignal): Promise<void>;

  /** Sends a request and resolves with its response (a JSON-RPC error response is a resolved value). */
  request(message: JSONRPCRequest, options?: AxMCPSendOptions): Promise<JSONRPCResponse>;

  /** Sends a notification. */
  notify(message: JSONRPCNotification, options?: AxMCPSendOptions): Promise<void>;

  /** Answers a server-initiated request. */
  respond(message: JSONRPCResponse, options?: AxMCPSendOptions): Promise<void>;

  /** Tells the transport the negotiated protocol version (HTTP sends it as a header). */
  setProtocolVersion?(version: string | undefined): void;

  /** The legacy session id currently held, if the binding has sessions. */
  readonly sessionId?: string | undefined;

  /** Forgets the legacy session after the server lost it, so the next `initialize` starts fresh. */
  resetSession?(): void;

  /** Ends the legacy session on the server (HTTP `DELETE`). */
  terminateSession?(signal?: AbortSignal): Promise<void>;

  /**
   * Opens the standalone server → client stream (legacy HTTP GET), resuming after
   * `lastEventId` when given. Resolves `null` when the server offers none (405).
   */
  openEventStream?(options: { signal: AbortSignal; lastEventId?: string }): Promise<AxMCPEventStream | null>;

  /**
   * The era this binding fixes (a replay of a recording, or a transport that predates
   * `server/discover`); classification then sends no probe.
   */
  readonly eraHint?: AxMCPEra;

  /**
   * Called when an HTTP endpoint refused both Streamable HTTP eras (400/404/405): switch to
   * the 2024-11-05 HTTP+SSE transport if allowed. True when the switch happened.
   */
  fallBackToLegacySSE?(): boolean | Promise<boolean>;

  /** Releases every socket, stream, timer and process. Idempotent. */
  close(): Promise<void>;
}

/** The shape of an {@link AxMCPTransport} handed to a wrapper: an object with its functions. */
export const TRANSPORT = instance(
  'an AxMCPTransport { setHandlers, request, notify, respond, close }',
  (value) => {
    if (typeof value !== 'object' || value === null) return false;
    const transport = value as Record<string, unknown>;
    return ['setHandlers', 'request', 'notify', 'respond', 'close'].every(
      (name) => typeof transport[name] === 'function',
    );
  },
);
