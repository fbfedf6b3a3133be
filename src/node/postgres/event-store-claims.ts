/**
 * Claims that overlap share a round trip. Internal to `AxPostgresEventStore`.
 *
 * While a claim statement runs, the claims that arrive behind it wait, then go together as
 * one statement whose limit is the sum of theirs; its rows are dealt out in arrival order.
 * A worker's lanes finishing together on a backlog, or finding the queue empty together on a
 * trickle, then cost one statement instead of one each. A claim that arrives when none runs
 * goes at once, so a lone claim waits for nothing. Only claims of one worker with one lease
 * length go together (the rows carry the lease owner and the lease end).
 */
import type { AxEventClaim } from '../../events/store.js';

/** What a claim asks for, as `AxEventStore.claim` takes it. */
export interface ClaimRequest {
  workerId: string;
  now: number;
  leaseMs: number;
  limit: number;
}

interface Waiting {
  request: ClaimRequest;
  resolve: (claims: AxEventClaim[]) => void;
  reject: (error: unknown) => void;
}

/** Claims of one store, grouped by worker and lease length, one statement in flight per group. */
export class SharedClaims {
  readonly #claim: (request: ClaimRequest) => Promise<AxEventClaim[]>;
  /** Groups with a statement in flight, and what waits behind it. */
  readonly #groups = new Map<string, Waiting[]>();

  /** `claim` runs one claim statement. */
  constructor(claim: (request: ClaimRequest) => Promise<AxEventClaim[]>) {
    this.#claim = claim;
  }

  claim(request: ClaimRequest): Promise<AxEventClaim[]> {
    const key = `${request.leaseMs}:${request.workerId}`;
    return new Promise((resolve, reject) => {
      const waiting = this.#groups.get(key);
      if (waiting) {
        waiting.push({ request, resolve, reject });
        return;
      }
      this.#groups.set(key, []);
      void this.#run(key, [{ request, resolve, reject }]);
    });
  }

  async #run(key: string, batch: Waiting[]): Promise<void> {
    for (;;) {
      const first = batch[0]?.request as ClaimRequest;
      const together: ClaimRequest = {
        workerId: first.workerId,
        leaseMs: first.leaseMs,
        // The latest clock reading: every lease ends `leaseMs` after the statement is sent.
        now: Math.max(...batch.map((w) => w.request.now)),
        limit: batch.reduce((sum, w) => sum + w.request.limit, 0),
      };
      try {
        const claims = await this.#claim(together);
        let taken = 0;
        for (const w of batch) {
          w.resolve(claims.slice(taken, taken + w.request.limit));
          taken += w.request.limit;
        }
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
      const next = this.#groups.get(key) ?? [];
      if (next.length === 0) {
        this.#groups.delete(key);
        return;
      }
      this.#groups.set(key, []);
      batch = next;
    }
  }
}
