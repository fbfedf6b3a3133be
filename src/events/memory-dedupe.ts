/**
 * The dedupe keys of the memory store: (identity scope, source, id) of every event it took,
 * with the deliveries that event created, oldest first, at most `maxKeys`. Internal.
 */

import { NUL } from './store-helpers.js';

/** Where an event came from and what it is called there: what makes two events the same. */
export interface DedupeIdentity {
  dedupe: { scope: string; source: string; id: string };
}

export class MemoryDedupe {
  readonly #seen = new Map<string, { deliveryIds: string[]; at: number }>();
  readonly #maxKeys: number;

  constructor(maxKeys: number) {
    this.#maxKeys = maxKeys;
  }

  static keyOf(item: DedupeIdentity): string {
    return [item.dedupe.scope, item.dedupe.source, item.dedupe.id].join(NUL);
  }

  has(key: string): boolean {
    return this.#seen.has(key);
  }

  /** The deliveries of an event seen before, as a copy, or `undefined`. */
  deliveriesOf(key: string): string[] | undefined {
    const known = this.#seen.get(key);
    return known ? [...known.deliveryIds] : undefined;
  }

  /** Remembers an event, forgetting the oldest beyond the cap. */
  remember(key: string, deliveryIds: string[], at: number): void {
    this.#seen.set(key, { deliveryIds, at });
    while (this.#seen.size > this.#maxKeys) {
      const oldest = this.#seen.keys().next().value;
      if (oldest === undefined) break;
      this.#seen.delete(oldest);
    }
  }

  /** Forgets the keys seen at or before `horizon`; returns how many. */
  pruneUntil(horizon: number): number {
    let pruned = 0;
    for (const [key, entry] of this.#seen) {
      if (entry.at > horizon) break;
      this.#seen.delete(key);
      pruned++;
    }
    return pruned;
  }
}
