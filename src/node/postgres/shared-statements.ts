/**
 * Writes that overlap share a round trip. Internal to `AxPostgresEventStore`.
 *
 * While a statement of a group runs, the requests of that group that arrive wait, then go
 * together as one statement. A request that arrives when none of its group runs goes at
 * once, so a lone request waits for nothing. A worker's lanes that claim together on a
 * backlog (or find the queue empty together on a trickle), or finish together, then cost one
 * statement and one commit instead of one each.
 */
import type { AxEventClaim } from '../../events/store.js';

interface Waiting<Request, Result> {
  request: Request;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

/** Requests grouped by a key, one statement in flight per group. */
export class SharedStatements<Request, Result> {
  readonly #key: (request: Request) => string;
  readonly #run: (batch: readonly Request[]) => Promise<Result[]>;
  readonly #max: number;
  /** Groups with a statement in flight, and what waits behind it. */
  readonly #groups = new Map<string, Waiting<Request, Result>[]>();

  /**
   * `run` sends one statement for a batch and answers each request, in order; `key` says
   * which requests may share one; at most `max` go together.
   */
  constructor(options: {
    key: (request: Request) => string;
    run: (batch: readonly Request[]) => Promise<Result[]>;
    max?: number;
  }) {
    this.#key = options.key;
    this.#run = options.run;
    this.#max = options.max ?? 256;
  }

  send(request: Request): Promise<Result> {
    const key = this.#key(request);
    return new Promise((resolve, reject) => {
      const waiting = this.#groups.get(key);
      if (waiting) {
        waiting.push({ request, resolve, reject });
        return;
      }
      this.#groups.set(key, []);
      void this.#drain(key, [{ request, resolve, reject }]);
    });
  }

  async #drain(key: string, batch: Waiting<Request, Result>[]): Promise<void> {
    for (;;) {
      try {
        const results = await this.#run(batch.map((w) => w.request));
        for (const [i, w] of batch.entries()) w.resolve(results[i] as Result);
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
      const waiting = this.#groups.get(key) ?? [];
      if (waiting.length === 0) {
        this.#groups.delete(key);
        return;
      }
      batch = waiting.splice(0, this.#max);
    }
  }
}

/** What a claim asks for, as `AxEventStore.claim` takes it. */
export interface ClaimRequest {
  workerId: string;
  now: number;
  leaseMs: number;
  limit: number;
}

/**
 * Claims that share a statement: one claim for the sum of their limits, its rows dealt out
 * in arrival order. Only claims of one worker with one lease length go together (the rows
 * carry the lease owner and the lease end).
 */
export function sharedClaims(
  claim: (request: ClaimRequest) => Promise<AxEventClaim[]>,
): SharedStatements<ClaimRequest, AxEventClaim[]> {
  return new SharedStatements({
    key: (r) => `${r.leaseMs}:${r.workerId}`,
    run: async (batch) => {
      const first = batch[0] as ClaimRequest;
      const claims = await claim({
        workerId: first.workerId,
        leaseMs: first.leaseMs,
        // The latest clock reading: every lease ends `leaseMs` after the statement is sent.
        now: Math.max(...batch.map((r) => r.now)),
        limit: batch.reduce((sum, r) => sum + r.limit, 0),
      });
      let taken = 0;
      return batch.map((r) => {
        const mine = claims.slice(taken, taken + r.limit);
        taken += r.limit;
        return mine;
      });
    },
  });
}
