/**
 * Clocks. The runtime reads time and sleeps only through an {@link AxEventClock}, so tests
 * can drive it deterministically with {@link AxManualEventClock}.
 */

/** Time source and sleeper used by the event runtime and its stores. */
export interface AxEventClock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /**
   * Resolve after `ms` milliseconds, or as soon as `signal` aborts (it then resolves, it
   * does not reject). A sleep must not outlive its signal.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The wall clock, with `setTimeout`-based sleeps that are cleared on abort. */
export const systemEventClock: AxEventClock = {
  now: () => Date.now(),
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal?.addEventListener('abort', done, { once: true });
    });
  },
};

interface ManualTimer {
  at: number;
  seq: number;
  resolve: () => void;
}

/**
 * A clock that moves only when told to. `sleep` registers a timer that fires when
 * {@link AxManualEventClock.advance} or {@link AxManualEventClock.set} passes its time.
 * Use it with the runtime's host-driven `runDue()` for deterministic tests.
 */
export class AxManualEventClock implements AxEventClock {
  #now: number;
  #seq = 0;
  #timers: ManualTimer[] = [];

  /** @param start the initial time in epoch milliseconds (default `0`). */
  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const timer: ManualTimer = {
        at: this.#now + Math.max(0, ms),
        seq: this.#seq++,
        resolve: () => {
          signal?.removeEventListener('abort', cancel);
          resolve();
        },
      };
      const cancel = () => {
        this.#timers = this.#timers.filter((t) => t !== timer);
        resolve();
      };
      signal?.addEventListener('abort', cancel, { once: true });
      this.#timers.push(timer);
    });
  }

  /** Move time forward by `ms` and fire every timer that became due, in time order. */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError('advance() takes a non-negative number of milliseconds');
    this.set(this.#now + ms);
  }

  /** Jump to `time` (never backwards) and fire every timer that became due. */
  set(time: number): void {
    if (time < this.#now) throw new RangeError('A manual clock does not go backwards');
    this.#now = time;
    const due = this.#timers.filter((t) => t.at <= time).sort((a, b) => a.at - b.at || a.seq - b.seq);
    this.#timers = this.#timers.filter((t) => t.at > time);
    for (const t of due) t.resolve();
  }

  /** How many sleeps are waiting. */
  get pendingTimers(): number {
    return this.#timers.length;
  }

  /** The time the earliest waiting sleep ends, or `null`. */
  nextTimerAt(): number | null {
    let min: number | null = null;
    for (const t of this.#timers) if (min === null || t.at < min) min = t.at;
    return min;
  }
}
