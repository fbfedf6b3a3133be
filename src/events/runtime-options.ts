/**
 * Options of the event runtime.
 */

import {
  ABORT_SIGNAL,
  type AxOptionsIssue,
  array,
  boolean,
  extend,
  func,
  instance,
  type Keys,
  number,
  object,
  oneOf,
  type Shape,
  string,
} from '../options/check.js';
import type { AxEventClock } from './clock.js';
import { optionPath, withRules } from './errors.js';
import { type AxEventRetryPolicy, DEFAULT_RETRY_POLICY } from './retry.js';
import { type AxEventRouteDefinition, ROUTE_DEFINITION } from './route.js';
import { type AxEventSource, EVENT_SOURCE } from './source.js';
import type { AxEventStateStore } from './state.js';
import type { AxEventStore } from './store.js';
import { type AxEventTargetDefinition, TARGET_DEFINITION } from './target.js';

/** Where a reported error came from. */
export interface AxEventErrorReport {
  phase: 'source' | 'authorize' | 'delivery' | 'scheduler' | 'prune';
  sourceId?: string;
  routeId?: string;
  deliveryId?: string;
}

/**
 * What a warning is about. Warnings name a configuration that type-checks and runs but can
 * never do what it says; each is given once per (source, route).
 */
export interface AxEventWarning {
  /**
   * `unauthenticated_source`: the source's events are anonymous or untrusted, and every route
   * that wants their type requires authentication, so they match nothing.
   * `withheld_type`: a route waits for a type the source, as configured, never publishes (an
   * MCP source whose resource policy selects no resource, for `mcp.resource.updated`).
   * `unknown_type`: a route's type pattern lies under a prefix the source speaks for in full
   * (`mcp.`) but matches none of its types: misspelled (`mcp.resource.update`).
   */
  code: 'unauthenticated_source' | 'withheld_type' | 'unknown_type';
  sourceId: string;
  routeId: string;
  /** The event type concerned (for `unknown_type`, the route's first such pattern). */
  type: string;
}

/** Options of `new AxEventRuntime(routes, options)` and `eventRuntime(options)`. */
export interface AxEventRuntimeOptions {
  /** Targets to register up front (targets given on wake routes are registered too). */
  targets?: readonly AxEventTargetDefinition[];
  /** Sources started by `start()` and closed by `close()`. */
  sources?: readonly AxEventSource[];
  /** Default: a new `AxMemoryEventStore` (volatile), closed with the runtime. A store you pass stays yours to close. */
  store?: AxEventStore;
  /** Per-(target, scope, instance) state; default in memory. */
  stateStore?: AxEventStateStore;
  /** Default: the system clock. Use `AxManualEventClock` in tests. */
  clock?: AxEventClock;
  /** Let sources that require durability run on a volatile store. Default `false`. */
  allowVolatile?: boolean;
  /**
   * `single` (default): this runtime is the store's only worker, so on `start()` it takes back
   * leases a crashed predecessor held. `multi-worker`: several runtimes share the store and
   * wait for leases to expire; the store must support it.
   */
  coordination?: 'single' | 'multi-worker';
  /** `workers` (default): `start()` runs worker loops. `host`: the host calls `runDue()` itself. */
  scheduling?: 'workers' | 'host';
  /** Deliveries run at once, across instances. Default 4. */
  workerConcurrency?: number;
  /**
   * How failed deliveries are retried: `maxAttempts` in all, the first included (default 5),
   * waiting `baseMs` (default 1000) doubling to at most `maxMs` (default 60,000), of which a
   * share `jitter` is random (default 0.5). A target's own `maxAttempts` wins for that target.
   *
   * @example
   * ```ts
   * eventRuntime({ routes, retry: { maxAttempts: 3, baseMs: 200 } });
   * ```
   */
  retry?: Partial<AxEventRetryPolicy>;
  /** @deprecated Use `retry.maxAttempts`. Attempts per delivery, including the first. Default 5. */
  maxAttempts?: number;
  /** @deprecated Use `retry.baseMs`. First retry delay. Default 1000 ms. */
  retryBaseMs?: number;
  /** @deprecated Use `retry.maxMs`. Longest retry delay. Default 60,000 ms. */
  retryMaxMs?: number;
  /** @deprecated Use `retry.jitter`. Share of a retry delay that is random. Default 0.5. */
  retryJitter?: number;
  /** Random source for jitter (tests pass a fixed one). Default `Math.random`. */
  random?: () => number;
  /** How long `publish` waits for room in a full store. Default 5000 ms. */
  publishTimeoutMs?: number;
  /** Lease length of a claimed delivery; heartbeats renew it every third. Default 30,000 ms. */
  leaseMs?: number;
  /** Longest sleep of an idle worker loop (it also wakes on local publishes). Default 1000 ms. */
  pollIntervalMs?: number;
  /** How often worker loops prune the store. Default 60,000 ms. */
  pruneIntervalMs?: number;
  /** Largest serialized event accepted by `publish`. Default 1 MiB. */
  maxEventBytes?: number;
  /** Identifies this runtime's leases. Default random. */
  workerId?: string;
  /**
   * Errors that have no caller to throw to (sources, authorize hooks, store failures in loops).
   * Without it, the first error of each kind and place is written to the console (`console.warn`);
   * a failed delivery is not, being on its run record and dead letter already.
   */
  onError?: (error: unknown, report: AxEventErrorReport) => void;
  /**
   * Wiring that can never work, found when sources start and routes are added (see
   * {@link AxEventWarning}; sources describe what they publish with `describe()`). Each is
   * given once per (source, route). Default `console.warn(message)`, as `AxMCPClient` does.
   */
  onWarning?: (message: string, details: AxEventWarning) => void;
}

