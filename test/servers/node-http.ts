/**
 * node:http plumbing for the test peers: the demo server's (`src/demo/http.ts`: bounded bodies,
 * node:http ↔ web `Request`/`Response`, closing without leaks), plus a loopback `listen` with
 * `url()` and a few helpers only the peers need.
 */
import type { ServerResponse } from 'node:http';
import { type BoundServer, listen } from '../../src/demo/http.js';

export {
  disconnectSignal,
  drained,
  parseJson,
  readBody,
  rpcErrorResponse,
  toWebRequest,
  writeWebResponse,
} from '../../src/demo/http.js';

/** A node:http server bound to 127.0.0.1. */
export interface LoopbackServer extends BoundServer {
  /** `http://127.0.0.1:<port><path>`. */
  url(path: string): string;
}

/** Starts `handler` on 127.0.0.1, port 0 (or `port` to reuse one). */
export async function listenLoopback(
  handler: Parameters<typeof listen>[0],
  port = 0,
): Promise<LoopbackServer> {
  const bound = await listen(handler, '127.0.0.1', port);
  return { ...bound, url: (path) => `http://127.0.0.1:${bound.port}${path}` };
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
