/**
 * A doorbell: waiters sleep on the runtime's clock until it rings, their time is up, or
 * their signal aborts. Internal.
 */

import type { AxEventClock } from './clock.js';

const RUNG = Symbol('rung');

/** Wakes sleeping loops when something changed. */
export class Doorbell {
  readonly #waiters = new Set<() => void>();

  /** Wake everyone waiting now. */
  ring(): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const w of waiters) w();
  }

  /** Sleep up to `ms` on `clock`, ending early on a ring or when `signal` aborts. */
  async wait(clock: AxEventClock, ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return;
    const controller = new AbortController();
    const wake = () => controller.abort(RUNG);
    this.#waiters.add(wake);
    signal?.addEventListener('abort', wake, { once: true });
    try {
      await clock.sleep(ms, controller.signal);
    } finally {
      this.#waiters.delete(wake);
      signal?.removeEventListener('abort', wake);
    }
  }
}
