/**
 * How the Streamable HTTP transport turns what went wrong into typed errors: an error
 * response (its status, the start of its body, a JSON-RPC answer in it, a lost session), a
 * network failure, a deadline.
 */
import { readTextLimited } from '../../net/guarded-fetch.js';
import { type AbortSource, abortReason } from '../../protocol/abort.js';
import {
  type AxMCPError,
  AxMCPHTTPStatusError,
  AxMCPSessionExpiredError,
  AxMCPTransportError,
} from '../../protocol/errors.js';
import { isResponse, type JSONRPCResponse, parseJSONRPCBody } from '../../protocol/jsonrpc.js';
import { parseRetryAfter } from './retry.js';

const ERROR_BODY_BYTES = 64 * 1024;

/** What an error response said: the start of its body, the JSON-RPC answer in it, a lost session. */
export interface ErrorBody {
  text: string;
  answer: JSONRPCResponse | undefined;
  lost: AxMCPSessionExpiredError | undefined;
}

/**
 * The start of an error response's body, the JSON-RPC answer in it if any, and whether it
 * says the session `session` was lost (every error path reads it the same way).
 */
export async function readErrorBody(
  response: Response,
  endpoint: string,
  session: string | undefined,
): Promise<ErrorBody> {
  const text = await readTextLimited(response, ERROR_BODY_BYTES, undefined, { truncate: true }).catch(
    () => '',
  );
  const answer = parseErrorAnswer(text);
  const lost =
    session !== undefined && sessionLost(response.status, answer)
      ? new AxMCPSessionExpiredError(undefined, { endpoint, sessionId: session })
      : undefined;
  return { text, answer, lost };
}

/** The error for an error response to `what`: the lost session's, else its HTTP status. */
export async function statusError(
  response: Response,
  what: string,
  endpoint: string,
  session: string | undefined,
): Promise<AxMCPError> {
  const { text, lost } = await readErrorBody(response, endpoint, session);
  return lost ?? statusErrorFrom(response, text, what, endpoint);
}

export function statusErrorFrom(
  response: Response,
  text: string,
  what: string,
  endpoint: string,
): AxMCPHTTPStatusError {
  const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
  const context: ConstructorParameters<typeof AxMCPHTTPStatusError>[2] = {
    endpoint,
    bodySnippet: text.slice(0, 500),
  };
  if (retryAfterMs !== undefined) context.retryAfterMs = retryAfterMs;
  return new AxMCPHTTPStatusError(response.status, `HTTP ${response.status} for ${what}`, context);
}

/** Normalizes failures: aborts keep their reason; raw network errors become typed. */
export function normalizeFailure(error: unknown, signal: AbortSource, endpoint: string): unknown {
  if (signal.aborted) return abortReason(signal);
  if (error instanceof TypeError) {
    return new AxMCPTransportError('transport_error', `Could not reach ${endpoint}: ${error.message}`, {
      endpoint,
      cause: error,
    });
  }
  return error;
}

export function timeoutError(what: string, timeoutMs: number, endpoint: string): AxMCPTransportError {
  return new AxMCPTransportError(
    'transport_error',
    `Timed out ${what} after ${timeoutMs} ms (the transport's timeoutMs option)`,
    { endpoint },
  );
}

function parseErrorAnswer(text: string): JSONRPCResponse | undefined {
  if (text === '') return undefined;
  try {
    const [first] = parseJSONRPCBody(text);
    return first && isResponse(first) ? first : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A legacy server that lost the session answers 404 (the specification), or — some
 * servers — 400 with an id-less error about the session. Only meaningful while a
 * session id is held: the stateless era has none, and its 404 means "unknown method".
 */
function sessionLost(status: number, answer: JSONRPCResponse | undefined): boolean {
  if (status === 404) return true;
  if (status === 400 && answer && 'error' in answer && answer.id === null) {
    return /session/i.test(answer.error.message);
  }
  return false;
}
