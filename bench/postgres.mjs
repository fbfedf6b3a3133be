// Event runtime delivery throughput with 1, 2 and 4 worker processes sharing one store:
// PostgreSQL (AxPostgresEventWorker, LISTEN/NOTIFY) beside SQLite (one WAL file, the
// runtime's own worker loops) and, for scale, the in-process memory store.
//
//   npm run build && AX_MCP_BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test node bench/postgres.mjs [events]
//
// Events are published first (not timed); the clock runs from "go" to the last delivery.
// The target does nothing, so the figures are the store's and the runtime's overhead per
// delivery. PostgreSQL commits durably (each commit waits for its WAL flush); SQLite runs
// WAL with synchronous=NORMAL (no flush per commit). A last PostgreSQL set without the
// flush wait (synchronous_commit=off, not durable) shows what that difference costs. Imports the compiled library from ../dist (or AX_MCP_DIST, a directory with the
// same layout). Uses its own schema (dropped afterwards). Prints numbers only.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchArgs, benchEnvInteger } from './args.mjs';

// `--child KIND WHERE SCHEMA` is a worker process this script starts; anything else is the user's.
const childArgs = process.argv[2] === '--child' ? process.argv.slice(3) : undefined;
const { positionals } = childArgs
  ? { positionals: {} }
  : benchArgs({
      usage: `Usage: npm run build && AX_MCP_BENCH_POSTGRES_URL=postgres://… node bench/postgres.mjs [events]
  events               events per run (default 5000)
  AX_MCP_BENCH_LANES   lanes per worker process (default 8)`,
      positionals: [{ name: 'events', type: 'integer', min: 1, default: 5000 }],
    });
const dist = resolve(process.env.AX_MCP_DIST ?? new URL('../dist', import.meta.url).pathname);
const load = (path) => import(pathToFileURL(join(dist, path)).href);
const { AxMemoryEventStore, eventPath, eventRoute, eventRuntime, eventTarget } =
  await load('events/index.js');
const { AxSQLiteEventStore } = await load('node/sqlite/event-store.js');
const { AxPostgresEventStore } = await load('node/postgres/event-store.js');
const { AxPostgresEventWorker } = await load('node/postgres/event-store-worker.js');

const url = process.env.AX_MCP_BENCH_POSTGRES_URL ?? process.env.AX_MCP_TEST_POSTGRES_URL;
const instances = 64;
const lanes = benchEnvInteger('AX_MCP_BENCH_LANES', 8);

function routes(counter) {
  const target = eventTarget('bench')
    .retrySafety('idempotent')
    .invoke(() => {
      counter.n++;
    })
    .build();
  return [eventRoute('wake').types('bench.job').instanceKey(eventPath.data('k')).wake(target).build()];
}

const event = (run, i) => ({
  event: {
    id: `${run}-${i}`,
    source: 'bench://postgres',
    type: 'bench.job',
    data: { k: `k${i % instances}`, i },
  },
  identity: { tenantId: 't1', userId: `u${i % 8}` },
  trust: 'authenticated',
});

// ---- a worker process -------------------------------------------------------------------

async function child([kind, where, schema]) {
  const counter = { n: 0 };
  let store;
  let stop;
  if (kind === 'postgres') {
    store = await AxPostgresEventStore.open({ connectionString: where, schema, poolSize: lanes + 2 });
    const worker = new AxPostgresEventWorker({ store, routes: routes(counter), workerConcurrency: lanes });
    await waitForGo();
    await worker.start();
    stop = () => worker.close();
  } else {
    store = await AxSQLiteEventStore.open({ filename: where });
    const runtime = eventRuntime({
      routes: routes(counter),
      store,
      coordination: 'multi-worker',
      workerConcurrency: lanes,
      pollIntervalMs: 10,
    });
    await waitForGo();
    await runtime.start();
    stop = () => runtime.close({ drain: false });
  }
  await new Promise((r) => process.once('SIGTERM', r));
  await stop();
  await store.close();
  process.stdout.write(`delivered ${counter.n}\n`);
}

function waitForGo() {
  process.stdout.write('ready\n');
  return new Promise((resolve) => {
    const lines = createInterface({ input: process.stdin });
    lines.on('line', (line) => {
      if (line === 'go') {
        lines.close();
        process.stdin.destroy();
        resolve();
      }
    });
  });
}

// ---- the parent -------------------------------------------------------------------------

const rate = (n, ms) => Math.round((n / ms) * 1000);

