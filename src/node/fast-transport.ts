/**
 * The Streamable HTTP transport on Node's own HTTP client: the same transport, with the same
 * protocol handling, authentication, retries, resumption and SSRF policy, but each message
 * travels over `node:http` (keep-alive agents, DNS-checked addresses) and comes back as a
 * lean response object instead of a web `Response` with a `ReadableStream` body. On a
 * loopback `tools/call` that machinery costs more client CPU than the MCP work itself.
 */

import * as dns from 'node:dns';
import * as http from 'node:http';
import * as https from 'node:https';
import type { LookupFunction } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import {
  type AxMCPSSRFPolicy,
  type AxMCPSSRFProtection,
  checkURL,
  redactURL,
  resolveSSRFPolicy,
} from '../net/ssrf.js';
import { object } from '../options/check.js';
import { AxMCPError, AxMCPTransportError, assertMCPOptions } from '../protocol/errors.js';
import { type AxMCPChunkPushingBody, DRAIN_LIMITS } from '../transport/http/message-stream.js';
import {
  type AxMCPDirectAnswer,
  type AxMCPDirectPost,
  AxMCPStreamableHTTPTransport,
  type AxMCPStreamableHTTPTransportOptions,
  HTTP_TRANSPORT_ALIASES,
  STREAMABLE_HTTP_KEYS,
} from '../transport/http/streamable-http.js';
import {
  type AxMCPNodeFetch,
  type AxMCPNodeTLSOptions,
  createNodeFetch,
  guardLookup,
  NODE_CONNECTION_KEYS,
  onBodyBreak,
  type ResolvedTLS,
  requestError,
  resolveTLS,
} from './node-fetch.js';

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
 * OAuth traffic, when `oauth` is set, goes through {@link createNodeFetch}.
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
  readonly #exchange: NodeExchange;
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
    const exchange = createNodeExchange({ ...nodeOptions, ...(resolvedTLS ? { tls: resolvedTLS } : {}) });
    // OAuth parses real `Response`s: it gets a (DNS-checked) fetch of its own.
    // With `tls`, it presents the same client certificate (mutual TLS for OAuth).
    const oauthFetch =
      options.oauth && options.oauth.fetch === undefined
        ? createNodeFetch({ ...nodeOptions, ...(tls ? { tls } : {}) })
        : undefined;
    super(url, {
      ...transportOptions,
      ...(oauthFetch ? { oauth: { ...options.oauth, fetch: oauthFetch } } : {}),
      fetch: exchange.fetch as unknown as typeof fetch,
    });
    this.#exchange = exchange;
    this.#oauthFetch = oauthFetch;
  }

  /** A POST without authentication: a 200 JSON answer is read here, straight from the socket. */
  protected override sendDirect(post: AxMCPDirectPost): Promise<AxMCPDirectAnswer | undefined> {
    return this.#exchange.post(post);
  }

  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      this.#exchange.close();
      this.#oauthFetch?.close();
    }
  }
}

interface NodeExchange {
  /** Fetch-shaped, answering with {@link NodeResponse}: only for this transport's own use. */
  fetch(input: string | URL, init?: RequestInit): Promise<NodeResponse>;
  /** The transport's direct POST. */
  post(post: AxMCPDirectPost): Promise<AxMCPDirectAnswer | undefined>;
  close(): void;
}

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
/** Bytes buffered ahead of the reader before the socket is paused. */
const HIGH_WATER_MARK = 64 * 1024;

interface AgentPair {
  http: http.Agent | undefined;
  https: https.Agent | undefined;
  readonly options: http.AgentOptions;
  /** The HTTPS agent's: `options` and the TLS settings. */
  readonly httpsOptions: https.AgentOptions;
}

/**
 * Agents shared by every transport with the same settings, as `fetch` shares one pool per
 * process: an idle client then holds no agent of its own. Idle pooled sockets are unref'd by
 * Node, so a shared pool never keeps the process alive. A custom `lookup` or TLS settings (a
 * client certificate is this transport's own) get private agents.
 */
const sharedAgents = new Map<string, AgentPair>();

