/**
 * Mutual TLS (RFC 8705) as the OAuth client sees it. The certificate itself lives in the HTTP
 * stack (a web-standard `fetch` cannot present one): `ax-mcp/node`'s `createNodeFetch({ tls })`
 * and `AxMCPNodeHTTPTransport({ tls })` mark their fetch, and so can a host's own stack
 * (undici with a dispatcher, `Deno.createHttpClient`, Bun's `tls`). The OAuth client then uses
 * the server's `mtls_endpoint_aliases`, may authenticate with `tls_client_auth` or
 * `self_signed_tls_client_auth`, and asks for certificate-bound tokens when it registers.
 */
import type { AxMCPFetch } from '../../net/guarded-fetch.js';

/** The mark of a fetch that presents a TLS client certificate (shared across copies of the package). */
const CLIENT_CERTIFICATE = Symbol.for('ax-mcp.tls-client-certificate');

/** The token endpoint authentication methods that are mutual TLS. */
export const MTLS_METHODS = ['tls_client_auth', 'self_signed_tls_client_auth'] as const;

/** What to use where no certificate can be presented (the words of every mTLS refusal). */
export const MTLS_INSTEAD =
  "give the HTTP stack a client certificate: AxMCPNodeHTTPTransport from 'ax-mcp/node' with " +
  'tls: { cert, key }, createNodeFetch({ tls }) as the fetch, or your own fetch marked with ' +
  'axMCPFetchWithClientCertificate(fetch)';

/**
 * Declares that `fetch` presents a TLS client certificate on every HTTPS connection it makes,
 * so that OAuth uses mutual TLS (RFC 8705) with it. For a host's own HTTP stack; ax-mcp/node's
 * `createNodeFetch({ tls: { cert, key } })` is marked already. Returns a new function.
 *
 * @example
 * ```ts
 * import { Agent, fetch as undiciFetch } from 'undici';
 * const agent = new Agent({ connect: { cert, key } });
 * const fetch = axMCPFetchWithClientCertificate((url, init) => undiciFetch(url, { ...init, dispatcher: agent }));
 * ```
 */
export function axMCPFetchWithClientCertificate<F extends AxMCPFetch>(fetch: F): F {
  if (typeof fetch !== 'function')
    throw new TypeError('axMCPFetchWithClientCertificate takes a fetch function');
  const marked = ((input: string | URL, init?: RequestInit) => fetch(input, init)) as F;
  return markClientCertificate(marked);
}

/** Marks `fetch` itself (for fetches ax-mcp makes). */
export function markClientCertificate<F extends object>(fetch: F): F {
  Object.defineProperty(fetch, CLIENT_CERTIFICATE, { value: true, enumerable: false });
  return fetch;
}

/** Does `fetch` present a TLS client certificate? */
export function presentsClientCertificate(fetch: unknown): boolean {
  return (
    typeof fetch === 'function' && (fetch as unknown as Record<symbol, unknown>)[CLIENT_CERTIFICATE] === true
  );
}

/** Is `method` one of the mutual-TLS client authentication methods? */
export function isMTLSMethod(method: unknown): method is (typeof MTLS_METHODS)[number] {
  return method === 'tls_client_auth' || method === 'self_signed_tls_client_auth';
}
