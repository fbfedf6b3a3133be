import { AxMCPProtocolError } from '../../protocol/errors.js';
import { isResponse, type JSONRPCMessage, parseJSONRPCBody } from '../../protocol/jsonrpc.js';
import { SSEDecoder, type SSEEvent } from '../../protocol/sse.js';
import type { AxMCPStreamMessage } from '../types.js';

/** What a reader learned about its stream: the resume point and the server's retry hint. */
export interface SSEStreamState {
  lastEventId: string | undefined;
  retryMs: number | undefined;
}

/**
 * Decodes an SSE body into JSON-RPC messages as chunks arrive, recording the resume point and
 * the retry hint in `state` in stream order. Events without data (priming events, keep-alives)
 * only advance the resume point; events of another type are skipped; an undecodable event is
 * reported through `onInvalid` and skipped, so one bad event never loses the stream.
 */
export class SSEMessageDecoder {
  readonly #sse: SSEDecoder;

  constructor(
    state: SSEStreamState,
    maxEventBytes: number,
    onInvalid: (error: AxMCPProtocolError) => void,
    onMessage: (message: JSONRPCMessage, eventId: string | undefined) => void,
  ) {
    this.#sse = new SSEDecoder(maxEventBytes, {
      onId: (id) => {
        state.lastEventId = id === '' ? undefined : id;
      },
      onRetry: (ms) => {
        state.retryMs = ms;
      },
      onEvent: (event: SSEEvent) => {
        if (event.data === '' || (event.event !== undefined && event.event !== 'message')) return;
        let messages: JSONRPCMessage[];
        try {
          // 2025-03-26 servers may put a batch in one event.
          messages = parseJSONRPCBody(event.data);
        } catch (error) {
          if (error instanceof AxMCPProtocolError) {
            onInvalid(error);
            return;
          }
          throw error;
        }
        const eventId = event.id || undefined;
        for (const message of messages) onMessage(message, eventId);
      },
    });
  }

  push(chunk: Uint8Array): void {
    this.#sse.push(chunk);
  }

  end(): void {
    this.#sse.end();
  }
}

/**
 * Reads an SSE body chunk by chunk, handing each chunk's messages to `onMessage` synchronously,
 * until the body ends or `onMessage` returns something other than `undefined` (which this
 * returns). One `await` per chunk, however many events it holds; cancels the body when it stops
 * early or fails.
 */
export async function readSSEMessagesInto<T>(
  body: ReadableStream<Uint8Array>,
  state: SSEStreamState,
  maxEventBytes: number,
  onInvalid: (error: AxMCPProtocolError) => void,
  onMessage: (message: JSONRPCMessage, eventId: string | undefined) => T | undefined,
): Promise<T | undefined> {
  let result: T | undefined;
  const decoder = new SSEMessageDecoder(state, maxEventBytes, onInvalid, (message, eventId) => {
    // Once the answer is in, the rest of the chunk belongs to no one.
    if (result === undefined) result = onMessage(message, eventId);
  });
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      decoder.push(value);
      if (result !== undefined) return result;
    }
    decoder.end();
    return result;
  } finally {
    reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

/**
 * The same reading as an async iterator of the server's requests and notifications, for
 * consumers that pull (a standalone stream carries no answers the caller waits for; stray ones
 * are dropped); `onFinish` runs when it ends, however it ends. `state` covers what has been read from the body: a consumer that stops early
 * has been handed a chunk's messages, not necessarily taken them all.
 */
export async function* readSSEServerMessages(
  body: ReadableStream<Uint8Array>,
  state: SSEStreamState,
  maxEventBytes: number,
  onInvalid: (error: AxMCPProtocolError) => void,
  onFinish: () => void,
): AsyncGenerator<AxMCPStreamMessage> {
  const queue: AxMCPStreamMessage[] = [];
  const decoder = new SSEMessageDecoder(state, maxEventBytes, onInvalid, (message, eventId) => {
    if (isResponse(message)) return;
    queue.push(eventId === undefined ? { message } : { message, eventId });
  });
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      let failure: unknown;
      try {
        decoder.push(value);
      } catch (error) {
        // The messages the chunk completed before the failure are handed on first: their ids
        // are already the resume point.
        failure = error;
      }
      for (let i = 0; i < queue.length; i++) yield queue[i] as AxMCPStreamMessage;
      queue.length = 0;
      if (failure !== undefined) throw failure;
    }
    decoder.end();
  } finally {
    reader.cancel().catch(() => {});
    reader.releaseLock();
    onFinish();
  }
}
