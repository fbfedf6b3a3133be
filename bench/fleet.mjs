// The PostgreSQL worker fleet beside the PostgreSQL job queues, on one database in one run:
// ax-mcp (AxPostgresEventWorker, one wake route, an idempotent target), graphile-worker
// (`run()`, concurrency = lanes), graphile-worker with batch jobs (array payloads; the task
// returns one promise per entry), pg-boss batched (`work()` with `batchSize`) and pg-boss as a
// fetch loop (`fetch()` / `complete()` per job).
//
// W worker processes × L lanes (default 4 × 4), each a child of this script. Every handler
// writes one row, the same statement for every system: INSERT INTO <schema>.effects(id)
// VALUES ($1). A second effect of one job violates the primary key; the handler counts it
// (and does not fail the job), so `count(*) = N` with no violation proves exactly-once effect.
// Each system runs each scenario in a fresh schema, dropped afterwards.
//
// 1. drain: N jobs enqueued (in bulk, not timed) before "go"; deliveries/s from go to the last
//    effect. The PostgreSQL CPU (utime + stime of the postgres processes serving this run:
//    its own connections and the server's background processes, from /proc) and the workers'
//    CPU (process.cpuUsage of the children) over that window give CPU per delivery.
// 2. the same, in order within 50 keys (ax-mcp: strict ordering per instance key;
//    graphile-worker: a named queue per key; pg-boss: not run, see below). The order of the
//    effects (a sequence column) is checked per key.
// 3. live: a producer (P calls in flight, one job per call) publishing N jobs at full speed
//    while the fleet runs; jobs/s from the first publish to the last effect.
// 4. paced: one job every 5 ms (200/s), publish → handler start latency p50 / p99 (the
//    payload carries `performance.timeOrigin + performance.now()` taken at publish).
// 5. enqueue without workers: one job per call and in bulk (batches of 100), from 1 and 8
//    concurrent producers (ax-mcp: publish / publishMany on a host-scheduled runtime).
//
// Rounds are interleaved (round r rotates the system order); the table gives the median of R
// rounds and the min–max. Prints numbers only; nothing asserts a timing.
//
//   npm run build && AX_MCP_BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test node bench/fleet.mjs \
//     [--workers 4] [--lanes 4] [--events 5000] [--rounds 3] [--batch 100] [--producers 4] \
//     [--paced 1000] [--systems ax,gw,gwb,pbb,pbf] [--scenarios drain,ordered,live,paced,enqueue] [--quick]
//     [--prof DIR] [--queries]
//
// Imports the compiled library from ../dist (or AX_MCP_DIST); graphile-worker and pg-boss are
// devDependencies. Progress goes to stderr, the table to stdout.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchArgs } from './args.mjs';

// ---- options --------------------------------------------------------------------------------