function agentsFor(
  options: { keepAlive?: boolean; maxSockets?: number; lookup?: LookupFunction; tls?: ResolvedTLS },
  policy: AxMCPSSRFPolicy,
): { pair: AgentPair; shared: boolean } {
  const agentOptions: http.AgentOptions = { keepAlive: options.keepAlive ?? true, scheduling: 'lifo' };
  if (options.maxSockets !== undefined) agentOptions.maxSockets = options.maxSockets;
  const lookup = policy.enabled
    ? guardLookup(options.lookup ?? (dns.lookup as LookupFunction), policy)
    : options.lookup;
  // `lookup` is a connection option; agents pass their options through to net.connect.
  if (lookup !== undefined) (agentOptions as http.AgentOptions & { lookup: LookupFunction }).lookup = lookup;
  if (options.lookup !== undefined || options.tls !== undefined) {
    const httpsOptions = { ...agentOptions, ...options.tls?.agentOptions };
    return {
      pair: { http: undefined, https: undefined, options: agentOptions, httpsOptions },
      shared: false,
    };
  }
  const key = JSON.stringify([
    agentOptions.keepAlive,
    agentOptions.maxSockets ?? null,
    policy.enabled,
    policy.allowHTTP,
    policy.allowLoopback,
    policy.allowPrivateNetwork,
    policy.allowedHosts,
  ]);
  let pair = sharedAgents.get(key);
  if (!pair) {
    pair = { http: undefined, https: undefined, options: agentOptions, httpsOptions: agentOptions };
    sharedAgents.set(key, pair);
  }
  return { pair, shared: true };
}

function createNodeExchange(options: {
  ssrfProtection: AxMCPSSRFProtection;
  keepAlive?: boolean;
  maxSockets?: number;
  lookup?: LookupFunction;
  tls?: ResolvedTLS;
}): NodeExchange {
  const policy = resolveSSRFPolicy(options.ssrfProtection);
  const { pair, shared } = agentsFor(options, policy);
  const inflight = new Set<http.ClientRequest>();
  let closed = false;

  return {
    fetch(input, init = {}) {
      if (closed) return Promise.reject(new AxMCPTransportError('closed', 'The transport was closed'));
      const url = input instanceof URL ? input : new URL(input);
      // The guarded fetch in front of this one checked the URL with `validateURL`; the
      // synchronous rules are checked again here, the addresses by the agents' lookup.
      checkURL(url, policy);
      const signal = init.signal ?? undefined;
      if (signal?.aborted) return Promise.reject(signal.reason);
      const method = (init.method ?? 'GET').toUpperCase();
      const headers = outgoingHeaders(init.headers);
      const body = init.body ?? undefined;
      if (body !== undefined && typeof body !== 'string') {
        return Promise.reject(new AxMCPError('unsupported', 'This transport sends string bodies only'));
      }
      if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
      const isHTTPS = url.protocol === 'https:';
      const agent = isHTTPS
        ? (pair.https ??= new https.Agent(pair.httpsOptions))
        : (pair.http ??= new http.Agent(pair.options));
      const request: http.RequestOptions = {
        protocol: url.protocol,
        hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
        path: `${url.pathname}${url.search}`,
        method,
        headers,
        agent,
      };
      if (url.port !== '') request.port = url.port;
      return exchange(isHTTPS ? https.request : http.request, request, body, url, signal, inflight);
    },
    post(post) {
      if (closed) return Promise.reject(new AxMCPTransportError('closed', 'The transport was closed'));
      const url = post.url;
      checkURL(url, policy);
      if (post.signal.aborted) return Promise.reject(post.signal.reason);
      const headers = post.headers;
      headers['content-length'] = String(Buffer.byteLength(post.body));
      const isHTTPS = url.protocol === 'https:';
      const agent = isHTTPS
        ? (pair.https ??= new https.Agent(pair.httpsOptions))
        : (pair.http ??= new http.Agent(pair.options));
      const request: http.RequestOptions = {
        protocol: url.protocol,
        hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers,
        agent,
      };
      if (url.port !== '') request.port = url.port;
      return direct(isHTTPS ? https.request : http.request, request, post, inflight);
    },
    close() {
      if (closed) return;
      closed = true;
      const reason = new AxMCPTransportError('closed', 'The transport was closed');
      for (const req of inflight) req.destroy(reason);
      inflight.clear();
      if (!shared) {
        pair.http?.destroy();
        pair.https?.destroy();
      }
    },
  };
}

