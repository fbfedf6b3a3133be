/**
 * The runtime's write path: an event checked, routed into deliveries and appended — one at a
 * time or a batch in one write — waiting for room while the store is full.
 */

import type { AxEventClock } from './clock.js';
import {
  type AxEventIngress,
  type AxEventIngressRecord,
  identityScope,
  normalizeIngress,
} from './envelope.js';
import {
  AxEventBackpressureError,
  AxEventClosedError,
  AxEventConfigError,
  AxEventError,
  AxEventInputError,
} from './errors.js';
import type { AxEventRouteDefinition } from './route.js';
import { planDeliveries } from './routing.js';
import type { DeliveryScheduler } from './scheduler.js';
import type { AxEventPublishOptions, AxEventReceipt } from './source.js';
import type { AxEventAppendItem, AxEventAppendResult, AxEventStore } from './store.js';

/** What publishing needs of the runtime. */
export interface PublishingParts {
  store: AxEventStore;
  clock: AxEventClock;
  routes: ReadonlyMap<string, AxEventRouteDefinition>;
  scheduler: Pick<DeliveryScheduler, 'ring' | 'waitForProgress'>;
  maxEventBytes: number | undefined;
  publishTimeoutMs: number;
  /** Whether the runtime is closing (a wait for room then ends). */
  closing(): boolean;
  /** An `authorize` hook that threw while routing. */
  report(error: unknown): void;
}

/** See {@link AxEventRuntime.publish} and {@link AxEventRuntime.publishMany}. */
export class Publishing {
  readonly #parts: PublishingParts;
  /** Routes whose hooks were reported as misused: once per route, not once per event. */
  readonly #misused = new WeakSet<AxEventRouteDefinition>();

  constructor(parts: PublishingParts) {
    this.#parts = parts;
  }

  readonly #reportMisuse = (route: AxEventRouteDefinition, message: string): void => {
    if (this.#misused.has(route)) return;
    this.#misused.add(route);
    this.#parts.report(new AxEventConfigError(`Route ${route.id}: ${message}`, { routeId: route.id }));
  };

  async one(ingress: AxEventIngress, options: AxEventPublishOptions): Promise<AxEventReceipt> {
    const { store, clock } = this.#parts;
    const { record, text, bytes } = normalizeIngress(ingress, { maxEventBytes: this.#parts.maxEventBytes });
    const started = clock.now();
    const item = await this.#plan(record, text, bytes, started);
    for (;;) {
      const result = await store.append({ ...item, now: clock.now() });
      if (result.status !== 'full') {
        if (result.status === 'appended' && result.deliveryIds.length > 0) this.#parts.scheduler.ring();
        return this.#receipt(record, result);
      }
      await this.#waitForRoom(started, result.reason, options);
    }
  }

  async many(
    ingresses: readonly AxEventIngress[],
    options: AxEventPublishOptions,
  ): Promise<AxEventReceipt[]> {
    const { store, clock } = this.#parts;
    if (!Array.isArray(ingresses)) {
      throw new AxEventInputError('invalid_event', 'publishMany() takes an array of events to publish');
    }
    // All checked first, so a bad event refuses the batch before anything is written.
    const checked = ingresses.map((ingress, index) => {
      try {
        return normalizeIngress(ingress, { maxEventBytes: this.#parts.maxEventBytes });
      } catch (error) {
        // Which of a thousand events it was, in the message and as `index`.
        if (!(error instanceof AxEventInputError)) throw error;
        const code = error.code as ConstructorParameters<typeof AxEventInputError>[0];
        throw new AxEventInputError(code, `publishMany() event ${index}: ${error.message}`, {
          cause: error,
          index,
        });
      }
    });
    if (checked.length === 0) return [];
    const started = clock.now();
    const items: AxEventAppendItem[] = [];
    for (const { record, text, bytes } of checked) items.push(await this.#plan(record, text, bytes, started));
    const results: AxEventAppendResult[] = store.appendMany
      ? await this.#appendBatch(items, started, options)
      : await this.#appendEach(items, started, options);
    if (results.some((r) => r.status === 'appended' && r.deliveryIds.length > 0))
      this.#parts.scheduler.ring();
    return results.map((result, i) =>
      this.#receipt((checked[i] as { record: AxEventIngressRecord }).record, result),
    );
  }

  /** One write for the batch; what a full store refused is written again once there is room. */
  async #appendBatch(
    items: readonly AxEventAppendItem[],
    started: number,
    options: AxEventPublishOptions,
  ): Promise<AxEventAppendResult[]> {
    const { store, clock } = this.#parts;
    const results: AxEventAppendResult[] = new Array(items.length);
    let todo = items.map((_, i) => i);
    for (;;) {
      const out = await (store.appendMany as NonNullable<AxEventStore['appendMany']>)({
        items: todo.map((i) => items[i] as AxEventAppendItem),
        now: clock.now(),
      });
      const full: number[] = [];
      let reason = '';
      for (const [j, result] of out.entries()) {
        const i = todo[j] as number;
        if (result.status === 'full') {
          full.push(i);
          reason = result.reason;
        } else results[i] = result;
      }
      if (full.length === 0) return results;
      await this.#waitForRoom(started, reason, options);
      todo = full;
    }
  }

  /** A store without `appendMany`: the events one by one, in order. */
  async #appendEach(
    items: readonly AxEventAppendItem[],
    started: number,
    options: AxEventPublishOptions,
  ): Promise<AxEventAppendResult[]> {
    const { store, clock } = this.#parts;
    const results: AxEventAppendResult[] = [];
    for (const item of items) {
      for (;;) {
        const result = await store.append({ ...item, now: clock.now() });
        if (result.status !== 'full') {
          results.push(result);
          break;
        }
        await this.#waitForRoom(started, result.reason, options);
      }
    }
    return results;
  }

  /** The routed, ready-to-store form of one checked event. */
  async #plan(
    record: AxEventIngressRecord,
    ingressText: string,
    bytes: number,
    now: number,
  ): Promise<AxEventAppendItem> {
    const scope = identityScope(record.identity);
    const deliveries = await planDeliveries({
      routes: this.#parts.routes.values(),
      ingress: record,
      scope,
      now,
      store: this.#parts.store,
      onError: (error) => this.#parts.report(error),
      onMisuse: this.#reportMisuse,
    });
    const event = { key: `evt_${crypto.randomUUID()}`, scope, ingress: record, bytes, receivedAt: now };
    return {
      dedupe: { scope, source: record.event.source, id: record.event.id },
      event,
      deliveries,
      ingressText,
    };
  }

  #receipt(record: AxEventIngressRecord, result: AxEventAppendResult): AxEventReceipt {
    return {
      eventId: record.event.id,
      accepted: true,
      duplicate: result.status === 'duplicate',
      durability: this.#parts.store.durability,
      deliveryIds: result.status === 'full' ? [] : result.deliveryIds,
    };
  }

  /** Wait for a full store to make room, or throw once `publishTimeoutMs` has passed since `started`. */
  async #waitForRoom(started: number, reason: string, options: AxEventPublishOptions): Promise<void> {
    const { clock, publishTimeoutMs, scheduler } = this.#parts;
    const waited = clock.now() - started;
    if (waited >= publishTimeoutMs) throw new AxEventBackpressureError(waited, reason);
    if (options.signal?.aborted)
      throw new AxEventError('aborted', 'publish was aborted while the store was full');
    if (this.#parts.closing()) throw new AxEventClosedError();
    await scheduler.waitForProgress(Math.min(50, publishTimeoutMs - waited), options.signal);
  }
}