const SYSTEM_NAMES = ['ax', 'gw', 'gwb', 'pbb', 'pbf'];
const SCENARIO_NAMES = ['drain', 'ordered', 'live', 'paced', 'enqueue'];
const { values: opt } = benchArgs({
  usage: `Usage: npm run build && AX_MCP_BENCH_POSTGRES_URL=postgres://… node bench/fleet.mjs [options]
  --systems LIST     comma-separated, of ${SYSTEM_NAMES.join(', ')} (default: all)
                     ax ax-mcp, gw graphile-worker, gwb graphile-worker batched,
                     pbb pg-boss batched, pbf pg-boss fetch loop
  --scenarios LIST   comma-separated, of ${SCENARIO_NAMES.join(', ')} (default: all)
  --workers N        worker processes (default 4; 2 with --quick)
  --lanes N          lanes per worker process (default 4; 2 with --quick)
  --events N         jobs per drain and live run (default 5000; 400 with --quick)
  --paced N          jobs of the paced run (default 1000; 100 with --quick)
  --rounds N         interleaved rounds, medians shown (default 3; 1 with --quick)
  --batch N          jobs per claim of the batched modes (default 100)
  --producers N      calls in flight of the live producer (default 4)
  --quick            a short run of everything
  --prof DIR         a CPU profile of every worker process, written to DIR
  --queries          count the statements each worker sends`,
  options: {
    systems: { type: 'list', choices: SYSTEM_NAMES, default: SYSTEM_NAMES.join(',') },
    scenarios: { type: 'list', choices: SCENARIO_NAMES, default: SCENARIO_NAMES.join(',') },
    workers: { type: 'integer', min: 1, default: (given) => (given.quick ? 2 : 4) },
    lanes: { type: 'integer', min: 1, default: (given) => (given.quick ? 2 : 4) },
    events: { type: 'integer', min: 1, default: (given) => (given.quick ? 400 : 5000) },
    paced: { type: 'integer', min: 1, default: (given) => (given.quick ? 100 : 1000) },
    rounds: { type: 'integer', min: 1, default: (given) => (given.quick ? 1 : 3) },
    batch: { type: 'integer', min: 1, default: 100 },
    producers: { type: 'integer', min: 1, default: 4 },
    quick: { type: 'boolean' },
    prof: { type: 'string' },
    queries: { type: 'boolean' },
    // A worker process this script starts (never the user): --role worker --system --schema --scenario.
    role: { type: 'string', choices: ['worker'] },
    system: { type: 'string', choices: SYSTEM_NAMES },
    schema: { type: 'string' },
    scenario: { type: 'string', choices: SCENARIO_NAMES },
  },
});
const WORKERS = opt.workers;
const LANES = opt.lanes;
const EVENTS = opt.events;
const ROUNDS = opt.rounds;
const BATCH = opt.batch;
const PRODUCERS = opt.producers;
const PACED = opt.paced;

const dist = resolve(process.env.AX_MCP_DIST ?? new URL('../dist', import.meta.url).pathname);
const load = (path) => import(pathToFileURL(join(dist, path)).href);
const { eventPath, eventRoute, eventRuntime, eventTarget } = await load('events/index.js');
const { AxPostgresEventStore } = await load('node/postgres/event-store.js');
const { AxPostgresEventWorker } = await load('node/postgres/event-store-worker.js');
const pg = createRequire(join(dist, 'node', 'x.js'))('pg');

const PACE_MS = 5;
const KEYS = 50;
const BULK = 100;
const POLL_S = 0.5; // pg-boss's shortest polling interval; the fetch loop sleeps as long when empty
const STALL_MS = 60_000;

const url = process.env.AX_MCP_BENCH_POSTGRES_URL ?? process.env.AX_MCP_TEST_POSTGRES_URL;
if (!url) {
  console.log('Skipped: set AX_MCP_BENCH_POSTGRES_URL (or AX_MCP_TEST_POSTGRES_URL).');
  process.exit(0);
}
/** The same database, with an application name that tells this run's connections apart. */
function named(name) {
  const u = new URL(url);
  u.searchParams.set('application_name', name);
  return u.href;
}
const WORKER_APP = process.env.AX_MCP_FLEET_APP ?? `axfleet-w-${process.pid}`;

const INSERT = (schema) => ({ name: 'effect', text: `INSERT INTO "${schema}".effects(id) VALUES ($1)` });
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- ax-mcp routes (publisher and workers) --------------------------------------------------

function axRoutes(ordered, handle = () => undefined) {
  const target = eventTarget('bench')
    .retrySafety('idempotent')
    .invoke((_input, context) => handle(context.event.data))
    .build();
  const route = eventRoute('wake').types('bench.job').instanceKey(eventPath.data('k'));
  if (!ordered) route.ordering('relaxed');
  return [route.wake(target).build()];
}
const axEvent = (item) => ({
  event: { id: `e${item.id}`, source: 'bench://fleet', type: 'bench.job', data: item },
  identity: { tenantId: 't1', userId: 'u1' },
  trust: 'authenticated',
});

// ---- a worker process -----------------------------------------------------------------------

