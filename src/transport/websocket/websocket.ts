/**
 * MCP over WebSocket: one JSON-RPC message per text frame, subprotocol `mcp`.
 * Uses the runtime's `WebSocket` (browsers, Deno, Bun, Node ≥ 22) or a constructor the
 * caller passes (`ws` on Node 20). Isomorphic: no `node:` imports.
 */

import {
  type AxMCPSSRFOptions,
  type AxMCPSSRFPolicy,
  assertURLAllowed,
  redactURL,
  resolveSSRFPolicy,
  SSRF_PROTECTION,
} from '../../net/ssrf.js';
import { anyOf, array, func, number, object, string } from '../../options/check.js';
import { linkAbort } from '../../protocol/abort.js';
import {
  type AxMCPError,
  AxMCPSSRFError,
  AxMCPTransportError,
  assertMCPOptions,
} from '../../protocol/errors.js';
import type { JSONRPCMessage } from '../../protocol/jsonrpc.js';
import type { SessionConnection } from '../connected-session.js';
import { ConnectedTransport } from '../connected-transport.js';
import { endpointURL } from '../endpoint-url.js';
import { AxMCPMessageChannel, OVERSIZED_PREFIX_BYTES } from '../message-channel.js';
import { type AxMCPReconnectOptions, RECONNECT_OPTIONS } from '../session-loss.js';
import type { AxMCPTransport } from '../types.js';

/** An event handler property, compared bivariantly so that runtime-specific event types fit. */
type AxMCPSocketHandler<E> = { handle(event: E): void }['handle'];

/** The part of the WHATWG `WebSocket` this transport uses; `ws`'s `WebSocket` satisfies it. */
export interface AxMCPWebSocketLike {
  readonly readyState: number;
  readonly protocol: string;
  binaryType: string;
  onopen: AxMCPSocketHandler<unknown> | null;
  onmessage: AxMCPSocketHandler<{ data: unknown }> | null;
  onerror: AxMCPSocketHandler<unknown> | null;
  onclose: AxMCPSocketHandler<{ code: number; reason: unknown }> | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

/** A `WebSocket` constructor: the global one, or `ws`'s. */
export type AxMCPWebSocketConstructor = new (
  url: string,
  protocols?: string | string[],
) => AxMCPWebSocketLike;

/** Options of {@link AxMCPWebSocketTransport}. */
export interface AxMCPWebSocketTransportOptions {
  /** Subprotocols to offer (default `['mcp']`); the server must pick one of them. */
  protocols?: string | string[];
  /** The constructor to use (default: the global `WebSocket`). Pass `ws`'s `WebSocket` on Node 20. */
  WebSocket?: AxMCPWebSocketConstructor;
  /** SSRF protection (default on): `wss:` only, no loopback or private addresses. */
  ssrfProtection?: boolean | AxMCPSSRFOptions;
  /** Time allowed for the opening handshake, ms (default 30 000). */
  openTimeoutMs?: number;
  /**
   * The largest message accepted or sent, in bytes (default 16 MiB). A larger incoming frame is
   * dropped; when it was the answer to a pending request, that request fails with code
   * `message_too_large` at once.
   */
  maxMessageBytes?: number;
  /**
   * Called with what the transport drops: frames that are not JSON-RPC, oversized frames, stray
   * responses. Without it, the client's `onError` is told.
   */
  onProtocolError?: (error: AxMCPError) => void;
  /** The backoff between reconnects after the socket dropped: from 100 ms (`baseDelayMs`), doubling, up to 10 s (`maxDelayMs`). */
  reconnect?: AxMCPReconnectOptions;
}

/** The shape of {@link AxMCPWebSocketTransportOptions}, every key of it; checked once in the constructor. */
const WEBSOCKET_OPTIONS = object(
  {
    protocols: anyOf(string({ nonEmpty: true }), array(string({ nonEmpty: true }))),
    WebSocket: func("a WebSocket constructor (the global WebSocket, or the ws package's)"),
    ssrfProtection: SSRF_PROTECTION,
    openTimeoutMs: number({ min: 1 }),
    maxMessageBytes: number({ integer: true, min: 1 }),
    onProtocolError: func('a function (error) => void'),
    reconnect: RECONNECT_OPTIONS,
  },
  {
    expected: 'an options object { protocols?, WebSocket?, ssrfProtection?, … }',
    aliases: {
      subprotocols: 'protocols',
      protocol: 'protocols',
      ws: 'WebSocket',
      webSocket: 'WebSocket',
      websocket: 'WebSocket',
      ssrf: 'ssrfProtection',
      timeoutMs: 'openTimeoutMs',
      timeout: 'openTimeoutMs',
      maxBytes: 'maxMessageBytes',
      onError: 'onProtocolError',
      reconnection: 'reconnect',
      backoff: 'reconnect',
    },
  },
);

const OPEN = 1;
const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;
const utf8 = new TextDecoder('utf-8');

/**
 * An {@link AxMCPTransport} over WebSocket (`kind: 'websocket'`).
 *
 * Ids are the client's (unique per client); a pending request rejects with code `closed` when
 * the socket closes. If the socket drops, the next message (or the client's listener)
 * reconnects, with capped, jittered backoff: a legacy session (one that carried `initialize`)
 * is reported lost (`session_expired`) until it is initialized again, so the client
 * re-initializes once, restores its subscriptions and retries safe requests — a safe request
 * that was in flight included — as it does over Streamable HTTP; a `tools/call` in flight is
 * never sent again. A stateless 2026-07-28 conversation just goes on.
 *
 * @example
 * ```ts
 * import { WebSocket } from 'ws'; // Node 20; elsewhere omit the option
 * const transport = new AxMCPWebSocketTransport('wss://mcp.example.com/ws', { WebSocket });
 * const client = new AxMCPClient(transport, { namespace: 'example' });
 * ```
 */
export class AxMCPWebSocketTransport extends ConnectedTransport implements AxMCPTransport {
  readonly kind = 'websocket' as const;
  readonly endpoint: string;
  readonly endpointKey: string;

