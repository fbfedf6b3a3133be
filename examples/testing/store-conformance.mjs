// @ts-check
// The event store conformance kit: the suite every store of the package passes (memory,
// SQLite, PostgreSQL), for your own EventStore. It takes describe/it from your runner —
// node:test here, vitest or jest the same way — and asserts with plain thrown errors.
// Run it with node: node:test reports each case and sets the exit code.
import { describe, it } from 'node:test';
import { AxMemoryEventStore } from 'ax-mcp';
import { runEventStoreConformance } from 'ax-mcp/testing';

// #region kit
runEventStoreConformance({
  name: 'AxMemoryEventStore', // your store here
  describe,
  it,
  create: () => new AxMemoryEventStore(), // a fresh, empty store for every case
  dispose: (store) => store.close(),
});
// #endregion kit
