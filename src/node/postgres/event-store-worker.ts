/**
 * One worker of a fleet sharing an {@link AxPostgresEventStore}: an event runtime driven by
 * lanes that each claim and run one delivery at a time, sleep while nothing is due, and wake
 * on the store's `LISTEN/NOTIFY` signal (or at the next due time) instead of polling hot.
 *
 * A notification wakes one idle lane per delivery it announces (its payload counts them), not
 * every lane: a trickle of single events costs about one claim per delivery plus one to find
 * the queue empty, and a batch wakes as many lanes as it has deliveries. A lane that ran
 * something claims again, and wakes one more while more was announced than was taken. A
 * notification that finds no lane idle is owed: the next lane to find nothing claims once more
 * before it sleeps, so none is lost. A lane going idle keeps the next due time it last asked
 * for while notifications announce only work due now (up to a second), so a trickle's lanes
 * that find the queue empty do not each ask the store again.
 * `close()` drains: it stops claiming, lets running deliveries finish, then closes the runtime.
 */

import { type EventErrorReporter, eventErrorReporter } from '../../events/error-reports.js';
import {
  AxEventClosedError,
  type AxEventConfigError,
  assertEventOptions,
  refusedCallOptions,
} from '../../events/errors.js';
import type { AxEventRuntime } from '../../events/runtime.js';
import { eventRuntime, runDueClaimingAhead } from '../../events/runtime.js';
import { type AxEventRuntimeConfig, RUNTIME_CONFIG } from '../../events/runtime-options.js';
import type { DueRun } from '../../events/scheduler.js';
import { func, instance, number, object, required } from '../../options/check.js';
import { AxPostgresEventStore } from './event-store.js';

/** Options of {@link AxPostgresEventWorker}: the runtime's, with the store it runs on. */
export interface AxPostgresEventWorkerOptions
  extends Omit<AxEventRuntimeConfig, 'store' | 'scheduling' | 'coordination'> {
  /** The shared store. The worker does not close it. */
  store: AxPostgresEventStore;
  /** Deliveries this worker runs at once (its lanes). Default 4. */
  workerConcurrency?: number;
  /**
   * Longest sleep of an idle lane. `NOTIFY` and the next due time (retries, debounces, lease
   * expiries) wake it sooner, so this is only a safety net. Default 5000 ms.
   */
  pollIntervalMs?: number;
  /**
   * Called after each lane round in which the store answered and nothing reported a store
   * failure (`onError` with phase `scheduler`, `prune` or `delivery`): a claim, whether or not
   * anything was due, and the runs it claimed. It tells when an outage ended — `ax-mcp worker`
   * logs its "recovered" line from it. Called often: keep it cheap; a throw is ignored.
   */
  onStoreAnswered?: () => void;
}

/** Longest a worker keeps a next due time it was not told has moved (see `#knownDue`). */
const NEXT_DUE_KEPT_MS = 1000;

/** The worker sets these on its runtime itself. */
const SET_BY_WORKER = new Set(['store', 'scheduling', 'coordination']);
const RUNTIME_KEYS = Object.fromEntries(
  Object.entries(RUNTIME_CONFIG.keys).filter(([key]) => !SET_BY_WORKER.has(key)),
);

/**
 * What {@link AxPostgresEventWorker} accepts: the runtime's options but `store`,
 * `scheduling` and `coordination` (the worker sets those), and its store. Checked once in the
 * constructor, before anything connects.
 */
export const POSTGRES_EVENT_WORKER_OPTIONS = object(
  {
    ...RUNTIME_KEYS,
    store: required(
      instance('an AxPostgresEventStore', (v) => {
        const store = v as Partial<AxPostgresEventStore> | null;
        return (
          v instanceof AxPostgresEventStore ||
          (typeof store === 'object' &&
            store !== null &&
            typeof store.migrate === 'function' &&
            typeof store.onWork === 'function' &&
            typeof store.claim === 'function')
        );
      }),
    ),
    workerConcurrency: number({ integer: true, min: 1 }),
    pollIntervalMs: number({ min: 1 }),
    onStoreAnswered: func(),
  },
  { expected: 'options { store, routes?, targets?, sources?, workerConcurrency?, … }' },
);

