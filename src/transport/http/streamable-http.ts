import { AUTHENTICATION_OPTION } from '../../auth/authentication.js';
import {
  type AxMCPAuthentication,
  type AxMCPOAuthOptions,
  applyAuthentication,
  authenticationSensitiveHeaders,
  axMCPOAuth,
} from '../../auth/index.js';
import { OAUTH_OPTIONS } from '../../auth/oauth/oauth.js';
import { createGuardedFetch, FETCH, readTextLimited } from '../../net/guarded-fetch.js';
import { nestedOptionsError } from '../../net/options-error.js';
import {
  type AxMCPSSRFOptions,
  type AxMCPSSRFPolicy,
  assertURLAllowed,
  resolveSSRFPolicy,
  SSRF_PROTECTION,
} from '../../net/ssrf.js';
import { anyOf, func, number, object, oneOf, record, string } from '../../options/check.js';
import { abortReason, delay, type LinkedAbort, linkAbort } from '../../protocol/abort.js';
import {
  type AxMCPError,
  AxMCPHTTPStatusError,
  AxMCPInvalidOptionsError,
  type AxMCPProtocolError,
  AxMCPSessionExpiredError,
  AxMCPTransportError,
  assertMCPOptions,
} from '../../protocol/errors.js';
import {
  isResponse,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type JSONRPCResponse,
  parseJSONRPCBody,
} from '../../protocol/jsonrpc.js';
import type { AxMCPEventStream, AxMCPSendOptions, AxMCPTransport, AxMCPTransportHandlers } from '../types.js';
import { readSSEMessagesInto, readSSEServerMessages, type SSEStreamState } from './message-stream.js';
import {
  type AxMCPRetryOptions,
  parseRetryAfter,
  RETRY_OPTIONS,
  RETRYABLE_STATUSES,
  resolveRetryPolicy,
  retryDelayMs,
} from './retry.js';

/** Options of {@link AxMCPStreamableHTTPTransport}. */
export interface AxMCPStreamableHTTPTransportOptions {
  /** Headers sent with every HTTP request (for example a static API key). */
  headers?: Record<string, string>;
  /** Authentication strategies, applied in order to every HTTP request. */
  authentication?: AxMCPAuthentication | AxMCPAuthentication[];
  /** OAuth 2.1 for MCP (`axMCPOAuth`), appended to `authentication`; it uses this transport's `fetch` and SSRF policy. */
  oauth?: AxMCPOAuthOptions;
  /** The `fetch` to use (default: the global one). `ax-mcp/node` offers a faster, DNS-checked one. */
  fetch?: typeof fetch;
  /** SSRF protection (default on): HTTPS only, no loopback or private addresses. */
  ssrfProtection?: boolean | AxMCPSSRFOptions;
  /**
   * Time allowed for an HTTP exchange that has no request deadline of its own
   * (notifications, responses, opening a stream, ending the session). Default 30 000 ms.
   * Request deadlines belong to the client (`timeoutMs` of each call).
   */
  timeoutMs?: number;
  /** The largest single message accepted, in bytes (default 16 MiB). Streams may carry any number. */
  maxResponseBytes?: number;
  /** Redirects followed per request (default 5); each hop is checked again. */
  maxRedirects?: number;
  /** Retries of safe requests on 429/502/503/504 and network failures, or `false`. */
  retry?: AxMCPRetryOptions | false;
  /** Times a broken response stream is resumed with `Last-Event-ID` before giving up (default 5). */
  maxResumeAttempts?: number;
  /** Called with protocol errors the transport skipped (an undecodable event on a stream). */
  onProtocolError?: (error: AxMCPProtocolError) => void;
}

/** The shape of a `headers` option: header values (strings) by name. */
export const HEADERS = record(string(), 'an object of header values (strings), by name');

/** The shapes of the keys of {@link AxMCPStreamableHTTPTransportOptions}, every one of them. */
export const STREAMABLE_HTTP_KEYS = {
  headers: HEADERS,
  authentication: AUTHENTICATION_OPTION,
  oauth: OAUTH_OPTIONS,
  fetch: FETCH,
  ssrfProtection: SSRF_PROTECTION,
  timeoutMs: number({ min: 1 }),
  maxResponseBytes: number({ integer: true, min: 1 }),
  maxRedirects: number({ integer: true, min: 0 }),
  retry: anyOf(oneOf(false), RETRY_OPTIONS),
  maxResumeAttempts: number({ integer: true, min: 0 }),
  onProtocolError: func('a function (error) => void'),
} as const;

