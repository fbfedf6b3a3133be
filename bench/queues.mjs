// Bulk enqueue and wake-ups on the PostgreSQL event store:
//
// 1. Enqueue: events/s publishing N events with `publish` one by one and with `publishMany`
//    in batches of 100, from 1 and 8 concurrent producers (one runtime, host-scheduled, no
//    worker running). Each event has one wake delivery.
//    Beside it, when installed (devDependencies; `AX_MCP_BENCH_PEERS=0` skips them), the same
//    enqueue with graphile-worker (`addJob` one by one, `addJobs` per batch) and pg-boss
//    (`send` one by one, `insert` per batch), each in a schema of its own. They insert plain
//    jobs; ax-mcp also dedupes each event (its id in its identity scope) and routes it.
// 2. Claims per delivery: a fleet of AxPostgresEventWorker (in this process, 4 lanes each)
//    idle on LISTEN while events arrive paced (one every `PACE_MS`), counting the store's
//    claim calls.
//
//   npm run build && AX_MCP_BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test node bench/queues.mjs [events]
//
// Imports the compiled library from ../dist (or AX_MCP_DIST). Uses its own schemas (dropped
// afterwards). Prints numbers only.

import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchArgs, benchEnvInteger } from './args.mjs';

const { positionals } = benchArgs({
  usage: `Usage: npm run build && AX_MCP_BENCH_POSTGRES_URL=postgres://… node bench/queues.mjs [events]
  events                 events to enqueue per producer mode (default 10000)
  AX_MCP_BENCH_PACE_MS   milliseconds between paced events (default 10)
  AX_MCP_BENCH_PACED     paced events (default 300)
  AX_MCP_BENCH_PEERS=0   skips graphile-worker and pg-boss`,
  positionals: [{ name: 'events', type: 'integer', min: 1, default: 10_000 }],
});
const total = positionals.events;
const PACE_MS = benchEnvInteger('AX_MCP_BENCH_PACE_MS', 10);
const PACED = benchEnvInteger('AX_MCP_BENCH_PACED', 300);
const dist = resolve(process.env.AX_MCP_DIST ?? new URL('../dist', import.meta.url).pathname);
const load = (path) => import(pathToFileURL(join(dist, path)).href);
const { eventPath, eventRoute, eventRuntime, eventTarget } = await load('events/index.js');
const { AxPostgresEventStore } = await load('node/postgres/event-store.js');
const { AxPostgresEventWorker } = await load('node/postgres/event-store-worker.js');
const pg = createRequire(join(dist, 'node', 'x.js'))('pg');

const url = process.env.AX_MCP_BENCH_POSTGRES_URL ?? process.env.AX_MCP_TEST_POSTGRES_URL;
if (!url) {
  console.log('Skipped: set AX_MCP_BENCH_POSTGRES_URL (or AX_MCP_TEST_POSTGRES_URL).');
  process.exit(0);
}
const BATCH = 100;
const schemas = [];

function routes(counter = { n: 0 }) {
  const target = eventTarget('bench')
    .retrySafety('idempotent')
    .invoke(() => {
      counter.n++;
    })
    .build();
  return [eventRoute('wake').types('bench.job').instanceKey(eventPath.data('k')).wake(target).build()];
}

const event = (run, i) => ({
  event: { id: `${run}-${i}`, source: 'bench://queues', type: 'bench.job', data: { k: `k${i % 64}`, i } },
  identity: { tenantId: 't1', userId: `u${i % 8}` },
  trust: 'authenticated',
});

async function openStore(options = {}) {
  const schema = `ax_bench_${randomBytes(5).toString('hex')}`;
  schemas.push(schema);
  return AxPostgresEventStore.open({ connectionString: url, schema, poolSize: 10, ...options });
}

async function enqueue(mode, producers) {
  const store = await openStore();
  const runtime = eventRuntime({ routes: routes(), store, scheduling: 'host', coordination: 'multi-worker' });
  const run = `${mode}${producers}`;
  // Warm up: prepare the statements on the pool's connections.
  await runtime.publishMany(Array.from({ length: 20 }, (_, i) => event(`warm-${run}`, i)));
  for (let i = 0; i < 20; i++) await runtime.publish(event(`warm1-${run}`, i));
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: producers }, async () => {
      if (mode === 'publish') {
        for (let i = next++; i < total; i = next++) await runtime.publish(event(run, i));
      } else {
        for (let i = next; i < total; i = next) {
          next += BATCH;
          const batch = [];
          for (let j = i; j < Math.min(i + BATCH, total); j++) batch.push(event(run, j));
          await runtime.publishMany(batch);
        }
      }
    }),
  );
  const ms = performance.now() - t0;
  const pending = await store.countPending();
  if (pending !== total + 40) throw new Error(`${run}: ${pending} pending, expected ${total + 40}`);
  await runtime.close({ drain: false });
  await store.close();
  return ms;
}

