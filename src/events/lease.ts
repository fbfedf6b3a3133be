/**
 * Keeps a claimed delivery's lease alive while it runs, and aborts the run when the lease
 * is lost or the run is cancelled. Internal.
 */

import type { AxEventClock } from './clock.js';
import { AxEventError, AxEventLeaseLostError } from './errors.js';
import type { AxEventStore } from './store.js';

/** The abort reason of a run stopped by `cancelRun`. */
export function cancelReason(): AxEventError {
  return new AxEventError('aborted', 'The run was cancelled');
}

/** Abort reason of a finished heartbeat loop (a plain value: no DOMException and stack per run). */
const STOPPED = Symbol('lease stopped');

/** A heartbeat loop for one delivery. */
export class LeaseKeeper {
  readonly controller = new AbortController();
  readonly #stop = new AbortController();
  #loop: Promise<void> | null = null;
  /** When the lease ends unless a heartbeat renews it. */
  #until: number;

  constructor(
    private readonly store: AxEventStore,
    private readonly clock: AxEventClock,
    private readonly deliveryId: string,
    private readonly fencingToken: number,
    private readonly leaseMs: number,
    private readonly onError: (error: unknown) => void,
    leaseUntil: number | null = null,
  ) {
    this.#until = leaseUntil ?? clock.now() + leaseMs;
  }

  /**
   * True (and the run aborted as `lease_lost`) once the lease has run out by the clock. A
   * process paused past its lease (SIGSTOP, a long GC, a frozen VM) ran no heartbeat that
   * could tell it; another worker may own the delivery by now and have gone on to the next
   * of its ordering key. Asked right before a target or handler starts, so that such a
   * process does not start it; its writes are fenced anyway.
   */
  ranOut(): boolean {
    if (this.clock.now() < this.#until) return false;
    if (!this.controller.signal.aborted) this.controller.abort(new AxEventLeaseLostError(this.deliveryId));
    return true;
  }

  /** Start heart-beating every third of the lease. */
  start(): void {
    this.#loop = this.#run();
  }

  async #run(): Promise<void> {
    const every = Math.max(1, Math.floor(this.leaseMs / 3));
    while (!this.#stop.signal.aborted) {
      await this.clock.sleep(every, this.#stop.signal);
      if (this.#stop.signal.aborted) return;
      try {
        const leaseUntil = this.clock.now() + this.leaseMs;
        const beat = await this.store.heartbeat({
          deliveryId: this.deliveryId,
          fencingToken: this.fencingToken,
          leaseUntil,
        });
        if (beat.held) this.#until = leaseUntil;
        if (!beat.held) {
          this.controller.abort(new AxEventLeaseLostError(this.deliveryId));
          return;
        }
        if (beat.cancelRequested) this.controller.abort(cancelReason());
      } catch (error) {
        this.onError(error);
      }
    }
  }

  /** Stop heart-beating (the run is over). */
  async stop(): Promise<void> {
    this.#stop.abort(STOPPED);
    await this.#loop;
  }
}

/** The code of the reason a signal was aborted with (`aborted`, `lease_lost`, `closed`), if any. */
export function abortCode(signal: AbortSignal): string | null {
  if (!signal.aborted) return null;
  const reason: unknown = signal.reason;
  return reason instanceof AxEventError ? reason.code : 'aborted';
}
