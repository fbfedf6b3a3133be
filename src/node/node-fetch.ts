/**
 * A fetch for Node built on `node:http`/`node:https`: keep-alive agents reused across
 * requests, a streamed response body, a DNS `lookup` hook that checks every resolved
 * address against the SSRF policy before the socket connects (DNS-rebinding protection), and
 * a TLS client certificate for mutual TLS (RFC 8705) when one is given.
 */
import * as dns from 'node:dns';
import * as http from 'node:http';
import * as https from 'node:https';
import type { LookupFunction } from 'node:net';
import * as tls from 'node:tls';
import { markClientCertificate } from '../auth/oauth/mtls.js';
import type { AxMCPFetch } from '../net/guarded-fetch.js';
import { optionsError } from '../net/options-error.js';
import {
  type AxMCPSSRFPolicy,
  type AxMCPSSRFProtection,
  assertAddressAllowed,
  assertURLAllowed,
  redactURL,
  resolveSSRFPolicy,
  SSRF_PROTECTION,
} from '../net/ssrf.js';
import { anyOf, array, boolean, func, instance, number, object, string } from '../options/check.js';
import { AxMCPError, AxMCPTransportError, assertMCPOptions } from '../protocol/errors.js';

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

/** A PEM text, or its bytes. */
export type AxMCPPEM = string | Uint8Array;

/**
 * TLS settings of HTTPS connections. `cert` and `key` come together: the client certificate
 * presented to every server that asks for one (mutual TLS, RFC 8705; OAuth then uses it for
 * `tls_client_auth` / `self_signed_tls_client_auth` and certificate-bound tokens). The key is
 * never logged, serialized or part of an error.
 */
export interface AxMCPNodeTLSOptions {
  /** The client certificate chain (PEM), leaf first. */
  cert?: AxMCPPEM;
  /** Its private key (PEM). */
  key?: AxMCPPEM;
  /** The key's passphrase, when it is encrypted. */
  passphrase?: string;
  /** The certificate authorities to trust for servers, replacing Node's default list (PEM). */
  ca?: AxMCPPEM | readonly AxMCPPEM[];
}

const PEM = instance(
  'PEM text (a string or bytes)',
  (value) => (typeof value === 'string' && value.includes('-----BEGIN ')) || value instanceof Uint8Array,
);

/** The shape of {@link AxMCPNodeTLSOptions}. */
const TLS_OPTIONS = object(
  { cert: PEM, key: PEM, passphrase: string(), ca: anyOf(PEM, array(PEM)) },
  {
    expected: 'TLS options { cert?, key?, passphrase?, ca? }',
    aliases: {
      certificate: 'cert',
      clientCertificate: 'cert',
      privateKey: 'key',
      clientKey: 'key',
      password: 'passphrase',
      caCertificates: 'ca',
    },
  },
);

/** The keys of Node's agents and DNS lookup (also options of `AxMCPNodeHTTPTransport`). */
export const NODE_CONNECTION_KEYS = {
  keepAlive: boolean(),
  maxSockets: number({ integer: true, min: 1 }),
  lookup: func('a DNS lookup function (hostname, options, callback), like dns.lookup'),
  tls: TLS_OPTIONS,
} as const;

/** The TLS options of an HTTPS agent, checked; also: does it present a client certificate? */
export interface ResolvedTLS {
  agentOptions: https.AgentOptions;
  clientCertificate: boolean;
}

/**
 * Checks what shapes cannot: `cert` and `key` together, readable, and a pair (Node builds
 * the secure context once here). The error names the option, never the key.
 */
