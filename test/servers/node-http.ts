/**
 * node:http plumbing shared by the test peers: listen on 127.0.0.1:0, read bounded bodies,
 * adapt node:http to web `Request`/`Response` (for the v2 SDK transport), and close without leaks.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Largest request body the peers read (the SDK transports use the same default). */
export const MAX_REQUEST_BODY_BYTES = 4 * 1024 * 1024;

/** A node:http server bound to 127.0.0.1 on an ephemeral port. */
export interface LoopbackServer {
  readonly server: Server;
  readonly port: number;
  /** `http://127.0.0.1:<port><path>`. */
  url(path: string): string;
  /** Stops listening, drops every connection, resolves when the server has closed. */
  close(): Promise<void>;
}

/** Starts `handler` on 127.0.0.1, port 0 (or `port` to reuse one). */
export async function listenLoopback(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  port = 0,
): Promise<LoopbackServer> {
  const server = createServer(handler);
  // Idle keep-alive sockets must not keep a test process alive after close().
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    server,
    port: bound,
    url: (path) => `http://127.0.0.1:${bound}${path}`,
    close: () => closeServer(server),
  };
}

/** Closes a node:http server: stop accepting, destroy open sockets, wait (bounded) for 'close'. */
export async function closeServer(server: Server, timeoutMs = 5_000): Promise<void> {
  if (!server.listening) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeAllConnections();
  });
}

/** Reads a request body up to `limit` bytes; `undefined` when it is larger. */
export async function readBody(
  req: IncomingMessage,
  limit = MAX_REQUEST_BODY_BYTES,
): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Parses JSON, `undefined` on failure. */
export function tryParseJson(text: string | undefined): unknown {
  if (text === undefined || text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Builds a web `Request` from a node request whose body was already read. */
export function toWebRequest(req: IncomingMessage, body: string | undefined, signal: AbortSignal) {
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  }
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD' && body !== undefined;
  return new Request(`http://127.0.0.1:${req.socket.localPort ?? 0}${req.url ?? '/'}`, {
    method,
    headers,
    body: hasBody ? body : undefined,
    signal,
  });
}

/**
 * Writes a web `Response` to a node response, streaming the body with backpressure.
 * When the client disconnects, the body reader is cancelled: the v2 SDK transport only forgets a
 * stream when its ReadableStream is cancelled, and otherwise answers a Last-Event-ID reconnect 409.
 */
export async function writeWebResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, key) => {
    headers[key] = value;
  });
  res.writeHead(response.status, headers);
  if (response.body === null) {
    res.end();
    return;
  }
  res.flushHeaders();
  const reader = response.body.getReader();
  const cancel = () => {
    reader.cancel().catch(() => {});
  };
  res.once('close', cancel);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      if (!res.write(value)) await drained(res);
    }
  } catch {
    // The stream errored or was cancelled because the client went away.
  } finally {
    res.off('close', cancel);
    if (res.destroyed) cancel();
    if (!res.writableEnded) res.end();
  }
}

/** Resolves when `res` can take more data (or closed); leaves no listeners behind. */
export function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const go = () => {
      res.off('drain', go);
      res.off('close', go);
      resolve();
    };
    res.once('drain', go);
    res.once('close', go);
  });
}

/** Calls `listener` once, right after the response head is written (by code we do not control). */
export function onHeadersSent(res: ServerResponse, listener: () => void): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    res.writeHead = writeHead;
    const result = Reflect.apply(writeHead, this, args) as ServerResponse;
    listener();
    return result;
  } as typeof res.writeHead;
}

/** Sends a JSON-RPC error with `id: null` and the given HTTP status. */
export function sendJsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** A web `Response` carrying a JSON-RPC error with `id: null`. */
export function jsonRpcErrorResponse(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status });
}

/** An AbortSignal that fires when the client's connection closes before the response finished. */
export function disconnectSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}
