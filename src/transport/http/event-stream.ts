/**
 * The standalone GET stream of Streamable HTTP: server-initiated messages (notifications,
 * server requests), resumable with `Last-Event-ID`. A server without one answers 405.
 */
import type { LinkedAbort } from '../../protocol/abort.js';
import { type AxMCPProtocolError, AxMCPTransportError } from '../../protocol/errors.js';
import { isResponse } from '../../protocol/jsonrpc.js';
import type { AxMCPEventStream } from '../types.js';
import { normalizeFailure, statusError, timeoutError } from './error-response.js';
import type { HTTPEndpoint } from './http-endpoint.js';
import { readSSEMessagesInto, readSSEServerMessages, type SSEStreamState } from './message-stream.js';
import { isEventStream } from './post-answer.js';

/** What opening the stream needs from the transport. */
export interface EventStreamOpening {
  http: HTTPEndpoint;
  /** The endpoint as errors name it. */
  endpoint: string;
  timeoutMs: number;
  maxBytes: number;
  onProtocolError: (error: AxMCPProtocolError) => void;
}

/**
 * Opens the stream under `link` (the stream owns it from here: disposed when the stream
 * ends or fails); `null` when the server offers none.
 */
export async function openServerEventStream(
  opening: EventStreamOpening,
  link: LinkedAbort,
  lastEventId: string | undefined,
): Promise<AxMCPEventStream | null> {
  const { http, endpoint, maxBytes } = opening;
  const session = http.sessionId;
  let response: Response;
  const timer = setTimeout(
    () => link.abort(timeoutError('opening the event stream', opening.timeoutMs, endpoint)),
    opening.timeoutMs,
  );
  try {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    response = await http.send('GET', undefined, headers, link.signal);
  } catch (error) {
    link.dispose();
    throw normalizeFailure(error, link.signal, endpoint);
  } finally {
    clearTimeout(timer);
  }
  if (response.status === 405) {
    link.dispose();
    await response.body?.cancel().catch(() => {});
    return null;
  }
  if (!response.ok || !isEventStream(response)) {
    link.dispose();
    throw await statusError(response, 'GET event stream', endpoint, session);
  }
  const state: SSEStreamState = { lastEventId, retryMs: undefined };
  const body = response.body as ReadableStream<Uint8Array>;
  const onInvalid = opening.onProtocolError;
  // fetch reports a connection cut mid-body as a bare TypeError ("terminated"); the caller gets
  // the typed stream_ended that ax-mcp/node's bodies already raise.
  const broken = (error: unknown): unknown =>
    error instanceof TypeError && !link.signal.aborted
      ? new AxMCPTransportError('stream_ended', 'The event stream broke off', { endpoint, cause: error })
      : error;
  return {
    messages: typedEnd(readSSEServerMessages(body, state, maxBytes, onInvalid, link.dispose), broken),
    consume: async (onMessage) => {
      try {
        await readSSEMessagesInto(body, state, maxBytes, onInvalid, (message, eventId) => {
          // A standalone stream carries no answer anyone waits for.
          if (!isResponse(message)) onMessage(message, eventId);
          return undefined;
        });
      } catch (error) {
        throw broken(error);
      } finally {
        link.dispose();
      }
    },
    get retryMs() {
      return state.retryMs;
    },
    get lastEventId() {
      return state.lastEventId;
    },
  };
}

/** `messages`, with what it throws passed through `typed`. */
async function* typedEnd<T>(
  messages: AsyncGenerator<T>,
  typed: (error: unknown) => unknown,
): AsyncGenerator<T> {
  try {
    yield* messages;
  } catch (error) {
    throw typed(error);
  }
}
