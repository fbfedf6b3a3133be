import { createParser, type EventSourceParser } from 'eventsource-parser';
import { AxMCPTransportError } from './errors.js';

/** One server-sent event. */
export interface SSEEvent {
  id?: string;
  event?: string;
  data: string;
}

/** What a `text/event-stream` carries besides comments, delivered in stream order. */
export interface SSEHandlers {
  onEvent(event: SSEEvent): void;
  /** The server's `retry:` field, in milliseconds. */
  onRetry?(ms: number): void;
  /** The `id:` of each dispatched event (priming events included); an empty id resets the last event id. */
  onId?(id: string): void;
}

export interface SSEReadOptions extends Omit<SSEHandlers, 'onEvent'> {
  /** Caps one event (the event being assembled, in characters), never the life of the stream. */
  maxEventBytes: number;
}

/**
 * Decodes `text/event-stream` bytes as they arrive: `push(chunk)` runs the handlers for every
 * event the chunk completes, in stream order, before it returns. Only the event being assembled
 * is buffered, and it may not exceed `maxEventBytes`; comments (keep-alives) are skipped and
 * never count toward that cap. Synchronous on purpose: a reader of many small events pays for
 * one `await` per chunk, not per event.
 */
export class SSEDecoder {
  readonly #parser: EventSourceParser;
  /** Made on the first chunk of bytes: a body that pushes decoded text (ax-mcp/node's) never needs one. */
  #text: TextDecoder | undefined;
  readonly #maxEventBytes: number;
  #overflow = false;

  constructor(maxEventBytes: number, handlers: SSEHandlers) {
    this.#maxEventBytes = maxEventBytes;
    const { onEvent } = handlers;
    this.#parser = createParser({
      onEvent: (event) => {
        // The parser caps what it buffers; an event that arrived whole in one chunk is checked here.
        if (event.data.length > maxEventBytes) throw tooLarge(maxEventBytes);
        onEvent(event);
      },
      onRetry: handlers.onRetry,
      onId: handlers.onId,
      maxBufferSize: maxEventBytes,
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded') this.#overflow = true;
      },
    });
  }

  /**
   * Decodes one chunk, bytes or text a body already decoded (never both in one stream); throws
   * `message_too_large` when the event being assembled outgrows its cap.
   */
  push(chunk: Uint8Array | string): void {
    this.#parser.feed(
      typeof chunk === 'string' ? chunk : (this.#text ??= new TextDecoder()).decode(chunk, { stream: true }),
    );
    if (this.#overflow) throw tooLarge(this.#maxEventBytes);
  }

  /** The body ended. A final event without its terminating blank line is incomplete and is dropped, as the SSE spec says. */
  end(): void {
    if (this.#text !== undefined) this.#parser.feed(this.#text.decode());
    if (this.#overflow) throw tooLarge(this.#maxEventBytes);
  }
}

/**
 * Reads a `text/event-stream` body as events. Ids and retries reach their callbacks in stream
 * order as events are consumed, so an id behind an event the consumer fails on is never
 * recorded as seen (a resume replays from there). Ends when the body ends; cancels the body if
 * the consumer stops early.
 */
export async function* readSSE(
  body: ReadableStream<Uint8Array>,
  options: SSEReadOptions,
): AsyncGenerator<SSEEvent> {
  const queue: (SSEEvent | { id: string; kind: 'id' } | { ms: number; kind: 'retry' })[] = [];
  const decoder = new SSEDecoder(options.maxEventBytes, {
    onEvent: (event) => queue.push(event),
    onId: options.onId && ((id) => queue.push({ id, kind: 'id' })),
    onRetry: options.onRetry && ((ms) => queue.push({ ms, kind: 'retry' })),
  });
  for await (const item of readQueued(body, decoder, queue)) {
    if (!('kind' in item)) yield item;
    else if (item.kind === 'id') options.onId?.(item.id);
    else options.onRetry?.(item.ms);
  }
}

/**
 * Feeds `body` to `decoder` chunk by chunk and yields, after each chunk, what the decoder's
 * handlers put in `queue` (which it then empties). When a chunk fails to decode, what it
 * completed before the failure is yielded first, then the failure is thrown. Cancels the body
 * when it stops, however it stops.
 */
export async function* readQueued<T>(
  body: ReadableStream<Uint8Array>,
  decoder: { push(chunk: Uint8Array): void; end(): void },
  queue: T[],
): AsyncGenerator<T> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      let failure: unknown;
      try {
        decoder.push(value);
      } catch (error) {
        failure = error;
      }
      // Drained by index: the queue is emptied at once when every item has been handed on.
      for (let i = 0; i < queue.length; i++) yield queue[i] as T;
      queue.length = 0;
      if (failure !== undefined) throw failure;
    }
    decoder.end();
  } finally {
    reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

function tooLarge(limit: number): AxMCPTransportError {
  return new AxMCPTransportError('message_too_large', `A server-sent event exceeded ${limit} bytes`);
}
