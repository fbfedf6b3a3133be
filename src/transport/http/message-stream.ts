import { AxMCPProtocolError } from '../../protocol/errors.js';
import { type JSONRPCMessage, parseJSONRPCBody } from '../../protocol/jsonrpc.js';
import { readSSE } from '../../protocol/sse.js';

/** One JSON-RPC message read from an SSE stream, with the event id it came with. */
export interface SSEMessage {
  message: JSONRPCMessage;
  eventId?: string;
}

/** What a reader learned about its stream: the resume point and the server's retry hint. */
export interface SSEStreamState {
  lastEventId: string | undefined;
  retryMs: number | undefined;
}

/**
 * Reads JSON-RPC messages from an SSE body. Events without data (priming events,
 * keep-alives) only advance the resume point; events of another type are skipped;
 * an undecodable event is reported through `onInvalid` and skipped, so one bad
 * event never loses the stream.
 */
export async function* readSSEMessages(
  body: ReadableStream<Uint8Array>,
  state: SSEStreamState,
  maxEventBytes: number,
  onInvalid: (error: AxMCPProtocolError) => void,
): AsyncGenerator<SSEMessage> {
  const events = readSSE(body, {
    maxEventBytes,
    onId: (id) => {
      state.lastEventId = id === '' ? undefined : id;
    },
    onRetry: (ms) => {
      state.retryMs = ms;
    },
  });
  for await (const event of events) {
    if (event.data === '' || (event.event !== undefined && event.event !== 'message')) continue;
    let messages: JSONRPCMessage[];
    try {
      // 2025-03-26 servers may put a batch in one event.
      messages = parseJSONRPCBody(event.data);
    } catch (error) {
      if (error instanceof AxMCPProtocolError) {
        onInvalid(error);
        continue;
      }
      throw error;
    }
    for (const message of messages) yield event.id ? { message, eventId: event.id } : { message };
  }
}
