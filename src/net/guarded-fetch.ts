/**
 * The guarded `fetch`: SSRF policy on every hop, redirects followed by hand with
 * credential stripping, and size-capped body reads.
 */
import { array, func, number, object, string } from '../options/check.js';
import { AxMCPError, AxMCPSSRFError, AxMCPTransportError, assertMCPOptions } from '../protocol/errors.js';
import {
  type AxMCPSSRFProtection,
  assertURLAllowed,
  redactURL,
  resolveSSRFPolicy,
  SSRF_PROTECTION,
} from './ssrf.js';

/** A `fetch`-compatible function (the global `fetch` is one). */
export type AxMCPFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** Options of {@link createGuardedFetch}. */
export interface AxMCPGuardedFetchOptions {
  /** The underlying fetch, called with `redirect: 'manual'` (default: the global `fetch`). */
  fetch?: AxMCPFetch;
  /** SSRF protection (default on). */
  ssrfProtection?: AxMCPSSRFProtection;
  /** How many redirects to follow before failing (default 5; 0 refuses every redirect). */
  maxRedirects?: number;
  /**
   * More header names to drop when a redirect leaves the origin, on top of
   * `authorization`, `cookie`, `proxy-authorization`, `x-api-key` and `dpop`.
   */
  sensitiveHeaders?: readonly string[];
}

/** The shape of a `fetch` option: what ax-mcp calls as `fetch(url, init)`. */
export const FETCH = func('a fetch function (url, init) => Promise<Response>');

/** The shape of {@link AxMCPGuardedFetchOptions}, every key of it. */
export const GUARDED_FETCH_OPTIONS = object(
  {
    fetch: FETCH,
    ssrfProtection: SSRF_PROTECTION,
    maxRedirects: number({ integer: true, min: 0 }),
    sensitiveHeaders: array(string({ nonEmpty: true })),
  },
  { aliases: { redirects: 'maxRedirects', ssrf: 'ssrfProtection' } },
);

/** Headers dropped whenever a redirect changes origin. */
export const DEFAULT_SENSITIVE_HEADERS: readonly string[] = Object.freeze([
  'authorization',
  'cookie',
  'proxy-authorization',
  'x-api-key',
  'dpop',
]);

/** Options of reading a response body under a byte limit. */
export interface AxMCPReadLimitOptions {
  /** Return the first `maxBytes` bytes instead of failing when the body is longer (for error snippets). */
  truncate?: boolean;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Wraps a fetch so that every request, and every redirect hop, passes the SSRF policy.
 * Redirects are followed here (the underlying fetch gets `redirect: 'manual'`): 307 and
 * 308 for any method, keeping method and body; 301, 302 and 303 only for GET and HEAD
 * (another method answered by one of them fails). A hop to another origin drops the
 * credential headers, a hop from `https:` to `http:` is refused, and more than
 * `maxRedirects` hops fail with `AxMCPTransportError('transport_error')`. `init.redirect`
 * is honoured: `'manual'` returns the 3xx response, `'error'` fails on it.
 *
 * In a browser the platform hides redirects from `redirect: 'manual'`; such a response fails.
 * The policy sees URLs only: combine with the DNS-checked fetch of `ax-mcp/node` to guard
 * against names that resolve to private addresses.
 */
export function createGuardedFetch(options: AxMCPGuardedFetchOptions = {}): AxMCPFetch {
  assertMCPOptions(GUARDED_FETCH_OPTIONS, options, 'createGuardedFetch options');
  const policy = resolveSSRFPolicy(options.ssrfProtection);
  const maxRedirects = options.maxRedirects ?? 5;
  const sensitive = [
    ...new Set([
      ...DEFAULT_SENSITIVE_HEADERS,
      ...(options.sensitiveHeaders ?? []).map((n) => n.toLowerCase()),
    ]),
  ];
  const base: AxMCPFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));

  return async function guardedFetch(input: string | URL, init: RequestInit = {}): Promise<Response> {
    let url = toURL(input);
    const mode = init.redirect ?? 'follow';
    const method = (init.method ?? 'GET').toUpperCase();
    let request: RequestInit = { ...init, redirect: 'manual' };
    let stripped = false;
    for (let hop = 0; ; hop++) {
      init.signal?.throwIfAborted();
      await assertURLAllowed(url, policy);
      const response = await base(url, request);
      if (response.type === 'opaqueredirect') {
        throw new AxMCPTransportError(
          'transport_error',
          'The server redirected, and this runtime hides redirect targets, so it cannot be checked',
          { endpoint: redactURL(url) },
        );
      }
      const status = response.status;
      if (!REDIRECT_STATUSES.has(status) || mode === 'manual') return response;
      const location = response.headers.get('location');
      if (location === null) return response;
      await discard(response);
      const endpoint = redactURL(url);
      if (mode === 'error') {
        throw new AxMCPTransportError(
          'transport_error',
          `Redirect (${status}) refused: redirect mode is "error"`,
          {
            endpoint,
          },
        );
      }
      if (hop >= maxRedirects) {
        throw new AxMCPTransportError(
          'transport_error',
          `Too many redirects (more than ${maxRedirects}; the maxRedirects option allows more)`,
          { endpoint },
        );
      }
      let next: URL;
      try {
        next = new URL(location, url);
      } catch (error) {
        throw new AxMCPTransportError('transport_error', `Redirect (${status}) to an invalid Location`, {
          endpoint,
          cause: error,
        });
      }
      next.hash = '';
      if (url.protocol === 'https:' && next.protocol === 'http:') {
        throw new AxMCPSSRFError(redactURL(next), `redirect from https: to http: (from ${endpoint})`);
      }
      if (status === 307 || status === 308) {
        if (init.body instanceof ReadableStream) {
          throw new AxMCPTransportError(
            'transport_error',
            `Redirect (${status}) needs the request body again, and a stream body cannot be replayed`,
            { endpoint },
          );
        }
      } else if (method !== 'GET' && method !== 'HEAD') {
        throw new AxMCPTransportError(
          'transport_error',
          `${method} answered with a ${status} redirect; only 307 and 308 may repeat a ${method}`,
          { endpoint },
        );
      }
      if (!stripped && next.origin !== url.origin) {
        request = { ...request, headers: withoutHeaders(init.headers, sensitive) };
        stripped = true;
      }
      url = next;
    }
  };
}

