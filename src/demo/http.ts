/**
 * node:http ↔ web `Request`/`Response` plumbing for the demo server: bind, read bounded
 * bodies, stream responses with backpressure, and close without leaving handles behind.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Largest request body the demo reads (the SDK's default bound). */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** A listening node:http server. */
export interface BoundServer {
  readonly server: Server;
  readonly port: number;
  close(): Promise<void>;
}

/** Starts `handler` on `host:port` (port 0 = ephemeral). */
export async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  host: string,
  port: number,
): Promise<BoundServer> {
  const server = createServer(handler);
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
  return { server, port: bound, close: () => closeServer(server) };
}

/** Stops accepting, destroys open sockets, waits (bounded) for 'close'. */
export async function closeServer(server: Server, timeoutMs = 5_000): Promise<void> {
  if (!server.listening) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeAllConnections();
  });
}

/** Reads a body up to `limit` bytes; `undefined` when larger. */
export async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Parses JSON; `undefined` when empty or invalid. */
export function parseJson(text: string | undefined): unknown {
  if (text === undefined || text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A web `Request` for a node request whose body was already read. */
export function toWebRequest(req: IncomingMessage, body: string | undefined, signal: AbortSignal): Request {
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

/** An AbortSignal that fires when the client goes away before the response finished. */
export function disconnectSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

/**
 * Writes a web `Response` to a node response, streaming with backpressure. When the client
 * disconnects the body reader is cancelled: the SDK transports forget a stream only when its
 * ReadableStream is cancelled (otherwise a Last-Event-ID reconnect is answered 409).
 */
export async function writeWebResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, key) => {
    headers[key] = value;
  });
  if (res.destroyed) {
    await response.body?.cancel().catch(() => {});
    return;
  }
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

/** A JSON response. */
export function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

/** A JSON-RPC error response (`id` null unless known). */
export function rpcErrorResponse(
  status: number,
  code: number,
  message: string,
  data?: unknown,
  id: string | number | null = null,
): Response {
  return jsonResponse(status, {
    jsonrpc: '2.0',
    id,
    error: { code, message, ...(data === undefined ? {} : { data }) },
  });
}

/** True for hosts that only accept loopback connections. */
export function isLoopbackHost(host: string): boolean {
  return host === '127.0.0.1' || host === 'localhost' || host === '::1' || host.startsWith('127.');
}

/** A response whose body the server can end early. */
export interface TrackedStream {
  readonly response: Response;
  /** Ends the body now (the client sees the stream end without a final message). */
  drop(): void;
}

/**
 * Wraps a streaming response so `onEnd` runs once when its body finishes, errors, is cancelled
 * (the client went away) or is dropped by the server.
 */
export function trackStream(response: Response, onEnd: () => void): TrackedStream {
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    onEnd();
  };
  if (response.body === null) {
    end();
    return { response, drop: () => {} };
  }
  const reader = response.body.getReader();
  let outer: ReadableStreamDefaultController<Uint8Array> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      outer = controller;
    },
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (ended) return;
        if (done) {
          end();
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (error) {
        if (ended) return;
        end();
        controller.error(error);
      }
    },
    async cancel(reason) {
      end();
      await reader.cancel(reason).catch(() => {});
    },
  });
  return {
    response: new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    }),
    drop() {
      if (ended) return;
      end();
      reader.cancel('dropped').catch(() => {});
      try {
        outer?.close();
      } catch {
        // Already closed.
      }
    },
  };
}
