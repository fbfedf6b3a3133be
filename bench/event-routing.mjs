// Event routing, one runtime and one store per process (bench/run.mjs starts it):
//
//   node --expose-gc bench/event-routing.mjs --runtime ax-mcp|ax --store memory|sqlite|postgres [--n 100000]
//
// The same events for both runtimes: `n` MCP `resources/updated` events (64 resources, 8 users,
// one tenant, authenticated), published one by one into a runtime whose one route observes
// `mcp.resource.updated` and whose second route (another type) never matches; the clock stops
// when every event was observed (runtime idle). Prints one JSON line: events/s and CPU per event.
// PostgreSQL runs only with AX_MCP_BENCH_POSTGRES_URL (or AX_MCP_TEST_POSTGRES_URL) set: a database
// the bench may write to; it uses a schema of its own and drops it afterwards.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchArgs } from './args.mjs';

const { values } = benchArgs({
  usage: `Usage: node --expose-gc bench/event-routing.mjs [options]   (bench/run.mjs starts it)
  --runtime ax-mcp|ax             the runtime to measure (default ax-mcp)
  --store memory|sqlite|postgres  its store (default memory; postgres needs AX_MCP_BENCH_POSTGRES_URL)
  --n N                           events (default 100000)`,
  options: {
    runtime: { type: 'string', choices: ['ax-mcp', 'ax'], default: 'ax-mcp' },
    store: { type: 'string', choices: ['memory', 'sqlite', 'postgres'], default: 'memory' },
    n: { type: 'integer', min: 1, default: 100_000 },
  },
});
const n = values.n;
/** The colleagues' variables for a PostgreSQL the benches and tests may write to. */
const POSTGRES_URL = process.env.AX_MCP_BENCH_POSTGRES_URL ?? process.env.AX_MCP_TEST_POSTGRES_URL;
const dist = resolve(process.env.AX_MCP_DIST ?? new URL('../dist', import.meta.url).pathname);
const loadDist = (path) => import(pathToFileURL(join(dist, path)).href);

const event = (i) => ({
  event: {
    specversion: '1.0',
    id: `bench-${i}`,
    source: 'mcp://bench',
    type: 'mcp.resource.updated',
    subject: `bench://r/${i % 64}`,
    data: { uri: `bench://r/${i % 64}`, seq: i },
  },
  identity: { tenantId: 't1', userId: `u${i % 8}` },
  trust: 'authenticated',
});

async function axMcpRuntime(store, counter) {
  const { AxMemoryEventStore, eventRoute, eventRuntime } = await loadDist('events/index.js');
  let closeStore = async () => {};
  let eventStore;
  if (store === 'memory') {
    eventStore = new AxMemoryEventStore({ maxPendingDeliveries: n * 2, maxRetainedRuns: n * 2 });
  } else if (store === 'sqlite') {
    const { AxSQLiteEventStore } = await loadDist('node/sqlite/event-store.js');
    const dir = mkdtempSync(join(tmpdir(), 'ax-bench-routing-'));
    eventStore = await AxSQLiteEventStore.open({ filename: join(dir, 'events.db') });
    closeStore = async () => {
      await eventStore.close();
      rmSync(dir, { recursive: true, force: true });
    };
  } else if (store === 'postgres') {
    const url = POSTGRES_URL;
    if (!url) throw new Error('set AX_MCP_BENCH_POSTGRES_URL to bench PostgreSQL');
    const { AxPostgresEventStore } = await loadDist('node/postgres/event-store.js');
    const schema = `ax_bench_routing_${process.pid}`;
    eventStore = await AxPostgresEventStore.open({ connectionString: url, schema });
    closeStore = async () => {
      await eventStore.close();
      const { default: pg } = await import('pg');
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    };
  } else throw new Error(`unknown store ${store}`);
  const runtime = eventRuntime({
    routes: [
      eventRoute('updates')
        .types('mcp.resource.updated')
        .observe(() => {
          counter.n++;
        })
        .build(),
      eventRoute('other')
        .types('mcp.tools.changed')
        .observe(() => {})
        .build(),
    ],
    store: eventStore,
    workerConcurrency: 8,
    pollIntervalMs: 50,
  });
  await runtime.start();
  return {
    runtime,
    close: async () => {
      await runtime.close();
      await closeStore();
    },
  };
}

async function axRuntime(store, counter) {
  if (store !== 'memory') throw new Error('Ax ships an in-memory store only');
  const { AxInMemoryEventStore, eventRoute, eventRuntime } = await import('@ax-llm/ax');
  const runtime = eventRuntime({
    routes: [
      eventRoute('updates')
        .types('mcp.resource.updated')
        .observe(() => {
          counter.n++;
        })
        .build(),
      eventRoute('other')
        .types('mcp.tools.changed')
        .observe(() => {})
        .build(),
    ],
    store: new AxInMemoryEventStore({ maxPendingDeliveries: n * 2, maxPendingBytes: 2 ** 31 }),
    allowVolatile: true,
    workerConcurrency: 8,
  });
  await runtime.start();
  return { runtime, close: () => runtime.close() };
}

let output;
try {
  const counter = { n: 0 };
  const { runtime, close } = await (values.runtime === 'ax' ? axRuntime : axMcpRuntime)(
    values.store,
    counter,
  );
  // Warm-up: a few events through the same path.
  for (let i = 0; i < 500; i++) await runtime.publish(event(-1 - i));
  await runtime.waitForIdle();
  counter.n = 0;
  globalThis.gc?.();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await runtime.publish(event(i));
  await runtime.waitForIdle();
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const cpuUs = cpu.user + cpu.system;
  await close();
  output = {
    ops: counter.n,
    wallMs,
    cpuUs,
    perSec: (counter.n / wallMs) * 1000,
    cpuPerOpUs: cpuUs / counter.n,
  };
  if (counter.n !== n) output.error = `${counter.n} of ${n} events observed`;
} catch (error) {
  output = {
    error: String(error?.stack ?? error)
      .split('\n')
      .slice(0, 3)
      .join(' | '),
  };
}
process.stdout.write(`${JSON.stringify(output)}\n`);
process.exit(0);