  readonly #url: URL;
  readonly #options: AxMCPWebSocketTransportOptions;
  readonly #maxBytes: number;
  readonly #ssrf: AxMCPSSRFPolicy;
  protected readonly reconnect: AxMCPReconnectOptions | undefined;
  #connections = 0;

  constructor(url: string | URL, options: AxMCPWebSocketTransportOptions = {}) {
    super();
    assertMCPOptions(WEBSOCKET_OPTIONS, options, 'AxMCPWebSocketTransport options');
    this.#url = endpointURL(url, 'AxMCPWebSocketTransport', ['ws:', 'wss:']);
    this.#url.hash = '';
    this.endpoint = redactURL(this.#url).replace('?…', '');
    this.endpointKey = this.#url.href;
    this.#options = options;
    this.#maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_BYTES;
    this.#ssrf = resolveSSRFPolicy(options.ssrfProtection ?? true);
    this.reconnect = options.reconnect;
  }

  protected async openConnection(closing: AbortSignal): Promise<SessionConnection> {
    const Ctor =
      this.#options.WebSocket ?? (globalThis as { WebSocket?: AxMCPWebSocketConstructor }).WebSocket;
    if (!Ctor) {
      throw new AxMCPTransportError(
        'transport_error',
        'This runtime has no global WebSocket: pass one as the `WebSocket` option (for example from the `ws` package)',
        { endpoint: this.endpoint },
      );
    }
    const asHTTP = new URL(this.#url);
    asHTTP.protocol = this.#url.protocol === 'wss:' ? 'https:' : 'http:';
    try {
      await assertURLAllowed(asHTTP, this.#ssrf);
    } catch (error) {
      // The rules are HTTP's; the refusal names the URL the caller gave.
      if (!(error instanceof AxMCPSSRFError)) throw error;
      throw new AxMCPSSRFError(redactURL(this.#url), error.reason, {
        endpoint: this.endpoint,
        cause: error,
        ...(error.allowWith ? { allowWith: error.allowWith } : {}),
      });
    }
    const protocols = this.#options.protocols ?? ['mcp'];
    const socket = new Ctor(this.#url.href, protocols);
    socket.binaryType = 'arraybuffer';
    const sessionId = `ws-${++this.#connections}`;
    let localClose = false;
    let markEnded!: () => void;
    const ended = new Promise<void>((resolve) => {
      markEnded = resolve;
    });
    const channel = new AxMCPMessageChannel({
      endpoint: this.endpoint,
      send: (message) => this.#send(socket, message),
      ...(this.#options.onProtocolError
        ? { onProtocolError: (error: AxMCPError) => this.#options.onProtocolError?.(error) }
        : {}),
    });
    await this.#opened(socket, closing);
    socket.onmessage = (event) => {
      const text = this.#text(event.data, channel);
      if (text !== undefined) channel.receiveText(text);
    };
    socket.onerror = () => undefined;
    socket.onclose = (event) => {
      if (!localClose) {
        const reason =
          typeof event.reason === 'string' && event.reason ? `: ${event.reason.slice(0, 200)}` : '';
        channel.close(
          new AxMCPTransportError('stream_ended', `The WebSocket closed (code ${event.code}${reason})`, {
            endpoint: this.endpoint,
          }),
        );
      }
      markEnded();
    };
    return {
      channel,
      sessionId,
      ended,
      close: () => {
        if (localClose) return;
        localClose = true;
        channel.close();
        try {
          socket.close(1000, 'client closed');
        } catch {
          markEnded();
        }
      },
    };
  }

  /** Resolves once the handshake completed; rejects (and closes the socket) on failure, timeout or abort. */
  #opened(socket: AxMCPWebSocketLike, closing: AbortSignal): Promise<void> {
    const link = linkAbort(closing);
    const timeoutMs = this.#options.openTimeoutMs ?? 30_000;
    return new Promise<void>((resolve, reject) => {
      const fail = (error: AxMCPTransportError) => {
        clearTimeout(timer);
        link.dispose();
        socket.onopen = socket.onerror = socket.onclose = null;
        try {
          socket.close();
        } catch {
          // Closing a socket that never opened may throw in some runtimes.
        }
        reject(error);
      };
      const timer = setTimeout(
        () =>
          fail(
            this.#error(
              `The WebSocket handshake took longer than ${timeoutMs} ms (the openTimeoutMs option)`,
            ),
          ),
        timeoutMs,
      );
      link.signal.addEventListener(
        'abort',
        () => fail(this.#error('Opening the WebSocket was aborted', 'closed')),
        {
          once: true,
        },
      );
      // Node's `ws` puts the system error (ECONNREFUSED, ENOTFOUND, a TLS failure) on the event;
      // browsers give none. Kept as the cause, so a caller can say why.
      socket.onerror = (event) =>
        fail(
          this.#error(`Could not open a WebSocket to ${this.endpoint}`, 'transport_error', {
            cause: (event as { error?: unknown }).error,
          }),
        );
      socket.onclose = (event) =>
        fail(this.#error(`The WebSocket closed during the handshake (code ${event.code})`));
      socket.onopen = () => {
        clearTimeout(timer);
        link.dispose();
        const offered = this.#options.protocols ?? ['mcp'];
        const list = typeof offered === 'string' ? [offered] : offered;
        if (list.length > 0 && !list.includes(socket.protocol)) {
          fail(
            this.#error(
              `The server chose subprotocol "${socket.protocol.slice(0, 40)}", not one of ${list.join(', ')}`,
            ),
          );
          return;
        }
        resolve();
      };
    });
  }

  #send(socket: AxMCPWebSocketLike, message: JSONRPCMessage): void {
    const text = JSON.stringify(message);
    if (text.length > this.#maxBytes / 3 && new TextEncoder().encode(text).byteLength > this.#maxBytes) {
      throw new AxMCPTransportError(
        'message_too_large',
        `A message to ${this.endpoint} is over ${this.#maxBytes} bytes (the maxMessageBytes option)`,
        {
          endpoint: this.endpoint,
        },
      );
    }
    if (socket.readyState !== OPEN) throw this.#error('The WebSocket is not open', 'closed');
    socket.send(text);
  }

  /** A frame as text, or undefined (reported) when it is too large or not text. */
  #text(data: unknown, channel: AxMCPMessageChannel): string | undefined {
    let size: number;
    let text: string | undefined;
    if (typeof data === 'string') {
      size = data.length;
      text = data;
    } else if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) {
      size = data.byteLength;
    } else {
      channel.reportDropped(this.#error('Dropped a WebSocket frame that is neither text nor bytes'));
      return undefined;
    }
    if (size > this.#maxBytes) {
      // Only its start is read: enough to tell whose answer it was.
      const prefix =
        text !== undefined
          ? text.slice(0, OVERSIZED_PREFIX_BYTES)
          : utf8.decode(bytesOf(data as ArrayBuffer | ArrayBufferView, OVERSIZED_PREFIX_BYTES));
      channel.dropOversized(
        prefix,
        new AxMCPTransportError(
          'message_too_large',
          `Dropped a WebSocket message over ${this.#maxBytes} bytes (the maxMessageBytes option)`,
          {
            endpoint: this.endpoint,
          },
        ),
      );
      return undefined;
    }
    if (text !== undefined) return text;
    return utf8.decode(bytesOf(data as ArrayBuffer | ArrayBufferView));
  }

  #error(
    message: string,
    code: 'transport_error' | 'closed' = 'transport_error',
    context: { cause?: unknown } = {},
  ): AxMCPTransportError {
    return new AxMCPTransportError(code, message, {
      endpoint: this.endpoint,
      ...(context.cause === undefined ? {} : { cause: context.cause }),
    });
  }
}

/** The bytes of a binary frame (at most `limit` of them), without copying. */
function bytesOf(data: ArrayBuffer | ArrayBufferView, limit = Number.POSITIVE_INFINITY): Uint8Array {
  const view =
    data instanceof ArrayBuffer
      ? new Uint8Array(data)
      : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return view.byteLength > limit ? view.subarray(0, limit) : view;
}