/** Options of `eventRuntime()`: the runtime options plus the routes. */
export interface AxEventRuntimeConfig extends AxEventRuntimeOptions {
  routes?: readonly AxEventRouteDefinition[];
}

const HANDLER = func();

const ALIASES = {
  concurrency: 'workerConcurrency',
  retries: 'maxAttempts',
  attempts: 'maxAttempts',
  volatile: 'allowVolatile',
  logger: 'onWarning',
  onWarn: 'onWarning',
};

/** A store the runtime can work with (the methods it calls). */
const EVENT_STORE = instance(
  'an AxEventStore (AxMemoryEventStore, AxSQLiteEventStore, AxPostgresEventStore, …)',
  (v) => {
    const store = v as Partial<Record<keyof AxEventStore, unknown>> | null;
    return (
      typeof store === 'object' &&
      store !== null &&
      ['append', 'claim', 'transition', 'findContinuation', 'getRun', 'nextDueAt', 'close'].every(
        (name) => typeof store[name as keyof AxEventStore] === 'function',
      )
    );
  },
);

/** The deprecated flat names of the retry policy's fields, each with the field it stands for. */
const FLAT_RETRY_NAMES = {
  maxAttempts: 'maxAttempts',
  retryBaseMs: 'baseMs',
  retryMaxMs: 'maxMs',
  retryJitter: 'jitter',
} as const satisfies Readonly<Record<string, keyof AxEventRetryPolicy>>;

/** The shape of `retry`. */
const RETRY_POLICY = object(
  {
    maxAttempts: number({ integer: true, min: 1 }),
    baseMs: number({ min: 0 }),
    maxMs: number({ min: 0 }),
    jitter: number({ min: 0, max: 1 }),
  },
  {
    expected: 'a retry policy { maxAttempts?, baseMs?, maxMs?, jitter? }',
    aliases: {
      attempts: 'maxAttempts',
      retries: 'maxAttempts',
      retryBaseMs: 'baseMs',
      baseDelayMs: 'baseMs',
      retryMaxMs: 'maxMs',
      maxDelayMs: 'maxMs',
      retryJitter: 'jitter',
    },
  },
);

/**
 * A deprecated flat name and its `retry` field with different values: which one the user
 * meant cannot be known, so neither is guessed. The same value twice is accepted.
 */
function checkRetryNames(options: AxEventRuntimeOptions, path: string, issues: AxOptionsIssue[]): void {
  const retry = options.retry;
  if (retry === undefined) return;
  for (const [flat, field] of Object.entries(FLAT_RETRY_NAMES)) {
    const given = options[flat as keyof typeof FLAT_RETRY_NAMES];
    const nested = retry[field];
    if (given === undefined || nested === undefined || given === nested) continue;
    issues.push({
      path: optionPath(path, `retry.${field}`),
      expected: `one value (${flat} is the deprecated name of retry.${field}: give retry.${field} only)`,
      received: `${nested}, and ${flat}: ${given}`,
    });
  }
}

/** `shape` with the retry names rule, keeping its keys (the options that extend it need them). */
function withRetryNames(shape: Shape & { keys: Keys }): Shape & { keys: Keys } {
  return { ...withRules(shape, checkRetryNames), keys: shape.keys };
}

