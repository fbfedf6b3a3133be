/**
 * The Streamable HTTP transport: what it sends and when. The endpoint with its session and
 * authentication is `http-endpoint.ts`; finding a POST's answer `post-answer.ts`; the GET
 * stream `event-stream.ts`; typed errors from responses `error-response.ts`; the options
 * `options.ts`.
 */

import { type AxMCPAuthentication, authenticationSensitiveHeaders, axMCPOAuth } from '../../auth/index.js';
import { createGuardedFetch, readTextLimited } from '../../net/guarded-fetch.js';
import { nestedOptionsError } from '../../net/options-error.js';
import { type AxMCPSSRFPolicy, assertURLAllowed, resolveSSRFPolicy } from '../../net/ssrf.js';
import { type AbortSource, abortSourceOf, delay, type LinkedAbort, linkAbort } from '../../protocol/abort.js';
import {
  AxMCPInvalidOptionsError,
  type AxMCPProtocolError,
  AxMCPTransportError,
  assertMCPOptions,
} from '../../protocol/errors.js';
import {
  isResponse,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type JSONRPCResponse,
} from '../../protocol/jsonrpc.js';
import { endpointURL } from '../endpoint-url.js';
import type {
  AxMCPEventStream,
  AxMCPMessageContext,
  AxMCPSendOptions,
  AxMCPTransport,
  AxMCPTransportHandlers,
} from '../types.js';
import { normalizeFailure, readErrorBody, statusErrorFrom, timeoutError } from './error-response.js';
import { openServerEventStream } from './event-stream.js';
import { HTTPEndpoint, SESSION_HEADER } from './http-endpoint.js';
import { type AxMCPStreamableHTTPTransportOptions, STREAMABLE_HTTP_OPTIONS } from './options.js';
import {
  answerFromJSON,
  awaitAnswerOnStream,
  inBandOrThrow,
  isEventStream,
  type PostStreamReading,
} from './post-answer.js';
import { resolveRetryPolicy, retryWaitAfter } from './retry.js';

// The options live in their own module; the transports built on this one import them from here.
export {
  type AxMCPStreamableHTTPTransportOptions,
  HEADERS,
  HTTP_TRANSPORT_ALIASES,
  STREAMABLE_HTTP_KEYS,
  STREAMABLE_HTTP_OPTIONS,
} from './options.js';

/**
 * A POST a runtime may send by a shorter way than `fetch` (see {@link AxMCPDirectSender}):
 * header names are lower-case.
 * @internal
 */
export interface AxMCPDirectPost {
  url: URL;
  headers: Record<string, string>;
  body: string;
  /** A link or a signal: the direct way follows either without making a signal. */
  signal: AbortSource;
  /** The largest answer body accepted, in bytes (a larger one fails with `message_too_large`). */
  maxBytes: number;
}

/**
 * What came back: the text of a 200 JSON answer with the session header, or the response to
 * handle the usual way (SSE, 202, errors).
 * @internal
 */
export type AxMCPDirectAnswer = { text: string; sessionId: string | null } | { response: Response };

/**
 * A shorter way for a POST, which a runtime's transport may offer (`ax-mcp/node` does, over
 * node:http). Used only without `authentication`. It answers with the JSON text of a 200
 * answer, with a response to handle the usual way, or with `undefined` when the request must
 * go the full way (a redirect: the server did not act on it).
 * @internal
 */
export interface AxMCPDirectSender {
  send(post: AxMCPDirectPost): Promise<AxMCPDirectAnswer | undefined>;
}

const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;

const HTTP_SCHEMES = ['http:', 'https:'];

/**
 * Streamable HTTP (MCP 2025-03-26 and later, and 2026-07-28): one endpoint, POST per
 * message, answered by JSON or an SSE stream; a legacy session header; an optional
 * GET stream for server-initiated messages, resumable with `Last-Event-ID`.
 *
 * @example
 * ```ts
 * const transport = new AxMCPStreamableHTTPTransport('https://mcp.example.com/mcp', {
 *   authentication: axMCPBearerAuthentication(process.env.TOKEN!),
 * });
 * const client = new AxMCPClient(transport, { namespace: 'example' });
 * ```
 */
