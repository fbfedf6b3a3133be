/**
 * Event sources: things that publish into a runtime (an MCP source, a webhook, a timer).
 * A source that declares `requiresDurable` is refused on a volatile store unless the
 * runtime allows it.
 */

import type { AxEventClock } from './clock.js';
import { type AxEventDraft, type AxEventIngress, createEvent } from './envelope.js';
import { AxEventConfigError, AxEventError } from './errors.js';
import type { AxEventDurability } from './store.js';

/** What `publish()` returns. */
export interface AxEventReceipt {
  eventId: string;
  /** Always `true` when returned; failures throw. */
  accepted: boolean;
  /** The event had been published before (same identity scope, source and id). */
  duplicate: boolean;
  durability: AxEventDurability;
  /** One per matching route (the original ones for a duplicate); empty if no route matched. */
  deliveryIds: string[];
}

/** Options of `publish()`. */
export interface AxEventPublishOptions {
  /** Stops a publish that is waiting for room in a full store. */
  signal?: AbortSignal;
}

/** What a started source publishes through. */
export interface AxEventPublisher {
  publish(ingress: AxEventIngress, options?: AxEventPublishOptions): Promise<AxEventReceipt>;
  /** Report a failure that happened inside the source. */
  reportError(error: unknown): void;
  /** The runtime's clock. */
  readonly clock: AxEventClock;
}

/** A producer of events, started and closed by the runtime. */
export interface AxEventSource {
  readonly id: string;
  /** Refuse a volatile store for this source (unless the runtime sets `allowVolatile`). */
  readonly requiresDurable?: boolean;
  start(publisher: AxEventPublisher): void | Promise<void>;
  close(): void | Promise<void>;
}

/** A source the application pushes events into: `source.push({ event, identity, trust })`. */
export class AxPushEventSource implements AxEventSource {
  readonly id: string;
  readonly requiresDurable: boolean;
  #publisher: AxEventPublisher | null = null;

  constructor(options: { id: string; requiresDurable?: boolean }) {
    if (typeof options?.id !== 'string' || options.id.length === 0)
      throw new AxEventConfigError('A source needs an id');
    this.id = options.id;
    this.requiresDurable = options.requiresDurable ?? false;
  }

  start(publisher: AxEventPublisher): void {
    this.#publisher = publisher;
  }

  /** Publish through the runtime; throws `closed` before `start` or after `close`. */
  push(ingress: AxEventIngress, options?: AxEventPublishOptions): Promise<AxEventReceipt> {
    if (!this.#publisher)
      return Promise.reject(new AxEventError('closed', `Source ${this.id} is not started`));
    return this.#publisher.publish(ingress, options);
  }

  close(): void {
    this.#publisher = null;
  }
}

/** Options of {@link AxTimerEventSource}. */
export interface AxTimerEventSourceOptions {
  id: string;
  /** Interval between events. */
  everyMs: number;
  /** The event to publish each tick (a fresh id and time are added), or a function making the ingress. */
  event: Omit<AxEventDraft, 'id' | 'time'> | ((tick: number, now: number) => AxEventIngress);
  requiresDurable?: boolean;
}

/**
 * Publishes an event every `everyMs` on the runtime's clock (trusted, anonymous unless the
 * factory says otherwise). Its loop ends on `close()`.
 */
export class AxTimerEventSource implements AxEventSource {
  readonly id: string;
  readonly requiresDurable: boolean;
  readonly #options: AxTimerEventSourceOptions;
  #stop: AbortController | null = null;
  #loop: Promise<void> | null = null;

  constructor(options: AxTimerEventSourceOptions) {
    if (typeof options?.id !== 'string' || options.id.length === 0)
      throw new AxEventConfigError('A source needs an id');
    if (!(Number.isFinite(options.everyMs) && options.everyMs > 0)) {
      throw new AxEventConfigError(`Source ${options.id}: everyMs must be positive`);
    }
    this.id = options.id;
    this.requiresDurable = options.requiresDurable ?? false;
    this.#options = options;
  }

  start(publisher: AxEventPublisher): void {
    if (this.#stop) return;
    const stop = new AbortController();
    this.#stop = stop;
    this.#loop = (async () => {
      for (let tick = 1; ; tick++) {
        await publisher.clock.sleep(this.#options.everyMs, stop.signal);
        if (stop.signal.aborted) return;
        const now = publisher.clock.now();
        const make = this.#options.event;
        const ingress: AxEventIngress =
          typeof make === 'function' ? make(tick, now) : { event: createEvent(make, now), trust: 'trusted' };
        try {
          await publisher.publish(ingress, { signal: stop.signal });
        } catch (error) {
          if (!stop.signal.aborted) publisher.reportError(error);
        }
      }
    })();
  }

  async close(): Promise<void> {
    this.#stop?.abort();
    await this.#loop;
    this.#stop = null;
    this.#loop = null;
  }
}
