/**
 * A bounded in-memory SSE event store for one legacy session, so a GET with `Last-Event-ID`
 * replays what a client missed. Implements the SDK transport's `EventStore`.
 */
import type { EventStore, JSONRPCMessage } from '@modelcontextprotocol/server';

interface StoredEvent {
  readonly streamId: string;
  readonly message: JSONRPCMessage;
}

/** Session-scoped store; event ids are `e<seq>`, unique within the session. */
export class SessionEventStore implements EventStore {
  readonly #events = new Map<string, StoredEvent>();
  readonly #max: number;
  #seq = 0;

  constructor(maxEvents = 1_000) {
    this.#max = maxEvents;
  }

  /** Events currently held. */
  get size(): number {
    return this.#events.size;
  }

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    this.#seq++;
    const eventId = `e${this.#seq}`;
    this.#events.set(eventId, { streamId, message });
    if (this.#events.size > this.#max) {
      const oldest = this.#events.keys().next().value;
      if (oldest !== undefined) this.#events.delete(oldest);
    }
    return eventId;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.#events.get(eventId)?.streamId;
  }

  /** Sends, in order, the events of `lastEventId`'s stream stored after it (priming events skipped). */
  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const origin = this.#events.get(lastEventId);
    if (origin === undefined) return '';
    let after = false;
    for (const [eventId, event] of this.#events) {
      if (eventId === lastEventId) {
        after = true;
        continue;
      }
      if (!after || event.streamId !== origin.streamId) continue;
      // The SDK stores priming events as an empty object: they carry no JSON-RPC message.
      if (!('jsonrpc' in event.message)) continue;
      await send(eventId, event.message);
    }
    return origin.streamId;
  }
}
