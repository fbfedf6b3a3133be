/**
 * The deprecated HTTP+SSE transport of MCP 2024-11-05, for servers that never moved to
 * Streamable HTTP: a long-lived GET stream whose first event (`endpoint`) names the URI
 * to POST every client message to; every server message arrives on the GET stream.
 * Isomorphic: no `node:` imports.
 */

import { AUTHENTICATION_OPTION } from '../../auth/authentication.js';
import {
  type AxMCPAuthentication,
  applyAuthentication,
  authenticationSensitiveHeaders,
} from '../../auth/index.js';
import { createGuardedFetch, FETCH, readTextLimited } from '../../net/guarded-fetch.js';
import { type AxMCPSSRFOptions, redactURL, SSRF_PROTECTION } from '../../net/ssrf.js';
import { anyOf, func, number, object, oneOf } from '../../options/check.js';
import { delay, linkAbort } from '../../protocol/abort.js';
import {
  type AxMCPError,
  AxMCPHTTPStatusError,
  AxMCPSessionExpiredError,
  AxMCPSSRFError,
  AxMCPTransportError,
  assertMCPOptions,
} from '../../protocol/errors.js';
import type { JSONRPCMessage } from '../../protocol/jsonrpc.js';
import { readSSE, type SSEEvent } from '../../protocol/sse.js';
import type { SessionConnection } from '../connected-session.js';
import { ConnectedTransport } from '../connected-transport.js';
import { endpointURL } from '../endpoint-url.js';
import {
  type AxMCPRetryOptions,
  parseRetryAfter,
  RETRY_OPTIONS,
  type RetryPolicy,
  resolveRetryPolicy,
  retryWaitAfter,
} from '../http/retry.js';
import { HEADERS } from '../http/streamable-http.js';
import { type AxMCPChannelSendOptions, AxMCPMessageChannel } from '../message-channel.js';
import { type AxMCPReconnectOptions, RECONNECT_OPTIONS } from '../session-loss.js';
import type { AxMCPTransport } from '../types.js';

/** Options of {@link AxMCPHTTPSSETransport}. */
export interface AxMCPHTTPSSETransportOptions {
  /** Headers sent with the GET and every POST. */
  headers?: Record<string, string>;
  /** Authentication strategies, applied in order to every HTTP request. */
  authentication?: AxMCPAuthentication | AxMCPAuthentication[];
  /** The `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
  /** SSRF protection (default on): HTTPS only, no loopback or private addresses. */
  ssrfProtection?: boolean | AxMCPSSRFOptions;
  /** How many redirects to follow, each hop checked again by the SSRF policy (default 5; 0 refuses every redirect). */
  maxRedirects?: number;
  /** Time allowed to open the stream and receive the `endpoint` event, and for each POST. Default 30 000 ms. */
  timeoutMs?: number;
  /** The largest single server message accepted, in bytes (default 16 MiB). */
  maxMessageBytes?: number;
  /**
   * Called with what the transport drops: undecodable events, responses nobody waits for.
   * Without it, the client's `onError` is told.
   */
  onProtocolError?: (error: AxMCPError) => void;
  /**
   * Posting again after a 429, 502, 503 or 504 or a network failure, with backoff and the
   * server's `Retry-After` (capped at `maxDelayMs`), for what is harmless to repeat: safe
   * requests, notifications and responses, never `tools/call`. Default `{ attempts: 3,
   * baseDelayMs: 250, maxDelayMs: 30000 }`; `false` posts once.
   */
  retry?: AxMCPRetryOptions | false;
  /** The backoff between reconnects after the stream dropped: from 100 ms (`baseDelayMs`), doubling, up to 10 s (`maxDelayMs`). */
  reconnect?: AxMCPReconnectOptions;
}

