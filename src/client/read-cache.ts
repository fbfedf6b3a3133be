import type { AxMCPReadResourceResult } from '../protocol/messages.js';

/**
 * `resources/read` results kept for the TTL the server gave them (`readCache: true`, on an era
 * with cache hints). A `notifications/resources/updated` forgets the URI at once. Results go in
 * and out as copies, so a caller changing one never changes what the next caller reads.
 */
export class ReadCache {
  /** Created with the first result kept: a client that never caches holds no map. */
  #entries: Map<string, { result: AxMCPReadResourceResult; expiresAt: number }> | undefined;
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** A copy of the fresh result for `uri`, or `undefined`. */
  get(uri: string): AxMCPReadResourceResult | undefined {
    const entry = this.#entries?.get(uri);
    return entry && entry.expiresAt > this.#now() ? structuredClone(entry.result) : undefined;
  }

  /** Keeps `result` for its `ttlMs` when that is a positive whole number of milliseconds. */
  keep(uri: string, result: AxMCPReadResourceResult): void {
    const ttl = result.ttlMs;
    if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl <= 0) return;
    (this.#entries ??= new Map()).set(uri, { result: structuredClone(result), expiresAt: this.#now() + ttl });
  }

  forget(uri: string): void {
    this.#entries?.delete(uri);
  }
}