/** Options of {@link AxPostgresEventWorker.close}. */
export interface AxPostgresEventWorkerCloseOptions {
  /**
   * How long running deliveries may take to finish. After it, they are aborted: idempotent
   * ones are handed back to the fleet, others end `outcome_unknown`. Default: wait for them.
   */
  drainTimeoutMs?: number;
}

/** A misspelt `drainTimeoutMs` would wait for the runs however long they take. */
const CLOSE_OPTIONS = object(
  { drainTimeoutMs: number({ min: 0 }) },
  { expected: 'options { drainTimeoutMs? }', aliases: { timeoutMs: 'drainTimeoutMs' } },
);

/**
 * A worker process's share of a PostgreSQL-backed event runtime. Run as many as you like,
 * on as many machines as you like, against one store schema.
 */
export class AxPostgresEventWorker {
  /** The runtime (host-scheduled, `multi-worker`); publish, inspect runs and redrive through it. */
  readonly runtime: AxEventRuntime;
  readonly store: AxPostgresEventStore;
  readonly #concurrency: number;
  readonly #pollMs: number;
  readonly #onStoreAnswered: (() => void) | undefined;
  /** To `onError`; without it, the first of each kind and place to the console, as the runtime does. */
  readonly #tell: EventErrorReporter;
  /** Store failures reported so far (a lane round that saw none is a success). */
  #storeFailures = 0;
  readonly #stop = new AbortController();
  /** Idle lanes' wake-ups, longest asleep first. */
  readonly #waiters = new Set<() => void>();
  readonly #lanes: Promise<void>[] = [];
  /** Notifications no idle lane took: that many lanes look again before they sleep. */
  #owed = 0;
  /**
   * Whether unannounced work may be waiting: from when listening starts (or restarts, or
   * work turns up that no notification announced) until a claim comes back empty.
   */
  #unknown = true;
  /** Deliveries the notifications announced that no lane of this worker has taken yet (a hint). */
  #announced = 0;
  /** The `nextDueAt()` query idle lanes are waiting for (shared while it runs). */
  #nextDue: Promise<number | null> | null = null;
  /**
   * The last `nextDueAt()` answer and when it was asked, kept while nothing can have moved it
   * earlier: notifications of work due now leave it as it was (what they announce is claimed
   * or held), one announcing later work (or listening restarting) drops it. Also dropped once
   * it is older than {@link NEXT_DUE_KEPT_MS}, so work no notification announced (a producer
   * with `notify: false`, a store of an older version) is still found about as soon.
   */
  #knownDue: { at: number; next: number | null } | null = null;
  /** Notifications that dropped {@link #knownDue}: an answer asked for before one is not kept. */
  #dueMoves = 0;
  #unsubscribe: (() => void) | null = null;
  #started = false;
  #busy = 0;
  #closing: Promise<void> | null = null;