/** The retry policy `options` ask for: `retry`, then the deprecated flat names, then the defaults. */
export function retryPolicyOf(options: AxEventRuntimeOptions): AxEventRetryPolicy {
  const retry = options.retry ?? {};
  return {
    maxAttempts: retry.maxAttempts ?? options.maxAttempts ?? DEFAULT_RETRY_POLICY.maxAttempts,
    baseMs: retry.baseMs ?? options.retryBaseMs ?? DEFAULT_RETRY_POLICY.baseMs,
    maxMs: retry.maxMs ?? options.retryMaxMs ?? DEFAULT_RETRY_POLICY.maxMs,
    jitter: retry.jitter ?? options.retryJitter ?? DEFAULT_RETRY_POLICY.jitter,
  };
}

/** The runtime's own options (no routes), as declared. */
const RUNTIME_OPTION_KEYS = object(
  {
    targets: array(TARGET_DEFINITION),
    sources: array(EVENT_SOURCE),
    store: EVENT_STORE,
    stateStore: instance(
      'a state store { load(key), save(key, state) }',
      (v) =>
        typeof v === 'object' &&
        v !== null &&
        typeof (v as AxEventStateStore).load === 'function' &&
        typeof (v as AxEventStateStore).save === 'function',
    ),
    clock: instance(
      'a clock { now(), sleep(ms, signal) }',
      (v) =>
        typeof v === 'object' &&
        v !== null &&
        typeof (v as AxEventClock).now === 'function' &&
        typeof (v as AxEventClock).sleep === 'function',
    ),
    allowVolatile: boolean(),
    coordination: oneOf('single', 'multi-worker'),
    scheduling: oneOf('workers', 'host'),
    workerConcurrency: number({ integer: true, min: 1 }),
    retry: RETRY_POLICY,
    maxAttempts: number({ integer: true, min: 1 }),
    retryBaseMs: number({ min: 0 }),
    retryMaxMs: number({ min: 0 }),
    retryJitter: number({ min: 0, max: 1 }),
    random: func('a function () => number in [0, 1)'),
    publishTimeoutMs: number({ min: 0 }),
    leaseMs: number({ min: 10 }),
    pollIntervalMs: number({ min: 1 }),
    pruneIntervalMs: number({ min: 1 }),
    maxEventBytes: number({ integer: true, min: 1 }),
    workerId: string({ nonEmpty: true }),
    onError: HANDLER,
    onWarning: HANDLER,
  },
  {
    expected: 'runtime options { routes?, targets?, sources?, store?, … }',
    aliases: ALIASES,
  },
);

/** What `new AxEventRuntime(routes, options)` accepts; checked once in the constructor. */
export const RUNTIME_OPTIONS = withRetryNames(RUNTIME_OPTION_KEYS);

/** What `eventRuntime(config)` accepts: the runtime options and the routes. */
export const RUNTIME_CONFIG = withRetryNames(
  extend(
    RUNTIME_OPTION_KEYS,
    { routes: array(ROUTE_DEFINITION) },
    {
      expected: 'runtime options { routes?, targets?, sources?, store?, … }',
      aliases: ALIASES,
    },
  ),
);

/*
 * The options of the runtime's calls, checked on every call: they were read field by field, so
 * `waitForIdle({ timeoutMS: 5_000 })` waited for ever, `runDue({ limt: 1 })` ran everything due
 * and `close({ drian: false })` drained.
 */

/** The options of `publish` and `publishMany`. */
export const PUBLISH_OPTIONS = object({ signal: ABORT_SIGNAL }, { expected: 'options { signal? }' });

/** The options of `runDue`. */
export const RUN_DUE_OPTIONS = object(
  { limit: number({ integer: true, min: 0 }), signal: ABORT_SIGNAL },
  { expected: 'options { limit?, signal? }' },
);

/** The options of `waitForIdle`. */
export const IDLE_OPTIONS = object(
  { signal: ABORT_SIGNAL, timeoutMs: number({ min: 0 }) },
  { expected: 'options { signal?, timeoutMs? }', aliases: { timeout: 'timeoutMs' } },
);

/** The options of `listDeadLetters`. */
export const DEAD_LETTER_LISTING = object(
  { limit: number({ integer: true, min: 1 }) },
  { expected: 'options { limit? }' },
);

/** The options of `close`. */
export const CLOSE_OPTIONS = object({ drain: boolean() }, { expected: 'options { drain? }' });
