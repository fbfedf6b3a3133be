/**
 * The Node `http` adapter of `AxUCPWebhookEventSource`: a request handler that turns an
 * `IncomingMessage` into a WHATWG `Request` (the body read under a byte cap and a deadline, the
 * URL rebuilt from the `Host` the business signed), hands it to `source.handle`, and writes
 * the `Response` back; and a listener that serves that handler on its own port.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { matching, number, object, string } from '../../options/check.js';
import { AxUCPError, assertUCPOptions } from '../../ucp/errors.js';
import type { AxUCPWebhookEventSource } from '../../ucp/webhook-source.js';

/** Options of {@link axUCPWebhookHandler}. */
export interface AxUCPWebhookHandlerOptions {
  /**
   * Only requests to this path are deliveries (default: every request). Others go to `next`
   * when the handler is given one (Express, Connect), else they are answered 404.
   */
  path?: string;
  /** Largest body read (default 1 MiB); a larger one is answered 413 and not read further. */
  maxBodyBytes?: number;
  /** Deadline for reading the body and answering, ms (default 10 000); then 408. */
  timeoutMs?: number;
  /**
   * The public origin deliveries are addressed to (`https://agent.example`), when a proxy in
   * front rewrites `Host`: the signature covers `@authority`. Default: the request's `Host`.
   */
  origin?: string;
}

const HANDLER_KEYS = {
  path: matching(/^\//, 'a path starting with /'),
  maxBodyBytes: number({ integer: true, min: 1 }),
  timeoutMs: number({ min: 1 }),
  origin: string({ nonEmpty: true }),
};
/** What the handler accepts: a misspelled key is refused, never ignored. */
const HANDLER_OPTIONS = object(HANDLER_KEYS, {
  expected: 'options { path?, maxBodyBytes?, timeoutMs?, origin? }',
});
const LISTENER_OPTIONS = object(
  { ...HANDLER_KEYS, host: string({ nonEmpty: true }), port: number({ integer: true, min: 0, max: 65535 }) },
  { expected: 'options { host?, port?, path?, maxBodyBytes?, timeoutMs?, origin? }' },
);

/** Options of {@link axUCPWebhookListener}: the handler's, and where to listen. */
export interface AxUCPWebhookListenerOptions extends AxUCPWebhookHandlerOptions {
  /** Interface (default `127.0.0.1`). */
  host?: string;
  /** Port (default 0: a free one). */
  port?: number;
}

/** A listening webhook receiver. */
export interface AxUCPWebhookListener {
  /** The webhook URL to register with the business (`http://127.0.0.1:port/webhooks/ucp`). */
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  /** Stops listening and closes every connection. */
  close(): Promise<void>;
}

/** What the handler needs of the source (an {@link AxUCPWebhookEventSource}). */
export type AxUCPWebhookReceiver = Pick<AxUCPWebhookEventSource, 'handle'>;

/** A Node request handler for UCP webhook deliveries: `(req, res, next?) => void`. */
export type AxUCPWebhookRequestHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  next?: (error?: unknown) => void,
) => void;

const DEFAULT_MAX_BYTES = 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 10_000;

/** A request handler for `http.createServer`, Express or Connect. See the module comment. */
export function axUCPWebhookHandler(
  source: AxUCPWebhookReceiver,
  options: AxUCPWebhookHandlerOptions = {},
): AxUCPWebhookRequestHandler {
  if (typeof source?.handle !== 'function') {
    throw new AxUCPError('invalid_options', 'axUCPWebhookHandler needs an AxUCPWebhookEventSource');
  }
  assertUCPOptions(HANDLER_OPTIONS, options, 'axUCPWebhookHandler options');
  const maxBytes = options.maxBodyBytes ?? DEFAULT_MAX_BYTES;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let origin: string | undefined;
  if (options.origin !== undefined) {
    try {
      origin = new URL(options.origin).origin;
    } catch (error) {
      throw new AxUCPError('invalid_options', 'origin must be an absolute URL', { cause: error });
    }
  }
  return (req, res, next) => {
    const pathname = (req.url ?? '/').split('?')[0];
    if (options.path !== undefined && pathname !== options.path) {
      if (next) return next();
      return answer(res, 404, 'not_found', 'Not a webhook endpoint');
    }
    deliver(source, req, res, { maxBytes, timeoutMs, origin }).catch((error: unknown) => {
      if (next) return next(error);
      answer(res, 500, 'internal_error', 'The delivery could not be handled');
    });
  };
}