export function resolveTLS(options: AxMCPNodeTLSOptions | undefined, label: string): ResolvedTLS | undefined {
  if (options === undefined) return undefined;
  const { cert, key, passphrase, ca } = options;
  if ((cert === undefined) !== (key === undefined)) {
    throw optionsError(label, {
      path: cert === undefined ? 'tls.cert' : 'tls.key',
      expected: `the ${cert === undefined ? 'certificate' : 'private key'} that goes with tls.${cert === undefined ? 'key' : 'cert'} (PEM)`,
      received: 'nothing (required)',
    });
  }
  const agentOptions: https.AgentOptions = {};
  if (cert !== undefined) agentOptions.cert = buffer(cert);
  if (key !== undefined) agentOptions.key = buffer(key);
  if (passphrase !== undefined) agentOptions.passphrase = passphrase;
  if (ca !== undefined) agentOptions.ca = Array.isArray(ca) ? ca.map(buffer) : buffer(ca as AxMCPPEM);
  try {
    tls.createSecureContext(agentOptions);
  } catch (error) {
    // Node's messages name the PEM routine or "key values mismatch", never the key.
    const reason = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw optionsError(label, {
      path: 'tls',
      expected:
        'a PEM certificate and its matching private key (with its passphrase if encrypted), and PEM CAs',
      received: `something Node cannot use (${reason})`,
    });
  }
  return { agentOptions, clientCertificate: cert !== undefined };
}

function buffer(pem: AxMCPPEM): string | Buffer {
  return typeof pem === 'string' ? pem : Buffer.from(pem.buffer, pem.byteOffset, pem.byteLength);
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

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);
const BODY_HIGH_WATER_MARK = 64 * 1024;

type RequestBody = string | Uint8Array | undefined;
type OutgoingHeaders = Record<string, string>;

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
  const tlsOptions = resolveTLS(options.tls, 'createNodeFetch options');
  const policy = resolveSSRFPolicy(options.ssrfProtection);
  const baseLookup: LookupFunction = options.lookup ?? (dns.lookup as LookupFunction);
  const lookup = policy.enabled ? guardLookup(baseLookup, policy) : options.lookup;
  const agentOptions: http.AgentOptions = { keepAlive: options.keepAlive ?? true, scheduling: 'lifo' };
  if (options.maxSockets !== undefined) agentOptions.maxSockets = options.maxSockets;
  // `lookup` is a connection option; agents pass their options through to net.connect.
  if (lookup !== undefined) (agentOptions as http.AgentOptions & { lookup: LookupFunction }).lookup = lookup;
  const httpAgent = new http.Agent(agentOptions);
  const httpsAgent = new https.Agent({ ...agentOptions, ...tlsOptions?.agentOptions });
  const inflight = new Set<http.ClientRequest>();
  let closed = false;

  const nodeFetch = async (input: string | URL, init?: RequestInit): Promise<Response> => {
    if (closed) throw new AxMCPTransportError('closed', 'This fetch was closed');
    const url = toURL(input);
    const signal = init?.signal ?? undefined;
    signal?.throwIfAborted();
    await assertURLAllowed(url, policy);
    const method = init?.method === undefined ? 'GET' : init.method.toUpperCase();
    const headers = toOutgoingHeaders(init?.headers);
    const body = await toRequestBody(init?.body, headers);
    if (body !== undefined && (method === 'GET' || method === 'HEAD')) {
      throw new AxMCPError('invalid_argument', `A ${method} request cannot have a body`);
    }
    if (body !== undefined) {
      headers['content-length'] = String(
        typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength,
      );
    }
    signal?.throwIfAborted();
    if (closed) throw new AxMCPTransportError('closed', 'This fetch was closed');
    const isHTTPS = url.protocol === 'https:';
    const request: http.RequestOptions = {
      protocol: url.protocol,
      hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
      path: `${url.pathname}${url.search}`,
      method,
      headers,
      agent: isHTTPS ? httpsAgent : httpAgent,
    };
    if (url.port !== '') request.port = url.port;
    const retry = IDEMPOTENT_METHODS.has(method);
    return send(isHTTPS ? https.request : http.request, request, body, url, signal, retry, inflight);
  };

  if (tlsOptions?.clientCertificate) markClientCertificate(nodeFetch);
  return Object.assign(nodeFetch, {
    close(): void {
      if (closed) return;
      closed = true;
      // Requests first: a request still waiting for a socket would make the agent open one.
      const reason = new AxMCPTransportError('closed', 'The fetch was closed');
      for (const req of inflight) req.destroy(reason);
      inflight.clear();
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  });
}