/** Names users reach for instead of the HTTP transports' own. */
export const HTTP_TRANSPORT_ALIASES: Readonly<Record<string, string>> = {
  auth: 'authentication',
  authorization: 'authentication',
  ssrf: 'ssrfProtection',
  ssrfGuard: 'ssrfProtection',
  timeout: 'timeoutMs',
  retries: 'retry',
  maxRetries: 'retry',
  maxBytes: 'maxResponseBytes',
  maxMessageBytes: 'maxResponseBytes',
  onError: 'onProtocolError',
};

/** The shape of {@link AxMCPStreamableHTTPTransportOptions}; checked once in the constructor. */
export const STREAMABLE_HTTP_OPTIONS = object(STREAMABLE_HTTP_KEYS, {
  expected: 'an options object { headers?, authentication?, oauth?, fetch?, ssrfProtection?, … }',
  aliases: HTTP_TRANSPORT_ALIASES,
});

/**
 * A POST a subclass may send by a shorter way than `fetch` (see
 * {@link AxMCPStreamableHTTPTransport.sendDirect}): header names are lower-case.
 * @internal
 */
export interface AxMCPDirectPost {
  url: URL;
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
  /** The largest answer body accepted, in bytes (a larger one fails with `message_too_large`). */
  maxBytes: number;
}

/**
 * What came back: the text of a 200 JSON answer with the session header, or the response to
 * handle the usual way (SSE, 202, errors).
 * @internal
 */
export type AxMCPDirectAnswer = { text: string; sessionId: string | null } | { response: Response };

