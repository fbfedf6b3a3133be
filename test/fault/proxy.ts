/**
 * A fault-injection reverse proxy for tests: node:http on 127.0.0.1 (port 0), forwarding to a
 * loopback target only. Bodies stream both ways chunk by chunk with backpressure (a request body
 * is only peeked, up to a cap, to count its JSON-RPC methods). Faults are programmed at run time:
 * cut an SSE stream at a byte offset or in the middle of an event, stall responses, answer a burst
 * of 5xx, drop every open stream, throttle delivery to a slow consumer. Bounded: a connection cap,
 * idle and header timeouts, a stall cap, bounded logs; `close()` destroys every socket and timer.
 */
import {
  Agent,
  type ClientRequest,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import { type AddressInfo, isIPv4, type Socket } from 'node:net';

/** Options of {@link startFaultProxy}. */
export interface FaultProxyOptions {
  /** Client connections held at once; more are destroyed on accept. Default 64. */
  maxConnections?: number;
  /** An upstream socket idle this long (no byte either way) is destroyed. Default 120 000 ms. */
  idleTimeoutMs?: number;
  /** An idle keep-alive client connection is closed after this. Default 500 ms. */
  keepAliveTimeoutMs?: number;
  /** The longest single stall. Default 30 000 ms. */
  maxStallMs?: number;
  /** Bytes of a request body inspected for JSON-RPC methods (the rest is forwarded unseen). Default 64 KiB. */
  maxPeekBytes?: number;
  /** Entries kept in {@link FaultProxyStats.log}. Default 10 000. */
  maxLogEntries?: number;
}

/** Which exchanges a fault applies to. */
export interface ExchangeFilter {
  /** Only this HTTP method (`GET`, `POST`, `DELETE`). Default: any. */
  method?: string;
}

/** How {@link FaultControls.cutNextStream} cuts. */
export type CutOptions = ExchangeFilter &
  (
    | {
        /** Cut after this many more body bytes of one stream (counted from arming, or from its start). */
        afterBytes: number;
        midEvent?: never;
      }
    | {
        /** Cut inside the `data:` line of the next event that carries data: its `id:` got through, its end did not. */
        midEvent: true;
        afterBytes?: never;
      }
  );

/** What a cut did. */
export interface CutReport {
  /** HTTP method of the cut exchange. */
  method: string;
  /** Body bytes the client received on that stream before the cut. */
  bytesDelivered: number;
  /** The bytes of the interrupted event that got through (for `midEvent`), as text. */
  partialEvent: string;
}

/** One request that reached the proxy. */
export interface ProxyLogEntry {
  /** `Date.now()` when the request arrived. */
  at: number;
  /** HTTP method. */
  method: string;
  /** JSON-RPC messages of a POST body (filled once the body is read): method and `params.uri` if any. */
  rpc: { method: string; uri?: string }[];
  lastEventId?: string;
  /** The `Mcp-Session-Id` the request carried. */
  session?: string;
  /** Status answered (injected or forwarded), once known. */
  status?: number;
  /** Answered by an injected failure instead of the target. */
  injected?: boolean;
}

/** Live counters; read them at assertion time. */
export interface FaultProxyStats {
  /** Requests per HTTP method. */
  readonly httpMethods: Map<string, number>;
  /** JSON-RPC messages per method seen in request bodies. */
  readonly rpcMethods: Map<string, number>;
  /** Requests in arrival order (bounded). */
  readonly log: ProxyLogEntry[];
  /** Client connections open right now. */
  readonly openConnections: number;
  /** SSE responses in flight right now. */
  readonly openStreams: number;
  /** Requests in flight right now. */
  readonly openExchanges: number;
  totalConnections: number;
  refusedConnections: number;
  injectedFailures: number;
  cuts: number;
  dropped: number;
  bytesToClient: number;
}

/** The faults a test programs. */
export interface FaultControls {
  /** Arms a one-shot cut of the next SSE stream (open or future) that meets the condition. */
  cutNextStream(options: CutOptions): Promise<CutReport>;
  /** Holds every response (heads and body bytes) for `ms`; resolves when the stall ends. */
  stall(ms: number): Promise<void>;
  /** Answers the next `count` matching requests with `status` (a plain-text body), never forwarding them. */
  failNext(count: number, status?: number, filter?: ExchangeFilter & { retryAfterSeconds?: number }): void;
  /** Destroys every open SSE stream (both the client and the upstream side); returns how many. */
  dropAllStreams(): number;
  /** Delivers response bytes at no more than this rate per stream; `0` or `undefined` turns it off. */
  slowConsumer(bytesPerSecond: number | undefined): void;
  /** Disarms every pending fault and ends a stall. */
  reset(): void;
}

/** A running proxy. */
export interface FaultProxy {
  /** The target URL with the proxy's origin: `http://127.0.0.1:<port><target path>`. */
  readonly url: string;
  readonly port: number;
  readonly faults: FaultControls;
  readonly stats: FaultProxyStats;
  /**
   * Called once per request when its body has been read and forwarded (its `rpc` filled in), before
   * the target can answer: a test can arm a fault for exactly that request's response.
   */
  onRequest: ((entry: ProxyLogEntry) => void) | undefined;
  /** Destroys every connection, stream and timer; resolves when the server has closed. */
  close(): Promise<void>;
}

interface Exchange {
  readonly method: string;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly entry: ProxyLogEntry;
  upstream?: ClientRequest;
  upstreamResponse?: IncomingMessage;
  sse: boolean;
  /** Body bytes written to the client. */
  bytes: number;
  /** The bytes written since the last blank line (the event being delivered). */
  eventTail: string;
  ended: boolean;
}

interface ArmedCut {
  readonly options: CutOptions;
  readonly base: Map<Exchange, number>;
  resolve(report: CutReport): void;
  reject(error: Error): void;
}

interface Injection {
  remaining: number;
  readonly status: number;
  readonly method: string | undefined;
  readonly retryAfterSeconds: number | undefined;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'host',
]);

