import { AxMCPTimeoutError } from '../protocol/errors.js';

/** A call given up while it waited for a slot: typed like every aborted request (`aborted`). */
function abandoned(signal: AbortSignal): AxMCPTimeoutError {
  return new AxMCPTimeoutError('The call was aborted while it waited for a free slot (maxConcurrency)', {
    aborted: true,
    cause: signal.reason,
  });
}

/**
 * A first-in first-out limit on concurrent calls. Waiters are served strictly in
 * arrival order; an aborted waiter leaves the queue without taking a slot.
 */
export class CallSlots {
  readonly #limit: number;
  #active = 0;
  readonly #waiters: { grant: () => void; signal: AbortSignal | undefined; onAbort: () => void }[] = [];

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError('maxConcurrency must be a positive integer');
    this.#limit = limit;
  }

  get active(): number {
    return this.#active;
  }

  get waiting(): number {
    return this.#waiters.length;
  }

  /** Resolves with a release function once a slot is free. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(abandoned(signal));
    if (this.#active < this.#limit && this.#waiters.length === 0) {
      this.#active++;
      return Promise.resolve(this.#releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal?.removeEventListener('abort', waiter.onAbort);
          resolve(this.#releaser());
        },
        signal,
        onAbort: () => {
          const index = this.#waiters.indexOf(waiter);
          if (index >= 0) this.#waiters.splice(index, 1);
          reject(abandoned(signal as AbortSignal));
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /** Runs `task` inside a slot. */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(signal);
    try {
      return await task();
    } finally {
      release();
    }
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiters.shift();
      if (next) next.grant();
      else this.#active--;
    };
  }
}
