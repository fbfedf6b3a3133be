/**
 * The event store conformance kit. Run it in your own test suite against any
 * `EventStore` implementation:
 *
 * ```ts
 * import { describe, it } from 'vitest';
 * import { runEventStoreConformance } from 'ax-mcp/testing';
 * runEventStoreConformance({ name: 'my store', describe, it, create: () => new MyStore() });
 * ```
 *
 * It takes `describe`/`it` from your runner (vitest, jest or `node:test`) and asserts with
 * plain thrown errors, so it depends on no test library.
 */

import type { EventStore } from '../events/store.js';
import { continuationCases } from './event-store-conformance/continuations.js';
import { deliveryCases } from './event-store-conformance/deliveries.js';
import type { Case } from './event-store-conformance/kit.js';
import { runCases } from './event-store-conformance/runs.js';

/** Options of {@link runEventStoreConformance}. */
export interface EventStoreConformanceOptions {
  /** Suite name. Default `EventStore conformance`. */
  name?: string;
  /** Your runner's `describe`. */
  describe: (name: string, fn: () => void) => unknown;
  /** Your runner's `it`. */
  it: (name: string, fn: () => Promise<void>) => unknown;
  /** A fresh, empty store for every test. */
  create: () => EventStore | Promise<EventStore>;
  /** Dispose of a store after its test. Default: `store.close()`. */
  dispose?: (store: EventStore) => void | Promise<void>;
}

const cases: Case[] = [...deliveryCases, ...runCases, ...continuationCases];

/** Register the conformance suite with your test runner. */
export function runEventStoreConformance(options: EventStoreConformanceOptions): void {
  options.describe(options.name ?? 'EventStore conformance', () => {
    for (const [title, body] of cases) {
      options.it(title, async () => {
        const store = await options.create();
        try {
          await body(store);
        } finally {
          await (options.dispose ? options.dispose(store) : store.close());
        }
      });
    }
  });
}