/**
 * Reads a response body up to `maxBytes`, streaming. As soon as the body (or its declared
 * `Content-Length`) exceeds the cap, the body is cancelled and
 * `AxMCPTransportError('message_too_large')` thrown; at most `maxBytes` bytes are ever held.
 * With `{ truncate: true }` the first `maxBytes` bytes are returned instead. An abort
 * cancels the body and rejects with the signal's reason.
 */
export async function readBodyLimited(
  response: Response,
  maxBytes: number,
  signal?: AbortSignal,
  options: AxMCPReadLimitOptions = {},
): Promise<Uint8Array> {
  if (!(maxBytes >= 0)) throw new AxMCPError('invalid_argument', 'maxBytes must be a non-negative number');
  const body = response.body;
  if (signal?.aborted) {
    await cancelQuietly(body, signal.reason);
    throw signal.reason;
  }
  if (body === null) return new Uint8Array(0);
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes && !options.truncate) {
    await cancelQuietly(body);
    throw tooLarge(maxBytes, response);
  }
  const reader = body.getReader();
  const onAbort = () => {
    reader.cancel(signal?.reason).catch(() => {});
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (error instanceof AxMCPError) throw error;
        throw new AxMCPTransportError('transport_error', 'Reading the response body failed', {
          cause: error,
          endpoint: responseEndpoint(response),
        });
      }
      if (signal?.aborted) throw signal.reason;
      if (chunk.done) break;
      const value = chunk.value;
      if (total + value.byteLength > maxBytes) {
        await reader.cancel().catch(() => {});
        if (!options.truncate) throw tooLarge(maxBytes, response);
        const room = maxBytes - total;
        if (room > 0) chunks.push(value.subarray(0, room));
        total += room;
        break;
      }
      chunks.push(value);
      total += value.byteLength;
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    try {
      reader.releaseLock();
    } catch {
      // A read is still pending after a cancel; the lock goes with the stream.
    }
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** {@link readBodyLimited}, decoded as UTF-8 (invalid sequences become U+FFFD). */
export async function readTextLimited(
  response: Response,
  maxBytes: number,
  signal?: AbortSignal,
  options: AxMCPReadLimitOptions = {},
): Promise<string> {
  return utf8.decode(await readBodyLimited(response, maxBytes, signal, options));
}

const utf8 = new TextDecoder('utf-8');

function tooLarge(maxBytes: number, response: Response): AxMCPTransportError {
  return new AxMCPTransportError('message_too_large', `Response body exceeds ${maxBytes} bytes`, {
    endpoint: responseEndpoint(response),
  });
}

function responseEndpoint(response: Response): string | undefined {
  if (!response.url) return undefined;
  try {
    return redactURL(new URL(response.url));
  } catch {
    return undefined;
  }
}

function toURL(input: string | URL): URL {
  if (input instanceof URL) return input;
  if (typeof input !== 'string') {
    throw new AxMCPError('invalid_argument', 'The guarded fetch takes a URL or a string, not a Request');
  }
  try {
    return new URL(input);
  } catch (error) {
    throw new AxMCPError('invalid_argument', 'Not a valid absolute URL', { cause: error });
  }
}

function withoutHeaders(init: HeadersInit | undefined, names: readonly string[]): Headers {
  const headers = new Headers(init);
  for (const name of names) headers.delete(name);
  return headers;
}

async function discard(response: Response): Promise<void> {
  await cancelQuietly(response.body);
}

async function cancelQuietly(body: ReadableStream<Uint8Array> | null, reason?: unknown): Promise<void> {
  if (body === null || body.locked) return;
  await body.cancel(reason).catch(() => {});
}