/** An enqueue client of a peer queue, or `null` when the package is not installed. */
async function peer(name) {
  try {
    if (name === 'graphile-worker') {
      const { makeWorkerUtils } = await import('graphile-worker');
      const schema = `ax_bench_gw_${randomBytes(4).toString('hex')}`;
      schemas.push(schema);
      const utils = await makeWorkerUtils({ connectionString: url, schema });
      await utils.migrate();
      return {
        one: (i) => utils.addJob('bench', { k: `k${i % 64}`, i }),
        many: (is) =>
          utils.addJobs(is.map((i) => ({ identifier: 'bench', payload: { k: `k${i % 64}`, i } }))),
        close: () => utils.release(),
      };
    }
    const { default: PgBoss } = await import('pg-boss');
    const schema = `ax_bench_pb_${randomBytes(4).toString('hex')}`;
    schemas.push(schema);
    const boss = new PgBoss({ connectionString: url, schema, max: 10, supervise: false, schedule: false });
    boss.on('error', () => undefined);
    await boss.start();
    await boss.createQueue('bench');
    return {
      one: (i) => boss.send('bench', { k: `k${i % 64}`, i }),
      many: (is) => boss.insert(is.map((i) => ({ name: 'bench', data: { k: `k${i % 64}`, i } }))),
      close: () => boss.stop({ graceful: false, wait: true }),
    };
  } catch (error) {
    if (error?.code === 'ERR_MODULE_NOT_FOUND') return null;
    throw error;
  }
}

async function enqueuePeer(client, mode, producers) {
  for (let i = 0; i < 20; i++) await client.one(i);
  await client.many(Array.from({ length: 20 }, (_, i) => i));
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: producers }, async () => {
      if (mode === 'one') {
        for (let i = next++; i < total; i = next++) await client.one(i);
      } else {
        for (let i = next; i < total; i = next) {
          next += BATCH;
          await client.many(Array.from({ length: Math.min(BATCH, total - i) }, (_, j) => i + j));
        }
      }
    }),
  );
  return performance.now() - t0;
}

async function claimsPerDelivery(workers, lanes) {
  const publisherStore = await openStore();
  const schema = publisherStore.schema;
  const counter = { n: 0 };
  let claims = 0;
  const fleet = [];
  for (let w = 0; w < workers; w++) {
    const store = await AxPostgresEventStore.open({ connectionString: url, schema, poolSize: lanes + 2 });
    const claim = store.claim.bind(store);
    store.claim = (input) => {
      claims++;
      return claim(input);
    };
    const worker = new AxPostgresEventWorker({ store, routes: routes(counter), workerConcurrency: lanes });
    await worker.start();
    fleet.push({ store, worker });
  }
  const publisher = eventRuntime({ routes: routes(), store: publisherStore, scheduling: 'host' });
  await new Promise((r) => setTimeout(r, 300));
  claims = 0;
  for (let i = 0; i < PACED; i++) {
    await publisher.publish(event(`paced${workers}x${lanes}`, i));
    await new Promise((r) => setTimeout(r, PACE_MS));
  }
  const deadline = Date.now() + 30_000;
  while (counter.n < PACED && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 200));
  const seen = claims;
  for (const { store, worker } of fleet) {
    await worker.close();
    await store.close();
  }
  await publisher.close({ drain: false });
  await publisherStore.close();
  if (counter.n !== PACED) throw new Error(`paced: ${counter.n} of ${PACED} delivered`);
  return seen / PACED;
}

try {
  const rows = [];
  for (const producers of [1, 8]) {
    for (const mode of ['publish', 'publishMany']) {
      const ms = await enqueue(mode, producers);
      rows.push({
        enqueue: mode === 'publish' ? 'publish (one by one)' : `publishMany (batches of ${BATCH})`,
        producers,
        events: total,
        seconds: (ms / 1000).toFixed(2),
        'events/s': Math.round((total / ms) * 1000),
      });
    }
  }
  if (process.env.AX_MCP_BENCH_PEERS !== '0') {
    for (const [name, one, many] of [
      ['graphile-worker', 'addJob (one by one)', `addJobs (batches of ${BATCH})`],
      ['pg-boss', 'send (one by one)', `insert (batches of ${BATCH})`],
    ]) {
      for (const producers of [1, 8]) {
        for (const mode of ['one', 'many']) {
          const client = await peer(name);
          if (!client) break;
          const ms = await enqueuePeer(client, mode, producers);
          await client.close();
          rows.push({
            enqueue: `${name} ${mode === 'one' ? one : many}`,
            producers,
            events: total,
            seconds: (ms / 1000).toFixed(2),
            'events/s': Math.round((total / ms) * 1000),
          });
        }
      }
    }
  }
  console.log(`bulk enqueue on PostgreSQL: ${total} events (ax-mcp: one wake delivery each)`);
  console.table(rows);
  const wakes = [];
  for (const [workers, lanes] of [
    [1, 4],
    [2, 4],
  ]) {
    wakes.push({
      workers,
      'lanes each': lanes,
      deliveries: PACED,
      'claims per delivery': (await claimsPerDelivery(workers, lanes)).toFixed(2),
    });
  }
  console.log(`claims per delivery, one event every ${PACE_MS} ms`);
  console.table(wakes);
} finally {
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
}
