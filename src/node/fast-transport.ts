/**
 * The Streamable HTTP transport on Node's own HTTP client: the same transport, with the same
 * protocol handling, authentication, retries, resumption and SSRF policy, but each message
 * travels over `node:http` (keep-alive agents, DNS-checked addresses) and comes back as a
 * lean response object instead of a web `Response` with a `ReadableStream` body. On a
 * loopback `tools/call` that machinery costs more client CPU than the MCP work itself.
 */

import type { LookupFunction } from 'node:net';
import { resolveSSRFPolicy } from '../net/ssrf.js';
import { object } from '../options/check.js';
import { AxMCPTransportError, assertMCPOptions } from '../protocol/errors.js';
import {
  AxMCPStreamableHTTPTransport,
  type AxMCPStreamableHTTPTransportOptions,
  HTTP_TRANSPORT_ALIASES,
  STREAMABLE_HTTP_KEYS,
} from '../transport/http/streamable-http.js';
import { NODE_CONNECTION_KEYS, nodeAgents } from './http/agents.js';
import { NodeHTTPClient } from './http/client.js';
import { directSender } from './http/direct-post.js';
import { leanFetch } from './http/lean-fetch.js';
import { type AxMCPNodeTLSOptions, resolveTLS } from './http/tls.js';
import { type AxMCPNodeFetch, createNodeFetch } from './node-fetch.js';

/** Options of {@link AxMCPNodeHTTPTransport}. */
export interface AxMCPNodeHTTPTransportOptions extends Omit<AxMCPStreamableHTTPTransportOptions, 'fetch'> {
  /** Keep connections open for reuse (default `true`). */
  keepAlive?: boolean;
  /** Most sockets per origin (default: unlimited). */
  maxSockets?: number;
  /** The DNS lookup to guard (default `dns.lookup`). */
  lookup?: LookupFunction;
  /**
   * HTTPS settings: a client certificate (`cert`, `key`) presented to the MCP server and, with
   * `oauth`, to the authorization server (mutual TLS, RFC 8705: `tls_client_auth`,
   * certificate-bound tokens); the CAs to trust (`ca`).
   */
  tls?: AxMCPNodeTLSOptions;
}

/** The keys this fetch-less transport shares with {@link AxMCPStreamableHTTPTransport}. */
const { fetch: _fetch, ...STREAMABLE_KEYS_BUT_FETCH } = STREAMABLE_HTTP_KEYS;

/** The shape of {@link AxMCPNodeHTTPTransportOptions}, every key of it; checked once in the constructor. */
const NODE_HTTP_OPTIONS = object(
  { ...STREAMABLE_KEYS_BUT_FETCH, ...NODE_CONNECTION_KEYS },
  {
    expected: 'an options object { headers?, authentication?, oauth?, ssrfProtection?, keepAlive?, … }',
    aliases: { ...HTTP_TRANSPORT_ALIASES, agent: 'keepAlive', dnsLookup: 'lookup' },
  },
);

/**
 * {@link AxMCPStreamableHTTPTransport} for Node: the fast path. Every resolved address is
 * checked against the SSRF policy before a socket connects (DNS-rebinding protection);
 * OAuth traffic, when `oauth` is set, goes through {@link createNodeFetch}. As there, an
 * idempotent request (the GET stream, the DELETE ending a session) that meets a keep-alive
 * socket the server had just closed is sent once more; a POST never is.
 *
 * @example
 * ```ts
 * import { AxMCPClient } from 'ax-mcp';
 * import { AxMCPNodeHTTPTransport } from 'ax-mcp/node';
 * const client = new AxMCPClient(new AxMCPNodeHTTPTransport('https://mcp.example.com/mcp'), {
 *   namespace: 'example',
 * });
 * ```
 */
export class AxMCPNodeHTTPTransport extends AxMCPStreamableHTTPTransport {
  readonly #http: NodeHTTPClient;
  readonly #oauthFetch: AxMCPNodeFetch | undefined;

  constructor(url: string | URL, options: AxMCPNodeHTTPTransportOptions = {}) {
    // Before any agent or policy is made: `fetch` is not an option here (the transport brings its own).
    assertMCPOptions(NODE_HTTP_OPTIONS, options, 'AxMCPNodeHTTPTransport options');
    const { keepAlive, maxSockets, lookup, tls, ...transportOptions } = options;
    const resolvedTLS = resolveTLS(tls, 'AxMCPNodeHTTPTransport options');
    const nodeOptions = {
      ssrfProtection: options.ssrfProtection ?? true,
      ...(keepAlive === undefined ? {} : { keepAlive }),
      ...(maxSockets === undefined ? {} : { maxSockets }),
      ...(lookup === undefined ? {} : { lookup }),
    };
    const policy = resolveSSRFPolicy(nodeOptions.ssrfProtection);
    const settings = { ...nodeOptions, ...(resolvedTLS ? { tls: resolvedTLS } : {}) };
    const client = new NodeHTTPClient(nodeAgents(settings, policy, true));
    // OAuth parses real `Response`s: it gets a (DNS-checked) fetch of its own.
    // With `tls`, it presents the same client certificate (mutual TLS for OAuth).
    const oauthFetch =
      options.oauth && options.oauth.fetch === undefined
        ? createNodeFetch({ ...nodeOptions, ...(tls ? { tls } : {}) })
        : undefined;
    // A POST without authentication takes the direct way: a 200 JSON answer is read straight from the socket.
    super(
      url,
      {
        ...transportOptions,
        ...(oauthFetch ? { oauth: { ...options.oauth, fetch: oauthFetch } } : {}),
        fetch: leanFetch(client, policy) as unknown as typeof fetch,
      },
      directSender(client, policy),
    );
    this.#http = client;
    this.#oauthFetch = oauthFetch;
  }

  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      this.#http.close(new AxMCPTransportError('closed', 'The transport was closed'));
      this.#oauthFetch?.close();
    }
  }
}
