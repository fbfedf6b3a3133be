/**
 * Options of the event runtime.
 */

import type { AxEventClock } from './clock.js';
import type { AxEventRouteDefinition } from './route.js';
import type { AxEventSource } from './source.js';
import type { AxEventStateStore } from './state.js';
import type { EventStore } from './store.js';
import type { AxEventTargetDefinition } from './target.js';

/** Where a reported error came from. */
export interface AxEventErrorReport {
  phase: 'source' | 'authorize' | 'delivery' | 'scheduler' | 'prune';
  sourceId?: string;
  routeId?: string;
  deliveryId?: string;
}

/** Options of `new AxEventRuntime(routes, options)` and `eventRuntime(options)`. */
export interface AxEventRuntimeOptions {
  /** Targets to register up front (targets given on wake routes are registered too). */
  targets?: readonly AxEventTargetDefinition[];
  /** Sources started by `start()` and closed by `close()`. */
  sources?: readonly AxEventSource[];
  /** Default: a new `AxMemoryEventStore` (volatile), closed with the runtime. A store you pass stays yours to close. */
  store?: EventStore;
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
  /** Attempts per delivery, including the first. Default 5. */
  maxAttempts?: number;
  /** First retry delay. Default 1000 ms. */
  retryBaseMs?: number;
  /** Longest retry delay. Default 60,000 ms. */
  retryMaxMs?: number;
  /** Share of a retry delay that is random. Default 0.5. */
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
  /** Errors that have no caller to throw to (sources, authorize hooks, store failures in loops). */
  onError?: (error: unknown, report: AxEventErrorReport) => void;
}

/** Options of `eventRuntime()`: the runtime options plus the routes. */
export interface AxEventRuntimeConfig extends AxEventRuntimeOptions {
  routes?: readonly AxEventRouteDefinition[];
}
