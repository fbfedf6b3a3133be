/**
 * A fetch for Node built on `node:http`/`node:https`: keep-alive agents reused across
 * requests, a streamed response body, a DNS `lookup` hook that checks every resolved
 * address against the SSRF policy before the socket connects (DNS-rebinding protection), and
 * a TLS client certificate for mutual TLS (RFC 8705) when one is given.
 */
import type { LookupFunction } from 'node:net';
import { markClientCertificate } from '../auth/oauth/mtls.js';
import type { AxMCPFetch } from '../net/guarded-fetch.js';
import {
  type AxMCPSSRFProtection,
  assertURLAllowed,
  resolveSSRFPolicy,
  SSRF_PROTECTION,
} from '../net/ssrf.js';
import { object } from '../options/check.js';
import { AxMCPError, AxMCPTransportError, assertMCPOptions } from '../protocol/errors.js';
import { NODE_CONNECTION_KEYS, nodeAgents } from './http/agents.js';
import { NodeHTTPClient } from './http/client.js';
import { outgoingHeaders } from './http/headers.js';
import { toRequestBody } from './http/request-body.js';
import { type AxMCPNodeTLSOptions, resolveTLS } from './http/tls.js';
import { readWebResponse } from './http/web-response.js';

/** Options of {@link createNodeFetch}. */
export interface AxMCPNodeFetchOptions {
  /** SSRF protection (default on), applied to the URL and to every address DNS returns. */
  ssrfProtection?: AxMCPSSRFProtection;
  /** Keep connections open for reuse (default `true`). */
  keepAlive?: boolean;
  /** Most sockets per origin (default: unlimited). */
  maxSockets?: number;
  /** The DNS lookup to guard (default `dns.lookup`); tests inject one here. */
  lookup?: LookupFunction;
  /** HTTPS settings: a client certificate (mutual TLS, RFC 8705), the CAs to trust. */
  tls?: AxMCPNodeTLSOptions;
}

/** The shape of {@link AxMCPNodeFetchOptions}, every key of it. */
const NODE_FETCH_OPTIONS = object(
  { ssrfProtection: SSRF_PROTECTION, ...NODE_CONNECTION_KEYS },
  {
    expected: 'an options object { ssrfProtection?, keepAlive?, maxSockets?, lookup?, tls? }',
    aliases: { ssrf: 'ssrfProtection', agent: 'keepAlive', dnsLookup: 'lookup' },
  },
);

/** A fetch-compatible function with {@link AxMCPNodeFetch.close}. */
export interface AxMCPNodeFetch extends AxMCPFetch {
  /** Destroys the agents and their sockets (in-flight requests fail); later calls fail with `closed`. */
  close(): void;
}

/**
 * Creates a fetch for Node. It checks the URL with the SSRF policy (`validateURL`
 * included), and every address the DNS lookup returns, before connecting: a name that
 * resolves to `127.0.0.1` is refused unless `allowLoopback`. It does not follow redirects
 * (3xx responses come back as they are; wrap it in `createGuardedFetch`), does not decode
 * `Content-Encoding` (it never asks for compression), and accepts string, `Uint8Array`,
 * `ArrayBuffer`, `URLSearchParams` and `Blob` bodies. Aborting `init.signal` destroys the
 * request and rejects (or errors the body) with the signal's reason. A request on a reused
 * keep-alive socket that the server had just closed is retried once for idempotent methods.
 * With `tls: { cert, key }` every HTTPS connection presents that client certificate, and OAuth
 * given this fetch uses mutual TLS (RFC 8705).
 *
 * @example
 * const nodeFetch = createNodeFetch({ ssrfProtection: { allowLoopback: true } });
 * const fetch = createGuardedFetch({ fetch: nodeFetch, ssrfProtection: { allowLoopback: true } });
 * // …
 * nodeFetch.close();
 */
export function createNodeFetch(options: AxMCPNodeFetchOptions = {}): AxMCPNodeFetch {
  assertMCPOptions(NODE_FETCH_OPTIONS, options, 'createNodeFetch options');
  const tls = resolveTLS(options.tls, 'createNodeFetch options');
  const policy = resolveSSRFPolicy(options.ssrfProtection);
  const { keepAlive, maxSockets, lookup } = options;
  // Agents of its own: `close()` ends their sockets.
  const client = new NodeHTTPClient(nodeAgents({ keepAlive, maxSockets, lookup, tls }, policy, false));

  const nodeFetch = async (input: string | URL, init?: RequestInit): Promise<Response> => {
    if (client.closed) throw new AxMCPTransportError('closed', 'This fetch was closed');
    const url = toURL(input);
    const signal = init?.signal ?? undefined;
    signal?.throwIfAborted();
    await assertURLAllowed(url, policy);
    const method = init?.method === undefined ? 'GET' : init.method.toUpperCase();
    const headers = outgoingHeaders(init?.headers);
    const body = await toRequestBody(init?.body, headers);
    if (body !== undefined && (method === 'GET' || method === 'HEAD')) {
      throw new AxMCPError('invalid_argument', `A ${method} request cannot have a body`);
    }
    signal?.throwIfAborted();
    if (client.closed) throw new AxMCPTransportError('closed', 'This fetch was closed');
    return client.send({ url, method, headers, body, signal }, readWebResponse);
  };

  if (tls?.clientCertificate) markClientCertificate(nodeFetch);
  return Object.assign(nodeFetch, {
    close(): void {
      client.close(new AxMCPTransportError('closed', 'The fetch was closed'));
    },
  });
}

function toURL(input: string | URL): URL {
  if (input instanceof URL) return input;
  if (typeof input !== 'string') {
    throw new AxMCPError('invalid_argument', 'This fetch takes a URL or a string, not a Request');
  }
  try {
    return new URL(input);
  } catch (error) {
    throw new AxMCPError('invalid_argument', 'Not a valid absolute URL', { cause: error });
  }
}
