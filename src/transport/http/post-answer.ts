/**
 * Finding the answer to one POSTed request: in a JSON body, on the response's SSE stream
 * (resumed with `Last-Event-ID` after drops), or in-band in an error response. Whatever else
 * the server sends along is dispatched as server messages related to the request.
 */
import { delay, type LinkedAbort } from '../../protocol/abort.js';
import {
  type AxMCPProtocolError,
  AxMCPSessionExpiredError,
  AxMCPTransportError,
} from '../../protocol/errors.js';
import {
  isResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type JSONRPCResponse,
  parseJSONRPCBody,
} from '../../protocol/jsonrpc.js';
import { readErrorBody, statusError, statusErrorFrom } from './error-response.js';
import type { HTTPEndpoint } from './http-endpoint.js';
import { readSSEMessagesInto, type SSEStreamState } from './message-stream.js';

/** Hands a server message that came with a response to the transport's handlers. */
export type DispatchMessage = (message: JSONRPCMessage, eventId: string | undefined) => void;

/** What reading a POST's stream needs from the transport. */
export interface PostStreamReading {
  http: HTTPEndpoint;
  /** The endpoint as errors name it. */
  endpoint: string;
  maxBytes: number;
  maxResumes: number;
  onProtocolError: ((error: AxMCPProtocolError) => void) | undefined;
  dispatch: DispatchMessage;
}

/** The answer in a JSON body (the other messages in it are dispatched). */
export function answerFromJSON(
  text: string,
  request: JSONRPCRequest,
  endpoint: string,
  dispatch: DispatchMessage,
): JSONRPCResponse {
  let answer: JSONRPCResponse | undefined;
  for (const message of parseJSONRPCBody(text)) {
    if (isResponse(message)) {
      answer = answerFor(message, request) ?? answer;
      continue;
    }
    dispatch(message, undefined);
  }
  if (answer) return answer;
  throw new AxMCPTransportError(
    'transport_error',
    `The response to "${request.method}" did not carry its id`,
    {
      endpoint,
    },
  );
}

/** A 4xx/5xx carrying a JSON-RPC error for this request is an answer, not a transport failure. */
export async function inBandOrThrow(
  response: Response,
  request: JSONRPCRequest,
  endpoint: string,
  session: string | undefined,
): Promise<JSONRPCResponse> {
  const { text, answer, lost } = await readErrorBody(response, endpoint, session);
  if (lost) throw lost;
  if (answer && 'error' in answer && (answer.id === request.id || answer.id === null)) {
    return { jsonrpc: '2.0', id: request.id, error: answer.error };
  }
  throw statusErrorFrom(response, text, `"${request.method}"`, endpoint);
}

/**
 * Reads a POST's SSE stream until this request's response, resuming after drops. A stream
 * belongs to its session (`session`): once that was lost or replaced, there is nothing to
 * resume, and the request fails as the lost session's.
 */
export async function awaitAnswerOnStream(
  reading: PostStreamReading,
  response: Response,
  message: JSONRPCRequest,
  link: LinkedAbort,
  session: string | undefined,
): Promise<JSONRPCResponse> {
  const { http, endpoint, maxBytes, maxResumes, dispatch } = reading;
  const state: SSEStreamState = { lastEventId: undefined, retryMs: undefined };
  let invalid: AxMCPProtocolError | undefined;
  const onInvalid = (error: AxMCPProtocolError) => {
    invalid = error;
    reading.onProtocolError?.(error);
  };
  let current: Response = response;
  for (let resumes = 0; ; ) {
    const resumedFrom = state.lastEventId;
    try {
      const answer = await readSSEMessagesInto(
        current.body as ReadableStream<Uint8Array>,
        state,
        maxBytes,
        onInvalid,
        (incoming, eventId) => {
          if (isResponse(incoming)) return answerFor(incoming, message);
          dispatch(incoming, eventId);
          return undefined;
        },
      );
      if (answer) return answer;
    } catch (error) {
      // A network failure mid-stream is resumable like a clean end: fetch reports it as a
      // TypeError, ax-mcp/node's bodies as a typed stream_ended.
      const broken =
        error instanceof TypeError || (error instanceof AxMCPTransportError && error.code === 'stream_ended');
      if (link.aborted || !broken) throw error;
    }
    if (state.lastEventId === undefined) {
      if (invalid) throw invalid;
      throw new AxMCPTransportError(
        'stream_ended',
        `The response stream for "${message.method}" ended early`,
        {
          endpoint,
        },
      );
    }
    resumes = state.lastEventId === resumedFrom ? resumes + 1 : 1;
    if (resumes > maxResumes) {
      throw new AxMCPTransportError('stream_ended', `Gave up resuming the stream for "${message.method}"`, {
        endpoint,
      });
    }
    await delay(state.retryMs ?? 1000, link);
    if (session !== undefined && http.sessionId !== session) {
      throw new AxMCPSessionExpiredError(undefined, { endpoint, sessionId: session });
    }
    const headers: Record<string, string> = {
      accept: 'text/event-stream',
      'last-event-id': state.lastEventId,
    };
    current = await http.send('GET', undefined, headers, link.signal);
    if (!current.ok || !isEventStream(current)) {
      throw await statusError(current, `resuming "${message.method}"`, endpoint, session);
    }
  }
}

/**
 * A response answers this request when it carries its id — or, being an error, no id
 * at all: a POST carries exactly one request, so an id-less error can only be about it.
 */
function answerFor(response: JSONRPCResponse, request: JSONRPCRequest): JSONRPCResponse | undefined {
  if (response.id === request.id) return response;
  if (response.id === null && 'error' in response)
    return { jsonrpc: '2.0', id: request.id, error: response.error };
  return undefined;
}

export function isEventStream(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream');
}
