/**
 * The event store conformance kit. Run it in your own test suite against any
 * `AxEventStore` implementation:
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

import { assertEventOptions } from '../events/errors.js';
import type { AxEventStore } from '../events/store.js';
import { func, object, required, string } from '../options/check.js';
import { batchCases } from './event-store-conformance/batches.js';
import { continuationCases } from './event-store-conformance/continuations.js';
import { deliveryCases } from './event-store-conformance/deliveries.js';
import type { Case } from './event-store-conformance/kit.js';
import { listingCases } from './event-store-conformance/listing.js';
import { runCases } from './event-store-conformance/runs.js';

/** Options of {@link runEventStoreConformance}. */
export interface AxEventStoreConformanceOptions {
  /** Suite name. Default `AxEventStore conformance`. */
  name?: string;
  /** Your runner's `describe`. */
  describe: (name: string, fn: () => void) => unknown;
  /** Your runner's `it`. */
  it: (name: string, fn: () => Promise<void>) => unknown;
  /** A fresh, empty store for every test. */
  create: () => AxEventStore | Promise<AxEventStore>;
  /** Dispose of a store after its test. Default: `store.close()`. */
  dispose?: (store: AxEventStore) => void | Promise<void>;
}

/** A misspelt `dispose` would close each store the kit's way, not yours: refused instead. */
const CONFORMANCE_OPTIONS = object(
  {
    name: string({ nonEmpty: true }),
    describe: required(func("your runner's describe (name, fn)")),
    it: required(func("your runner's it (name, fn)")),
    create: required(func('a function returning a fresh, empty store')),
    dispose: func('a function (store) disposing of a store'),
  },
  { expected: 'options { describe, it, create, dispose?, name? }' },
);

const cases: Case[] = [...deliveryCases, ...batchCases, ...runCases, ...continuationCases, ...listingCases];

/** @deprecated Renamed {@link AxEventStoreConformanceOptions}: public names start with `Ax`. */
export type EventStoreConformanceOptions = AxEventStoreConformanceOptions;

/** Register the conformance suite with your test runner. */
export function runEventStoreConformance(options: AxEventStoreConformanceOptions): void {
  assertEventOptions(CONFORMANCE_OPTIONS, options, 'runEventStoreConformance options');
  options.describe(options.name ?? 'AxEventStore conformance', () => {
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
