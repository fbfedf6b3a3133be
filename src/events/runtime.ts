/**
 * The event runtime: publish attributed events, route them by explicit rules into durable
 * deliveries, and run them with retries, continuations and dead letters — on worker loops
 * or driven by the host (`nextDueAt()` / `runDue()`).
 */

import { type AxEventClock, systemEventClock } from './clock.js';
import { type AxEvent, type AxEventIngress, identityScope, normalizeIngress } from './envelope.js';
import { type EventErrorReporter, eventErrorReporter } from './error-reports.js';
import {
  AxEventBackpressureError,
  AxEventClosedError,
  AxEventConfigError,
  AxEventError,
  AxEventInputError,
  assertEventOptions,
  eventRuleError,
  refusedCallOptions,
} from './errors.js';
import { Executor } from './executor.js';
import { AxMemoryEventStore } from './memory-store.js';
import { Publishing } from './publishing.js';
import { type AxEventRouteDefinition, type AxEventRouteExplanation, checkRoute } from './route.js';
import { explainRoutes, sourceWarnings } from './routing.js';
import {
  type AxEventRuntimeConfig,
  type AxEventRuntimeOptions,
  CLOSE_OPTIONS,
  DEAD_LETTER_LISTING,
  IDLE_OPTIONS,
  PUBLISH_OPTIONS,
  RUN_DUE_OPTIONS,
  RUNTIME_CONFIG,
  RUNTIME_OPTIONS,
  retryPolicyOf,
} from './runtime-options.js';
import { DeliveryScheduler, type DeliverySchedulerDeps, type DueRun } from './scheduler.js';
import {
  type AxEventPublisher,
  type AxEventPublishOptions,
  type AxEventReceipt,
  type AxEventSource,
  type AxEventSourceDescription,
  EVENT_SOURCE,
  SOURCE_DESCRIPTION,
} from './source.js';
import { AxMemoryEventStateStore } from './state.js';
import type { AxEventDeadLetter, AxEventRun, AxEventStore } from './store.js';
import type { AxEventTargetDefinition } from './target.js';
import { checkTarget } from './target-builder.js';

const LABEL = 'AxEventRuntime options';

/** What {@link AxEventRuntime.onPublish} tells a listener about one published event. */
export interface AxEventPublished {
  /** The event as the publisher gave it (already checked and copied by the runtime: read it, do not change it). */
  ingress: AxEventIngress;
  /**
   * Settles as the publish does: the event's receipt, or the error its publish failed with
   * (a malformed event, a full store past `publishTimeoutMs`, a refused batch).
   */
  receipt: Promise<AxEventReceipt>;
}

/** A listener of {@link AxEventRuntime.onPublish}. */
export type AxEventPublishListener = (published: AxEventPublished) => void;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The event runtime. Record form: `new AxEventRuntime(routes, options)`, then
 * `registerTarget(...)`, `addSource(...)`, `start()`. Builder form: {@link eventRuntime}.
 */
export class AxEventRuntime {
  /** The store this runtime reads and writes (given, or a memory store it owns). */
  readonly store: AxEventStore;
  /** The clock every time and sleep goes through. */
  readonly clock: AxEventClock;
  /** The lease owner name of this runtime's claims. */
  readonly workerId: string;
  readonly #routes = new Map<string, AxEventRouteDefinition>();
  readonly #targets = new Map<string, AxEventTargetDefinition>();
  readonly #sources = new Map<string, AxEventSource>();
  readonly #startedSources = new Set<AxEventSource>();
  readonly #options: AxEventRuntimeOptions;
  readonly #warn: NonNullable<AxEventRuntimeOptions['onWarning']>;
  readonly #warned = new Set<string>();
  /** Errors with no caller: `onError`, else the console, the first of each kind and place. */
  readonly #report: EventErrorReporter;
  readonly #ownsStore: boolean;
  readonly #scheduler: DeliveryScheduler;
  #stopWatchingStore: (() => void) | undefined;
  readonly #publishing: Publishing;
  /** Wrapped, so the same function added twice is called twice and removed once per remover. */
  readonly #publishListeners = new Set<{ listener: AxEventPublishListener }>();
  #started = false;
  #closing: Promise<void> | null = null;