async function worker() {
  const { system, schema, scenario } = opt;
  const lanes = opt.lanes;
  const batch = opt.batch;
  const ordered = scenario === 'ordered';
  const wurl = named(WORKER_APP);
  const effects = new pg.Pool({ connectionString: wurl, max: lanes });
  const insert = INSERT(schema);
  const state = { count: 0, dup: 0, lastAt: 0, lat: [], cpu0: null };
  // --queries: count the statements this worker sends, by their first words, printed at stop.
  const statements = new Map();
  if (opt.queries) {
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (config, ...rest) {
      if (state.cpu0 !== null) {
        const text = typeof config === 'string' ? config : (config?.text ?? '');
        const key = text.replace(/\s+/g, ' ').trim().slice(0, 60);
        statements.set(key, (statements.get(key) ?? 0) + 1);
      }
      return query.call(this, config, ...rest);
    };
  }
  async function handle(item) {
    if (item.t !== undefined) state.lat.push(now() - item.t);
    try {
      await effects.query({ ...insert, values: [String(item.id)] });
    } catch (error) {
      if (error?.code !== '23505') throw error;
      state.dup++;
    }
    state.count++;
    state.lastAt = now();
  }
  const cpuMs = () => {
    const u = process.cpuUsage(state.cpu0);
    return (u.user + u.system) / 1000;
  };

  let start;
  let stop;
  if (system === 'ax') {
    const store = await AxPostgresEventStore.open({ connectionString: wurl, schema, poolSize: lanes + 2 });
    const w = new AxPostgresEventWorker({
      store,
      routes: axRoutes(ordered, handle),
      workerConcurrency: lanes,
    });
    start = () => w.start();
    stop = async () => {
      await w.close();
      await store.close();
    };
  } else if (system === 'gw' || system === 'gwb') {
    const { run, Logger } = await import('graphile-worker');
    const logger = new Logger(() => (level, message) => {
      if (level === 'error') process.stderr.write(`graphile-worker: ${message}\n`);
    });
    const taskList = {
      bench: (payload) => handle(payload),
      // A batch job: one promise per entry (a rejected one is retried alone); in order when
      // the order matters.
      batch: async (payload) => {
        if (!ordered) return payload.map((item) => handle(item));
        for (const item of payload) await handle(item);
      },
    };
    let runner;
    start = async () => {
      runner = await run({
        connectionString: wurl,
        schema,
        concurrency: lanes,
        maxPoolSize: lanes + 2,
        noHandleSignals: true,
        taskList,
        logger,
      });
    };
    stop = () => runner?.stop();
  } else {
    const { default: PgBoss } = await import('pg-boss');
    const boss = new PgBoss({
      connectionString: wurl,
      schema,
      max: lanes + 2,
      supervise: false,
      schedule: false,
      migrate: false,
    });
    boss.on('error', (error) => process.stderr.write(`pg-boss: ${error.message}\n`));
    await boss.start();
    let stopping = false;
    const loops = [];
    start = async () => {
      for (let l = 0; l < lanes; l++) {
        if (system === 'pbb') {
          await boss.work('bench', { batchSize: batch, pollingIntervalSeconds: POLL_S }, (jobs) =>
            Promise.all(jobs.map((job) => handle(job.data))),
          );
        } else {
          loops.push(
            (async () => {
              while (!stopping) {
                const [job] = await boss.fetch('bench');
                if (!job) {
                  await sleep(POLL_S * 1000);
                  continue;
                }
                await handle(job.data);
                await boss.complete('bench', job.id);
              }
            })(),
          );
        }
      }
    };
    stop = async () => {
      stopping = true;
      await Promise.all(loops);
      await boss.stop({ graceful: false, wait: true });
    };
  }

  let last = -1;
  const report = () => {
    if (state.count === last) return;
    last = state.count;
    process.stdout.write(`s ${state.count} ${state.lastAt} ${cpuMs()} ${state.dup}\n`);
  };
  process.stdout.write('ready\n');
  const lines = createInterface({ input: process.stdin });
  let timer;
  for await (const line of lines) {
    if (line === 'go') {
      state.cpu0 = process.cpuUsage();
      timer = setInterval(report, 20);
      await start();
      process.stdout.write('started\n');
    } else if (line === 'stop') {
      clearInterval(timer);
      report();
      const cpu = cpuMs();
      await Promise.race([stop(), sleep(10_000)]);
      await effects.end();
      if (statements.size > 0)
        process.stderr.write(
          `statements (${system}, ${state.count} deliveries):\n${[...statements]
            .sort((a, b) => b[1] - a[1])
            .map(([text, n]) => `  ${(n / Math.max(1, state.count)).toFixed(2)}  ${text}`)
            .join('\n')}\n`,
        );
      process.stdout.write(
        `f ${JSON.stringify({ count: state.count, dup: state.dup, cpu, lat: state.lat })}\n`,
      );
      break;
    }
  }
  process.exit(0);
}