/** Resolves the target's loopback host and port; throws for anything that is not loopback `http:`. */
export function loopbackTarget(targetUrl: string): { host: string; port: number; url: URL } {
  const url = new URL(targetUrl);
  if (url.protocol !== 'http:')
    throw new RangeError(`The fault proxy forwards only to http: (got ${url.protocol})`);
  const name = url.hostname;
  let host: string;
  if (name === 'localhost') host = '127.0.0.1';
  else if (name === '[::1]') host = '::1';
  else if (isIPv4(name) && name.split('.')[0] === '127') host = name;
  else throw new RangeError(`The fault proxy forwards only to loopback hosts (got ${name})`);
  const port = Number(url.port || 80);
  return { host, port, url };
}

/** Starts a fault proxy in front of the loopback `targetUrl`. */
export async function startFaultProxy(
  targetUrl: string,
  options: FaultProxyOptions = {},
): Promise<FaultProxy> {
  const target = loopbackTarget(targetUrl);
  const maxConnections = options.maxConnections ?? 64;
  const idleTimeoutMs = options.idleTimeoutMs ?? 120_000;
  const maxStallMs = options.maxStallMs ?? 30_000;
  const maxPeekBytes = options.maxPeekBytes ?? 64 * 1024;
  const maxLog = options.maxLogEntries ?? 10_000;

  const agent = new Agent({ keepAlive: true, maxSockets: maxConnections });
  const sockets = new Set<Socket>();
  const exchanges = new Set<Exchange>();
  const timers = new Map<NodeJS.Timeout, () => void>();
  const injections: Injection[] = [];
  const cuts: ArmedCut[] = [];
  let closed = false;
  let bytesPerSecond: number | undefined;
  let stallUntil = 0;
  let stallGate: { promise: Promise<void>; release(): void } | undefined;

  const stats: FaultProxyStats = {
    httpMethods: new Map(),
    rpcMethods: new Map(),
    log: [],
    get openConnections() {
      return sockets.size;
    },
    get openStreams() {
      let n = 0;
      for (const exchange of exchanges) if (exchange.sse && !exchange.ended) n++;
      return n;
    },
    get openExchanges() {
      return exchanges.size;
    },
    totalConnections: 0,
    refusedConnections: 0,
    injectedFailures: 0,
    cuts: 0,
    dropped: 0,
    bytesToClient: 0,
  };

  /** A timer that `close()` clears (resolving its waiter). */
  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.set(timer, resolve);
    });
  }

  function stalled(): boolean {
    return stallGate !== undefined && Date.now() < stallUntil;
  }

  /** Resolves when no stall is in force. */
  async function gate(): Promise<void> {
    while (!closed && stallGate && Date.now() < stallUntil) await stallGate.promise;
  }

  function destroy(exchange: Exchange): void {
    if (exchange.ended) return;
    exchange.ended = true;
    exchanges.delete(exchange);
    exchange.upstream?.destroy();
    exchange.upstreamResponse?.destroy();
    exchange.res.destroy();
    exchange.req.destroy();
  }

  function finish(exchange: Exchange): void {
    if (exchange.ended) return;
    exchange.ended = true;
    exchanges.delete(exchange);
  }

  function record(entry: ProxyLogEntry): void {
    if (stats.log.length >= maxLog) stats.log.shift();
    stats.log.push(entry);
  }

  function countRpc(entry: ProxyLogEntry, text: string): void {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return;
    }
    for (const message of Array.isArray(body) ? body : [body]) {
      if (typeof message !== 'object' || message === null) continue;
      const method = (message as { method?: unknown }).method;
      if (typeof method !== 'string') continue;
      stats.rpcMethods.set(method, (stats.rpcMethods.get(method) ?? 0) + 1);
      const params = (message as { params?: unknown }).params;
      const uri =
        typeof params === 'object' && params !== null ? (params as { uri?: unknown }).uri : undefined;
      entry.rpc.push(typeof uri === 'string' ? { method, uri } : { method });
    }
  }

  function notify(entry: ProxyLogEntry): void {
    try {
      proxy.onRequest?.(entry);
    } catch {
      // A throwing test hook must not break the exchange.
    }
  }

  function takeInjection(method: string): Injection | undefined {
    const index = injections.findIndex((i) => i.method === undefined || i.method === method);
    if (index < 0) return undefined;
    const injection = injections[index] as Injection;
    injection.remaining--;
    if (injection.remaining <= 0) injections.splice(index, 1);
    return injection;
  }

  function matches(filter: ExchangeFilter, exchange: Exchange): boolean {
    return filter.method === undefined || filter.method.toUpperCase() === exchange.method;
  }

  /** Where to cut `chunk` of `exchange`, if an armed cut applies to it. */
  function planCut(exchange: Exchange, chunk: Buffer): { cut: ArmedCut; at: number } | undefined {
    for (const cut of cuts) {
      if (!matches(cut.options, exchange)) continue;
      if (cut.options.midEvent) {
        const at = midEventOffset(chunk);
        if (at !== undefined) return { cut, at };
        continue;
      }
      const base = cut.base.get(exchange) ?? 0;
      const left = Math.max(0, cut.options.afterBytes - (exchange.bytes - base));
      if (left < chunk.length) return { cut, at: left };
    }
    return undefined;
  }

  /** Writes to the client honouring stalls, the slow-consumer rate and backpressure. */
  async function deliver(exchange: Exchange, chunk: Buffer): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      await gate();
      if (exchange.ended || closed) return;
      const rate = bytesPerSecond;
      const size = rate ? Math.max(1, Math.floor(rate / 50)) : chunk.length - offset;
      const slice = chunk.subarray(offset, offset + size);
      offset += slice.length;
      exchange.bytes += slice.length;
      stats.bytesToClient += slice.length;
      if (exchange.sse) exchange.eventTail = trackEventTail(exchange.eventTail, slice);
      if (!exchange.res.write(slice)) await drained(exchange.res);
      if (rate) await sleep((slice.length / rate) * 1000);
    }
  }

  function performCut(exchange: Exchange, cut: ArmedCut): void {
    const index = cuts.indexOf(cut);
    if (index >= 0) cuts.splice(index, 1);
    stats.cuts++;
    const report: CutReport = {
      method: exchange.method,
      bytesDelivered: exchange.bytes,
      partialEvent: exchange.eventTail,
    };
    // Let the partial bytes leave the client's socket, then break both sides.
    const socket = exchange.res.socket;
    let turns = 0;
    const breakWhenFlushed = () => {
      if (exchange.ended) return;
      if (socket && !socket.destroyed && socket.writableLength > 0 && turns++ < 1000) {
        setImmediate(breakWhenFlushed);
        return;
      }
      destroy(exchange);
    };
    setImmediate(breakWhenFlushed);
    cut.resolve(report);
  }

  async function pump(exchange: Exchange, upstream: IncomingMessage): Promise<void> {
    exchange.upstreamResponse = upstream;
    await gate();
    if (exchange.ended || closed) {
      upstream.destroy();
      return;
    }
    const status = upstream.statusCode ?? 502;
    exchange.entry.status = status;
    exchange.sse = (upstream.headers['content-type'] ?? '').toLowerCase().startsWith('text/event-stream');
    exchange.res.writeHead(status, forwardHeaders(upstream.headers));
    exchange.res.flushHeaders();
    try {
      for await (const received of upstream as AsyncIterable<Buffer>) {
        if (exchange.ended) return;
        let chunk = received;
        if (stalled()) {
          // What piled up during a stall goes out in one burst, as after a network hiccup.
          await gate();
          chunk = Buffer.concat([chunk, ...buffered(upstream)]);
        }
        const planned = exchange.sse ? planCut(exchange, chunk) : undefined;
        if (planned) {
          await deliver(exchange, chunk.subarray(0, planned.at));
          if (!exchange.ended) performCut(exchange, planned.cut);
          return;
        }
        await deliver(exchange, chunk);
      }
      if (!exchange.ended) {
        exchange.res.end();
        finish(exchange);
      }
    } catch {
      destroy(exchange);
    }
  }

  function forward(exchange: Exchange): void {
    const { req, res } = exchange;
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    }
    headers.host = `${target.url.hostname}:${target.port}`;
    const upstream = httpRequest({
      host: target.host,
      port: target.port,
      method: req.method,
      path: req.url,
      headers,
      agent,
    });
    exchange.upstream = upstream;
    upstream.setTimeout(idleTimeoutMs, () => destroy(exchange));
    upstream.on('response', (response) => {
      pump(exchange, response).catch(() => destroy(exchange));
    });
    upstream.on('error', () => {
      if (exchange.ended) return;
      if (!res.headersSent) {
        exchange.entry.status = 502;
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end('fault proxy: upstream unreachable');
        finish(exchange);
      } else {
        destroy(exchange);
      }
    });
    res.once('close', () => {
      // The client went away (or we cut it): the target must see the stream end too.
      if (!res.writableFinished) destroy(exchange);
    });
    (async () => {
      const peek: Buffer[] = [];
      let peeked = 0;
      for await (const chunk of req as AsyncIterable<Buffer>) {
        if (peeked < maxPeekBytes) {
          peek.push(chunk);
          peeked += chunk.length;
        }
        if (!upstream.write(chunk)) await drained(upstream);
      }
      if (req.method === 'POST' && peeked > 0 && peeked <= maxPeekBytes) {
        countRpc(exchange.entry, Buffer.concat(peek).toString('utf8'));
      }
      notify(exchange.entry);
      upstream.end();
    })().catch(() => destroy(exchange));
  }

  function inject(exchange: Exchange, injection: Injection): void {
    stats.injectedFailures++;
    exchange.entry.status = injection.status;
    exchange.entry.injected = true;
    const headers: OutgoingHttpHeaders = { 'content-type': 'text/plain' };
    if (injection.retryAfterSeconds !== undefined)
      headers['retry-after'] = String(injection.retryAfterSeconds);
    exchange.res.once('close', () => finish(exchange));
    exchange.req.resume();
    exchange.req.once('end', () => {
      notify(exchange.entry);
      if (exchange.ended) return;
      exchange.res.writeHead(injection.status, headers);
      exchange.res.end(`fault proxy: injected ${injection.status}`);
      finish(exchange);
    });
  }

  const server = createServer((req, res) => {
    const method = (req.method ?? 'GET').toUpperCase();
    stats.httpMethods.set(method, (stats.httpMethods.get(method) ?? 0) + 1);
    const lastEventId = req.headers['last-event-id'];
    const entry: ProxyLogEntry = { at: Date.now(), method, rpc: [] };
    if (typeof lastEventId === 'string') entry.lastEventId = lastEventId;
    const session = req.headers['mcp-session-id'];
    if (typeof session === 'string') entry.session = session;
    record(entry);
    const exchange: Exchange = { method, req, res, entry, sse: false, bytes: 0, eventTail: '', ended: false };
    if (closed) {
      destroy(exchange);
      return;
    }
    exchanges.add(exchange);
    const injection = takeInjection(method);
    if (injection) inject(exchange, injection);
    else forward(exchange);
  });
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 500;
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;
  server.on('connection', (socket: Socket) => {
    if (closed || sockets.size >= maxConnections) {
      stats.refusedConnections++;
      socket.destroy();
      return;
    }
    stats.totalConnections++;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_error, socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  const faults: FaultControls = {
    cutNextStream(cutOptions) {
      if (closed) return Promise.reject(new Error('The fault proxy is closed'));
      if (!cutOptions.midEvent && !(Number.isInteger(cutOptions.afterBytes) && cutOptions.afterBytes >= 0)) {
        return Promise.reject(new RangeError('afterBytes must be a non-negative integer'));
      }
      const armed = new Promise<CutReport>((resolve, reject) => {
        const base = new Map<Exchange, number>();
        for (const exchange of exchanges) base.set(exchange, exchange.bytes);
        cuts.push({ options: cutOptions, base, resolve, reject });
      });
      // A cut nobody awaits may be disarmed by reset() or close() without an unhandled rejection.
      armed.catch(() => {});
      return armed;
    },
    async stall(ms) {
      const length = Math.max(0, Math.min(ms, maxStallMs));
      stallUntil = Math.max(stallUntil, Date.now() + length);
      if (!stallGate) {
        let release!: () => void;
        const promise = new Promise<void>((resolve) => {
          release = resolve;
        });
        const current = { promise, release };
        stallGate = current;
        (async () => {
          while (!closed && stallGate === current && Date.now() < stallUntil)
            await sleep(stallUntil - Date.now());
          if (stallGate === current) stallGate = undefined;
          release();
        })();
      }
      await gate();
    },
    failNext(count, status = 503, filter = {}) {
      if (!Number.isInteger(count) || count < 1) throw new RangeError('count must be a positive integer');
      if (!Number.isInteger(status) || status < 400 || status > 599)
        throw new RangeError('status must be 4xx or 5xx');
      injections.push({
        remaining: count,
        status,
        method: filter.method?.toUpperCase(),
        retryAfterSeconds: filter.retryAfterSeconds,
      });
    },
    dropAllStreams() {
      let n = 0;
      for (const exchange of [...exchanges]) {
        if (!exchange.sse) continue;
        destroy(exchange);
        n++;
      }
      stats.dropped += n;
      return n;
    },
    slowConsumer(rate) {
      if (rate !== undefined && rate !== 0 && !(rate > 0))
        throw new RangeError('bytesPerSecond must be positive');
      bytesPerSecond = rate || undefined;
    },
    reset() {
      injections.length = 0;
      for (const cut of cuts.splice(0)) cut.reject(new Error('The cut was disarmed'));
      bytesPerSecond = undefined;
      stallUntil = 0;
      const gateNow = stallGate;
      stallGate = undefined;
      gateNow?.release();
    },
  };

  const proxy: FaultProxy = {
    url: `http://127.0.0.1:${port}${target.url.pathname}${target.url.search}`,
    port,
    faults,
    stats,
    onRequest: undefined,
    async close() {
      if (closed) return;
      closed = true;
      faults.reset();
      for (const [timer, resolve] of timers) {
        clearTimeout(timer);
        resolve();
      }
      timers.clear();
      for (const exchange of [...exchanges]) destroy(exchange);
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      agent.destroy();
      await done;
    },
  };
  return proxy;
}

function forwardHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  return out;
}