/** The shape of {@link AxMCPHTTPSSETransportOptions}, every key of it; checked once in the constructor. */
const HTTP_SSE_OPTIONS = object(
  {
    headers: HEADERS,
    authentication: AUTHENTICATION_OPTION,
    fetch: FETCH,
    ssrfProtection: SSRF_PROTECTION,
    maxRedirects: number({ integer: true, min: 0 }),
    timeoutMs: number({ min: 1 }),
    maxMessageBytes: number({ integer: true, min: 1 }),
    onProtocolError: func('a function (error) => void'),
    retry: anyOf(oneOf(false), RETRY_OPTIONS),
    reconnect: RECONNECT_OPTIONS,
  },
  {
    expected: 'an options object { headers?, authentication?, fetch?, ssrfProtection?, … }',
    aliases: {
      auth: 'authentication',
      ssrf: 'ssrfProtection',
      redirects: 'maxRedirects',
      timeout: 'timeoutMs',
      maxBytes: 'maxMessageBytes',
      maxResponseBytes: 'maxMessageBytes',
      onError: 'onProtocolError',
      reconnection: 'reconnect',
      backoff: 'reconnect',
    },
  },
);

const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;
const ERROR_BODY_BYTES = 64 * 1024;
const MAX_CHALLENGES = 3;

/**
 * The 2024-11-05 HTTP+SSE transport (`kind: 'sse'`, always the legacy era).
 *
 * `start()` opens `GET <url>` and waits for the `endpoint` event; the announced URI must be
 * on the same origin as `url` (a server cannot send the client's messages, and credentials,
 * elsewhere). Each message is then POSTed there. If the GET stream drops, the session is gone:
 * it is reported lost (`session_expired`) until it is initialized again, and the next message
 * (or the client's listener) opens a new stream, with capped, jittered backoff; the client
 * re-initializes once, restores its subscriptions and retries safe requests (a safe request
 * in flight included), as it does for an expired Streamable HTTP session. Any other pending
 * request rejects with code `closed` and is never sent again.
 *
 * @example
 * ```ts
 * const transport = new AxMCPHTTPSSETransport('https://old.example.com/sse');
 * const client = new AxMCPClient(transport, { namespace: 'old' });
 * await client.callTool('echo', { message: 'hi' });
 * ```
 */
export class AxMCPHTTPSSETransport extends ConnectedTransport implements AxMCPTransport {
  readonly kind = 'sse' as const;
  readonly endpoint: string;
  readonly endpointKey: string;

  readonly #url: URL;
  readonly #options: AxMCPHTTPSSETransportOptions;
  readonly #fetch: (input: string | URL, init?: RequestInit) => Promise<Response>;
  readonly #timeoutMs: number;
  readonly #maxBytes: number;
  protected readonly reconnect: AxMCPReconnectOptions | undefined;
  readonly #retry: RetryPolicy;
  #connections = 0;