  /**
   * Checks everything once, here: the options, every route and target (record form too), the
   * sources. A problem throws {@link AxEventConfigError} (`invalid_options`) with its path as
   * written (`routes[2].match.types`, `targets[0].invoke`) and, for a misspelled key, the
   * nearest known name; nothing has started then.
   */
  constructor(routes: readonly AxEventRouteDefinition[] = [], options: AxEventRuntimeOptions = {}) {
    if (isRecord(options) && Object.hasOwn(options, 'routes')) {
      throw eventRuleError(LABEL, {
        path: 'routes',
        expected:
          'routes as the first argument of new AxEventRuntime(routes, options), or eventRuntime({ routes })',
        received: 'routes in the options',
      });
    }
    if (isRecord(options)) assertEventOptions(RUNTIME_CONFIG, { ...options, routes }, LABEL);
    else assertEventOptions(RUNTIME_OPTIONS, options, LABEL);
    this.#options = options;
    this.#report = eventErrorReporter('event runtime', 'onError to the runtime', options.onError);
    this.clock = options.clock ?? systemEventClock;
    this.#ownsStore = options.store === undefined;
    this.store = options.store ?? new AxMemoryEventStore();
    this.workerId = options.workerId ?? `worker_${crypto.randomUUID()}`;
    this.#warn = options.onWarning ?? ((message) => console.warn(message));
    if (options.coordination === 'multi-worker' && !this.store.capabilities.multiWorker) {
      throw eventRuleError(LABEL, {
        path: 'coordination',
        expected: "'single', or a store that supports several workers for 'multi-worker'",
        received: `'multi-worker' with a ${this.store.constructor?.name ?? 'store'}`,
      });
    }
    for (const [i, target] of (options.targets ?? []).entries()) this.#register(target, `targets[${i}]`);
    for (const [i, route] of routes.entries()) this.#add(route, `routes[${i}]`);
    for (const [i, source] of (options.sources ?? []).entries()) {
      if (this.#sources.has(source.id)) {
        throw eventRuleError(LABEL, {
          path: `sources[${i}].id`,
          expected: 'a source id given once',
          received: `'${source.id}', added twice`,
        });
      }
      this.#sources.set(source.id, source);
    }
    const leaseMs = options.leaseMs ?? 30_000;
    const executor = new Executor({
      store: this.store,
      clock: this.clock,
      routes: this.#routes,
      targets: this.#targets,
      stateStore: options.stateStore ?? new AxMemoryEventStateStore(),
      retry: retryPolicyOf(options),
      random: options.random ?? Math.random,
      leaseMs,
      onError: (error, deliveryId) => this.#report(error, { phase: 'delivery', deliveryId }),
    });
    this.#scheduler = schedulerOf(this, {
      store: this.store,
      clock: this.clock,
      executor,
      workerId: this.workerId,
      concurrency: options.workerConcurrency ?? 4,
      leaseMs,
      pollMs: options.pollIntervalMs ?? 1000,
      pruneMs: options.pruneIntervalMs ?? 60_000,
      report: (error, report) => this.#report(error, report),
    });
    this.#publishing = new Publishing({
      store: this.store,
      clock: this.clock,
      routes: this.#routes,
      scheduler: this.#scheduler,
      maxEventBytes: options.maxEventBytes,
      publishTimeoutMs: options.publishTimeoutMs ?? 5000,
      closing: () => this.#closing !== null,
      report: (error) => this.#report(error, { phase: 'authorize' }),
    });
  }

  /** Register a target (ids are unique; registering the same definition twice is a no-op). */
  registerTarget(target: AxEventTargetDefinition): this {
    checkTarget(target);
    this.#register(target);
    return this;
  }

  /** A checked target; `path` names it in the constructor's options. */
  #register(target: AxEventTargetDefinition, path?: string): void {
    const known = this.#targets.get(target.id);
    if (known && known !== target) {
      const message = `Target ${target.id} is registered twice`;
      if (path === undefined) throw new AxEventConfigError(message, { targetId: target.id });
      throw eventRuleError(
        LABEL,
        { path, expected: 'one definition per target id', received: `target ${target.id}, registered twice` },
        { targetId: target.id },
      );
    }
    this.#targets.set(target.id, target);
  }

  /**
   * Add a route (ids are unique). A target definition on the route is registered; after
   * `start()` a target named by id must be registered already.
   */
  addRoute(route: AxEventRouteDefinition): this {
    checkRoute(route);
    if (this.#started) this.#checkTargetKnown(route);
    this.#add(route);
    if (this.#started) this.#lint([...this.#startedSources], [route]);
    return this;
  }

  /** A checked route; `path` names it in the constructor's options. */
  #add(route: AxEventRouteDefinition, path?: string): void {
    if (this.#routes.has(route.id)) {
      const message = `Route ${route.id} is defined twice`;
      if (path === undefined) throw new AxEventConfigError(message, { routeId: route.id });
      throw eventRuleError(
        LABEL,
        { path: `${path}.id`, expected: 'a route id used once', received: `'${route.id}', defined twice` },
        { routeId: route.id },
      );
    }
    if (route.target !== undefined && typeof route.target !== 'string')
      this.#register(route.target, path === undefined ? undefined : `${path}.target`);
    this.#routes.set(route.id, route);
  }

  /** Add a source (await it); after `start()` it is checked and started at once. */
  async addSource(source: AxEventSource): Promise<void> {
    assertEventOptions(EVENT_SOURCE, source, 'addSource()');
    if (this.#sources.has(source.id)) throw new AxEventConfigError(`Source ${source.id} is added twice`);
    if (this.#started) this.#checkDurability(source);
    this.#sources.set(source.id, source);
    if (this.#started) await this.#startSource(source);
  }

  #checkDurability(source: AxEventSource): void {
    if (source.requiresDurable && this.store.durability === 'volatile' && !this.#options.allowVolatile) {
      throw new AxEventError(
        'durability_required',
        `Source ${source.id} requires a durable store; pass a durable store or allowVolatile: true`,
      );
    }
  }

  async #startSource(source: AxEventSource): Promise<void> {
    const publisher: AxEventPublisher = {
      publish: (ingress, options) => this.publish(ingress, options),
      publishMany: (ingresses, options) => this.publishMany(ingresses, options),
      reportError: (error) => this.#report(error, { phase: 'source', sourceId: source.id }),
      clock: this.clock,
    };
    await source.start(publisher);
    this.#startedSources.add(source);
    this.#lint([source], [...this.#routes.values()]);
  }

  /** A route naming a target by id needs that target registered (checked on `start()`). */
  #checkTargetKnown(route: AxEventRouteDefinition): void {
    if (typeof route.target !== 'string' || this.#targets.has(route.target)) return;
    const does = route.action === 'wake' ? 'wakes' : 'resumes only continuations of';
    throw eventRuleError(
      `Route ${route.id}`,
      {
        path: 'target',
        expected: `a registered target (Route ${route.id} ${does} unknown target ${route.target})`,
        received: `'${route.target}'`,
      },
      { routeId: route.id },
    );
  }

  /** Warn, once per (source, route), about routes these sources' events can never reach. */
  #lint(sources: readonly AxEventSource[], routes: readonly AxEventRouteDefinition[]): void {
    for (const source of sources) {
      let description: AxEventSourceDescription | undefined;
      try {
        description = source.describe?.();
        if (description !== undefined) {
          assertEventOptions(SOURCE_DESCRIPTION, description, `Source ${source.id}: describe()`);
        }
      } catch (error) {
        this.#report(error, { phase: 'source', sourceId: source.id });
        description = undefined;
      }
      if (!description) continue;
      for (const warning of sourceWarnings(source.id, description, routes)) {
        const key = JSON.stringify([warning.details.code, source.id, warning.details.routeId]);
        if (this.#warned.has(key)) continue;
        this.#warned.add(key);
        try {
          this.#warn(warning.message, warning.details);
        } catch {
          // A warning handler that throws must not break the runtime.
        }
      }
    }
  }

  /**
   * Check targets and sources, take back stale leases (`coordination: 'single'`), start the
   * sources and, unless `scheduling: 'host'`, the worker loop.
   */
  async start(): Promise<void> {
    if (this.#closing) throw new AxEventClosedError();
    if (this.#started) return;
    for (const route of this.#routes.values()) this.#checkTargetKnown(route);
    for (const source of this.#sources.values()) this.#checkDurability(source);
    this.#started = true;
    if (this.#options.coordination !== 'multi-worker')
      await this.store.recoverLeases({ now: this.clock.now() });
    for (const source of this.#sources.values()) await this.#startSource(source);
    if (this.#options.scheduling !== 'host') {
      // A shared store that can say when others made work claimable wakes the loop at once.
      this.#stopWatchingStore = this.store.onWork?.(() => this.#scheduler.ring());
      this.#scheduler.startLoop();
    }
  }

  /**
   * Publish an event. Deduplicated on (identity scope, source, id); returns a receipt with
   * one delivery per matching route. Waits up to `publishTimeoutMs` while the store is full,
   * then throws {@link AxEventBackpressureError}.
   */
  publish(ingress: AxEventIngress, options: AxEventPublishOptions = {}): Promise<AxEventReceipt> {
    if (this.#closing) return Promise.reject(new AxEventClosedError());
    const refused = refusedCallOptions(PUBLISH_OPTIONS, options, 'publish');
    if (refused) return refused;
    const receipt = this.#publishing.one(ingress, options);
    if (this.#publishListeners.size > 0) this.#announce(ingress, receipt);
    return receipt;
  }

  /**
   * Watch what is published: `listener` is called once for every event given to `publish()`
   * or `publishMany()` (so for every event a source publishes) while the runtime is open, as
   * soon as the publish starts, with the event and a promise of its receipt. The listener
   * cannot slow a publish down or break it: it is called synchronously and must return
   * quickly (await the receipt, not the publish), and one that throws is ignored. Without
   * listeners a publish does nothing extra. Returns the function that removes the listener.
   *
   * @example
   * ```ts
   * const stop = runtime.onPublish(({ ingress, receipt }) => {
   *   receipt.then((r) => console.log(ingress.event.type, r.deliveryIds), (e) => console.warn(e));
   * });
   * ```
   */
  onPublish(listener: AxEventPublishListener): () => void {
    if (typeof listener !== 'function')
      throw new AxEventConfigError('onPublish() takes a function ({ ingress, receipt }) => void');
    const entry = { listener };
    this.#publishListeners.add(entry);
    return () => {
      this.#publishListeners.delete(entry);
    };
  }

  #announce(ingress: AxEventIngress, receipt: Promise<AxEventReceipt>): void {
    for (const { listener } of [...this.#publishListeners]) {
      try {
        listener({ ingress, receipt });
      } catch {
        // A listener is an observer: it must never break a publish.
      }
    }
  }

  /**
   * Publish several events at once: each is checked, routed and deduplicated as
   * {@link AxEventRuntime.publish} would, and the receipts come back in the same order. An
   * event repeated within the batch is a duplicate of its first occurrence, and deliveries
   * of one ordering key run in batch order.
   *
   * Every event is checked before anything is stored: one malformed or oversized event
   * throws {@link AxEventInputError} (as `publish()` would for it) and none of the batch is
   * published. On a store with `appendMany` (memory, SQLite, PostgreSQL) the batch is one
   * atomic write — one round trip and one `NOTIFY` on PostgreSQL — and a full store delays
   * the whole batch (up to `publishTimeoutMs`, then {@link AxEventBackpressureError}, with
   * nothing of the batch stored). A store without it gets the events one by one; a timeout
   * then leaves the earlier ones published (publishing the batch again is safe: duplicates
   * are recognized). An empty batch returns `[]`.
   *
   * @example
   * ```ts
   * const receipts = await runtime.publishMany(jobs.map((job) => ({ event: job, identity, trust: 'authenticated' })));
   * ```
   */
  publishMany(
    ingresses: readonly AxEventIngress[],
    options: AxEventPublishOptions = {},
  ): Promise<AxEventReceipt[]> {
    if (this.#closing) return Promise.reject(new AxEventClosedError());
    const refused = refusedCallOptions(PUBLISH_OPTIONS, options, 'publishMany');
    if (refused) return refused;
    const receipts = this.#publishing.many(ingresses, options);
    if (this.#publishListeners.size > 0 && Array.isArray(ingresses)) {
      ingresses.forEach((ingress, i) => {
        const receipt = receipts.then((all) => all[i] as AxEventReceipt);
        // The caller handles the batch's failure; this copy of it must not be an unhandled rejection.
        receipt.catch(() => undefined);
        this.#announce(ingress, receipt);
      });
    }
    return receipts;
  }

  /**
   * What every route would do with this event, without publishing it: for each route, in
   * order, whether it would take the event and, if not, the first reason — `type`, `source`,
   * `subject`, `extension`, `predicate`, `identity` (anonymous events never match
   * authenticated routes), `trust`, `authorize`, or `continuation` (a resume route finds no
   * live continuation). It decides with the same code as `publish()`, so it answers what a
   * publish would do now.
   *
   * It stores nothing and runs no target. It does call the routes' predicates and
   * `authorize` hooks (keep them free of side effects; a hook that throws is a reason, not a
   * reported error) and looks continuations up in the store. A malformed event throws
   * {@link AxEventInputError} as `publish()` would.
   *
   * @example
   * ```ts
   * const why = await runtime.explain(event, { identity, trust: 'authenticated' });
   * for (const route of why) if (!route.matches) console.log(route.routeId, route.reason?.code, route.reason?.message);
   * ```
   */
  async explain(
    event: AxEvent,
    ingress: Omit<AxEventIngress, 'event'> = {},
  ): Promise<AxEventRouteExplanation[]> {
    const { record } = normalizeIngress(
      { ...ingress, event },
      { maxEventBytes: this.#options.maxEventBytes },
    );
    return explainRoutes({
      routes: this.#routes.values(),
      ingress: record,
      scope: identityScope(record.identity),
      now: this.clock.now(),
      store: this.store,
      onError: () => {},
    });
  }

  /** The run record of a run id or a delivery id, or `null`. */
  getRun(id: string): Promise<AxEventRun | null> {
    return this.store.getRun(id);
  }

  /** Dead letters not yet redriven, oldest first. */
  listDeadLetters(options: { limit?: number } = {}): Promise<AxEventDeadLetter[]> {
    return (
      refusedCallOptions(DEAD_LETTER_LISTING, options, 'listDeadLetters') ??
      this.store.listDeadLetters(options)
    );
  }

  /**
   * Requeue a dead letter's delivery (or sink write) with fresh attempts; `null` if unknown.
   * Redriving an `outcome_unknown` run replays its target: that is the one way a run with an
   * unknown outcome runs again, and it is the caller's explicit decision.
   */
  async redrive(deadLetterId: string): Promise<string | null> {
    const id = await this.store.redrive({ deadLetterId, now: this.clock.now() });
    if (id) this.#scheduler.ring();
    return id;
  }

  /**
   * Cancel a run: a queued or waiting one at once; a running one is aborted (here directly,
   * elsewhere on its worker's next heartbeat). Returns the run as it then stands.
   */
  async cancelRun(id: string): Promise<AxEventRun | null> {
    const run = await this.store.cancel({ id, now: this.clock.now() });
    if (!run) return null;
    const reason = new AxEventError('aborted', 'The run was cancelled');
    if (await this.#scheduler.abort(run.deliveryId, reason)) return this.store.getRun(run.id);
    return run;
  }

  /** The earliest time work becomes due (for hosts that own their scheduler), or `null`. */
  nextDueAt(): Promise<number | null> {
    return this.store.nextDueAt();
  }

  /**
   * Run everything due now, `workerConcurrency` at a time, until nothing is due (work a run
   * creates, like sink writes, included). Returns how many deliveries ran.
   */
  async runDue(options: { limit?: number; signal?: AbortSignal } = {}): Promise<{ executed: number }> {
    assertEventOptions(RUN_DUE_OPTIONS, options, 'runDue options');
    const { executed } = await this.#scheduler.runDue({ limit: options.limit, signal: options.signal });
    return { executed };
  }

  /**
   * Resolve when no delivery is pending anywhere in the store (scheduled retries and
   * debounces included) and nothing runs here. Needs worker loops, or someone calling
   * `runDue()`, to make progress.
   */
  waitForIdle(options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<void> {
    return refusedCallOptions(IDLE_OPTIONS, options, 'waitForIdle') ?? this.#scheduler.waitForIdle(options);
  }

  /**
   * Stop: refuse new publishes, close sources, then with `drain` (default) finish what is
   * running and everything due now; without it, abort running deliveries (idempotent ones
   * are handed back, others end `outcome_unknown`). A store the runtime created is closed.
   */
  close(options: { drain?: boolean } = {}): Promise<void> {
    const refused = refusedCallOptions(CLOSE_OPTIONS, options, 'close');
    if (refused) return refused;
    this.#closing ??= this.#close(options.drain ?? true);
    return this.#closing;
  }

  async #close(drain: boolean): Promise<void> {
    this.#scheduler.stopClaiming();
    this.#stopWatchingStore?.();
    this.#stopWatchingStore = undefined;
    for (const source of this.#startedSources) {
      try {
        await source.close();
      } catch (error) {
        this.#report(error, { phase: 'source', sourceId: source.id });
      }
    }
    this.#startedSources.clear();
    await this.#scheduler.loopEnded();
    if (drain) {
      try {
        while ((await this.runDue()).executed > 0) {
          // keep draining what is due
        }
      } catch (error) {
        this.#report(error, { phase: 'scheduler' });
      }
    } else {
      this.#scheduler.abortAll();
    }
    await this.#scheduler.settle();
    if (this.#ownsStore) await this.store.close();
  }
}

const schedulers = new WeakMap<AxEventRuntime, DeliveryScheduler>();

function schedulerOf(runtime: AxEventRuntime, deps: DeliverySchedulerDeps): DeliveryScheduler {
  const scheduler = new DeliveryScheduler(deps);
  schedulers.set(runtime, scheduler);
  return scheduler;
}

/**
 * Internal: `runDue` for a long-lived lane that calls it again and again (the PostgreSQL
 * worker's): while there is a backlog and runs are short, one claim statement takes work for
 * several runs ahead, held here and handed back on close. A host that calls `runDue` once
 * and exits gets none of that.
 */
export async function runDueClaimingAhead(
  runtime: AxEventRuntime,
  options: { limit?: number; signal?: AbortSignal },
): Promise<DueRun> {
  const scheduler = schedulers.get(runtime);
  if (scheduler) return scheduler.runDue({ ...options, claimAhead: true });
  const { executed } = await runtime.runDue(options);
  // Nothing known about what ran: the caller looks again as before.
  return { executed, ordered: true, drained: executed === 0, held: 0 };
}

/**
 * Build a runtime from one options object:
 * `eventRuntime({ routes, sources, store, allowVolatile, clock })`. Call `start()` to run it.
 */
export function eventRuntime(config: AxEventRuntimeConfig = {}): AxEventRuntime {
  if (!isRecord(config)) assertEventOptions(RUNTIME_CONFIG, config, LABEL);
  const { routes = [], ...options } = config;
  return new AxEventRuntime(routes, options);
}