// ---- PostgreSQL CPU from /proc --------------------------------------------------------------

const HZ = 100; // USER_HZ (getconf CLK_TCK) on Linux

function postgresTicks() {
  const ticks = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks.set(Number(entry), Number(fields[11]) + Number(fields[12]));
    } catch {
      // gone meanwhile
    }
  }
  return ticks;
}

/**
 * CPU ms of the postgres processes serving this run between two snapshots: the worker
 * connections (by application name) and the server's own processes (background writer,
 * WAL writer, checkpointer, autovacuum, postmaster); other sessions' backends are left out.
 */
async function postgresCpuMs(admin, before) {
  const after = postgresTicks();
  const { rows } = await admin.query('SELECT pid, backend_type, application_name FROM pg_stat_activity');
  const known = new Map(rows.map((r) => [r.pid, r]));
  let ticks = 0;
  for (const [pid, t] of after) {
    const row = known.get(pid);
    const ours = row
      ? row.backend_type !== 'client backend' || row.application_name === WORKER_APP
      : before.has(pid); // the postmaster (not listed), if it was there all along
    if (ours) ticks += t - (before.get(pid) ?? 0);
  }
  return (ticks * 1000) / HZ;
}

// ---- the systems, parent side ---------------------------------------------------------------

const SYSTEMS = {
  ax: 'ax-mcp',
  gw: 'graphile-worker',
  gwb: 'graphile-worker, batched',
  pbb: 'pg-boss, batched',
  pbf: 'pg-boss, fetch loop',
};
const chunks = (items, size) =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

/** Open a system on a fresh schema: `bulk(items)` before the fleet starts, `one(item)` while it runs. */
async function producer(system, schema, ordered) {
  if (system === 'ax') {
    const store = await AxPostgresEventStore.open({ connectionString: url, schema, poolSize: 10 });
    await store.migrate?.();
    const runtime = eventRuntime({ routes: axRoutes(ordered), store, scheduling: 'host' });
    return {
      bulk: async (items) => {
        for (const part of chunks(items, BULK)) await runtime.publishMany(part.map(axEvent));
      },
      one: (item) => runtime.publish(axEvent(item)),
      many: (items) => runtime.publishMany(items.map(axEvent)),
      close: async () => {
        await runtime.close({ drain: false });
        await store.close();
      },
    };
  }
  if (system === 'gw' || system === 'gwb') {
    const { makeWorkerUtils } = await import('graphile-worker');
    const utils = await makeWorkerUtils({ connectionString: url, schema });
    await utils.migrate();
    const queue = (item) => (ordered ? { queueName: `q${item.k}` } : {});
    let merged = 0;
    return {
      bulk: async (items) => {
        let specs;
        if (system === 'gw') {
          specs = items.map((item) => ({ identifier: 'bench', payload: item, ...queue(item) }));
        } else if (!ordered) {
          specs = chunks(items, BATCH).map((payload) => ({ identifier: 'batch', payload }));
        } else {
          const byKey = new Map();
          for (const item of items) byKey.set(item.k, [...(byKey.get(item.k) ?? []), item]);
          specs = [...byKey.values()].flatMap((list) =>
            chunks(list, BATCH).map((payload) => ({ identifier: 'batch', payload, ...queue(payload[0]) })),
          );
        }
        for (const part of chunks(specs, BULK)) await utils.addJobs(part);
      },
      // Batched and live: array payloads merged under a job key while the job waits (the
      // batch-job pattern of graphile-worker's docs), one key per lane of the fleet.
      one:
        system === 'gw'
          ? (item) => utils.addJob('bench', item, queue(item))
          : async (item) => {
              const jobKey = `b${merged++ % (WORKERS * LANES)}`;
              // graphile-worker 0.17.3 answers a job with a null id when a worker locked the
              // keyed job between add_job's two statements: the entry is neither merged nor
              // added. Add it again (that run then creates a new job) and count it.
              while ((await utils.addJob('batch', [item], { jobKey }))?.id == null) lostAdds++;
            },
      many: (items) => utils.addJobs(items.map((item) => ({ identifier: 'bench', payload: item }))),
      close: () => utils.release(),
    };
  }
  const { default: PgBoss } = await import('pg-boss');
  const boss = new PgBoss({ connectionString: url, schema, max: 10, supervise: false, schedule: false });
  boss.on('error', (error) => process.stderr.write(`pg-boss: ${error.message}\n`));
  await boss.start();
  await boss.createQueue('bench');
  return {
    bulk: async (items) => {
      for (const part of chunks(items, BULK))
        await boss.insert(part.map((data) => ({ name: 'bench', data })));
    },
    one: (item) => boss.send('bench', item),
    many: (items) => boss.insert(items.map((data) => ({ name: 'bench', data }))),
    close: () => boss.stop({ graceful: false, wait: true }),
  };
}

