/**
 * Streamable HTTP with a permitted fallback to the deprecated 2024-11-05 HTTP+SSE
 * transport, for endpoints whose era is unknown. Isomorphic: no `node:` imports.
 */

import { anyOf, boolean, instance, object, required, string } from '../../options/check.js';
import { AxMCPProtocolError, assertMCPOptions } from '../../protocol/errors.js';
import type { JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '../../protocol/jsonrpc.js';
import { endpointURL } from '../endpoint-url.js';
import {
  AxMCPStreamableHTTPTransport,
  type AxMCPStreamableHTTPTransportOptions,
  HTTP_TRANSPORT_ALIASES,
  STREAMABLE_HTTP_OPTIONS,
  withOAuthStrategy,
} from '../http/streamable-http.js';
import type { AxMCPEventStream, AxMCPSendOptions, AxMCPTransport, AxMCPTransportHandlers } from '../types.js';
import { AxMCPHTTPSSETransport, type AxMCPHTTPSSETransportOptions } from './http-sse.js';

/** Options of {@link axMCPHTTPTransport} and {@link AxMCPHTTPFallbackTransport}. */
export interface AxMCPHTTPTransportOptions extends AxMCPStreamableHTTPTransportOptions {
  /**
   * May the client fall back to the 2024-11-05 HTTP+SSE transport when the endpoint refuses both
   * Streamable HTTP eras (HTTP 400, 404 or 405)? `true` opens `GET` on the same URL; `{ url }`
   * names the SSE endpoint (servers often serve it at `/sse`). Default `false`. The fallback only
   * happens during `era: 'auto'` classification.
   */
  legacySSEFallback?: boolean | { url: string | URL };
}

/** The shape of {@link AxMCPHTTPTransportOptions}: those of Streamable HTTP and `legacySSEFallback`. */
const HTTP_TRANSPORT_OPTIONS = object(
  {
    ...STREAMABLE_HTTP_OPTIONS.keys,
    legacySSEFallback: anyOf(
      boolean(),
      object(
        {
          url: required(
            anyOf(
              string({ nonEmpty: true }),
              instance('a URL', (value) => value instanceof URL),
            ),
          ),
        },
        { expected: 'an object { url }' },
      ),
    ),
  },
  {
    expected: 'an options object { headers?, authentication?, …, legacySSEFallback? }',
    aliases: {
      ...HTTP_TRANSPORT_ALIASES,
      sseFallback: 'legacySSEFallback',
      legacySSE: 'legacySSEFallback',
      fallback: 'legacySSEFallback',
      fallbackToSSE: 'legacySSEFallback',
    },
  },
);

/**
 * An HTTP transport: Streamable HTTP, and — only when `legacySSEFallback` allows it — the
 * 2024-11-05 HTTP+SSE transport for servers that speak nothing newer.
 *
 * @example
 * ```ts
 * const transport = axMCPHTTPTransport('https://mcp.example.com/mcp', { legacySSEFallback: true });
 * const client = new AxMCPClient(transport, { namespace: 'example', era: 'auto' });
 * ```
 */
export function axMCPHTTPTransport(
  url: string | URL,
  options: AxMCPHTTPTransportOptions = {},
): AxMCPTransport {
  assertMCPOptions(HTTP_TRANSPORT_OPTIONS, options, 'axMCPHTTPTransport options');
  const { legacySSEFallback, ...rest } = options;
  if (!legacySSEFallback) return new AxMCPStreamableHTTPTransport(url, rest);
  return new AxMCPHTTPFallbackTransport(url, options);
}

/**
 * Streamable HTTP until era classification calls {@link AxMCPHTTPFallbackTransport.fallBackToLegacySSE}
 * (after both eras were refused with 400/404/405); from then on the 2024-11-05 HTTP+SSE
 * transport. Its `kind` follows: `http`, then `sse`. The switch happens once per instance.
 */
export class AxMCPHTTPFallbackTransport implements AxMCPTransport {
  readonly endpoint: string;
  readonly endpointKey: string;
  readonly #streamable: AxMCPStreamableHTTPTransport;
  readonly #sseURL: string | URL;
  readonly #options: AxMCPHTTPTransportOptions;
  #sse: AxMCPHTTPSSETransport | undefined;
  #handlers: AxMCPTransportHandlers | undefined;

  constructor(url: string | URL, options: AxMCPHTTPTransportOptions = {}) {
    const label = 'AxMCPHTTPFallbackTransport options';
    assertMCPOptions(HTTP_TRANSPORT_OPTIONS, options, label);
    const { legacySSEFallback, ...given } = options;
    // Made once, for both transports: after the fallback, HTTP+SSE sends with the same tokens.
    const rest = withOAuthStrategy(given, label);
    this.#streamable = new AxMCPStreamableHTTPTransport(url, rest);
    this.endpoint = this.#streamable.endpoint;
    this.endpointKey = this.#streamable.endpointKey;
    // Checked now: a bad fallback URL would otherwise surface only when a server needed it.
    this.#sseURL = endpointURL(
      typeof legacySSEFallback === 'object' ? legacySSEFallback.url : url,
      'the legacySSEFallback of AxMCPHTTPFallbackTransport',
      ['http:', 'https:'],
    );
    this.#options = rest;
  }

  /** `http` until the fallback, `sse` after it. */
  get kind(): 'http' | 'sse' {
    return this.#sse ? 'sse' : 'http';
  }

  get sessionId(): string | undefined {
    return this.#active.sessionId;
  }

  /** True once the transport fell back to HTTP+SSE. */
  get usesLegacySSE(): boolean {
    return this.#sse !== undefined;
  }

  /**
   * Switches to HTTP+SSE. Called by era classification after Streamable HTTP was refused;
   * returns `false` when it already switched (the fallback failed too).
   */
  async fallBackToLegacySSE(): Promise<boolean> {
    if (this.#sse) return false;
    const o = this.#options;
    const options: AxMCPHTTPSSETransportOptions = {};
    if (o.headers) options.headers = o.headers;
    if (o.authentication) options.authentication = o.authentication;
    if (o.fetch) options.fetch = o.fetch;
    if (o.ssrfProtection !== undefined) options.ssrfProtection = o.ssrfProtection;
    if (o.maxRedirects !== undefined) options.maxRedirects = o.maxRedirects;
    if (o.retry !== undefined) options.retry = o.retry;
    if (o.timeoutMs !== undefined) options.timeoutMs = o.timeoutMs;
    if (o.maxResponseBytes !== undefined) options.maxMessageBytes = o.maxResponseBytes;
    const onProtocolError = o.onProtocolError;
    if (onProtocolError) {
      options.onProtocolError = (error) => {
        // The option's type takes protocol errors only: the rest goes where it goes without one.
        if (error instanceof AxMCPProtocolError) onProtocolError(error);
        else this.#handlers?.onProtocolError?.(error);
      };
    }
    this.#sse = new AxMCPHTTPSSETransport(this.#sseURL, options);
    if (this.#handlers) this.#sse.setHandlers(this.#handlers);
    await this.#streamable.close().catch(() => undefined);
    return true;
  }

  get #active(): AxMCPTransport {
    return this.#sse ?? this.#streamable;
  }

  setHandlers(handlers: AxMCPTransportHandlers): void {
    this.#handlers = handlers;
    this.#streamable.setHandlers(handlers);
    this.#sse?.setHandlers(handlers);
  }

  async start(signal?: AbortSignal): Promise<void> {
    await this.#active.start?.(signal);
  }

  request(message: JSONRPCRequest, options?: AxMCPSendOptions): Promise<JSONRPCResponse> {
    return this.#active.request(message, options);
  }

  notify(message: JSONRPCNotification, options?: AxMCPSendOptions): Promise<void> {
    return this.#active.notify(message, options);
  }

  respond(message: JSONRPCResponse, options?: AxMCPSendOptions): Promise<void> {
    return this.#active.respond(message, options);
  }

  setProtocolVersion(version: string | undefined): void {
    this.#active.setProtocolVersion?.(version);
  }

  resetSession(): void {
    this.#active.resetSession?.();
  }

  async terminateSession(signal?: AbortSignal): Promise<void> {
    await this.#active.terminateSession?.(signal);
  }

  async openEventStream(options: {
    signal: AbortSignal;
    lastEventId?: string;
  }): Promise<AxMCPEventStream | null> {
    return (await this.#active.openEventStream?.(options)) ?? null;
  }

  async close(): Promise<void> {
    await Promise.all([this.#streamable.close(), this.#sse?.close()]);
  }
}
