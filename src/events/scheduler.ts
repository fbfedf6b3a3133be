/**
 * Claims due deliveries and runs them through the executor: on the runtime's worker loop
 * (`scheduling: 'workers'`) or each time the host calls `runDue()`. It owns what is running
 * in this process, the doorbells that wake the loop and waiting callers, and pruning. Internal.
 */

import type { AxEventClock } from './clock.js';
import { Doorbell } from './doorbell.js';
import { AxEventClosedError, AxEventError } from './errors.js';
import type { Executor } from './executor.js';
import type { AxEventErrorReport } from './runtime-options.js';
import type { AxEventClaim, AxEventStore } from './store.js';

/** What the scheduler needs from the runtime. */
export interface DeliverySchedulerDeps {
  store: AxEventStore;
  clock: AxEventClock;
  executor: Executor;
  workerId: string;
  /** Deliveries run at once. */
  concurrency: number;
  leaseMs: number;
  /** Longest sleep of the idle loop. */
  pollMs: number;
  pruneMs: number;
  report: (error: unknown, report: AxEventErrorReport) => void;
}

interface Running {
  done: Promise<void>;
  controller: AbortController | null;
}

/** Runs claimed deliveries. One instance per runtime. */
export class DeliveryScheduler {
  readonly #deps: DeliverySchedulerDeps;
  readonly #running = new Map<string, Running>();
  /** Rung when work may have become claimable: a publish, a redrive, a finished run. */
  readonly #work = new Doorbell();
  /** Rung when a run ends or the runtime stops: publishers waiting for room, `waitForIdle`. */
  readonly #progress = new Doorbell();
  readonly #stop = new AbortController();
  #loop: Promise<void> | null = null;
  #stopping = false;
  #nextPruneAt = 0;

  constructor(deps: DeliverySchedulerDeps) {
    this.#deps = deps;
  }

  /** Wake the loop: there may be work to claim. */
  ring(): void {
    this.#work.ring();
  }

  /** Wait until a run ends (or `ms` pass). */
  waitForProgress(ms: number, signal?: AbortSignal): Promise<void> {
    return this.#progress.wait(this.#deps.clock, ms, signal);
  }

  /** Start the worker loop. */
  startLoop(): void {
    this.#loop = this.#runLoop();
  }

  /** Abort a delivery running here and wait for it; `false` when it does not run here. */
  async abort(deliveryId: string, reason: unknown): Promise<boolean> {
    const local = this.#running.get(deliveryId);
    if (!local) return false;
    local.controller?.abort(reason);
    await local.done;
    return true;
  }

  /** Run everything due now, `concurrency` at a time, until nothing is due. */
  async runDue(options: { limit?: number; signal?: AbortSignal } = {}): Promise<{ executed: number }> {
    let executed = 0;
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    await this.#maybePrune();
    while (executed < limit && !options.signal?.aborted && !this.#stop.signal.aborted) {
      const claims = await this.#claim(Math.min(this.#deps.concurrency, limit - executed));
      if (claims.length === 0) break;
      await Promise.all(claims.map((c) => this.#launch(c)));
      executed += claims.length;
    }
    return { executed };
  }

  /** Resolve when nothing is pending in the store and nothing runs here. */
  async waitForIdle(options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<void> {
    const { clock, store, pollMs } = this.#deps;
    const deadline = options.timeoutMs === undefined ? null : clock.now() + options.timeoutMs;
    for (;;) {
      if (this.#running.size === 0 && (await store.countPending()) === 0) return;
      if (options.signal?.aborted) throw new AxEventError('aborted', 'waitForIdle was aborted');
      const now = clock.now();
      if (deadline !== null && now >= deadline) throw new AxEventError('aborted', 'waitForIdle timed out');
      const ms = deadline === null ? pollMs : Math.min(pollMs, deadline - now);
      await this.waitForProgress(Math.min(ms, 50), options.signal);
    }
  }

  /**
   * The runtime is closing: the loop claims nothing more once it next looks. Given at once,
   * before sources close, so their last events start no new work.
   */
  stopClaiming(): void {
    this.#stopping = true;
  }

  /** Wake the loop and wait for it to end (after {@link stopClaiming}). */
  async loopEnded(): Promise<void> {
    this.#work.ring();
    await this.#loop;
  }

  /** Stop `runDue`, and abort every delivery running here (idempotent ones are handed back). */
  abortAll(): void {
    this.#stop.abort(new AxEventClosedError());
    for (const entry of this.#running.values()) entry.controller?.abort(new AxEventClosedError());
  }

  /** Wait for what runs here, then stop for good and wake everyone still waiting. */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.#running.values()].map((e) => e.done));
    this.#stop.abort(new AxEventClosedError());
    this.#progress.ring();
  }

  #claim(limit: number): Promise<AxEventClaim[]> {
    const { store, clock, workerId, leaseMs } = this.#deps;
    return store.claim({ workerId, now: clock.now(), leaseMs, limit });
  }

  #launch(claim: AxEventClaim): Promise<void> {
    const id = claim.delivery.id;
    const entry: Running = { done: Promise.resolve(), controller: null };
    entry.done = this.#deps.executor
      .execute(claim, (controller) => {
        entry.controller = controller;
        if (this.#stop.signal.aborted) controller.abort(this.#stop.signal.reason);
        return () => {
          entry.controller = null;
        };
      })
      .finally(() => {
        this.#running.delete(id);
        this.#work.ring();
        this.#progress.ring();
      });
    this.#running.set(id, entry);
    return entry.done;
  }

  async #maybePrune(): Promise<void> {
    const now = this.#deps.clock.now();
    if (now < this.#nextPruneAt) return;
    this.#nextPruneAt = now + this.#deps.pruneMs;
    try {
      await this.#deps.store.prune({ now });
    } catch (error) {
      this.#deps.report(error, { phase: 'prune' });
    }
  }

  async #runLoop(): Promise<void> {
    const stop = this.#stop.signal;
    const { store, clock, concurrency } = this.#deps;
    while (!stop.aborted && !this.#stopping) {
      let wait = this.#deps.pollMs;
      try {
        await this.#maybePrune();
        const free = concurrency - this.#running.size;
        if (free > 0) {
          const claims = await this.#claim(free);
          for (const claim of claims) void this.#launch(claim);
          if (claims.length > 0 && claims.length === free) continue;
          const next = await store.nextDueAt();
          if (next !== null) wait = Math.min(wait, Math.max(1, next - clock.now()));
        }
      } catch (error) {
        this.#deps.report(error, { phase: 'scheduler' });
      }
      if (stop.aborted || this.#stopping) break;
      await this.#work.wait(clock, wait, stop);
    }
  }
}
