/**
 * A keep-alive socket the server closed while it sat idle in the pool fails the next request
 * on it with ECONNRESET or EPIPE. A request whose repetition is harmless (an idempotent
 * method) is then sent once more, on a fresh socket; a POST never is: the server may have
 * acted on it.
 */
import type * as http from 'node:http';
import type { AbortSource } from '../../protocol/abort.js';

const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);

/** May a request of `method` (upper-case) be sent again after a stale socket? */
export function retriesOnStaleSocket(method: string): boolean {
  return IDEMPOTENT_METHODS.has(method);
}

/** Did `req` fail because the reused socket it went out on was already closed? */
export function failedOnStaleSocket(
  req: http.ClientRequest,
  error: NodeJS.ErrnoException,
  signal: AbortSource | undefined,
): boolean {
  return req.reusedSocket && STALE_SOCKET_CODES.has(error.code ?? '') && !signal?.aborted;
}