function spawnWorker(system, schema, scenario) {
  const proc = spawn(
    process.execPath,
    [
      // --prof DIR: a CPU profile of every worker process, for finding where a delivery's time goes.
      ...(opt.prof !== undefined ? ['--cpu-prof', '--cpu-prof-dir', opt.prof] : []),
      fileURLToPath(import.meta.url),
      '--role',
      'worker',
      '--system',
      system,
      '--schema',
      schema,
      '--scenario',
      scenario,
      '--lanes',
      String(LANES),
      '--batch',
      String(BATCH),
      '--workers',
      String(WORKERS),
      ...(opt.queries ? ['--queries'] : []),
    ],
    { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, AX_MCP_FLEET_APP: WORKER_APP } },
  );
  proc.status = { count: 0, lastAt: 0, cpu: 0, dup: 0 };
  proc.ready = false;
  proc.final = null;
  createInterface({ input: proc.stdout }).on('line', (line) => {
    if (line === 'ready') proc.ready = true;
    else if (line === 'started') proc.started = true;
    else if (line.startsWith('s ')) {
      const [count, lastAt, cpu, dup] = line.slice(2).split(' ').map(Number);
      proc.status = { count, lastAt, cpu, dup };
    } else if (line.startsWith('f ')) proc.final = JSON.parse(line.slice(2));
  });
  proc.exited = new Promise((r) => proc.on('exit', r));
  return proc;
}

async function until(check, what, timeoutMs = STALL_MS) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

const schemas = new Set();
const admin = new pg.Pool({ connectionString: named('axfleet-admin'), max: 2 });
const problems = [];
let lostAdds = 0; // graphile-worker batch-job adds answered with no job (added again)

