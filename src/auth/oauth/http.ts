/**
 * Every HTTP call of the OAuth client goes through here: the guarded fetch (SSRF policy on
 * every hop, credentials dropped across origins), a deadline per call, and bodies read
 * with a size cap before anything parses them.
 */
import {
  type AxMCPFetch,
  createGuardedFetch,
  FETCH,
  readBodyLimited,
  readTextLimited,
} from '../../net/guarded-fetch.js';
import { type AxMCPSSRFProtection, SSRF_PROTECTION } from '../../net/ssrf.js';
import { number } from '../../options/check.js';
import { abortReason, linkAbort } from '../../protocol/abort.js';
import { AxMCPTransportError } from '../../protocol/errors.js';

/** Options of {@link OAuthHTTP}. */
export interface OAuthHTTPOptions {
  fetch?: AxMCPFetch;
  ssrfProtection?: AxMCPSSRFProtection;
  /** Deadline of one HTTP exchange (default 30 000 ms). */
  timeoutMs?: number;
  /** The largest response body accepted (default 1 MiB). */
  maxResponseBytes?: number;
}

/** The shapes of the keys of {@link OAuthHTTPOptions} (part of `axMCPOAuth`'s options). */
export const OAUTH_HTTP_KEYS = {
  fetch: FETCH,
  ssrfProtection: SSRF_PROTECTION,
  timeoutMs: number({ min: 1 }),
  maxResponseBytes: number({ integer: true, min: 1 }),
} as const;

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/** The OAuth client's HTTP: guarded, bounded in time and size. */
export class OAuthHTTP {
  readonly #fetch: AxMCPFetch;
  readonly #timeoutMs: number;
  readonly #maxBytes: number;

  constructor(options: OAuthHTTPOptions = {}) {
    const guard: Parameters<typeof createGuardedFetch>[0] = {
      ssrfProtection: options.ssrfProtection ?? true,
      maxRedirects: 5,
    };
    if (options.fetch) guard.fetch = options.fetch;
    this.#fetch = createGuardedFetch(guard);
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#maxBytes = options.maxResponseBytes ?? 1024 * 1024;
  }

  /**
   * One exchange; the body is read (capped) before this returns, so the answer is a
   * self-contained `Response` that nothing can stream from the network any more.
   */
  async send(url: string | URL, init: RequestInit, signal?: AbortSignal): Promise<Response> {
    const link = linkAbort(signal);
    const timer = setTimeout(
      () =>
        link.abort(
          new AxMCPTransportError('transport_error', `Timed out after ${this.#timeoutMs} ms`, {
            endpoint: endpointOf(url),
          }),
        ),
      this.#timeoutMs,
    );
    try {
      const response = await this.#fetch(url, { ...init, signal: link.signal });
      const body = NULL_BODY_STATUSES.has(response.status)
        ? null
        : await readBodyLimited(response, this.#maxBytes, link.signal);
      return new Response(body as Uint8Array<ArrayBuffer> | null, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    } catch (error) {
      if (link.signal.aborted) throw abortReason(link.signal);
      if (error instanceof TypeError) {
        throw new AxMCPTransportError('transport_error', `Could not reach ${endpointOf(url)}`, {
          endpoint: endpointOf(url),
          cause: error,
        });
      }
      throw error;
    } finally {
      clearTimeout(timer);
      link.dispose();
    }
  }

  /** GET a JSON document: the parsed object, or `undefined` for a non-2xx answer. */
  async getJSON(
    url: URL,
    signal?: AbortSignal,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; json?: Record<string, unknown> }> {
    const response = await this.send(
      url,
      { method: 'GET', headers: { accept: 'application/json', ...headers }, redirect: 'follow' },
      signal,
    );
    if (!response.ok) return { status: response.status };
    const text = await readTextLimited(response, this.#maxBytes);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return { status: response.status };
    }
    if (!json || typeof json !== 'object' || Array.isArray(json)) return { status: response.status };
    return { status: response.status, json: json as Record<string, unknown> };
  }

  /** The `customFetch` that oauth4webapi calls: the same guarded, bounded exchange. */
  readonly customFetch = (
    url: string,
    options: { method: string; headers: Record<string, string>; body: unknown; signal?: AbortSignal },
  ): Promise<Response> => {
    const init: RequestInit = { method: options.method, headers: options.headers, redirect: 'manual' };
    if (options.body !== undefined && options.body !== null) init.body = options.body as BodyInit;
    return this.send(url, init, options.signal);
  };
}

function endpointOf(url: string | URL): string {
  try {
    const parsed = typeof url === 'string' ? new URL(url) : url;
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}