function exchange(
  request: typeof http.request,
  options: http.RequestOptions,
  body: string | undefined,
  url: URL,
  signal: AbortSignal | undefined,
  inflight: Set<http.ClientRequest>,
): Promise<NodeResponse> {
  return new Promise<NodeResponse>((resolve, reject) => {
    const req = request(options);
    inflight.add(req);
    let settled = false;
    let responseBody: NodeBody | undefined;
    const detach = () => {
      inflight.delete(req);
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      const reason = signal?.reason;
      if (responseBody) responseBody.fail(reason);
      else if (!settled) {
        settled = true;
        reject(reason);
      }
      detach();
      req.destroy();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (settled) return;
      settled = true;
      detach();
      reject(requestError(error, url));
    });
    req.on('response', (res) => {
      if (settled) {
        res.destroy();
        return;
      }
      settled = true;
      const status = res.statusCode ?? 0;
      if (status < 200 || status > 599) {
        res.destroy();
        detach();
        reject(
          new AxMCPTransportError('transport_error', `Unexpected HTTP status ${status}`, {
            endpoint: redactURL(url),
          }),
        );
        return;
      }
      if (options.method === 'HEAD' || NULL_BODY_STATUSES.has(status)) {
        res.resume();
        detach();
      } else {
        responseBody = new NodeBody(res, url, detach);
      }
      resolve(new NodeResponse(res, status, url.href, responseBody ?? null));
    });
    req.end(body);
  });
}

/**
 * One POST: a 200 JSON answer is read whole here (bounded by `maxBytes`) and comes back as
 * text; a redirect comes back as `undefined` (the transport sends the request the full way,
 * following it); anything else as a {@link NodeResponse}.
 */
