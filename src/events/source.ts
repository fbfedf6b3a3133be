/**
 * Event sources: things that publish into a runtime (an MCP source, a webhook, a timer).
 * A source that declares `requiresDurable` is refused on a volatile store unless the
 * runtime allows it.
 */

import {
  anyOf,
  anything,
  array,
  boolean,
  func,
  instance,
  number,
  object,
  oneOf,
  record,
  required,
  string,
} from '../options/check.js';
import type { AxEventClock } from './clock.js';
import { type AxEventDraft, type AxEventIngress, type AxEventTrust, createEvent } from './envelope.js';
import { AxEventError, assertEventOptions } from './errors.js';
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
  /**
   * Publish a batch as one write where the store can (see `AxEventRuntime.publishMany`): a
   * source that receives events in bursts (a webhook batch, a resync) should use it.
   */
  publishMany(
    ingresses: readonly AxEventIngress[],
    options?: AxEventPublishOptions,
  ): Promise<AxEventReceipt[]>;
  /** Report a failure that happened inside the source. */
  reportError(error: unknown): void;
  /** The runtime's clock. */
  readonly clock: AxEventClock;
}

/** A type a source would publish but, as configured now, does not. */
export interface AxEventWithheldType {
  /** The event type (`mcp.resource.updated`). */
  type: string;
  /** Why, and what to set: "its resourceSubscriptions policy is 'none' (the default): set …". */
  reason: string;
}

/**
 * What a source says about the events it publishes, so the runtime can report routes those
 * events can never reach (`onWarning`). Leave out what you do not know: the runtime only
 * warns about what a description states.
 */
export interface AxEventSourceDescription {
  /** The CloudEvents `source` of its events (`mcp://inventory`). */
  sources?: readonly string[];
  /** The event types it may publish (exact names). */
  types?: readonly string[];
  /** Whether its events carry an identity: never (`anonymous`), always (`identified`), or it `varies`. */
  identity?: 'anonymous' | 'identified' | 'varies';
  /** The trust of its events, or `varies`. */
  trust?: AxEventTrust | 'varies';
  /** Types it would publish but, as configured now, does not, with the reason. */
  withheld?: readonly AxEventWithheldType[];
  /**
   * Type prefixes this source speaks for in full (`mcp.`): every type under them it may publish
   * is in `types` or `withheld`. A route pattern under one of them that matches none of those
   * (`mcp.resource.update`) can never match this source's events, and is warned about as
   * `unknown_type`.
   */
  typePrefixes?: readonly string[];
}

const NAMES = array(string({ nonEmpty: true }));

/**
 * The shape of {@link AxEventSourceDescription}. A description that does not fit (a string where
 * a list belongs) would make the runtime's warnings say nonsense or fail `start()` with a raw
 * `TypeError`; it is reported as the source's error and read no further.
 */
export const SOURCE_DESCRIPTION = object(
  {
    sources: NAMES,
    types: NAMES,
    identity: oneOf('anonymous', 'identified', 'varies'),
    trust: oneOf('trusted', 'authenticated', 'untrusted', 'varies'),
    withheld: array(
      object(
        { type: required(string({ nonEmpty: true })), reason: required(string()) },
        { expected: 'a withheld type { type, reason }' },
      ),
    ),
    typePrefixes: NAMES,
  },
  { expected: 'a source description { sources?, types?, identity?, trust?, withheld?, typePrefixes? }' },
);

/** A producer of events, started and closed by the runtime. */
export interface AxEventSource {
  readonly id: string;
  /** Refuse a volatile store for this source (unless the runtime sets `allowVolatile`). */
  readonly requiresDurable?: boolean;
  start(publisher: AxEventPublisher): void | Promise<void>;
  close(): void | Promise<void>;
  /**
   * Optional: what the source publishes, as it stands after `start()`. The runtime calls it
   * once per start (and again when a route is added later) to warn about routes its events
   * can never reach: anonymous or untrusted events for routes that all require
   * authentication, or a type a route waits for that the source withholds.
   */
  describe?(): AxEventSourceDescription | undefined;
}

/** What a runtime's `sources` hold: objects with an id, `start` and `close`. */
export const EVENT_SOURCE = instance(
  'an event source { id, start(publisher), close() }',
  (v) =>
    typeof v === 'object' &&
    v !== null &&
    typeof (v as AxEventSource).id === 'string' &&
    (v as AxEventSource).id.length > 0 &&
    typeof (v as AxEventSource).start === 'function' &&
    typeof (v as AxEventSource).close === 'function',
);

/** Options of {@link AxPushEventSource}. */
export interface AxPushEventSourceOptions {
  id: string;
  /** Refuse a volatile store for this source (unless the runtime sets `allowVolatile`). */
  requiresDurable?: boolean;
}

/** What {@link AxPushEventSource} accepts; checked once in the constructor. */
export const PUSH_SOURCE_OPTIONS = object(
  { id: required(string({ nonEmpty: true })), requiresDurable: boolean() },
  { expected: 'options { id, requiresDurable? }', aliases: { durable: 'requiresDurable' } },
);

/** A source the application pushes events into: `source.push({ event, identity, trust })`. */
export class AxPushEventSource implements AxEventSource {
  readonly id: string;
  readonly requiresDurable: boolean;
  #publisher: AxEventPublisher | null = null;

  constructor(options: AxPushEventSourceOptions) {
    assertEventOptions(PUSH_SOURCE_OPTIONS, options, 'AxPushEventSource options');
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

/** The shape of a timer's event draft (`id` and `time` are added per tick). */
const TIMER_EVENT = object(
  {
    source: required(string({ nonEmpty: true })),
    type: required(string({ nonEmpty: true })),
    subject: string(),
    datacontenttype: string(),
    dataschema: string(),
    data: anything(),
    extensions: record(anyOf(string(), number(), boolean()), 'an object of scalar extension values'),
  },
  { expected: 'an event draft { source, type, subject?, data?, … }' },
);

/** What {@link AxTimerEventSource} accepts; checked once in the constructor. */
export const TIMER_SOURCE_OPTIONS = object(
  {
    id: required(string({ nonEmpty: true })),
    everyMs: required(number({ min: 1 })),
    event: required(anyOf(func('a function (tick, now) => ingress'), TIMER_EVENT)),
    requiresDurable: boolean(),
  },
  {
    expected: 'options { id, everyMs, event, requiresDurable? }',
    aliases: { intervalMs: 'everyMs', interval: 'everyMs', every: 'everyMs', durable: 'requiresDurable' },
  },
);

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
    assertEventOptions(TIMER_SOURCE_OPTIONS, options, 'AxTimerEventSource options');
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

  /** A draft event: its type and source, anonymous and trusted. A factory: nothing known. */
  describe(): AxEventSourceDescription | undefined {
    const make = this.#options.event;
    if (typeof make === 'function') return undefined;
    return { types: [make.type], sources: [make.source], identity: 'anonymous', trust: 'trusted' };
  }

  async close(): Promise<void> {
    this.#stop?.abort();
    await this.#loop;
    this.#stop = null;
    this.#loop = null;
  }
}