/**
 * Wraps a lookup so that every address it returns passes {@link assertAddressAllowed}.
 * Shared by every node:http path of ax-mcp/node (DNS-rebinding protection lives here once).
 */
export function guardLookup(base: LookupFunction, policy: AxMCPSSRFPolicy): LookupFunction {
  return (hostname, options, callback) => {
    base(hostname, options, (error, address, family) => {
      if (error) {
        callback(error, address, family);
        return;
      }
      try {
        if (typeof address === 'string') {
          assertAddressAllowed(address, hostname, policy);
          const resolvedFamily = family ?? (address.includes(':') ? 6 : 4);
          if (options.all) callback(null, [{ address, family: resolvedFamily }]);
          else callback(null, address, resolvedFamily);
          return;
        }
        for (const entry of address) assertAddressAllowed(entry.address, hostname, policy);
        if (options.all) {
          callback(null, address);
          return;
        }
        const first = address[0];
        if (first === undefined) callback(null, address);
        else callback(null, first.address, first.family);
      } catch (refusal) {
        callback(refusal as NodeJS.ErrnoException, options.all ? [] : '');
      }
    });
  };
}

function send(
  request: typeof http.request,
  options: http.RequestOptions,
  body: RequestBody,
  url: URL,
  signal: AbortSignal | undefined,
  retry: boolean,
  inflight: Set<http.ClientRequest>,
): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const req = request(options);
    inflight.add(req);
    let settled = false;
    let failBody: ((reason: unknown) => void) | undefined;

    const onAbort = () => {
      const reason = signal?.reason;
      if (failBody !== undefined) failBody(reason);
      else {
        if (!settled) {
          settled = true;
          reject(reason);
        }
        detach();
      }
      req.destroy();
    };
    const detach = () => {
      inflight.delete(req);
      signal?.removeEventListener('abort', onAbort);
    };
    signal?.addEventListener('abort', onAbort, { once: true });

    req.on('error', (error: NodeJS.ErrnoException) => {
      if (settled) return;
      settled = true;
      detach();
      if (retry && req.reusedSocket && STALE_SOCKET_CODES.has(error.code ?? '') && !signal?.aborted) {
        send(request, options, body, url, signal, false, inflight).then(resolve, reject);
        return;
      }
      reject(requestError(error, url));
    });

    req.on('response', (res) => {
      if (settled) {
        res.destroy();
        return;
      }
      settled = true;
      try {
        const status = res.statusCode ?? 0;
        if (status < 200 || status > 599) {
          throw new AxMCPTransportError('transport_error', `Unexpected HTTP status ${status}`, {
            endpoint: redactURL(url),
          });
        }
        const headers = new Headers();
        const raw = res.rawHeaders;
        for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
        let stream: ReadableStream<Uint8Array> | null = null;
        if (options.method === 'HEAD' || NULL_BODY_STATUSES.has(status)) {
          res.resume();
          detach();
        } else {
          const body = bodyStream(res, url, detach);
          stream = body.stream;
          failBody = body.fail;
        }
        const response = new Response(stream, { status, statusText: statusText(res.statusMessage), headers });
        Object.defineProperty(response, 'url', { value: url.href });
        resolve(response);
      } catch (error) {
        res.destroy();
        detach();
        reject(
          error instanceof AxMCPError
            ? error
            : new AxMCPTransportError('transport_error', 'Invalid HTTP response', {
                endpoint: redactURL(url),
                cause: error,
              }),
        );
      }
    });

    if (body === undefined) req.end();
    else req.end(body);
  });
}