  /**
   * Checks the options (the routes, targets and sources in them too) before anything
   * connects: a problem throws {@link AxEventConfigError} (`invalid_options`) with its path.
   */
  constructor(options: AxPostgresEventWorkerOptions) {
    assertEventOptions(POSTGRES_EVENT_WORKER_OPTIONS, options, 'AxPostgresEventWorker options');
    const {
      store,
      workerConcurrency = 4,
      pollIntervalMs = 5000,
      onStoreAnswered,
      ...runtimeOptions
    } = options;
    this.store = store;
    this.#concurrency = workerConcurrency;
    this.#pollMs = pollIntervalMs;
    this.#tell = eventErrorReporter(
      'PostgreSQL event worker',
      'onError to the worker',
      runtimeOptions.onError,
    );
    this.#onStoreAnswered = onStoreAnswered;
    this.runtime = eventRuntime({
      ...runtimeOptions,
      onError: (error, report) => {
        if (report.phase !== 'source' && report.phase !== 'authorize') this.#storeFailures++;
        this.#tell(error, report);
      },
      store,
      workerConcurrency,
      pollIntervalMs,
      scheduling: 'host',
      coordination: 'multi-worker',
    });
  }

  /** The lease owner name of this worker's claims. */
  get workerId(): string {
    return this.runtime.workerId;
  }

  /** Lanes inside a claim or a run right now (at most `workerConcurrency`). */
  get busy(): number {
    return this.#busy;
  }

  /** Migrate the store if needed, start the runtime (and its sources), then the lanes. */
  async start(): Promise<void> {
    if (this.#closing) throw new AxEventClosedError('PostgreSQL event worker');
    if (this.#started) return;
    this.#started = true;
    await this.store.migrate();
    await this.runtime.start();
    this.#unsubscribe = this.store.onWork((count, laterDueAt) => this.#notified(count, laterDueAt));
    for (let i = 0; i < this.#concurrency; i++) this.#lanes.push(this.#lane());
  }

  #report(error: unknown): void {
    this.#storeFailures++;
    this.#tell(error, { phase: 'scheduler' });
  }

  #answered(): void {
    try {
      this.#onStoreAnswered?.();
    } catch {
      // Nor a success handler.
    }
  }

  /**
   * A notification: `count` deliveries became claimable. One idle lane wakes per delivery
   * announced, up to the idle ones (with none idle, one look is owed): a single event wakes
   * one lane, a batch wakes them all at once instead of one after each run. With no count
   * (listening just started or restarted) anything may be waiting: every lane looks.
   */
  #notified(count: number | undefined, laterDueAt?: number): void {
    if (count === undefined || laterDueAt !== undefined) {
      this.#knownDue = null;
      this.#dueMoves++;
    }
    if (count === undefined) {
      this.#unknown = true;
      this.#announced += this.#concurrency;
      this.#wakeAll();
      return;
    }
    this.#announced += count;
    let woken = 0;
    while (woken < count && this.#wakeOne()) woken++;
    if (woken === 0) this.#owed = Math.min(this.#owed + 1, this.#concurrency);
  }

  /** Wake the idle lane that has slept longest; false if none is idle. */
  #wakeOne(): boolean {
    for (const wake of this.#waiters) {
      this.#waiters.delete(wake);
      wake();
      return true;
    }
    return false;
  }

  #wakeAll(): void {
    const waiters = [...this.#waiters];
    // The lanes busy now look once more before they sleep.
    this.#owed = Math.max(this.#owed, this.#concurrency - waiters.length);
    this.#waiters.clear();
    for (const wake of waiters) wake();
  }

  /** True (and one debt paid) when a notification found no lane idle: look again instead of sleeping. */
  #takeOwed(): boolean {
    if (this.#owed === 0) return false;
    this.#owed--;
    return true;
  }

  async #lane(): Promise<void> {
    const stop = this.#stop.signal;
    let unannounced = false;
    while (!stop.aborted) {
      const announced = this.#announced;
      let run: DueRun;
      const failures = this.#storeFailures;
      this.#busy++;
      try {
        run = await runDueClaimingAhead(this.runtime, { limit: 1, signal: stop });
        if (this.#storeFailures === failures && !stop.aborted) this.#answered();
      } catch (error) {
        this.#report(error);
        await this.#sleep(Math.min(this.#pollMs, 1000), false);
        continue;
      } finally {
        this.#busy--;
      }
      if (run.drained) this.#unknown = false;
      // Work found by a lane that no notification woke (a poll, a due time): unannounced
      // work exists (a retry coming due, a producer that does not notify), so look on.
      else if (run.executed > 0 && unannounced) this.#unknown = true;
      let lookAgain: boolean;
      if (run.executed > 0) {
        // While the notifications announced more than was taken, hand the search on to one
        // more lane.
        this.#announced = Math.max(0, this.#announced - 1);
        if (this.#announced > 0) this.#wakeOne();
        // Claim again at once only when more may be claimable: announced, held ahead, not
        // known (since listening started, or since work turned up unannounced), or the next
        // delivery of an ordering key, which is never announced. A lone delivery on a
        // trickle costs its claim and no second one.
        lookAgain = this.#announced > 0 || this.#unknown || run.ordered || run.held > 0 || this.#takeOwed();
      } else {
        // Nothing claimable: what was announced before this claim has been taken.
        this.#announced = Math.max(0, this.#announced - announced);
        lookAgain = this.#takeOwed();
      }
      // A lane that looks again at once was not woken by a timer.
      unannounced = lookAgain ? false : !(await this.#idle());
    }
  }

  /**
   * Sleep until a wake-up, the next due time, or the poll interval, whichever comes first;
   * true when a notification (or `close`) woke it.
   */
  async #idle(): Promise<boolean> {
    if (this.#stop.signal.aborted) return true;
    let next: number | null;
    let keptUntil = Number.POSITIVE_INFINITY;
    try {
      const due = await this.#nextDueAt();
      next = due.next;
      keptUntil = due.keptUntil;
    } catch (error) {
      this.#report(error);
      next = null;
    }
    const now = this.runtime.clock.now();
    // Something due now that this lane could not claim is held by another claimer, or waits
    // behind a delivery of its ordering key: look again shortly rather than spin.
    let ms = next === null ? this.#pollMs : Math.min(this.#pollMs, Math.max(20, next - now));
    // A kept answer is trusted only until it would have been asked again.
    ms = Math.min(ms, Math.max(1, keptUntil - now));
    return this.#sleep(ms, true);
  }

  /**
   * The store's next due time: the one known while it stands (a trickle's lanes that found
   * the queue empty after a notification then ask nothing more), or one query shared by the
   * lanes that ask meanwhile.
   */
  async #nextDueAt(): Promise<{ next: number | null; keptUntil: number }> {
    const now = this.runtime.clock.now();
    const known = this.#knownDue;
    // A known time already passed says nothing now: something due is held, or was claimed.
    if (known && now - known.at < NEXT_DUE_KEPT_MS && (known.next === null || known.next > now)) {
      return { next: known.next, keptUntil: known.at + NEXT_DUE_KEPT_MS };
    }
    if (!this.#nextDue) {
      const query = this.store.nextDueAt();
      const moves = this.#dueMoves;
      this.#nextDue = query;
      this.#knownDue = null;
      query.then(
        (next) => {
          if (this.#nextDue !== query) return;
          this.#nextDue = null;
          if (this.#dueMoves === moves) this.#knownDue = { at: now, next };
        },
        () => {
          if (this.#nextDue === query) this.#nextDue = null;
        },
      );
    }
    return { next: await this.#nextDue, keptUntil: Number.POSITIVE_INFINITY };
  }

  /**
   * Sleep `ms`; an idle lane (`idle`) also wakes on a notification, and does not sleep while
   * one is owed. True when woken (or owed) rather than timed out.
   */
  #sleep(ms: number, idle: boolean): Promise<boolean> {
    const stop = this.#stop.signal;
    // Checked together with joining the waiters: a notification while this lane asked for
    // the next due time was owed to it.
    if (stop.aborted || (idle && this.#takeOwed())) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const controller = new AbortController();
      const wake = () => controller.abort();
      if (idle) this.#waiters.add(wake);
      stop.addEventListener('abort', wake, { once: true });
      void this.runtime.clock.sleep(ms, controller.signal).then(() => {
        this.#waiters.delete(wake);
        stop.removeEventListener('abort', wake);
        resolve(controller.signal.aborted);
      });
    });
  }

  /**
   * Stop gracefully: claim nothing more, let running deliveries finish (up to
   * `drainTimeoutMs`, then abort them), then close the runtime and its sources. The store
   * stays open. Idempotent.
   */
  close(options: AxPostgresEventWorkerCloseOptions = {}): Promise<void> {
    const refused = refusedCallOptions(CLOSE_OPTIONS, options, 'close');
    if (refused) return refused;
    this.#closing ??= (async () => {
      this.#stop.abort();
      this.#unsubscribe?.();
      this.#wakeAll();
      const drained = Promise.all(this.#lanes);
      const limit = options.drainTimeoutMs;
      if (limit !== undefined) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const timedOut = await Promise.race([
          drained.then(() => false),
          new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(true), Math.max(0, limit));
          }),
        ]);
        clearTimeout(timer);
        // Aborting hands idempotent deliveries back and ends the others outcome_unknown.
        if (timedOut) await this.runtime.close({ drain: false });
      }
      await drained;
      await this.runtime.close({ drain: false });
    })();
    return this.#closing;
  }
}
