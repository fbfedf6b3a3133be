import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { AxMCPTransportError } from './errors.js';

/** One server-sent event. */
export interface SSEEvent {
  id?: string;
  event?: string;
  data: string;
}

export interface SSEReadOptions {
  /** Caps the bytes of one event, never the life of the stream. */
  maxEventBytes: number;
  /** The server's `retry:` field, in milliseconds. */
  onRetry?: (ms: number) => void;
  /** Every `id:` field, including empty ones (which reset the last event id). */
  onId?: (id: string) => void;
}

/**
 * Reads a `text/event-stream` body as events. Parsing is streaming; only the event
 * being assembled is buffered, and it may not exceed `maxEventBytes`. Comments
 * (keep-alives) are skipped. Ends when the body ends; cancels the body if the
 * consumer stops early.
 */
export async function* readSSE(
  body: ReadableStream<Uint8Array>,
  options: SSEReadOptions,
): AsyncGenerator<SSEEvent> {
  // Ids, retries and events are applied in stream order as they are consumed, so an id
  // behind an event that fails is never recorded as seen (a resume replays from there).
  const queue: (
    | { kind: 'event'; event: SSEEvent }
    | { kind: 'id'; id: string }
    | { kind: 'retry'; ms: number }
  )[] = [];
  let progressed = false;
  const parser = createParser({
    onEvent(message: EventSourceMessage) {
      queue.push({ kind: 'event', event: message });
    },
    onRetry(ms) {
      queue.push({ kind: 'retry', ms });
    },
    onId(id) {
      queue.push({ kind: 'id', id });
    },
    onComment() {
      // A keep-alive completes a line: what it carried belongs to no event.
      progressed = true;
    },
  });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let pendingBytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      pendingBytes += value.byteLength;
      progressed = false;
      parser.feed(decoder.decode(value, { stream: true }));
      if (queue.length > 0 || progressed) pendingBytes = 0;
      while (queue.length > 0) {
        const item = queue.shift() as (typeof queue)[number];
        if (item.kind === 'id') options.onId?.(item.id);
        else if (item.kind === 'retry') options.onRetry?.(item.ms);
        else {
          if (item.event.data.length > options.maxEventBytes) throw tooLarge(options.maxEventBytes);
          yield item.event;
        }
      }
      if (pendingBytes > options.maxEventBytes) throw tooLarge(options.maxEventBytes);
    }
    parser.feed(decoder.decode());
    // A final event without its terminating blank line is incomplete and is dropped, as the SSE spec says.
  } finally {
    reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

function tooLarge(limit: number): AxMCPTransportError {
  return new AxMCPTransportError('message_too_large', `A server-sent event exceeded ${limit} bytes`);
}