/** A web stream over a Node response that reads only as fast as it is consumed. */
function bodyStream(
  res: http.IncomingMessage,
  url: URL,
  onFinish: () => void,
): { stream: ReadableStream<Uint8Array>; fail: (reason: unknown) => void } {
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  let finished = false;
  const finish = (): boolean => {
    if (finished) return false;
    finished = true;
    onFinish();
    return true;
  };
  const fail = (reason: unknown) => {
    if (!finish()) return;
    res.destroy();
    controller?.error(reason);
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        res.on('data', (chunk: Buffer) => {
          if (finished) return;
          c.enqueue(chunk);
          if ((c.desiredSize ?? 0) <= 0) res.pause();
        });
        res.on('end', () => {
          if (finish()) c.close();
        });
        onBodyBreak(res, url, fail);
      },
      pull() {
        res.resume();
      },
      cancel() {
        finish();
        res.destroy();
      },
    },
    { highWaterMark: BODY_HIGH_WATER_MARK, size: (chunk) => chunk.byteLength },
  );
  return { stream, fail };
}

/** Fails a response body with a typed `stream_ended` when its connection breaks or closes before the end. */
export function onBodyBreak(res: http.IncomingMessage, url: URL, fail: (error: AxMCPError) => void): void {
  res.on('error', (error) =>
    fail(
      error instanceof AxMCPError
        ? error
        : new AxMCPTransportError('stream_ended', 'The response body broke off', {
            endpoint: redactURL(url),
            cause: error,
          }),
    ),
  );
  res.on('close', () => {
    if (!res.complete) {
      fail(
        new AxMCPTransportError('stream_ended', 'The connection closed before the response body ended', {
          endpoint: redactURL(url),
        }),
      );
    }
  });
}

/** A failed node:http exchange as a typed transport error, the URL redacted. */
export function requestError(error: unknown, url: URL): AxMCPError {
  if (error instanceof AxMCPError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  return new AxMCPTransportError(
    'transport_error',
    `Request to ${redactURL(url)} failed${typeof code === 'string' ? ` (${code})` : ''}`,
    { endpoint: redactURL(url), cause: error },
  );
}

function statusText(message: string | undefined): string {
  // The Response constructor rejects a reason phrase that is not a valid header value.
  return message !== undefined && /^[\t\x20-\x7e\x80-\xff]*$/.test(message) ? message : '';
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

/** Fetch `HeadersInit` to a null-prototype object with lower-case names. */
function toOutgoingHeaders(init: HeadersInit | undefined): OutgoingHeaders {
  const out: OutgoingHeaders = Object.create(null);
  if (init === undefined) return out;
  if (init instanceof Headers) {
    init.forEach((value, name) => {
      out[name] = value;
    });
    return out;
  }
  const add = (name: string, value: string) => {
    const key = name.toLowerCase();
    const previous = out[key];
    out[key] = previous === undefined ? value : `${previous}, ${value}`;
  };
  if (Array.isArray(init)) {
    for (const pair of init) {
      if (pair.length !== 2)
        throw new AxMCPError('invalid_argument', 'A header pair must have a name and a value');
      add(String(pair[0]), String(pair[1]));
    }
    return out;
  }
  for (const name of Object.keys(init)) add(name, String((init as Record<string, string>)[name]));
  return out;
}

async function toRequestBody(body: RequestInit['body'], headers: OutgoingHeaders): Promise<RequestBody> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') {
    headers['content-type'] ??= 'text/plain;charset=UTF-8';
    return body;
  }
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof URLSearchParams) {
    headers['content-type'] ??= 'application/x-www-form-urlencoded;charset=UTF-8';
    return body.toString();
  }
  if (body instanceof Blob) {
    if (body.type !== '') headers['content-type'] ??= body.type;
    return new Uint8Array(await body.arrayBuffer());
  }
  throw new AxMCPError(
    'unsupported',
    'This fetch sends string, Uint8Array, ArrayBuffer, URLSearchParams or Blob bodies, not streams or FormData',
  );
}