function direct(
  request: typeof http.request,
  options: http.RequestOptions,
  post: AxMCPDirectPost,
  inflight: Set<http.ClientRequest>,
): Promise<AxMCPDirectAnswer | undefined> {
  const { url, signal, maxBytes } = post;
  return new Promise<AxMCPDirectAnswer | undefined>((resolve, reject) => {
    const req = request(options);
    inflight.add(req);
    let settled = false;
    let res: http.IncomingMessage | undefined;
    let responseBody: NodeBody | undefined;
    const detach = () => {
      inflight.delete(req);
      signal.removeEventListener('abort', onAbort);
    };
    const fail = (reason: unknown) => {
      detach();
      res?.destroy();
      if (settled) return;
      settled = true;
      reject(reason);
    };
    const onAbort = () => {
      if (responseBody) {
        responseBody.fail(signal.reason);
        detach();
      } else fail(signal.reason);
      req.destroy();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    req.on('error', (error: NodeJS.ErrnoException) => fail(requestError(error, url)));
    req.on('response', (incoming) => {
      res = incoming;
      const status = incoming.statusCode ?? 0;
      if (status < 200 || status > 599) {
        fail(
          new AxMCPTransportError('transport_error', `Unexpected HTTP status ${status}`, {
            endpoint: redactURL(url),
          }),
        );
        return;
      }
      if (status >= 300 && status < 400 && status !== 304) {
        // Followed (and checked hop by hop) on the full path.
        incoming.resume();
        detach();
        settled = true;
        resolve(undefined);
        return;
      }
      const type = incoming.headers['content-type'];
      if (status !== 200 || type === undefined || !/^application\/json/i.test(type)) {
        settled = true;
        if (NULL_BODY_STATUSES.has(status)) {
          incoming.resume();
          detach();
        } else {
          responseBody = new NodeBody(incoming, url, detach);
        }
        resolve({
          response: new NodeResponse(incoming, status, url.href, responseBody ?? null) as unknown as Response,
        });
        return;
      }
      const declared = Number(incoming.headers['content-length']);
      if (declared > maxBytes) {
        fail(tooLarge(maxBytes, url));
        return;
      }
      const chunks: Buffer[] = [];
      let bytes = 0;
      incoming.on('data', (chunk: Buffer) => {
        bytes += chunk.byteLength;
        if (bytes > maxBytes) fail(tooLarge(maxBytes, url));
        else chunks.push(chunk);
      });
      incoming.on('end', () => {
        if (settled) return;
        settled = true;
        detach();
        let text = (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString('utf8');
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
        const session = incoming.headers['mcp-session-id'];
        resolve({ text, sessionId: typeof session === 'string' ? session : null });
      });
      incoming.on('error', (error) =>
        fail(
          new AxMCPTransportError('transport_error', 'Reading the response body failed', {
            endpoint: redactURL(url),
            cause: error,
          }),
        ),
      );
      incoming.on('close', () => {
        if (!incoming.complete)
          fail(
            new AxMCPTransportError(
              'transport_error',
              'The connection closed before the response body ended',
              {
                endpoint: redactURL(url),
              },
            ),
          );
      });
    });
    req.end(post.body);
  });
}

function tooLarge(maxBytes: number, url: URL): AxMCPTransportError {
  return new AxMCPTransportError('message_too_large', `Response body exceeds ${maxBytes} bytes`, {
    endpoint: redactURL(url),
  });
}

/**
 * The parts of a web `Response` the transport, the guarded fetch and the body readers use:
 * status, headers, a body with `getReader()`, and the whole-body readers.
 */
class NodeResponse {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly url: string;
  readonly type = 'basic';
  readonly redirected = false;
  readonly headers: NodeHeaders;
  readonly body: NodeBody | null;

  constructor(res: http.IncomingMessage, status: number, url: string, body: NodeBody | null) {
    this.status = status;
    this.statusText = res.statusMessage ?? '';
    this.ok = status >= 200 && status < 300;
    this.url = url;
    this.headers = new NodeHeaders(res.headers);
    this.body = body;
  }

  get bodyUsed(): boolean {
    return this.body?.locked ?? false;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.bytes();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async bytes(): Promise<Uint8Array> {
    if (this.body === null) return new Uint8Array(0);
    const reader = this.body.getReader();
    const chunks: Uint8Array[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
    }
    return Buffer.concat(chunks);
  }

  async text(): Promise<string> {
    return Buffer.from(await this.bytes()).toString('utf8');
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }
}

/** Read-only response headers over Node's parsed (lower-case) header object. */
class NodeHeaders {
  readonly #raw: http.IncomingHttpHeaders;

  constructor(raw: http.IncomingHttpHeaders) {
    this.#raw = raw;
  }

  get(name: string): string | null {
    const value = this.#raw[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(', ') : value;
  }

  has(name: string): boolean {
    return this.#raw[name.toLowerCase()] !== undefined;
  }

  forEach(callback: (value: string, name: string, headers: NodeHeaders) => void): void {
    for (const [name, value] of this.entries()) callback(value, name, this);
  }

  *entries(): IterableIterator<[string, string]> {
    for (const name of Object.keys(this.#raw).sort()) {
      const value = this.get(name);
      if (value !== null) yield [name, value];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
}

interface Waiter {
  resolve(result: ReadableStreamReadResult<Uint8Array>): void;
  reject(reason: unknown): void;
}

/** A synchronous reader the body pushes its text to (`forEachText`). */
interface Sink {
  onText(text: string): boolean | undefined;
  text: StringDecoder;
  resolve(): void;
  reject(reason: unknown): void;
}

/**
 * A response body read as fast as it is consumed: chunks queue up to a high-water mark,
 * then the socket pauses. `getReader()` gives the reader shape `ReadableStream` readers
 * have (`read`, `cancel`, `releaseLock`), without the web-streams machinery; `forEachText`
 * pushes text to a synchronous reader as it arrives, without a promise per chunk.
 */
class NodeBody implements AxMCPChunkPushingBody {
  readonly #res: http.IncomingMessage;
  readonly #onFinish: () => void;
  readonly #queue: Uint8Array[] = [];
  #head = 0;
  #queuedBytes = 0;
  #ended = false;
  #error: unknown;
  #failed = false;
  #finished = false;
  #waiter: Waiter | undefined;
  #sink: Sink | undefined;
  #locked = false;
  /** Bytes read away since the reader let go, or undefined while someone reads. */
  #drained: number | undefined;
  #drainTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(res: http.IncomingMessage, url: URL, onFinish: () => void) {
    this.#res = res;
    this.#onFinish = onFinish;
    res.on('data', (chunk: Buffer) => this.#push(chunk));
    res.on('end', () => {
      this.#ended = true;
      this.#finish();
      this.#wake();
    });
    onBodyBreak(res, url, (error) => this.fail(error));
  }

  get locked(): boolean {
    return this.#locked;
  }

  getReader() {
    if (this.#locked) throw new TypeError('The body is locked to a reader');
    this.#locked = true;
    return {
      read: () => this.#read(),
      cancel: (reason?: unknown) => this.cancel(reason),
      releaseLock: () => {
        this.#locked = false;
      },
    };
  }

  forEachText(onText: (text: string) => boolean | undefined): Promise<void> {
    if (this.#locked) return Promise.reject(new TypeError('The body is locked to a reader'));
    this.#locked = true;
    return new Promise((resolve, reject) => {
      this.#sink = { onText, text: new StringDecoder('utf8'), resolve, reject };
      this.#wake();
    });
  }

  /** Stops reading: the connection is dropped unless the body had already ended. */
  async cancel(_reason?: unknown): Promise<void> {
    this.#queue.length = 0;
    this.#head = 0;
    this.#queuedBytes = 0;
    if (!this.#ended && !this.#failed) {
      this.#ended = true;
      this.#res.destroy();
    }
    this.#finish();
    this.#wake();
  }

  /** Ends the body with an error (an abort, a broken connection). */
  fail(reason: unknown): void {
    if (this.#ended || this.#failed) return;
    this.#failed = true;
    this.#error = reason;
    this.#res.destroy();
    this.#finish();
    this.#wake();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array> {
    const reader = this.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        yield value;
      }
    } finally {
      reader.releaseLock();
    }
  }

  #push(chunk: Buffer): void {
    if (this.#ended || this.#failed) return;
    if (this.#drained !== undefined) {
      this.#drained += chunk.byteLength;
      if (this.#drained > DRAIN_LIMITS.bytes) void this.cancel();
      return;
    }
    if (this.#sink !== undefined && this.#head >= this.#queue.length) {
      this.#deliver(this.#sink, chunk);
      return;
    }
    this.#queue.push(chunk);
    this.#queuedBytes += chunk.byteLength;
    if (this.#queuedBytes >= HIGH_WATER_MARK) this.#res.pause();
    this.#wake();
  }

  #read(): Promise<ReadableStreamReadResult<Uint8Array>> {
    const next = this.#take();
    if (next !== undefined) return Promise.resolve({ done: false, value: next });
    if (this.#failed) return Promise.reject(this.#error);
    if (this.#ended) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  #take(): Uint8Array | undefined {
    const queue = this.#queue;
    if (this.#head >= queue.length) return undefined;
    let chunk = queue[this.#head++] as Uint8Array;
    if (this.#head < queue.length) {
      // Chunks that queued up while the reader was busy (the HTTP parser emits one per chunk of
      // the chunked encoding) go out together, bounded: one read, one decode, one parse.
      const parts = [chunk];
      let size = chunk.byteLength;
      while (this.#head < queue.length) {
        const next = queue[this.#head] as Uint8Array;
        if (size + next.byteLength > HIGH_WATER_MARK) break;
        parts.push(next);
        size += next.byteLength;
        this.#head++;
      }
      if (parts.length > 1) chunk = Buffer.concat(parts, size);
    }
    if (this.#head > 64 && this.#head * 2 > queue.length) {
      this.#queue.splice(0, this.#head);
      this.#head = 0;
    }
    this.#queuedBytes -= chunk.byteLength;
    if (this.#queuedBytes < HIGH_WATER_MARK && this.#res.isPaused() && !this.#ended) this.#res.resume();
    return chunk;
  }

  /** One chunk to the sink; the sink stopping or throwing cancels the body and settles it. */
  #deliver(sink: Sink, chunk: Uint8Array): boolean {
    let stop: boolean | undefined;
    try {
      stop = sink.onText(sink.text.write(chunk as Buffer));
    } catch (error) {
      this.#sink = undefined;
      void this.cancel();
      sink.reject(error);
      return true;
    }
    if (!stop) return false;
    this.#sink = undefined;
    this.#letGo();
    sink.resolve();
    return true;
  }

  /** The reader has what it needs: the rest is read away within `DRAIN_LIMITS`, as in the core. */
  #letGo(): void {
    if (this.#ended || this.#failed) return;
    this.#queue.length = 0;
    this.#head = 0;
    this.#queuedBytes = 0;
    this.#drained = 0;
    this.#drainTimer = setTimeout(() => void this.cancel(), DRAIN_LIMITS.ms);
    this.#drainTimer.unref?.();
    if (this.#res.isPaused()) this.#res.resume();
  }

  #wake(): void {
    const sink = this.#sink;
    if (sink !== undefined) {
      for (let next = this.#take(); next !== undefined; next = this.#take()) {
        if (this.#deliver(sink, next)) return;
      }
      if (this.#failed) {
        this.#sink = undefined;
        sink.reject(this.#error);
      } else if (this.#ended) {
        this.#sink = undefined;
        sink.resolve();
      }
      return;
    }
    const waiter = this.#waiter;
    if (waiter === undefined) return;
    const next = this.#take();
    if (next !== undefined) {
      this.#waiter = undefined;
      waiter.resolve({ done: false, value: next });
    } else if (this.#failed) {
      this.#waiter = undefined;
      waiter.reject(this.#error);
    } else if (this.#ended) {
      this.#waiter = undefined;
      waiter.resolve({ done: true, value: undefined });
    }
  }

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    clearTimeout(this.#drainTimer);
    this.#onFinish();
  }
}

/** Fetch `HeadersInit` to a null-prototype object with lower-case names. */
function outgoingHeaders(init: HeadersInit | undefined): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  if (init === undefined) return out;
  if (init instanceof Headers) {
    init.forEach((value, name) => {
      out[name] = value;
    });
    return out;
  }
  const pairs = Array.isArray(init) ? init : Object.entries(init);
  for (const [name, value] of pairs) {
    const key = String(name).toLowerCase();
    const previous = out[key];
    out[key] = previous === undefined ? String(value) : `${previous}, ${String(value)}`;
  }
  return out;
}