/** Serves {@link axUCPWebhookHandler} on its own port; `path` defaults to `/webhooks/ucp`. */
export async function axUCPWebhookListener(
  source: AxUCPWebhookReceiver,
  options: AxUCPWebhookListenerOptions = {},
): Promise<AxUCPWebhookListener> {
  assertUCPOptions(LISTENER_OPTIONS, options, 'axUCPWebhookListener options');
  const { host = '127.0.0.1', port = 0, ...rest } = options;
  const path = rest.path ?? '/webhooks/ucp';
  const handler = axUCPWebhookHandler(source, { ...rest, path });
  const server = createServer((req, res) => handler(req, res));
  // Idle keep-alive sockets must not keep the process alive after close().
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    url: `http://${shown.includes(':') ? `[${shown}]` : shown}:${bound}${path}`,
    port: bound,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        if (!server.listening) return resolve();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

interface Limits {
  maxBytes: number;
  timeoutMs: number;
  origin: string | undefined;
}

async function deliver(
  source: AxUCPWebhookReceiver,
  req: IncomingMessage,
  res: ServerResponse,
  limits: Limits,
): Promise<void> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limits.maxBytes) {
    return refuseAndClose(req, res, 413, 'message_too_large', `The body exceeds ${limits.maxBytes} bytes`);
  }
  const base = limits.origin ?? originOf(req);
  if (base === undefined) return answer(res, 400, 'invalid_argument', 'The request has no valid Host');
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), limits.timeoutMs);
  try {
    const body = await readLimited(req, limits.maxBytes, deadline.signal);
    if (body === 'too_large') {
      return refuseAndClose(req, res, 413, 'message_too_large', `The body exceeds ${limits.maxBytes} bytes`);
    }
    if (body === 'timeout') {
      return refuseAndClose(
        req,
        res,
        408,
        'timeout',
        `The body did not arrive within ${limits.timeoutMs} ms`,
      );
    }
    const headers = new Headers();
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
      headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
    }
    const method = req.method ?? 'GET';
    const init: RequestInit = { method, headers, signal: deadline.signal };
    if (method !== 'GET' && method !== 'HEAD' && body.byteLength > 0) init.body = body as BodyInit;
    const request = new Request(new URL(req.url ?? '/', base), init);
    const response = await Promise.race([
      source.handle(request),
      new Promise<undefined>((resolve) =>
        deadline.signal.addEventListener('abort', () => resolve(undefined)),
      ),
    ]);
    if (response === undefined) {
      return answer(res, 503, 'timeout', `The delivery was not handled within ${limits.timeoutMs} ms`);
    }
    const bytes = Buffer.from(await response.arrayBuffer());
    if (res.destroyed) return;
    const out: Record<string, string> = {};
    response.headers.forEach((value, key) => {
      out[key] = value;
    });
    res.writeHead(response.status, out).end(bytes);
  } finally {
    clearTimeout(timer);
  }
}

/** `http://<host>` from the `Host` header, or undefined when it is missing or not a host. */
function originOf(req: IncomingMessage): string | undefined {
  const host = req.headers.host;
  if (host === undefined || !/^[\w.-]+(:\d{1,5})?$|^\[[0-9a-f:.]+\](:\d{1,5})?$/i.test(host))
    return undefined;
  const secure = (req.socket as { encrypted?: boolean }).encrypted === true;
  return `${secure ? 'https' : 'http'}://${host}`;
}

/** The body, or why it was not read: larger than `limit`, or slower than the deadline. */
async function readLimited(
  req: IncomingMessage,
  limit: number,
  signal: AbortSignal,
): Promise<Uint8Array | 'too_large' | 'timeout'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (value: Uint8Array | 'too_large' | 'timeout') => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      signal.removeEventListener('abort', onAbort);
      if (typeof value === 'string') req.pause();
      resolve(value);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return finish('too_large');
      chunks.push(chunk);
    };
    const onEnd = () => finish(new Uint8Array(Buffer.concat(chunks)));
    const onError = (error: Error) => {
      req.off('data', onData);
      req.off('end', onEnd);
      signal.removeEventListener('abort', onAbort);
      reject(error);
    };
    const onAbort = () => finish('timeout');
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
  });
}

function answer(res: ServerResponse, status: number, code: string, message: string): void {
  if (res.headersSent || res.destroyed) return;
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ code, content: message }));
}

/** Answers and closes the connection: the rest of the body is not read. */
function refuseAndClose(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
): void {
  res.setHeader('connection', 'close');
  res.once('finish', () => req.destroy());
  answer(res, status, code, message);
}