  constructor(url: string | URL, options: AxMCPHTTPSSETransportOptions = {}) {
    super();
    assertMCPOptions(HTTP_SSE_OPTIONS, options, 'AxMCPHTTPSSETransport options');
    this.#url = endpointURL(url, 'AxMCPHTTPSSETransport', ['http:', 'https:']);
    this.#url.hash = '';
    this.endpoint = redactURL(this.#url).replace('?…', '');
    this.endpointKey = `sse:${this.#url.href}`;
    this.#options = options;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_BYTES;
    this.reconnect = options.reconnect;
    this.#retry = resolveRetryPolicy(options.retry);
    const guard: Parameters<typeof createGuardedFetch>[0] = {
      ssrfProtection: options.ssrfProtection ?? true,
      sensitiveHeaders: authenticationSensitiveHeaders(options.authentication),
    };
    if (options.fetch) guard.fetch = options.fetch;
    if (options.maxRedirects !== undefined) guard.maxRedirects = options.maxRedirects;
    this.#fetch = createGuardedFetch(guard);
  }

  protected async openConnection(closing: AbortSignal): Promise<SessionConnection> {
    const stream = new AbortController();
    const link = linkAbort(closing);
    const opening = setTimeout(
      () =>
        link.abort(
          this.#error(
            `Timed out waiting for the endpoint event after ${this.#timeoutMs} ms (the transport's timeoutMs option)`,
          ),
        ),
      this.#timeoutMs,
    );
    const stop = () => stream.abort(link.signal.reason);
    link.signal.addEventListener('abort', stop, { once: true });
    let events: AsyncGenerator<SSEEvent>;
    let postURL: URL;
    try {
      const response = await this.#send(
        'GET',
        this.#url,
        undefined,
        { accept: 'text/event-stream' },
        stream.signal,
      );
      if (!response.ok || !isEventStream(response))
        throw await this.#statusError(response, 'opening the SSE stream');
      events = readSSE(response.body as ReadableStream<Uint8Array>, { maxEventBytes: this.#maxBytes });
      postURL = await this.#endpointEvent(events, response.url || this.#url.href);
    } catch (error) {
      stream.abort();
      throw link.signal.aborted && !(error instanceof AxMCPTransportError) ? link.signal.reason : error;
    } finally {
      clearTimeout(opening);
      link.signal.removeEventListener('abort', stop);
      link.dispose();
    }
    const sessionId = postURL.searchParams.get('sessionId') ?? `sse-${++this.#connections}`;
    const channel = new AxMCPMessageChannel({
      endpoint: this.endpoint,
      send: (message, sending) => this.#post(postURL, message, stream.signal, sending),
      ...(this.#options.onProtocolError
        ? { onProtocolError: (error: AxMCPError) => this.#options.onProtocolError?.(error) }
        : {}),
    });
    const ended = this.#pump(events, channel, stream.signal);
    return {
      channel,
      sessionId,
      ended,
      close: () => {
        channel.close();
        stream.abort();
      },
    };
  }

  /** Reads until the `endpoint` event and returns the URI it names, after the same-origin check. */
  async #endpointEvent(events: AsyncGenerator<SSEEvent>, base: string): Promise<URL> {
    for (;;) {
      const next = await events.next();
      if (next.done) throw this.#error('The SSE stream ended before announcing its endpoint', 'stream_ended');
      if (next.value.event !== 'endpoint') continue;
      let target: URL;
      try {
        target = new URL(next.value.data.trim(), base);
      } catch (error) {
        throw this.#error('The endpoint event does not hold a URI', 'transport_error', error);
      }
      if (target.origin !== this.#url.origin) {
        throw new AxMCPSSRFError(
          redactURL(target),
          `the endpoint event left the origin ${this.#url.origin}`,
          {
            endpoint: this.endpoint,
          },
        );
      }
      target.hash = '';
      return target;
    }
  }

  /** Feeds `message` events to the channel until the stream ends; resolves then. */
  async #pump(
    events: AsyncGenerator<SSEEvent>,
    channel: AxMCPMessageChannel,
    signal: AbortSignal,
  ): Promise<void> {
    let reason: AxMCPError;
    try {
      for (;;) {
        const next = await events.next();
        if (next.done) break;
        const event = next.value;
        if (event.data === '' || (event.event !== undefined && event.event !== 'message')) continue;
        channel.receiveText(event.data);
      }
      reason = this.#error('The server ended the SSE stream', 'stream_ended');
    } catch (error) {
      reason =
        error instanceof AxMCPTransportError
          ? error.attribute({ endpoint: this.endpoint })
          : this.#error('The SSE stream broke', 'stream_ended', error);
    }
    if (!signal.aborted) channel.close(reason);
    await events.return(undefined).catch(() => undefined);
  }