/** Resolves when `stream` can take more data or is gone; leaves no listener behind. */
function drained(stream: {
  once(event: 'drain' | 'close' | 'error', listener: () => void): unknown;
  off(event: 'drain' | 'close' | 'error', listener: () => void): unknown;
}): Promise<void> {
  return new Promise((resolve) => {
    const go = () => {
      stream.off('drain', go);
      stream.off('close', go);
      stream.off('error', go);
      resolve();
    };
    stream.once('drain', go);
    stream.once('close', go);
    stream.once('error', go);
  });
}

/** The chunks a paused response has buffered already, without waiting for more. */
function buffered(stream: IncomingMessage): Buffer[] {
  const chunks: Buffer[] = [];
  for (let chunk = stream.read() as Buffer | null; chunk !== null; chunk = stream.read() as Buffer | null) {
    chunks.push(chunk);
  }
  return chunks;
}

/**
 * The offset inside the first `data:` line with a payload (one that ends in this chunk or later),
 * half-way through the payload: the event's `id:` line has passed, its terminating blank line has not.
 */
export function midEventOffset(chunk: Buffer): number | undefined {
  const text = chunk.toString('latin1');
  let from = 0;
  for (;;) {
    const index = text.indexOf('data:', from);
    if (index < 0) return undefined;
    from = index + 5;
    if (index > 0 && text[index - 1] !== '\n' && text[index - 1] !== '\r') continue;
    const start = text[index + 5] === ' ' ? index + 6 : index + 5;
    const newline = text.indexOf('\n', start);
    const end = newline < 0 ? text.length : newline;
    const length = end - start;
    if (length < 2) continue;
    return start + Math.floor(length / 2);
  }
}

/** Keeps the text of the SSE event being delivered (since the last blank line), bounded. */
function trackEventTail(tail: string, slice: Buffer): string {
  const next = tail + slice.toString('utf8');
  const boundary = Math.max(next.lastIndexOf('\n\n'), next.lastIndexOf('\r\n\r\n'));
  const current = boundary < 0 ? next : next.slice(boundary + (next[boundary] === '\r' ? 4 : 2));
  return current.length > 4096 ? current.slice(-4096) : current;
}