const SESSION_HEADER = 'mcp-session-id';
/** Times one request is sent again after an authentication challenge (step-up included). */
const MAX_CHALLENGES = 3;
const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;
const ERROR_BODY_BYTES = 64 * 1024;

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

  readonly #url: URL;
  readonly #fetch: (input: string | URL, init?: RequestInit) => Promise<Response>;
  readonly #options: AxMCPStreamableHTTPTransportOptions;
  readonly #maxBytes: number;
  readonly #timeoutMs: number;
  readonly #retry;
  readonly #ssrf: AxMCPSSRFPolicy;
  /** Operations under way, aborted by `close()`: a set rather than one long-lived signal they all listen to. */
  readonly #open = new Set<LinkedAbort>();
  #handlers: AxMCPTransportHandlers | undefined;
  #sessionId: string | undefined;
  #protocolVersion: string | undefined;
  #closed = false;

  /**
   * Checks `options` (an unknown or misspelled key, a wrong type: `AxMCPInvalidOptionsError`,
   * code `invalid_options`) before anything else; nothing is sent before the first message.
   */
  constructor(url: string | URL, options: AxMCPStreamableHTTPTransportOptions = {}) {
    const label = `${new.target.name} options`;
    assertMCPOptions(STREAMABLE_HTTP_OPTIONS, options, label);
    if (options.oauth) {
      let oauth: AxMCPAuthentication;
      try {
        oauth = axMCPOAuth({
          fetch: options.fetch,
          ssrfProtection: options.ssrfProtection,
          ...options.oauth,
        });
      } catch (error) {
        throw error instanceof AxMCPInvalidOptionsError ? nestedOptionsError(error, 'oauth', label) : error;
      }
      options = { ...options, authentication: [...[options.authentication ?? []].flat(), oauth] };
    }
    this.#url = new URL(url);
    if (this.#url.username || this.#url.password) {
      throw new AxMCPTransportError('transport_error', 'Put credentials in `authentication`, not in the URL');
    }
    const redacted = new URL(this.#url);
    redacted.search = '';
    redacted.hash = '';
    this.endpoint = redacted.href;
    const key = new URL(this.#url);
    key.hash = '';
    this.endpointKey = key.href;
    this.#options = options;
    this.#maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_BYTES;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#retry = resolveRetryPolicy(options.retry);
    this.#ssrf = resolveSSRFPolicy(options.ssrfProtection ?? true);
    const guardOptions: Parameters<typeof createGuardedFetch>[0] = {
      ssrfProtection: this.#ssrf,
      maxRedirects: options.maxRedirects ?? 5,
    };
    if (options.fetch) guardOptions.fetch = options.fetch;
    // A custom credential header (an API key under any name) must not follow a redirect to another origin.
    guardOptions.sensitiveHeaders = authenticationSensitiveHeaders(options.authentication);
    this.#fetch = createGuardedFetch(guardOptions);
  }

  /** The legacy session id the server assigned, if any. */
  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  setHandlers(handlers: AxMCPTransportHandlers): void {
    this.#handlers = handlers;
  }

  setProtocolVersion(version: string | undefined): void {
    this.#protocolVersion = version;
  }

  resetSession(): void {
    this.#sessionId = undefined;
  }

  async request(message: JSONRPCRequest, options: AxMCPSendOptions = {}): Promise<JSONRPCResponse> {
    const body = JSON.stringify(message);
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#requestOnce(message, body, options);
      } catch (error) {
        const wait = this.#retryWait(error, attempt, options);
        if (wait === undefined) throw error;
        await delay(wait, options.signal);
      }
    }
  }

  async notify(message: JSONRPCNotification, options: AxMCPSendOptions = {}): Promise<void> {
    await this.#postWithoutAnswer(message, options);
  }

  async respond(message: JSONRPCResponse, options: AxMCPSendOptions = {}): Promise<void> {
    await this.#postWithoutAnswer(message, options);
  }

  async openEventStream(options: {
    signal: AbortSignal;
    lastEventId?: string;
  }): Promise<AxMCPEventStream | null> {
    this.#assertOpen();
    const link = this.#link(options.signal);
    const session = this.#sessionId;
    let response: Response;
    const opening = setTimeout(() => link.abort(this.#timeout('opening the event stream')), this.#timeoutMs);
    try {
      const headers: Record<string, string> = { accept: 'text/event-stream' };
      if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
      response = await this.#send('GET', undefined, headers, link.signal);
    } catch (error) {
      link.dispose();
      throw this.#rethrow(error, link.signal);
    } finally {
      clearTimeout(opening);
    }
    if (response.status === 405) {
      link.dispose();
      await response.body?.cancel().catch(() => {});
      return null;
    }
    if (!response.ok || !isEventStream(response)) {
      link.dispose();
      throw await this.#statusError(response, 'GET event stream', session);
    }
    const state: SSEStreamState = { lastEventId: options.lastEventId, retryMs: undefined };
    const body = response.body as ReadableStream<Uint8Array>;
    const maxBytes = this.#maxBytes;
    const onInvalid = (error: AxMCPProtocolError) => this.#options.onProtocolError?.(error);
    return {
      messages: readSSEServerMessages(body, state, maxBytes, onInvalid, link.dispose),
      consume: async (onMessage) => {
        try {
          await readSSEMessagesInto(body, state, maxBytes, onInvalid, (message, eventId) => {
            // A standalone stream carries no answer anyone waits for.
            if (!isResponse(message)) onMessage(message, eventId);
            return undefined;
          });
        } finally {
          link.dispose();
        }
      },
      get retryMs() {
        return state.retryMs;
      },
      get lastEventId() {
        return state.lastEventId;
      },
    };
  }

  async terminateSession(signal?: AbortSignal): Promise<void> {
    const sessionId = this.#sessionId;
    if (sessionId === undefined) return;
    this.#sessionId = undefined;
    const link = linkAbort(signal);
    const timer = setTimeout(() => link.abort(this.#timeout('ending the session')), this.#timeoutMs);
    try {
      const response = await this.#send('DELETE', undefined, { [SESSION_HEADER]: sessionId }, link.signal);
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

  /** A child of `signal` that `close()` also aborts; `dispose()` forgets it. */
  #link(signal: AbortSignal | undefined): LinkedAbort {
    const link = linkAbort(signal);
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
    const link = this.#link(options.signal);
    const session = this.#sessionId;
    try {
      let response: Response | undefined;
      if (this.sendDirect !== undefined && this.#options.authentication === undefined) {
        const answer = await this.#postDirect(body, options, link.signal);
        if (answer !== undefined && 'text' in answer) {
          this.#captureSessionId(answer.sessionId);
          options.onStatus?.(200);
          return this.#fromJSONBody(answer.text, message);
        }
        response = answer?.response;
      }
      response ??= await this.#send('POST', body, this.#postHeaders(options), link.signal);
      this.#captureSession(response);
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
      if (!response.ok) return await this.#inBandOrThrow(response, message, session);
      if (isEventStream(response)) {
        return await this.#awaitOnStream(response, message, link.signal, this.#sessionId);
      }
      return this.#fromJSONBody(await readTextLimited(response, this.#maxBytes, link.signal), message);
    } catch (error) {
      throw this.#rethrow(error, link.signal);
    } finally {
      link.dispose();
    }
  }

  /**
   * Reads a POST's SSE stream until this request's response, resuming after drops. A stream
   * belongs to its session (`session`): once that was lost or replaced, there is nothing to
   * resume, and the request fails as the lost session's.
   */
  async #awaitOnStream(
    response: Response,
    message: JSONRPCRequest,
    signal: AbortSignal,
    session: string | undefined,
  ): Promise<JSONRPCResponse> {
    const state: SSEStreamState = { lastEventId: undefined, retryMs: undefined };
    let invalid: AxMCPProtocolError | undefined;
    const onInvalid = (error: AxMCPProtocolError) => {
      invalid = error;
      this.#options.onProtocolError?.(error);
    };
    let current: Response = response;
    const maxResumes = this.#options.maxResumeAttempts ?? 5;
    for (let resumes = 0; ; ) {
      const resumedFrom = state.lastEventId;
      try {
        const answer = await readSSEMessagesInto(
          current.body as ReadableStream<Uint8Array>,
          state,
          this.#maxBytes,
          onInvalid,
          (incoming, eventId) => {
            if (isResponse(incoming)) return answerFor(incoming, message);
            this.#dispatch(incoming, eventId, message);
            return undefined;
          },
        );
        if (answer) return answer;
      } catch (error) {
        // A network failure mid-stream is resumable like a clean end: fetch reports it as a
        // TypeError, ax-mcp/node's bodies as a typed stream_ended.
        const broken =
          error instanceof TypeError ||
          (error instanceof AxMCPTransportError && error.code === 'stream_ended');
        if (signal.aborted || !broken) throw error;
      }
      if (state.lastEventId === undefined) {
        if (invalid) throw invalid;
        throw new AxMCPTransportError(
          'stream_ended',
          `The response stream for "${message.method}" ended early`,
          {
            endpoint: this.endpoint,
          },
        );
      }
      resumes = state.lastEventId === resumedFrom ? resumes + 1 : 1;
      if (resumes > maxResumes) {
        throw new AxMCPTransportError('stream_ended', `Gave up resuming the stream for "${message.method}"`, {
          endpoint: this.endpoint,
        });
      }
      await delay(state.retryMs ?? 1000, signal);
      if (session !== undefined && this.#sessionId !== session) {
        throw new AxMCPSessionExpiredError(undefined, { endpoint: this.endpoint, sessionId: session });
      }
      const headers: Record<string, string> = {
        accept: 'text/event-stream',
        'last-event-id': state.lastEventId,
      };
      current = await this.#send('GET', undefined, headers, signal);
      if (!current.ok || !isEventStream(current)) {
        throw await this.#statusError(current, `resuming "${message.method}"`, session);
      }
    }
  }

  #fromJSONBody(text: string, request: JSONRPCRequest): JSONRPCResponse {
    let answer: JSONRPCResponse | undefined;
    for (const message of parseJSONRPCBody(text)) {
      if (isResponse(message)) {
        answer = answerFor(message, request) ?? answer;
        continue;
      }
      this.#dispatch(message, undefined, request);
    }
    if (answer) return answer;
    throw new AxMCPTransportError(
      'transport_error',
      `The response to "${request.method}" did not carry its id`,
      {
        endpoint: this.endpoint,
      },
    );
  }

  /** A 4xx/5xx carrying a JSON-RPC error for this request is an answer, not a transport failure. */
  async #inBandOrThrow(
    response: Response,
    request: JSONRPCRequest,
    session: string | undefined,
  ): Promise<JSONRPCResponse> {
    const { text, answer, lost } = await this.#errorBody(response, session);
    if (lost) throw lost;
    if (answer && 'error' in answer && (answer.id === request.id || answer.id === null)) {
      return { jsonrpc: '2.0', id: request.id, error: answer.error };
    }
    throw this.#statusErrorFrom(response, text, `"${request.method}"`);
  }

  async #postWithoutAnswer(message: JSONRPCMessage, options: AxMCPSendOptions): Promise<void> {
    this.#assertOpen();
    const link = this.#link(options.signal);
    const timer = setTimeout(() => link.abort(this.#timeout('sending a message')), this.#timeoutMs);
    const session = this.#sessionId;
    try {
      const response = await this.#send(
        'POST',
        JSON.stringify(message),
        this.#postHeaders(options),
        link.signal,
      );
      this.#captureSession(response);
      if (response.ok) {
        await response.body?.cancel().catch(() => {});
        return;
      }
      const { text, lost } = await this.#errorBody(response, session);
      throw lost ?? this.#statusErrorFrom(response, text, 'a message');
    } catch (error) {
      throw this.#rethrow(error, link.signal);
    } finally {
      clearTimeout(timer);
      link.dispose();
    }
  }

  /**
   * A shorter way for a POST, which a runtime's subclass may offer (`ax-mcp/node` does, over
   * node:http). Used only without `authentication`. It answers with the JSON text of a 200
   * answer, with a response to handle the usual way, or with `undefined` when the request must
   * go the full way (a redirect: the server did not act on it).
   * @internal
   */
  protected sendDirect?(post: AxMCPDirectPost): Promise<AxMCPDirectAnswer | undefined>;

  /** The headers `#sendOnce` would send, as a plain object, and the SSRF check of the URL. */
  async #postDirect(
    body: string,
    options: AxMCPSendOptions,
    signal: AbortSignal,
  ): Promise<AxMCPDirectAnswer | undefined> {
    if (this.#ssrf.validateURL !== undefined) await assertURLAllowed(this.#url, this.#ssrf);
    const headers: Record<string, string> = Object.create(null);
    const add = (from: Record<string, string> | undefined) => {
      if (from) for (const name of Object.keys(from)) headers[name.toLowerCase()] = from[name] as string;
    };
    add(this.#options.headers);
    add(this.#postHeaders(options));
    if (this.#sessionId !== undefined) headers[SESSION_HEADER] = this.#sessionId;
    if (this.#protocolVersion !== undefined && headers['mcp-protocol-version'] === undefined) {
      headers['mcp-protocol-version'] = this.#protocolVersion;
    }
    return (this.sendDirect as NonNullable<typeof this.sendDirect>)({
      url: this.#url,
      headers,
      body,
      signal,
      maxBytes: this.#maxBytes,
    });
  }

  #postHeaders(options: AxMCPSendOptions): Record<string, string> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    if (options.headers) Object.assign(headers, options.headers);
    return headers;
  }

  /** One HTTP exchange, answering authentication challenges (bounded) by sending again. */
  async #send(
    method: 'GET' | 'POST' | 'DELETE',
    body: string | undefined,
    extra: Record<string, string>,
    signal: AbortSignal,
  ): Promise<Response> {
    const strategies = this.#strategies;
    for (let attempt = 0; ; attempt++) {
      const response = await this.#sendOnce(method, body, extra, signal);
      const seen = { status: response.status, headers: response.headers, url: this.#url };
      for (const strategy of strategies) strategy.observe?.(seen);
      if ((response.status !== 401 && response.status !== 403) || attempt >= MAX_CHALLENGES) return response;
      let retry = false;
      for (const strategy of strategies) {
        if (!strategy.challenge) continue;
        if (await strategy.challenge({ ...seen, method, attempt, signal })) {
          retry = true;
          break;
        }
      }
      if (!retry) return response;
      await response.body?.cancel().catch(() => {});
    }
  }

  get #strategies(): readonly AxMCPAuthentication[] {
    const authentication = this.#options.authentication;
    if (authentication === undefined) return [];
    return Array.isArray(authentication) ? authentication : [authentication as AxMCPAuthentication];
  }

  async #sendOnce(
    method: 'GET' | 'POST' | 'DELETE',
    body: string | undefined,
    extra: Record<string, string>,
    signal: AbortSignal,
  ): Promise<Response> {
    const headers = new Headers(this.#options.headers);
    for (const [name, value] of Object.entries(extra)) headers.set(name, value);
    if (this.#sessionId !== undefined) headers.set(SESSION_HEADER, this.#sessionId);
    if (this.#protocolVersion !== undefined && !headers.has('mcp-protocol-version')) {
      headers.set('mcp-protocol-version', this.#protocolVersion);
    }
    const authRequest =
      body === undefined ? { method, url: this.#url, headers } : { method, url: this.#url, headers, body };
    const { url, headers: finalHeaders } = await applyAuthentication(
      this.#options.authentication,
      authRequest,
    );
    const init: RequestInit = { method, headers: finalHeaders, signal };
    if (body !== undefined) init.body = body;
    return this.#fetch(url, init);
  }

  #captureSession(response: Response): void {
    this.#captureSessionId(response.headers.get(SESSION_HEADER));
  }

  #captureSessionId(id: string | null): void {
    if (id !== null && /^[\x21-\x7e]+$/.test(id)) this.#sessionId = id;
  }

  #dispatch(message: JSONRPCMessage, eventId: string | undefined, related: JSONRPCRequest): void {
    if (isResponse(message)) return;
    const context =
      eventId === undefined ? { relatedRequestId: related.id } : { eventId, relatedRequestId: related.id };
    this.#handlers?.onMessage(message, context);
  }

  #retryWait(error: unknown, attempt: number, options: AxMCPSendOptions): number | undefined {
    if (!options.idempotent || attempt >= this.#retry.attempts || options.signal?.aborted || this.#closed) {
      return undefined;
    }
    if (error instanceof AxMCPHTTPStatusError && RETRYABLE_STATUSES.has(error.status)) {
      return retryDelayMs(this.#retry, attempt, error.retryAfterMs);
    }
    if (
      error instanceof AxMCPTransportError &&
      error.code === 'transport_error' &&
      error.cause instanceof TypeError
    ) {
      return retryDelayMs(this.#retry, attempt);
    }
    return undefined;
  }

  async #statusError(response: Response, what: string, session: string | undefined): Promise<AxMCPError> {
    const { text, lost } = await this.#errorBody(response, session);
    return lost ?? this.#statusErrorFrom(response, text, what);
  }

  /**
   * The start of an error response's body, the JSON-RPC answer in it if any, and whether it
   * says the session `session` was lost (every error path reads it the same way).
   */
  async #errorBody(response: Response, session: string | undefined) {
    const text = await readTextLimited(response, ERROR_BODY_BYTES, undefined, { truncate: true }).catch(
      () => '',
    );
    const answer = parseErrorAnswer(text);
    const lost =
      session !== undefined && sessionLost(response.status, answer)
        ? new AxMCPSessionExpiredError(undefined, { endpoint: this.endpoint, sessionId: session })
        : undefined;
    return { text, answer, lost };
  }

  #statusErrorFrom(response: Response, text: string, what: string): AxMCPHTTPStatusError {
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
    const context: ConstructorParameters<typeof AxMCPHTTPStatusError>[2] = {
      endpoint: this.endpoint,
      bodySnippet: text.slice(0, 500),
    };
    if (retryAfterMs !== undefined) context.retryAfterMs = retryAfterMs;
    return new AxMCPHTTPStatusError(response.status, `HTTP ${response.status} for ${what}`, context);
  }

  /** Normalizes failures: aborts keep their reason; raw network errors become typed. */
  #rethrow(error: unknown, signal: AbortSignal): unknown {
    if (signal.aborted) return abortReason(signal);
    if (error instanceof TypeError) {
      return new AxMCPTransportError(
        'transport_error',
        `Could not reach ${this.endpoint}: ${error.message}`,
        {
          endpoint: this.endpoint,
          cause: error,
        },
      );
    }
    return error;
  }

  #timeout(what: string): AxMCPTransportError {
    return new AxMCPTransportError(
      'transport_error',
      `Timed out ${what} after ${this.#timeoutMs} ms (the transport's timeoutMs option)`,
      { endpoint: this.endpoint },
    );
  }

  #assertOpen(): void {
    if (this.#closed)
      throw new AxMCPTransportError('closed', 'The transport was closed', { endpoint: this.endpoint });
  }
}

/**
 * A response answers this request when it carries its id — or, being an error, no id
 * at all: a POST carries exactly one request, so an id-less error can only be about it.
 */
function answerFor(response: JSONRPCResponse, request: JSONRPCRequest): JSONRPCResponse | undefined {
  if (response.id === request.id) return response;
  if (response.id === null && 'error' in response)
    return { jsonrpc: '2.0', id: request.id, error: response.error };
  return undefined;
}

function isEventStream(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream');
}

function parseErrorAnswer(text: string): JSONRPCResponse | undefined {
  if (text === '') return undefined;
  try {
    const [first] = parseJSONRPCBody(text);
    return first && isResponse(first) ? first : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A legacy server that lost the session answers 404 (the specification), or — some
 * servers — 400 with an id-less error about the session. Only meaningful while a
 * session id is held: the stateless era has none, and its 404 means "unknown method".
 */
function sessionLost(status: number, answer: JSONRPCResponse | undefined): boolean {
  if (status === 404) return true;
  if (status === 400 && answer && 'error' in answer && answer.id === null) {
    return /session/i.test(answer.error.message);
  }
  return false;
}
