/**
 * How a request gets its credentials: strategies that each add headers or query
 * parameters, run in order by {@link applyAuthentication}.
 */
import { anyOf, array, instance } from '../options/check.js';
import { AxMCPError } from '../protocol/errors.js';
import { assertHeaderName, assertHeaderValue } from './encoding.js';

/** The read-only view of the outgoing headers a strategy gets. `Headers` satisfies it. */
export interface AxMCPReadonlyHeaders {
  get(name: string): string | null;
  has(name: string): boolean;
  forEach(callback: (value: string, name: string) => void): void;
}

/** The request a strategy authenticates. Treat every field as read-only. */
export interface AxMCPAuthenticationRequest {
  /** The HTTP method, upper case. */
  method: string;
  /** The URL, with the query parameters added by earlier strategies. */
  url: URL;
  /** The headers so far, including those set by earlier strategies. */
  headers: AxMCPReadonlyHeaders;
  /** The request body, when there is one (JSON-RPC bodies are strings). */
  body?: string;
  signal?: AbortSignal;
}

/** What a strategy adds: headers (set, replacing earlier values) and query parameters (set). */
export interface AxMCPAuthenticationResult {
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

/**
 * An authentication strategy. Strategies compose as an array, run in order; a later one
 * may override the headers of an earlier one and sees its query parameters (so a signing
 * strategy belongs last). Built-in strategies keep their secrets out of `toString()`,
 * `JSON.stringify` and error messages; custom ones should too.
 */
export interface AxMCPAuthentication {
  authenticate(
    request: AxMCPAuthenticationRequest,
  ): AxMCPAuthenticationResult | Promise<AxMCPAuthenticationResult>;
  /**
   * Header names this strategy sets that carry credentials, so that a redirect to another
   * origin drops them.
   */
  readonly sensitiveHeaders?: readonly string[];
  /**
   * The server refused a request (HTTP 401, or 403 such as `insufficient_scope`). Return
   * `true` when the strategy obtained new credentials and the request should be sent again;
   * the transport retries a bounded number of times. OAuth lives here.
   */
  challenge?(challenge: AxMCPAuthenticationChallenge): boolean | Promise<boolean>;
  /** Sees every response (a DPoP nonce rotates on success responses too). */
  observe?(response: AxMCPAuthenticationResponse): void;
}

/** The shape of an {@link AxMCPAuthentication}: an object with `authenticate`, and functions where it has hooks. */
export const AUTHENTICATION = instance('an AxMCPAuthentication', (value) => {
  if (typeof value !== 'object' || value === null) return false;
  const strategy = value as Record<string, unknown>;
  return (
    typeof strategy.authenticate === 'function' &&
    (strategy.challenge === undefined || typeof strategy.challenge === 'function') &&
    (strategy.observe === undefined || typeof strategy.observe === 'function') &&
    (strategy.sensitiveHeaders === undefined || Array.isArray(strategy.sensitiveHeaders))
  );
});

/** The shape of an `authentication` option: one strategy, or several in order. */
export const AUTHENTICATION_OPTION = anyOf(AUTHENTICATION, array(AUTHENTICATION));

/** A response as a strategy sees it. */
export interface AxMCPAuthenticationResponse {
  status: number;
  headers: AxMCPReadonlyHeaders;
  /** The endpoint the request went to. */
  url: URL;
}

/** A refusal a strategy may answer by obtaining credentials. */
export interface AxMCPAuthenticationChallenge extends AxMCPAuthenticationResponse {
  /** The HTTP method of the refused request. */
  method: string;
  /** How many times this request was already retried after a challenge. */
  attempt: number;
  signal?: AbortSignal;
}

/** What a strategy is given: the request before authentication. */
export interface AxMCPAuthenticationInput {
  method: string;
  url: URL | string;
  headers?: HeadersInit;
  body?: string;
  signal?: AbortSignal;
}

/**
 * Runs the strategies in order and returns the authenticated headers (always a new
 * `Headers`; the input is not modified) and URL (a new `URL` when a strategy added query
 * parameters, otherwise the one given). A strategy that throws fails the whole call; an
 * aborted signal rejects with its reason.
 */
export async function applyAuthentication(
  authentication: AxMCPAuthentication | readonly AxMCPAuthentication[] | undefined,
  input: AxMCPAuthenticationInput,
): Promise<{ headers: Headers; url: URL }> {
  const headers = new Headers(input.headers);
  let url = typeof input.url === 'string' ? new URL(input.url) : input.url;
  if (authentication === undefined) return { headers, url };
  const strategies: readonly AxMCPAuthentication[] = isList(authentication)
    ? authentication
    : [authentication];
  let ownURL = typeof input.url === 'string';
  const method = input.method.toUpperCase();
  for (const strategy of strategies) {
    input.signal?.throwIfAborted();
    const request: AxMCPAuthenticationRequest = { method, url, headers };
    if (input.body !== undefined) request.body = input.body;
    if (input.signal !== undefined) request.signal = input.signal;
    const result = await strategy.authenticate(request);
    if (result.headers !== undefined) {
      for (const name of Object.keys(result.headers)) {
        const value = result.headers[name]!;
        assertHeaderName(name, 'An authentication header name');
        assertHeaderValue(value, `The authentication header "${name}"`);
        headers.set(name, value);
      }
    }
    if (result.query !== undefined) {
      const names = Object.keys(result.query);
      if (names.length > 0 && !ownURL) {
        url = new URL(url.href);
        ownURL = true;
      }
      for (const name of names) {
        if (name === '')
          throw new AxMCPError('invalid_argument', 'An authentication query parameter has no name');
        url.searchParams.set(name, result.query[name]!);
      }
    }
  }
  input.signal?.throwIfAborted();
  return { headers, url };
}

/**
 * The credential-carrying header names the strategies declare, lower case, without
 * duplicates: pass them as `sensitiveHeaders` to `createGuardedFetch`.
 */
export function authenticationSensitiveHeaders(
  authentication: AxMCPAuthentication | readonly AxMCPAuthentication[] | undefined,
): string[] {
  if (authentication === undefined) return [];
  const strategies: readonly AxMCPAuthentication[] = isList(authentication)
    ? authentication
    : [authentication];
  const names = new Set<string>();
  for (const strategy of strategies) {
    for (const name of strategy.sensitiveHeaders ?? []) names.add(name.toLowerCase());
  }
  return [...names];
}

function isList(
  authentication: AxMCPAuthentication | readonly AxMCPAuthentication[],
): authentication is readonly AxMCPAuthentication[] {
  return Array.isArray(authentication);
}