/** One (system, scenario) cell: a fresh schema, a fleet of W processes, then the checks. */
async function fleetRun(system, scenario) {
  const ordered = scenario === 'ordered';
  const n = scenario === 'paced' ? PACED : EVENTS;
  const schema = `axfleet_${system}_${randomBytes(4).toString('hex')}`;
  schemas.add(schema);
  const items = Array.from({ length: n }, (_, i) => ({ id: i, k: i % KEYS }));
  const prod = await producer(system, schema, ordered);
  const procs = [];
  try {
    await admin.query(
      `CREATE SCHEMA IF NOT EXISTS "${schema}"; CREATE TABLE "${schema}".effects (id text PRIMARY KEY${ordered ? ', seq bigserial' : ''})`,
    );
    if (scenario === 'drain' || ordered) await prod.bulk(items);
    for (let w = 0; w < WORKERS; w++) procs.push(spawnWorker(system, schema, scenario));
    await until(() => procs.every((p) => p.ready), 'the workers to start');
    let ticks = postgresTicks();
    let t0 = now();
    for (const p of procs) p.stdin.write('go\n');
    if (scenario === 'live' || scenario === 'paced') {
      // The fleet is up and listening before the producer starts.
      await until(() => procs.every((p) => p.started), 'the workers to run');
      await sleep(200);
      ticks = postgresTicks();
      t0 = now();
    }
    let publishing = Promise.resolve();
    if (scenario === 'live') {
      let next = 0;
      publishing = Promise.all(
        Array.from({ length: PRODUCERS }, async () => {
          for (let i = next++; i < n; i = next++) await prod.one(items[i]);
        }),
      );
    } else if (scenario === 'paced') {
      publishing = (async () => {
        const sent = [];
        for (let i = 0; i < n; i++) {
          const wait = t0 + i * PACE_MS - now();
          if (wait > 0) await sleep(wait);
          sent.push(prod.one({ ...items[i], t: now() }));
        }
        await Promise.all(sent);
      })();
    }
    let failed;
    publishing.catch((error) => {
      failed = error;
    });
    const total = () => procs.reduce((sum, p) => sum + p.status.count, 0);
    let seen = 0;
    let progressAt = Date.now();
    while (total() < n) {
      if (failed) throw failed;
      if (procs.some((p) => p.exitCode !== null)) throw new Error('a worker exited');
      if (total() !== seen) {
        seen = total();
        progressAt = Date.now();
      } else if (Date.now() - progressAt > STALL_MS) {
        throw new Error(`stalled at ${seen} of ${n}`);
      }
      await sleep(5);
    }
    const pgCpu = await postgresCpuMs(admin, ticks);
    await publishing;
    const end = Math.max(...procs.map((p) => p.status.lastAt));
    const workerCpu = procs.reduce((sum, p) => sum + p.status.cpu, 0);
    for (const p of procs) p.stdin.write('stop\n');
    await Promise.race([Promise.all(procs.map((p) => p.exited)), sleep(20_000)]);
    const finals = procs.map((p) => p.final ?? { count: p.status.count, dup: p.status.dup, lat: [] });
    const dup = finals.reduce((sum, f) => sum + f.dup, 0);
    const {
      rows: [{ count }],
    } = await admin.query(`SELECT count(*)::int AS count FROM "${schema}".effects`);
    if (count !== n || dup !== 0) {
      problems.push(`${SYSTEMS[system]}, ${scenario}: ${count} effects of ${n}, ${dup} duplicate effects`);
    }
    if (system === 'ax') {
      // The workers have closed: every run is recorded as ended (written behind its run or not).
      const { rows } = await admin.query(
        `SELECT status, count(*)::int AS n FROM "${schema}".ax_event_deliveries
         WHERE status <> 'succeeded' GROUP BY status`,
      );
      if (rows.length > 0)
        problems.push(`ax-mcp, ${scenario}: runs left ${rows.map((r) => `${r.n} ${r.status}`).join(', ')}`);
    }
    let orderViolations = 0;
    if (ordered) {
      const { rows } = await admin.query(`SELECT id FROM "${schema}".effects ORDER BY seq`);
      const lastOf = new Map();
      for (const { id } of rows) {
        const i = Number(id);
        const k = i % KEYS;
        if ((lastOf.get(k) ?? -1) > i) orderViolations++;
        lastOf.set(k, i);
      }
      if (orderViolations)
        problems.push(`${SYSTEMS[system]}, ordered: ${orderViolations} effects out of order`);
    }
    const ms = end - t0;
    return {
      rate: (n / ms) * 1000,
      pgCpu: pgCpu / n,
      workerCpu: workerCpu / n,
      lat: finals.flatMap((f) => f.lat),
      orderViolations,
    };
  } finally {
    for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL');
    await Promise.race([prod.close(), sleep(10_000)]);
    await dropSchema(schema);
  }
}

