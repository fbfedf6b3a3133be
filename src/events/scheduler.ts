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

/**
 * Claims are taken ahead of free lanes only while runs here take at most this long: a claim
 * taken ahead waits about one run for its lane, and holds its lease while it waits.
 */
const AHEAD_MAX_RUN_MS = 100;
/** How much of a lease a claim taken ahead may have used waiting before it is handed back instead. */
const AHEAD_MAX_WAIT_SHARE = 0.5;
/**
 * Claims held ahead per lane on a backlog of short runs: each claim statement then feeds
 * about this many runs per lane, where claiming one lane's worth fed barely more than one.
 */
const AHEAD_PER_LANE = 4;
/** Successes written behind their runs that may be in flight at once before a lane waits for one. */
const BEHIND_MAX = 256;

/** What one `runDue` did, for a caller deciding whether to look again at once. */
export interface DueRun {
  executed: number;
  /** A delivery with an ordering key ran: its successor may be claimable now, unannounced. */
  ordered: boolean;
  /** A claim came back empty: nothing else was claimable then. */
  drained: boolean;
  /** Claims held ahead here, to start without a statement. */
  held: number;
}

/** Runs claimed deliveries. One instance per runtime. */
export class DeliveryScheduler {
  readonly #deps: DeliverySchedulerDeps;
  readonly #running = new Map<string, Running>();
  /**
   * Claimed ahead of a free lane, while there is a backlog and runs are short: one claim
   * statement then feeds several runs, where each run that ended would otherwise claim its
   * successor alone. Started in claim order as lanes free up.
   */
  readonly #ahead: { claim: AxEventClaim; at: number }[] = [];
  /** How long runs here take, a moving average (ms); `null` before one has ended. */
  #runMs: number | null = null;
  /** The last claim came back as full as asked: there is likely more. */
  #backlog = false;
  /**
   * Successes written behind the runs that ended with them (a long-lived lane's only; see
   * `Executor.execute`), until the store has them: closing waits for them.
   */
  readonly #behind = new Set<Promise<void>>();
  /** A claim refilling {@link #ahead} in the background. */
  #refilling: Promise<void> | null = null;
  /** Rung when work may have become claimable: a publish, a redrive, a finished run. */
  readonly #work = new Doorbell();
  /** Rung when a run ends or the runtime stops: publishers waiting for room, `waitForIdle`. */
  readonly #progress = new Doorbell();
  readonly #stop = new AbortController();
  #loop: Promise<void> | null = null;
  #stopping = false;
  #nextPruneAt = 0;
  #pruning: Promise<void> | null = null;

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
    const waiting = this.#ahead.findIndex((entry) => entry.claim.delivery.id === deliveryId);
    if (waiting >= 0) {
      // Not started yet: it starts now and, seeing the cancel, ends without invoking anything.
      const { claim } = this.#ahead.splice(waiting, 1)[0] as { claim: AxEventClaim };
      await this.#launch({ ...claim, delivery: { ...claim.delivery, cancelRequested: true } });
      return true;
    }
    const local = this.#running.get(deliveryId);
    if (!local) return false;
    local.controller?.abort(reason);
    await local.done;
    return true;
  }

  /**
   * Run everything due now, `concurrency` at a time, until nothing is due. `claimAhead` is for
   * a caller that keeps calling (a long-lived lane): a host that calls once and exits must not
   * leave claims held ahead behind it.
   */
  async runDue(
    options: { limit?: number; signal?: AbortSignal; claimAhead?: boolean } = {},
  ): Promise<DueRun> {
    let executed = 0;
    let ordered = false;
    let drained = false;
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    // Waited for at the end, so that a host's runDue still returns with its prune done.
    const pruned = this.#maybePrune();
    while (executed < limit && !options.signal?.aborted && !this.#stop.signal.aborted) {
      const claims = await this.#take(
        Math.min(this.#deps.concurrency, limit - executed),
        options.claimAhead === true,
      );
      if (claims.length === 0) {
        drained = true;
        break;
      }
      for (const c of claims) if (c.delivery.orderingKey !== null) ordered = true;
      const behind = options.claimAhead === true;
      await Promise.all(claims.map((c) => this.#launch(c, behind)));
      executed += claims.length;
      // A store slower than the runs: wait for a write rather than pile them up.
      while (this.#behind.size >= BEHIND_MAX) await Promise.race(this.#behind);
    }
    await pruned;
    return { executed, ordered, drained, held: this.#ahead.length };
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
    await this.#releaseAhead();
    await this.#pruning;
    await this.#writtenBehind();
  }

  /** Stop `runDue`, and abort every delivery running here (idempotent ones are handed back). */
  abortAll(): void {
    this.#stop.abort(new AxEventClosedError());
    for (const entry of this.#running.values()) entry.controller?.abort(new AxEventClosedError());
  }

  /** Wait for what runs here, then stop for good and wake everyone still waiting. */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.#running.values()].map((e) => e.done));
    await this.#pruning;
    await this.#writtenBehind();
    this.#stop.abort(new AxEventClosedError());
    this.#deps.executor.close();
    this.#progress.ring();
  }

  #claim(limit: number): Promise<AxEventClaim[]> {
    const { store, clock, workerId, leaseMs } = this.#deps;
    return store.claim({ workerId, now: clock.now(), leaseMs, limit });
  }

  /** Resolves once every success written behind so far is in the store (or reported failed). */
  async #writtenBehind(): Promise<void> {
    while (this.#behind.size > 0) await Promise.all(this.#behind);
  }

  #writeBehind = (write: Promise<void>): void => {
    this.#behind.add(write);
    void write.finally(() => {
      this.#behind.delete(write);
      this.#progress.ring();
    });
  };

  #launch(claim: AxEventClaim, writeBehind = false): Promise<void> {
    const id = claim.delivery.id;
    const entry: Running = { done: Promise.resolve(), controller: null };
    const started = this.#deps.clock.now();
    entry.done = this.#deps.executor
      .execute(
        claim,
        (controller) => {
          entry.controller = controller;
          if (this.#stop.signal.aborted) controller.abort(this.#stop.signal.reason);
          return () => {
            entry.controller = null;
          };
        },
        writeBehind ? this.#writeBehind : undefined,
      )
      .finally(() => {
        const ms = this.#deps.clock.now() - started;
        this.#runMs = this.#runMs === null ? ms : this.#runMs * 0.8 + ms * 0.2;
        this.#running.delete(id);
        this.#work.ring();
        this.#progress.ring();
      });
    this.#running.set(id, entry);
    return entry.done;
  }

  /**
   * Start a prune if one is due; resolves when the one in progress (if any) is over, and never
   * rejects. Claims do not wait for it: a lane woken for fresh work must not first sit behind
   * the store's deletes.
   */
  #maybePrune(): Promise<void> {
    const now = this.#deps.clock.now();
    if (this.#pruning || now < this.#nextPruneAt) return this.#pruning ?? Promise.resolve();
    this.#nextPruneAt = now + this.#deps.pruneMs;
    const pruning = (async () => {
      try {
        await this.#deps.store.prune({ now });
      } catch (error) {
        this.#deps.report(error, { phase: 'prune' });
      } finally {
        this.#pruning = null;
      }
    })();
    this.#pruning = pruning;
    return pruning;
  }

  /** How many claims to hold ahead of free lanes now: none unless there is a backlog and runs are short. */
  #aheadTarget(): number {
    const runMs = this.#runMs;
    const short = runMs !== null && runMs <= AHEAD_MAX_RUN_MS && runMs * 10 <= this.#deps.leaseMs;
    return this.#backlog && short && !this.#stopping ? this.#deps.concurrency * AHEAD_PER_LANE : 0;
  }

  /**
   * Up to `limit` claims to start now: those taken ahead first (one that waited too long goes
   * back to the queue), then a claim statement for the rest, which also refills what is held
   * ahead once half of it is used (when `ahead`).
   */
  async #take(limit: number, ahead: boolean): Promise<AxEventClaim[]> {
    const { clock, leaseMs } = this.#deps;
    const taken: AxEventClaim[] = [];
    while (taken.length < limit && this.#ahead.length > 0) {
      const { claim, at } = this.#ahead.shift() as { claim: AxEventClaim; at: number };
      const stale = clock.now() - at > leaseMs * AHEAD_MAX_WAIT_SHARE;
      if (stale && !this.#mustRun(claim)) void this.#handBack(claim);
      else taken.push(claim);
    }
    const target = ahead ? this.#aheadTarget() : 0;
    const refill = this.#ahead.length * 2 <= target ? target - this.#ahead.length : 0;
    const short = limit - taken.length;
    if (short === 0) {
      // Everything asked for was held ahead: refill in the background, the runs start now.
      if (refill > 0 && !this.#refilling) this.#refilling = this.#refill(refill);
      return taken;
    }
    const claims = await this.#claimAhead(short + refill);
    taken.push(...claims.splice(0, short));
    const at = clock.now();
    for (const claim of claims) this.#ahead.push({ claim, at });
    return taken;
  }

  /** Claim `want`, note whether that found a backlog, and hold what is not asked for ahead. */
  async #claimAhead(want: number): Promise<AxEventClaim[]> {
    const claims = await this.#claim(want);
    this.#backlog = claims.length === want;
    return claims;
  }

  async #refill(want: number): Promise<void> {
    try {
      const claims = await this.#claimAhead(want);
      const at = this.#deps.clock.now();
      for (const claim of claims) this.#ahead.push({ claim, at });
      // A loop or lane that found nothing while this was in flight looks again.
      if (claims.length > 0) this.#work.ring();
    } catch (error) {
      this.#deps.report(error, { phase: 'scheduler' });
    } finally {
      this.#refilling = null;
    }
  }

  /**
   * A recovered claim whose target may have run: only the executor may decide it (it ends
   * `outcome_unknown` unless the target is idempotent), so it is never simply handed back.
   */
  #mustRun(claim: AxEventClaim): boolean {
    return claim.recovered && claim.previousStatus === 'running';
  }

  async #handBack(claim: AxEventClaim): Promise<void> {
    try {
      await this.#deps.executor.handBack(claim);
    } catch (error) {
      this.#deps.report(error, { phase: 'scheduler' });
    }
    this.#work.ring();
  }

  /** The loop has ended: what it claimed ahead goes back to the queue, its attempt not counted. */
  async #releaseAhead(): Promise<void> {
    await this.#refilling;
    const waiting = this.#ahead.splice(0);
    await Promise.all(
      waiting.map(({ claim }) => (this.#mustRun(claim) ? this.#launch(claim) : this.#handBack(claim))),
    );
  }

  async #runLoop(): Promise<void> {
    const stop = this.#stop.signal;
    const { store, clock, concurrency } = this.#deps;
    while (!stop.aborted && !this.#stopping) {
      let wait = this.#deps.pollMs;
      try {
        void this.#maybePrune();
        const free = concurrency - this.#running.size;
        if (free > 0) {
          const claims = await this.#take(free, true);
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
