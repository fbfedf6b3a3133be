/**
 * What a user configures for the Streamable HTTP transport: the options and their schema,
 * shared with the transports built on it (the HTTP+SSE fallback, ax-mcp/node's).
 */
import { AUTHENTICATION_OPTION } from '../../auth/authentication.js';
import type { AxMCPAuthentication, AxMCPOAuthOptions } from '../../auth/index.js';
import { OAUTH_OPTIONS } from '../../auth/oauth/options.js';
import { FETCH } from '../../net/guarded-fetch.js';
import { type AxMCPSSRFOptions, SSRF_PROTECTION } from '../../net/ssrf.js';
import { anyOf, func, number, object, oneOf, record, string } from '../../options/check.js';
import type { AxMCPProtocolError } from '../../protocol/errors.js';
import { type AxMCPRetryOptions, RETRY_OPTIONS } from './retry.js';

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
  /**
   * Retries on 429/502/503/504 and network failures (a reset or refused connection, on either
   * HTTP entry) of safe requests, notifications and responses (all harmless to repeat; never
   * `tools/call`), or `false`.
   */
  retry?: AxMCPRetryOptions | false;
  /** Times a broken response stream is resumed with `Last-Event-ID` before giving up (default 5). */
  maxResumeAttempts?: number;
  /**
   * Called with protocol errors the transport skipped (an undecodable event on a stream).
   * Without it, the client's `onError` is told (see `AxMCPTransportHandlers.onProtocolError`).
   */
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
