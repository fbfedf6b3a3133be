import { AxMCPProtocolError } from '../../protocol/errors.js';
import { isResponse, type JSONRPCMessage, parseJSONRPCMessageOrBatch } from '../../protocol/jsonrpc.js';
import { readQueued, SSEDecoder, type SSEEvent } from '../../protocol/sse.js';
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
        let messages: JSONRPCMessage | JSONRPCMessage[];
        try {
          // 2025-03-26 servers may put a batch in one event.
          messages = parseJSONRPCMessageOrBatch(event.data);
        } catch (error) {
          if (error instanceof AxMCPProtocolError) {
            onInvalid(error);
            return;
          }
          throw error;
        }
        const eventId = event.id || undefined;
        if (!Array.isArray(messages)) onMessage(messages, eventId);
        else for (const message of messages) onMessage(message, eventId);
      },
    });
  }

  push(chunk: Uint8Array | string): void {
    this.#sse.push(chunk);
  }

  end(): void {
    this.#sse.end();
  }
}

/**
 * A response body that can push its chunks to a synchronous reader, as `ax-mcp/node`'s bodies
 * do: no promise per chunk, and text decoded natively. `onText` gets the body as UTF-8 text in
 * pieces (a character split across network chunks arrives whole); returning true stops the
 * reading (the body is cancelled).
 */
export interface AxMCPChunkPushingBody {
  forEachText(onText: (text: string) => boolean | undefined): Promise<void>;
}

/**
 * When a reader stops early (the answer is in), the rest of the body is read away so its
 * keep-alive connection can serve the next request (a server ends an answer's stream right
 * after the answer), up to these bounds; past them the body is cancelled, which drops the
 * connection.
 */
export const DRAIN_LIMITS = { bytes: 64 * 1024, ms: 2000 } as const;

/**
 * Hands every chunk of `body` to `onChunk` until it ends or `onChunk` returns true (the rest is
 * then read away within {@link DRAIN_LIMITS}); cancels the body on failure.
 */
async function eachChunk(
  body: ReadableStream<Uint8Array>,
  onChunk: (chunk: Uint8Array | string) => boolean | undefined,
): Promise<void> {
  const pushing = body as unknown as Partial<AxMCPChunkPushingBody>;
  if (typeof pushing.forEachText === 'function') return pushing.forEachText(onChunk);
  const reader = body.getReader();
  let stopped = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      if (onChunk(value)) {
        stopped = true;
        return;
      }
    }
  } finally {
    if (stopped) void drainAway(reader);
    else {
      reader.cancel().catch(() => {});
      reader.releaseLock();
    }
  }
}

async function drainAway(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  const timer = setTimeout(() => reader.cancel().catch(() => {}), DRAIN_LIMITS.ms);
  // Reading away must not keep a process alive.
  (timer as { unref?: () => void }).unref?.();
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      bytes += value.byteLength;
      if (bytes > DRAIN_LIMITS.bytes) break;
    }
    await reader.cancel();
  } catch {
    // A body that breaks while being read away has nothing anyone wants.
  } finally {
    clearTimeout(timer);
    reader.releaseLock();
  }
}

/**
 * Reads an SSE body chunk by chunk, handing each chunk's messages to `onMessage` synchronously,
 * until the body ends or `onMessage` returns something other than `undefined` (which this
 * returns). At most one `await` per chunk, however many events it holds; cancels the body when
 * it stops early or fails.
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
  let ended = true;
  await eachChunk(body, (chunk) => {
    decoder.push(chunk);
    if (result === undefined) return undefined;
    ended = false;
    return true;
  });
  if (ended) decoder.end();
  return result;
}

/**
 * The same reading as an async iterator of the server's requests and notifications, for
 * consumers that pull (a standalone stream carries no answers the caller waits for; stray ones
 * are dropped); `onFinish` runs when it ends, however it ends. `state` covers what has been
 * read from the body: a consumer that stops early has been handed a chunk's messages, not
 * necessarily taken them all.
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
  try {
    yield* readQueued(body, decoder, queue);
  } finally {
    onFinish();
  }
}
