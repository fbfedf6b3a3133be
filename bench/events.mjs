// Event runtime throughput: events/s routed and delivered through the memory and SQLite stores.
//
//   npm run build && node bench/events.mjs [events]
//
// Imports the compiled library from ../dist (or from AX_MCP_DIST, a directory with the same
// layout, to bench a partial build). Prints numbers only; nothing here asserts timings.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchArgs } from './args.mjs';

const { positionals } = benchArgs({
  usage: `Usage: npm run build && node bench/events.mjs [events]
  events   events per run on the memory store (default 20000; SQLite runs at most 5000)`,
  positionals: [{ name: 'events', type: 'integer', min: 1, default: 20_000 }],
});
const total = positionals.events;
const dist = resolve(process.env.AX_MCP_DIST ?? new URL('../dist', import.meta.url).pathname);
const load = (path) => import(pathToFileURL(join(dist, path)).href);
const { AxMemoryEventStore, eventPath, eventRoute, eventRuntime, eventTarget } =
  await load('events/index.js');
const { AxSQLiteEventStore } = await load('node/sqlite/event-store.js');

const instances = 64;

function routes(counter) {
  const target = eventTarget('bench')
    .retrySafety('idempotent')
    .invoke(() => {
      counter.n++;
    })
    .build();
  return [
    eventRoute('wake').types('bench.job').instanceKey(eventPath.data('k')).wake(target).build(),
    eventRoute('ignored')
      .types('other.*')
      .observe(() => {})
      .build(),
  ];
}

const event = (run, i) => ({
  event: {
    id: `${run}-${i}`,
    source: 'bench://events',
    type: 'bench.job',
    data: { k: `k${i % instances}`, i },
  },
  identity: { tenantId: 't1', userId: `u${i % 8}` },
  trust: 'authenticated',
});

const rate = (n, ms) => `${Math.round((n / ms) * 1000).toLocaleString('en-US')}/s`;

async function hostDriven(name, store, n) {
  const counter = { n: 0 };
  const runtime = eventRuntime({ routes: routes(counter), store, scheduling: 'host', workerConcurrency: 8 });
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await runtime.publish(event(`${name}-host`, i));
  const t1 = performance.now();
  await runtime.runDue();
  const t2 = performance.now();
  if (counter.n !== n) throw new Error(`${name}: ${counter.n} of ${n} delivered`);
  await runtime.close({ drain: false });
  return { publish: rate(n, t1 - t0), deliver: rate(n, t2 - t1), endToEnd: rate(n, t2 - t0) };
}

async function workerLoops(name, store, n) {
  const counter = { n: 0 };
  const runtime = eventRuntime({ routes: routes(counter), store, workerConcurrency: 8, pollIntervalMs: 50 });
  await runtime.start();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await runtime.publish(event(`${name}-loop`, i));
  await runtime.waitForIdle();
  const t1 = performance.now();
  if (counter.n !== n) throw new Error(`${name}: ${counter.n} of ${n} delivered`);
  await runtime.close();
  return { endToEnd: rate(n, t1 - t0) };
}

const dir = mkdtempSync(join(tmpdir(), 'ax-bench-events-'));
try {
  const rows = [];
  const memory = () =>
    new AxMemoryEventStore({ maxPendingDeliveries: total * 2, maxRetainedRuns: total * 2 });
  const sqlite = (tag) => AxSQLiteEventStore.open({ filename: join(dir, `${tag}.db`) });
  rows.push({ store: 'memory', mode: 'host runDue()', ...(await hostDriven('memory', memory(), total)) });
  rows.push({ store: 'memory', mode: 'worker loops', ...(await workerLoops('memory', memory(), total)) });
  const sqliteTotal = Math.min(total, 5000);
  const s1 = await sqlite('host');
  rows.push({
    store: 'sqlite (WAL file)',
    mode: 'host runDue()',
    ...(await hostDriven('sqlite', s1, sqliteTotal)),
  });
  await s1.close();
  const s2 = await sqlite('loop');
  rows.push({
    store: 'sqlite (WAL file)',
    mode: 'worker loops',
    ...(await workerLoops('sqlite', s2, sqliteTotal)),
  });
  await s2.close();
  console.log(
    `ax-mcp event runtime: ${total} events (memory), ${sqliteTotal} (SQLite), 1 wake route, ${instances} instances`,
  );
  console.table(rows);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