async function publishAll(store, run, n) {
  const runtime = eventRuntime({ routes: routes({ n: 0 }), store, scheduling: 'host' });
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let i = next++; i < n; i = next++) await runtime.publish(event(run, i));
    }),
  );
  await runtime.close({ drain: false });
}

async function fleet(kind, where, schema, store, workers, n) {
  const procs = Array.from({ length: workers }, () => {
    const proc = spawn(
      process.execPath,
      [fileURLToPath(import.meta.url), '--child', kind, where, schema ?? ''],
      {
        stdio: ['pipe', 'pipe', 'inherit'],
        env: process.env,
      },
    );
    proc.lines = createInterface({ input: proc.stdout });
    proc.said = [];
    proc.lines.on('line', (line) => proc.said.push(line));
    return proc;
  });
  const until = async (check) => {
    while (!check()) await new Promise((r) => setTimeout(r, 5));
  };
  await until(() => procs.every((p) => p.said.includes('ready')));
  const t0 = performance.now();
  for (const p of procs) p.stdin.write('go\n');
  while ((await store.countPending()) > 0) await new Promise((r) => setTimeout(r, 5));
  const ms = performance.now() - t0;
  for (const p of procs) p.kill('SIGTERM');
  await Promise.all(procs.map((p) => new Promise((r) => (p.exitCode !== null ? r() : p.on('exit', r)))));
  const delivered = procs.reduce((sum, p) => {
    const line = p.said.find((l) => l.startsWith('delivered '));
    return sum + Number(line?.slice('delivered '.length) ?? 0);
  }, 0);
  if (delivered !== n) throw new Error(`${kind} × ${workers}: ${delivered} of ${n} delivered`);
  return ms;
}

async function main() {
  const total = positionals.events;
  const rows = [];
  const row = (store, workers, n, ms) =>
    rows.push({
      store,
      workers,
      deliveries: n,
      seconds: (ms / 1000).toFixed(2),
      'deliveries/s': rate(n, ms),
    });

  // Memory: one process, the runtime's worker loop.
  {
    const counter = { n: 0 };
    const store = new AxMemoryEventStore({ maxPendingDeliveries: total * 2, maxRetainedRuns: total * 2 });
    await publishAll(store, 'memory', total);
    const runtime = eventRuntime({
      routes: routes(counter),
      store,
      workerConcurrency: lanes,
      pollIntervalMs: 10,
    });
    const t0 = performance.now();
    await runtime.start();
    await runtime.waitForIdle();
    row('memory (in-process)', 1, total, performance.now() - t0);
    await runtime.close();
  }

  const dir = mkdtempSync(join(tmpdir(), 'ax-bench-pg-'));
  try {
    for (const workers of [1, 2, 4]) {
      const filename = join(dir, `w${workers}.db`);
      const store = await AxSQLiteEventStore.open({ filename });
      await publishAll(store, `sqlite${workers}`, total);
      row('sqlite (WAL file)', workers, total, await fleet('sqlite', filename, null, store, workers, total));
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  if (!url) {
    console.log('PostgreSQL skipped: set AX_MCP_BENCH_POSTGRES_URL (or AX_MCP_TEST_POSTGRES_URL).');
  } else {
    const schema = `ax_bench_${randomBytes(5).toString('hex')}`;
    const store = await AxPostgresEventStore.open({ connectionString: url, schema, poolSize: 16 });
    // For comparison only: the same fleet with commits that do not wait for the WAL flush
    // (like SQLite's synchronous=NORMAL). Not durable; not what the store promises.
    const relaxed = new URL(url);
    relaxed.searchParams.set('options', '-c synchronous_commit=off');
    try {
      for (const workers of [1, 2, 4]) {
        await publishAll(store, `pg${workers}`, total);
        row('postgresql', workers, total, await fleet('postgres', url, schema, store, workers, total));
      }
      for (const workers of [1, 2, 4]) {
        await publishAll(store, `pg-async${workers}`, total);
        const ms = await fleet('postgres', relaxed.href, schema, store, workers, total);
        row('postgresql, synchronous_commit=off (not durable)', workers, total, ms);
      }
    } finally {
      const pg = createRequire(join(dist, 'node', 'x.js'))('pg');
      await store.close();
      const admin = new pg.Pool({ connectionString: url, max: 1 });
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  }
  console.log(
    `ax-mcp event delivery: ${total} events per run, ${instances} instances, ${lanes} lanes per worker process, no-op target`,
  );
  console.table(rows);
}

if (childArgs) await child(childArgs);
else await main();