  /**
   * Posts `message`, again after a retryable failure when it is harmless to repeat: a
   * notification, a response, or a request the client marked safe (never `tools/call`).
   */
  async #post(
    url: URL,
    message: JSONRPCMessage,
    stream: AbortSignal,
    sending: AxMCPChannelSendOptions,
  ): Promise<void> {
    const repeatable = !('method' in message && 'id' in message) || sending.idempotent === true;
    // Waiting to post again ends with the stream, or with the request when its caller gives up.
    const waiting = linkAbort(stream, sending.signal);
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          return await this.#postOnce(url, message, stream);
        } catch (error) {
          const wait =
            repeatable && !waiting.aborted ? retryWaitAfter(this.#retry, error, attempt) : undefined;
          if (wait === undefined) throw error;
          await delay(wait, waiting).catch(() => {
            throw error;
          });
        }
      }
    } finally {
      waiting.dispose();
    }
  }

  async #postOnce(url: URL, message: JSONRPCMessage, stream: AbortSignal): Promise<void> {
    const link = linkAbort(stream);
    const timer = setTimeout(
      () =>
        link.abort(
          this.#error(`Timed out posting after ${this.#timeoutMs} ms (the transport's timeoutMs option)`),
        ),
      this.#timeoutMs,
    );
    try {
      const response = await this.#send(
        'POST',
        url,
        JSON.stringify(message),
        { 'content-type': 'application/json' },
        link.signal,
      );
      if (response.ok) {
        await response.body?.cancel().catch(() => undefined);
        return;
      }
      if (response.status === 404) {
        await response.body?.cancel().catch(() => undefined);
        throw new AxMCPSessionExpiredError(undefined, {
          endpoint: this.endpoint,
          sessionId: url.searchParams.get('sessionId') ?? undefined,
        });
      }
      throw await this.#statusError(response, 'posting a message');
    } catch (error) {
      if (link.signal.aborted && !(error instanceof AxMCPTransportError)) throw link.signal.reason;
      if (error instanceof TypeError)
        throw this.#error(`Could not reach ${this.endpoint}: ${error.message}`, 'transport_error', error);
      throw error;
    } finally {
      clearTimeout(timer);
      link.dispose();
    }
  }

  /** One HTTP exchange, answering authentication challenges (bounded) by sending again. */
  async #send(
    method: 'GET' | 'POST',
    url: URL,
    body: string | undefined,
    extra: Record<string, string>,
    signal: AbortSignal,
  ): Promise<Response> {
    const strategies = this.#strategies();
    for (let attempt = 0; ; attempt++) {
      const headers = new Headers(this.#options.headers);
      for (const [name, value] of Object.entries(extra)) headers.set(name, value);
      const input = body === undefined ? { method, url, headers } : { method, url, headers, body };
      const authed = await applyAuthentication(this.#options.authentication, input);
      const init: RequestInit = { method, headers: authed.headers, signal };
      if (body !== undefined) init.body = body;
      const response = await this.#fetch(authed.url, init);
      const seen = { status: response.status, headers: response.headers, url };
      for (const strategy of strategies) strategy.observe?.(seen);
      if ((response.status !== 401 && response.status !== 403) || attempt >= MAX_CHALLENGES) return response;
      let retry = false;
      for (const strategy of strategies) {
        if (strategy.challenge && (await strategy.challenge({ ...seen, method, attempt, signal }))) {
          retry = true;
          break;
        }
      }
      if (!retry) return response;
      await response.body?.cancel().catch(() => undefined);
    }
  }

  #strategies(): readonly AxMCPAuthentication[] {
    const authentication = this.#options.authentication;
    if (authentication === undefined) return [];
    return Array.isArray(authentication) ? authentication : [authentication as AxMCPAuthentication];
  }

  async #statusError(response: Response, what: string): Promise<AxMCPHTTPStatusError> {
    const text = await readTextLimited(response, ERROR_BODY_BYTES, undefined, { truncate: true }).catch(
      () => '',
    );
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
    return new AxMCPHTTPStatusError(response.status, `HTTP ${response.status} ${what}`, {
      endpoint: this.endpoint,
      bodySnippet: text.slice(0, 500),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }

  #error(
    message: string,
    code: 'transport_error' | 'stream_ended' = 'transport_error',
    cause?: unknown,
  ): AxMCPTransportError {
    return new AxMCPTransportError(code, message, { endpoint: this.endpoint, cause });
  }
}

function isEventStream(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream');
}