/** Enqueue only, no workers: N jobs one per call or in batches of 100, from `producers` at once. */
async function enqueueRun(system, mode, producers) {
  const schema = `axfleet_${system}_${randomBytes(4).toString('hex')}`;
  schemas.add(schema);
  const prod = await producer(system, schema, false);
  try {
    const warm = Array.from({ length: 20 }, (_, i) => ({ id: `w${i}`, k: i % KEYS }));
    for (const item of warm) await prod.one(item);
    const items = Array.from({ length: EVENTS }, (_, i) => ({ id: i, k: i % KEYS }));
    let next = 0;
    const t0 = now();
    await Promise.all(
      Array.from({ length: producers }, async () => {
        if (mode === 'one') {
          for (let i = next++; i < EVENTS; i = next++) await prod.one(items[i]);
        } else {
          for (let i = next; i < EVENTS; i = next) {
            next += BULK;
            await prod.many(items.slice(i, i + BULK));
          }
        }
      }),
    );
    return (EVENTS / (now() - t0)) * 1000;
  } finally {
    await Promise.race([prod.close(), sleep(10_000)]);
    await dropSchema(schema);
  }
}

async function dropSchema(schema) {
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  schemas.delete(schema);
}

// ---- the table ------------------------------------------------------------------------------

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const int = (x) => Math.round(x).toLocaleString('en-US');
const ms = (x) => (x < 10 ? x.toFixed(1) : String(Math.round(x)));
const spread = (xs, f) =>
  xs.length === 1 ? f(xs[0]) : `${f(median(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`;

