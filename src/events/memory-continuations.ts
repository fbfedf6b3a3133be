/**
 * The continuations of the memory store: by id, and by (scope, kind, value), the key a
 * resume looks them up by; one live continuation per key. Internal.
 */

import { AxEventError } from './errors.js';
import { compareContinuations, isExpired } from './run-listing.js';
import type { AxEventContinuation, AxEventContinuationListing } from './store.js';
import { NUL } from './store-helpers.js';

function keyOf(c: Pick<AxEventContinuation, 'scope' | 'kind' | 'value'>): string {
  return [c.scope, c.kind, c.value].join(NUL);
}

/** Continuations held in memory. */
export class MemoryContinuations {
  readonly #byId = new Map<string, AxEventContinuation>();
  readonly #byKey = new Map<string, string>();

  has(id: string): boolean {
    return this.#byId.has(id);
  }

  get(id: string): AxEventContinuation | undefined {
    return this.#byId.get(id);
  }

  drop(id: string): void {
    const c = this.#byId.get(id);
    if (!c) return;
    this.#byId.delete(id);
    const key = keyOf(c);
    if (this.#byKey.get(key) === id) this.#byKey.delete(key);
  }

  /**
   * Registers continuations for `deliveryId`, replacing its own or expired ones with the same
   * key. All or none: a live one of another delivery throws `continuation_conflict` first.
   */
  put(deliveryId: string, continuations: readonly AxEventContinuation[], now: number): void {
    for (const c of continuations) {
      const existingId = this.#byKey.get(keyOf(c));
      const existing = existingId ? this.#byId.get(existingId) : undefined;
      const live = existing && (existing.expiresAt === null || existing.expiresAt > now);
      if (live && existing.deliveryId !== deliveryId) {
        throw new AxEventError(
          'continuation_conflict',
          `A live continuation of kind "${c.kind}" already exists`,
        );
      }
    }
    for (const c of continuations) {
      const key = keyOf(c);
      const existingId = this.#byKey.get(key);
      if (existingId) this.drop(existingId);
      this.#byId.set(c.id, { ...c });
      this.#byKey.set(key, c.id);
    }
  }

  /** A copy of the live continuation under this key, or `null`. */
  find(key: { scope: string; kind: string; value: string }, now: number): AxEventContinuation | null {
    const id = this.#byKey.get(keyOf(key));
    const c = id ? this.#byId.get(id) : undefined;
    if (!c || (c.expiresAt !== null && c.expiresAt <= now)) return null;
    return { ...c };
  }

  /** Copies of up to `limit` continuations, newest first, expired ones (not yet pruned) marked. */
  list(now: number, limit: number): AxEventContinuationListing[] {
    return [...this.#byId.values()]
      .sort(compareContinuations)
      .slice(0, limit)
      .map((c) => ({ ...c, expired: isExpired(c, now) }));
  }

  /** Drops the expired ones; returns how many. */
  pruneExpired(now: number): number {
    let n = 0;
    for (const [id, c] of this.#byId) {
      if (c.expiresAt !== null && c.expiresAt <= now) {
        this.drop(id);
        n++;
      }
    }
    return n;
  }
}
