/**
 * Keeps claimed deliveries' leases alive while they run, and aborts a run when its lease is
 * lost or it is cancelled. Internal.
 *
 * One heartbeat loop serves every lease of a runtime ({@link Heartbeats}): a lease is an entry
 * in a set, not a loop, a timer and an `AbortController` of its own, which on a backlog of
 * short runs cost more than the run's own work. Each lease still beats a third of its
 * lease time after it started (or after its last beat answered), as it did with a loop of
 * its own.
 */

import { type AxEventClock, systemEventClock } from './clock.js';
import { AxEventError, AxEventLeaseLostError } from './errors.js';
import type { AxEventStore } from './store.js';

/** The abort reason of a run stopped by `cancelRun`. */
export function cancelReason(): AxEventError {
  return new AxEventError('aborted', 'The run was cancelled');
}

const NOTHING_IN_FLIGHT: Promise<void> = Promise.resolve();

/** The lease of one running delivery. */
export class LeaseKeeper {
  /** Aborts the run: its lease was lost, it was cancelled, the runtime is closing. */
  readonly controller = new AbortController();
  /** When the lease ends unless a heartbeat renews it. */
  #until: number;
  /** When the next heartbeat is due. */
  nextBeatAt: number;
  /** The heartbeat in flight, if any. */
  beating: Promise<void> | null = null;

  constructor(
    private readonly heartbeats: Heartbeats,
    readonly deliveryId: string,
    private readonly fencingToken: number,
    private readonly onError: (error: unknown) => void,
    leaseUntil: number | null = null,
  ) {
    const now = heartbeats.clock.now();
    this.#until = leaseUntil ?? now + heartbeats.leaseMs;
    this.nextBeatAt = now + heartbeats.every;
  }

  /**
   * True (and the run aborted as `lease_lost`) once the lease has run out by the clock. A
   * process paused past its lease (SIGSTOP, a long GC, a frozen VM) ran no heartbeat that
   * could tell it; another worker may own the delivery by now and have gone on to the next
   * of its ordering key. Asked right before a target or handler starts, so that such a
   * process does not start it; its writes are fenced anyway.
   */
  ranOut(): boolean {
    if (this.heartbeats.clock.now() < this.#until) return false;
    if (!this.controller.signal.aborted) this.controller.abort(new AxEventLeaseLostError(this.deliveryId));
    return true;
  }

  /** Start heart-beating every third of the lease. */
  start(): void {
    this.heartbeats.add(this);
  }

  /** Stop heart-beating (the run is over); resolves once no heartbeat of it is in flight. */
  stop(): Promise<void> {
    this.heartbeats.remove(this);
    return this.beating ?? NOTHING_IN_FLIGHT;
  }

  /** Renew the lease once; called by the heartbeat loop when {@link nextBeatAt} has come. */
  beat(): void {
    const { store, clock, leaseMs, every } = this.heartbeats;
    const leaseUntil = clock.now() + leaseMs;
    this.beating = (async () => {
      try {
        const beat = await store.heartbeat({
          deliveryId: this.deliveryId,
          fencingToken: this.fencingToken,
          leaseUntil,
        });
        if (!beat.held) {
          this.controller.abort(new AxEventLeaseLostError(this.deliveryId));
          this.heartbeats.remove(this);
          return;
        }
        this.#until = leaseUntil;
        if (beat.cancelRequested) this.controller.abort(cancelReason());
      } catch (error) {
        this.onError(error);
      } finally {
        this.nextBeatAt = clock.now() + every;
        this.beating = null;
      }
    })();
  }
}

/** The heartbeat loop of a runtime's leases: it runs while there are leases, and sleeps to the next due beat. */
export class Heartbeats {
  readonly every: number;
  readonly #leases = new Set<LeaseKeeper>();
  #loop: Promise<void> | null = null;
  /** On the system clock: the loop's timer, kept alive only while there are leases. */
  #timer: ReturnType<typeof setTimeout> | undefined;
  #endSleep: (() => void) | undefined;
  /** On another clock: wakes the loop's sleep once the last lease is gone, so no timer outlives the runs. */
  #wake: AbortController | undefined;

  constructor(
    readonly store: AxEventStore,
    readonly clock: AxEventClock,
    readonly leaseMs: number,
  ) {
    this.every = Math.max(1, Math.floor(leaseMs / 3));
  }

  add(lease: LeaseKeeper): void {
    this.#leases.add(lease);
    if (this.#leases.size === 1) this.#timer?.ref();
    this.#loop ??= this.#run();
  }

  remove(lease: LeaseKeeper): void {
    if (!this.#leases.delete(lease) || this.#leases.size > 0) return;
    // A lone run at a time (a trickle) would otherwise start and stop a loop per run.
    this.#timer?.unref();
    this.#wake?.abort();
  }

  /** Ends the loop's sleep (the runtime has stopped for good). */
  close(): void {
    clearTimeout(this.#timer);
    this.#endSleep?.();
    this.#wake?.abort();
  }

  /**
   * A lease added while the loop sleeps is due no sooner than what the loop sleeps to (its
   * first beat is a full third of a lease away, as is the next beat of every lease that
   * beat), so nothing needs to wake it early.
   */
  async #run(): Promise<void> {
    try {
      while (this.#leases.size > 0) {
        const now = this.clock.now();
        let next = Number.POSITIVE_INFINITY;
        for (const lease of this.#leases) {
          if (lease.beating) continue;
          if (lease.nextBeatAt <= now) lease.beat();
          else if (lease.nextBeatAt < next) next = lease.nextBeatAt;
        }
        // With every lease's beat in flight, each is due a third of a lease from now at the soonest.
        await this.#sleep(next === Number.POSITIVE_INFINITY ? this.every : next - now);
      }
    } finally {
      this.#loop = null;
    }
  }

  #sleep(ms: number): Promise<void> {
    if (this.clock === systemEventClock) {
      return new Promise<void>((resolve) => {
        this.#endSleep = resolve;
        this.#timer = setTimeout(resolve, ms);
        if (this.#leases.size === 0) this.#timer.unref();
      }).finally(() => {
        this.#timer = undefined;
        this.#endSleep = undefined;
      });
    }
    const wake = new AbortController();
    this.#wake = wake;
    if (this.#leases.size === 0) wake.abort();
    return this.clock.sleep(ms, wake.signal).finally(() => {
      this.#wake = undefined;
    });
  }
}

/** The code of the reason a signal was aborted with (`aborted`, `lease_lost`, `closed`), if any. */
export function abortCode(signal: AbortSignal): string | null {
  if (!signal.aborted) return null;
  const reason: unknown = signal.reason;
  return reason instanceof AxEventError ? reason.code : 'aborted';
}