export class AxMCPStreamableHTTPTransport implements AxMCPTransport {
  readonly kind = 'http' as const;
  readonly endpoint: string;
  readonly endpointKey: string;

  readonly #http: HTTPEndpoint;
  readonly #options: AxMCPStreamableHTTPTransportOptions;
  readonly #maxBytes: number;
  readonly #timeoutMs: number;
  readonly #retry;
  readonly #ssrf: AxMCPSSRFPolicy;
  readonly #direct: AxMCPDirectSender | undefined;
  /** Operations under way, aborted by `close()`: a set rather than one long-lived signal they all listen to. */
  readonly #open = new Set<LinkedAbort>();
  #handlers: AxMCPTransportHandlers | undefined;
  #closed = false;

  /**
   * Checks `options` (an unknown or misspelled key, a wrong type: `AxMCPInvalidOptionsError`,
   * code `invalid_options`) before anything else; nothing is sent before the first message.
   * `direct` is a runtime's shorter way for POSTs (internal: `ax-mcp/node` passes one).
   */
  constructor(
    url: string | URL,
    options: AxMCPStreamableHTTPTransportOptions = {},
    direct?: AxMCPDirectSender,
  ) {
    const label = `${new.target.name} options`;
    assertMCPOptions(STREAMABLE_HTTP_OPTIONS, options, label);
    options = withOAuthStrategy(options, label);
    const target = endpointURL(url, new.target.name, HTTP_SCHEMES);
    const redacted = new URL(target);
    redacted.search = '';
    redacted.hash = '';
    this.endpoint = redacted.href;
    const key = new URL(target);
    key.hash = '';
    this.endpointKey = key.href;
    this.#options = options;
    this.#maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_BYTES;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#retry = resolveRetryPolicy(options.retry);
    this.#ssrf = resolveSSRFPolicy(options.ssrfProtection ?? true);
    this.#direct = direct;
    const guardOptions: Parameters<typeof createGuardedFetch>[0] = {
      ssrfProtection: this.#ssrf,
      maxRedirects: options.maxRedirects ?? 5,
    };
    if (options.fetch) guardOptions.fetch = options.fetch;
    // A custom credential header (an API key under any name) must not follow a redirect to another origin.
    guardOptions.sensitiveHeaders = authenticationSensitiveHeaders(options.authentication);
    this.#http = new HTTPEndpoint(
      target,
      createGuardedFetch(guardOptions),
      options.headers,
      options.authentication,
    );
  }

  /** The legacy session id the server assigned, if any. */
  get sessionId(): string | undefined {
    return this.#http.sessionId;
  }

  setHandlers(handlers: AxMCPTransportHandlers): void {
    this.#handlers = handlers;
  }

  /** A dropped message's error, to the `onProtocolError` option, else to the handlers (the client). */
  #tellDropped(error: AxMCPProtocolError): void {
    try {
      const option = this.#options.onProtocolError;
      if (option) option(error);
      else this.#handlers?.onProtocolError?.(error);
    } catch {
      // A reporting callback must not take the stream down.
    }
  }

  setProtocolVersion(version: string | undefined): void {
    this.#http.protocolVersion = version;
  }

  resetSession(): void {
    this.#http.sessionId = undefined;
  }

  request(message: JSONRPCRequest, options: AxMCPSendOptions = {}): Promise<JSONRPCResponse> {
    let body: string;
    try {
      body = JSON.stringify(message);
    } catch (error) {
      return Promise.reject(error);
    }
    // Only an idempotent request is ever retried: any other goes once, with no retry loop around it.
    if (!options.idempotent || this.#retry.attempts === 0) return this.#requestOnce(message, body, options);
    return this.#retrying(() => this.#requestOnce(message, body, options), abortSourceOf(options));
  }

  /** Runs `send` again after a retryable failure (a 429/502/503/504, a network failure), with backoff. */
  async #retrying<T>(send: () => Promise<T>, signal: AbortSource | undefined): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await send();
      } catch (error) {
        const wait = this.#retryWait(error, attempt, signal);
        if (wait === undefined) throw error;
        await delay(wait, signal);
      }
    }
  }

  /**
   * A notification is harmless to repeat (`initialized`, `cancelled`, `progress`, a roots
   * change), and so is a response (the server settles an id once): both are retried as safe
   * requests are. A lost `notifications/initialized` failed the whole connect.
   */
  async notify(message: JSONRPCNotification, options: AxMCPSendOptions = {}): Promise<void> {
    await this.#retrying(() => this.#postWithoutAnswer(message, options), abortSourceOf(options));
  }

  async respond(message: JSONRPCResponse, options: AxMCPSendOptions = {}): Promise<void> {
    await this.#retrying(() => this.#postWithoutAnswer(message, options), abortSourceOf(options));
  }

  async openEventStream(options: {
    signal: AbortSignal;
    lastEventId?: string;
  }): Promise<AxMCPEventStream | null> {
    this.#assertOpen();
    const opening = {
      http: this.#http,
      endpoint: this.endpoint,
      timeoutMs: this.#timeoutMs,
      maxBytes: this.#maxBytes,
      onProtocolError: (error: AxMCPProtocolError) => this.#tellDropped(error),
    };
    return openServerEventStream(opening, this.#link(options.signal), options.lastEventId);
  }

  async terminateSession(signal?: AbortSignal): Promise<void> {
    const sessionId = this.#http.sessionId;
    if (sessionId === undefined) return;
    this.#http.sessionId = undefined;
    const link = linkAbort(signal);
    const timer = setTimeout(() => link.abort(this.#timeout('ending the session')), this.#timeoutMs);
    try {
      const response = await this.#http.send(
        'DELETE',
        undefined,
        { [SESSION_HEADER]: sessionId },
        link.signal,
      );
      await response.body?.cancel().catch(() => {});
    } finally {
      clearTimeout(timer);
      link.dispose();
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    try {
      await this.terminateSession().catch(() => {});
    } finally {
      this.#closed = true;
      const reason = new AxMCPTransportError('closed', 'The transport was closed', {
        endpoint: this.endpoint,
      });
      for (const link of this.#open) link.abort(reason);
    }
  }

  /** A child of `parent` that `close()` also aborts; `dispose()` forgets it. */
  #link(parent: AbortSource | undefined): LinkedAbort {
    const link = linkAbort(parent);
    const open = this.#open;
    open.add(link);
    const dispose = link.dispose;
    link.dispose = () => {
      open.delete(link);
      dispose();
    };
    return link;
  }

  async #requestOnce(
    message: JSONRPCRequest,
    body: string,
    options: AxMCPSendOptions,
  ): Promise<JSONRPCResponse> {
    this.#assertOpen();
    const link = this.#link(abortSourceOf(options));
    const http = this.#http;
    const session = http.sessionId;
    // The context of the messages that come without an event id, made once for all of them.
    let related: AxMCPMessageContext | undefined;
    const dispatch = (incoming: JSONRPCMessage, eventId: string | undefined) => {
      if (isResponse(incoming)) return;
      const context =
        eventId !== undefined
          ? { eventId, relatedRequestId: message.id }
          : (related ??= { relatedRequestId: message.id });
      this.#handlers?.onMessage(incoming, context);
    };
    try {
      let response: Response | undefined;
      if (this.#direct !== undefined && !http.authenticated) {
        const answer = await this.#postDirect(this.#direct, body, options, link);
        if (answer !== undefined && 'text' in answer) {
          http.captureSessionId(answer.sessionId);
          options.onStatus?.(200);
          return answerFromJSON(answer.text, message, this.endpoint, dispatch);
        }
        response = answer?.response;
      }
      response ??= await http.send('POST', body, postHeaders(options), link.signal);
      http.captureSession(response);
      options.onStatus?.(response.status);
      if (response.status === 202) {
        await response.body?.cancel().catch(() => {});
        throw new AxMCPTransportError(
          'transport_error',
          `Server accepted "${message.method}" but sent no response`,
          {
            endpoint: this.endpoint,
          },
        );
      }
      if (!response.ok) return await inBandOrThrow(response, message, this.endpoint, session);
      if (isEventStream(response)) {
        const reading: PostStreamReading = {
          http,
          endpoint: this.endpoint,
          maxBytes: this.#maxBytes,
          maxResumes: this.#options.maxResumeAttempts ?? 5,
          onProtocolError: (error) => this.#tellDropped(error),
          dispatch,
        };
        return await awaitAnswerOnStream(reading, response, message, link, http.sessionId);
      }
      const text = await readTextLimited(response, this.#maxBytes, link.signal);
      return answerFromJSON(text, message, this.endpoint, dispatch);
    } catch (error) {
      throw normalizeFailure(error, link, this.endpoint);
    } finally {
      link.dispose();
    }
  }

  async #postWithoutAnswer(message: JSONRPCMessage, options: AxMCPSendOptions): Promise<void> {
    this.#assertOpen();
    const link = this.#link(abortSourceOf(options));
    const timer = setTimeout(() => link.abort(this.#timeout('sending a message')), this.#timeoutMs);
    const session = this.#http.sessionId;
    try {
      const response = await this.#http.send(
        'POST',
        JSON.stringify(message),
        postHeaders(options),
        link.signal,
      );
      this.#http.captureSession(response);
      if (response.ok) {
        await response.body?.cancel().catch(() => {});
        return;
      }
      const { text, lost } = await readErrorBody(response, this.endpoint, session);
      throw lost ?? statusErrorFrom(response, text, 'a message', this.endpoint);
    } catch (error) {
      throw normalizeFailure(error, link, this.endpoint);
    } finally {
      clearTimeout(timer);
      link.dispose();
    }
  }

  /** The headers `HTTPEndpoint.send` would send, as a plain object, and the SSRF check of the URL. */
  async #postDirect(
    direct: AxMCPDirectSender,
    body: string,
    options: AxMCPSendOptions,
    signal: AbortSource,
  ): Promise<AxMCPDirectAnswer | undefined> {
    const url = this.#http.url;
    if (this.#ssrf.validateURL !== undefined) await assertURLAllowed(url, this.#ssrf);
    return direct.send({
      url,
      headers: this.#http.directHeaders(POST_HEADERS, options.headers),
      body,
      signal,
      maxBytes: this.#maxBytes,
    });
  }

  /** The wait before another attempt of something safe to repeat, or `undefined`: give up. */
  #retryWait(error: unknown, attempt: number, signal: AbortSource | undefined): number | undefined {
    if (signal?.aborted || this.#closed) return undefined;
    return retryWaitAfter(this.#retry, error, attempt);
  }

  #timeout(what: string): AxMCPTransportError {
    return timeoutError(what, this.#timeoutMs, this.endpoint);
  }

  #assertOpen(): void {
    if (this.#closed)
      throw new AxMCPTransportError('closed', 'The transport was closed', { endpoint: this.endpoint });
  }
}

/**
 * `options` with `oauth` made into an authentication strategy, after the others, and `oauth`
 * itself left out; `options` as given without one. The HTTP+SSE fallback uses it so that both
 * of its transports authenticate with one strategy (one token cache) (internal).
 */
export function withOAuthStrategy<T extends AxMCPStreamableHTTPTransportOptions>(
  options: T,
  label: string,
): T {
  if (!options.oauth) return options;
  let oauth: AxMCPAuthentication;
  try {
    oauth = axMCPOAuth({ fetch: options.fetch, ssrfProtection: options.ssrfProtection, ...options.oauth });
  } catch (error) {
    throw error instanceof AxMCPInvalidOptionsError ? nestedOptionsError(error, 'oauth', label) : error;
  }
  const { oauth: _folded, ...rest } = options;
  return { ...rest, authentication: [...[options.authentication ?? []].flat(), oauth] } as T;
}

/** What every POST says it sends and accepts. */
const POST_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
});

function postHeaders(options: AxMCPSendOptions): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  if (options.headers) Object.assign(headers, options.headers);
  return headers;
}