async function main() {
  const started = Date.now();
  const load0 = loadavg()[0];
  const systems = opt.systems;
  const scenarios = opt.scenarios;
  const skip = (system, scenario) => scenario === 'ordered' && (system === 'pbb' || system === 'pbf');
  const results = {}; // results[system][cell] = [values per round]
  const put = (system, cell, value) => {
    results[system] ??= {};
    (results[system][cell] ??= []).push(value);
  };
  for (let r = 0; r < ROUNDS; r++) {
    const order = systems.map((_, i) => systems[(i + r) % systems.length]);
    for (const scenario of scenarios) {
      for (const system of order) {
        if (scenario === 'enqueue') {
          if (system !== 'ax' && system !== 'gw' && system !== 'pbb') continue;
          for (const producers of [1, 8]) {
            for (const mode of ['one', 'many']) {
              try {
                const rate = await enqueueRun(system, mode, producers);
                put(system, `enqueue-${mode}-${producers}`, rate);
                process.stderr.write(
                  `round ${r + 1}: enqueue ${mode} ×${producers} ${SYSTEMS[system]} ${int(rate)}/s\n`,
                );
              } catch (error) {
                problems.push(`${SYSTEMS[system]}, enqueue ${mode} ×${producers}: ${error.message}`);
              }
            }
          }
          continue;
        }
        if (skip(system, scenario)) continue;
        try {
          const res = await fleetRun(system, scenario);
          if (scenario === 'paced') {
            put(system, 'p50', percentile(res.lat, 50));
            put(system, 'p99', percentile(res.lat, 99));
          } else {
            put(system, scenario, res.rate);
          }
          if (scenario === 'drain') {
            put(system, 'pgCpu', res.pgCpu);
            put(system, 'workerCpu', res.workerCpu);
          }
          process.stderr.write(
            `round ${r + 1}: ${scenario} ${SYSTEMS[system]} ${
              scenario === 'paced'
                ? `p50 ${ms(percentile(res.lat, 50))} p99 ${ms(percentile(res.lat, 99))} ms`
                : `${int(res.rate)}/s, cpu ${res.pgCpu.toFixed(2)} + ${res.workerCpu.toFixed(2)} ms`
            }\n`,
          );
        } catch (error) {
          problems.push(`${SYSTEMS[system]}, ${scenario} (round ${r + 1}): ${error.message}`);
          process.stderr.write(`round ${r + 1}: ${scenario} ${SYSTEMS[system]} failed: ${error.message}\n`);
        }
      }
    }
  }

  const cell = (system, name, f) => {
    const xs = results[system]?.[name];
    return xs?.length ? spread(xs, f) : '–';
  };
  const enq = (system, mode) => {
    if (system === 'gwb' || system === 'pbf') return '—';
    return `${cell(system, `enqueue-${mode}-1`, int)} / ${cell(system, `enqueue-${mode}-8`, int)}`;
  };
  const rows = [
    [`drain a ${int(EVENTS)}-job backlog, deliveries/s`, (s) => cell(s, 'drain', int)],
    [`the same, in order within ${KEYS} keys`, (s) => cell(s, 'ordered', int)],
    [`live, producer at full speed (${PRODUCERS} in flight), end-to-end/s`, (s) => cell(s, 'live', int)],
    [
      `paced at ${1000 / PACE_MS}/s (${int(PACED)} jobs), publish → handler start p50 / p99 ms`,
      (s) => (results[s]?.p50 ? `${cell(s, 'p50', ms)} / ${cell(s, 'p99', ms)}` : '–'),
    ],
    [
      'PostgreSQL + worker CPU per delivery (drain), ms',
      (s) =>
        results[s]?.pgCpu
          ? `${median(results[s].pgCpu).toFixed(2)} + ${median(results[s].workerCpu).toFixed(2)}`
          : '–',
    ],
    ['enqueue one per call, 1 / 8 producers, per s', (s) => enq(s, 'one')],
    [`enqueue in bulk (batches of ${BULK}), 1 / 8 producers, per s`, (s) => enq(s, 'many')],
  ];
  const pkg = (name) => {
    try {
      return createRequire(import.meta.url)(`${name}/package.json`).version;
    } catch {
      return '?';
    }
  };
  const { rows: version } = await admin.query('SHOW server_version');
  const head = systems.map((s) =>
    s === 'ax'
      ? `ax-mcp ${pkg('..')}`
      : s === 'gw'
        ? `graphile-worker ${pkg('graphile-worker')}`
        : s === 'pbb'
          ? `pg-boss ${pkg('pg-boss')}, batched`
          : SYSTEMS[s],
  );
  console.log(
    `PostgreSQL ${version[0].server_version}; ${WORKERS} worker processes × ${LANES} lanes; ${ROUNDS} interleaved round${ROUNDS > 1 ? 's' : ''}; batch size ${BATCH}; library ${dist}`,
  );
  console.log('');
  console.log(`| scenario (median of ${ROUNDS}${ROUNDS > 1 ? ', min–max' : ''}) | ${head.join(' | ')} |`);
  console.log(`|---|${systems.map(() => '---:').join('|')}|`);
  for (const [label, f] of rows) console.log(`| ${label} | ${systems.map(f).join(' | ')} |`);
  console.log('');
  console.log(
    `- Every handler wrote one row into its schema's effects table (primary key on the job id): ${
      problems.length
        ? 'see the problems below'
        : 'every cell ended with count = N and no duplicate effect, and every ax-mcp run recorded `succeeded`'
    }.`,
  );
  console.log(
    `- pg-boss has no ordering per key (a singleton queue per key fails every fetch that meets a busy key): "–". Live and paced start once every worker runs (drain counts the start-up). pg-boss polls (${POLL_S} s, its shortest interval; the fetch loop sleeps as long when empty). The graphile-worker batched column runs batch jobs (array payloads of ${BATCH}, per key when ordered; live and paced merge into ${WORKERS * LANES} job keys); its enqueue is graphile-worker's ("—"), as pg-boss fetch loop's is pg-boss's.`,
  );
  console.log(
    '- PostgreSQL CPU counts the backends of the worker connections and the server processes, not other sessions on the machine.',
  );
  if (lostAdds) {
    console.log(
      `- graphile-worker batched, live and paced: ${lostAdds} job-key adds came back with no job (a worker locked the keyed job between add_job's statements; the entry was neither merged nor added) and were added again.`,
    );
  }
  for (const problem of problems) console.log(`- problem: ${problem}`);
  console.log(
    `- load average (1 min) ${load0.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end; ${Math.round((Date.now() - started) / 1000)} s.`,
  );
}

if (opt.role === 'worker') {
  await worker();
} else {
  try {
    await main();
  } finally {
    for (const schema of schemas)
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await admin.end();
  }
}
