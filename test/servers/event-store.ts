/**
 * In-memory SSE event store for one session, so a GET with `Last-Event-ID` replays what a client
 * missed. Structurally compatible with the `EventStore` of both SDKs (v2 and v1). Bounded.
 */

interface StoredEvent<M> {
  readonly streamId: string;
  readonly message: M;
}

/** Session-scoped event store: ids are `<session-unique seq>`, unique within the session. */
export class MemoryEventStore<M> {
  readonly #events = new Map<string, StoredEvent<M>>();
  readonly #maxEvents: number;
  #seq = 0;

  constructor(maxEvents = 5_000) {
    this.#maxEvents = maxEvents;
  }

  /** Number of events currently held. */
  get size(): number {
    return this.#events.size;
  }

  async storeEvent(streamId: string, message: M): Promise<string> {
    this.#seq++;
    const eventId = `ev-${this.#seq}`;
    this.#events.set(eventId, { streamId, message });
    if (this.#events.size > this.#maxEvents) {
      const oldest = this.#events.keys().next().value;
      if (oldest !== undefined) this.#events.delete(oldest);
    }
    return eventId;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.#events.get(eventId)?.streamId;
  }

  /**
   * Sends, in order, the events of `lastEventId`'s stream stored after it. Priming events (stored
   * by the SDK as an empty object) are skipped: they carry no JSON-RPC message.
   */
  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: M) => Promise<void> },
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
      if (typeof event.message !== 'object' || event.message === null || !('jsonrpc' in event.message))
        continue;
      await send(eventId, event.message);
    }
    return origin.streamId;
  }
}
