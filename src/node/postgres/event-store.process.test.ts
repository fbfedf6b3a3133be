/**
 * Fleet tests of the PostgreSQL event store: worker processes started through the CLI entry
 * point (`runWorker`, what `ax-mcp worker` runs) with a user module of routes and targets,
 * sharing one schema of a real PostgreSQL.
 *
 * Worker processes cannot load TypeScript sources (Node 20 has no type stripping), so
 * `beforeAll` compiles the runtime, the store and the CLI worker with the project's own `tsc`
 * into `node_modules/.cache/ax-mcp-event-tests/` (inside the repo, so `pg` and
 * `@opentelemetry/api` resolve), as the SQLite process tests do.
 *
 * Targets log to one file per process; times come from `process.hrtime` (CLOCK_MONOTONIC,
 * one clock for every process on the machine), so runs of different processes compare.
 */

import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AxEventIdentity } from '../../events/envelope.js';
import { eventPath } from '../../events/path.js';
import { eventRoute } from '../../events/route-builder.js';
import { type AxEventRuntime, eventRuntime } from '../../events/runtime.js';
import { AxPostgresEventStore } from './event-store.js';

const url = process.env.AX_MCP_TEST_POSTGRES_URL;
if (!url) {
  console.warn(
    '[postgres/event-store.process.test] SKIPPED: AX_MCP_TEST_POSTGRES_URL is not set, so the PostgreSQL ' +
      'fleet tests (worker processes, SIGKILL, fencing) did not run. Set it to a database you can write to, ' +
      'e.g. postgres://postgres@127.0.0.1:5432/test',
  );
}

const root = resolve(import.meta.dirname, '../../..');
const cacheRoot = join(root, 'node_modules', '.cache', 'ax-mcp-event-tests');
let out = '';
const work = mkdtempSync(join(tmpdir(), 'ax-pg-proc-'));
const children = new Set<ChildProcess>();
const schemas = new Set<string>();
let adminPool: pg.Pool | null = null;
const admin = () => (adminPool ??= new pg.Pool({ connectionString: url, max: 2 }));

/** The user module every worker loads (`--module`); `AX_TEST_ROLE` picks how its targets behave. */
const MODULE = (events: string) => String.raw`
import { appendFileSync, writeFileSync } from 'node:fs';
import { eventPath, eventRoute, eventTarget } from ${JSON.stringify(events)};

const role = process.env.AX_TEST_ROLE ?? 'work';
const dir = process.env.AX_TEST_DIR;
const log = dir + '/log-' + process.pid;
const now = () => Number(process.hrtime.bigint()) / 1e6;
const record = (entry) => appendFileSync(log, JSON.stringify({ ...entry, pid: process.pid }) + '\n');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const forever = (name) => async () => {
  writeFileSync(dir + '/started-' + name, String(process.pid));
  await new Promise(() => {});
};

const work = eventTarget('work').retrySafety('idempotent').invoke(async (input, ctx) => {
  const start = now();
  await new Promise((r) => setImmediate(r));
  record({ t: 'work', id: ctx.deliveryId, scope: ctx.identityScope, k: input.k, i: input.i, start, end: now() });
}).build();

const risky = (id, idempotent) => {
  const builder = eventTarget(id);
  if (idempotent) builder.retrySafety('idempotent');
  return builder.invoke(role === 'crash' ? forever(id) : async (_input, ctx) => {
    record({ t: id, id: ctx.deliveryId, attempt: ctx.attempt });
    return { by: process.pid };
  }).build();
};

const order = eventTarget('order').waitFor('reply', eventPath.data('ref')).invoke(async (input, ctx) => {
  record({ t: ctx.action, id: ctx.deliveryId, run: ctx.runId, scope: ctx.identityScope, ref: ctx.event.data.ref,
    cscope: ctx.continuation?.scope ?? null, crun: ctx.continuation?.runId ?? null });
  return { action: ctx.action, by: process.pid };
}).build();

const fence = eventTarget('fence').retrySafety('idempotent').invoke(async (_input, ctx) => {
  if (role === 'stall') {
    writeFileSync(dir + '/started-fence', String(process.pid));
    await sleep(1500);
  }
  record({ t: 'fence', id: ctx.deliveryId, attempt: ctx.attempt, fencing: ctx.fencingToken });
  return { by: process.pid };
}).build();

const slow = eventTarget('slow').invoke(async (input, ctx) => {
  writeFileSync(dir + '/started-slow-' + input.k, String(process.pid));
  await sleep(800);
  record({ t: 'slow', id: ctx.deliveryId, k: input.k });
  return { k: input.k };
}).build();

/** A target that ignores its abort signal: only a third signal ends the worker in time. */
const stuck = eventTarget('stuck').invoke(async () => {
  writeFileSync(dir + '/started-stuck', String(process.pid));
  await sleep(60_000);
  return {};
}).build();

export const routes = [
  eventRoute('stuck').types('stuck').wake(stuck).build(),
  eventRoute('work').types('job').instanceKey(eventPath.data('k')).wake(work).build(),
  eventRoute('safe').types('risky').wake(risky('safe', true)).build(),
  eventRoute('unsafe').types('risky').wake(risky('unsafe', false)).build(),
  eventRoute('order').types('order.placed').requireAuthenticated().wake(order).build(),
  eventRoute('reply').types('order.reply').requireAuthenticated().correlate('reply', eventPath.data('ref')).resume('order').build(),
  eventRoute('fence').types('fence').wake(fence).build(),
  eventRoute('slow').types('slow').instanceKey(eventPath.data('k')).wake(slow).build(),
];
export const options = { maxAttempts: 3, retryBaseMs: 50 };
`;

const WORKER = `import { runWorker } from './cli/worker.js';
process.exitCode = await runWorker(process.argv.slice(2));
`;

/** The same routes, for publishing from this process (targets are the workers' business). */
const routes = [
  eventRoute('stuck').types('stuck').wake('stuck').build(),
  eventRoute('work').types('job').instanceKey(eventPath.data('k')).wake('work').build(),
  eventRoute('safe').types('risky').wake('safe').build(),
  eventRoute('unsafe').types('risky').wake('unsafe').build(),
  eventRoute('order').types('order.placed').requireAuthenticated().wake('order').build(),
  eventRoute('reply')
    .types('order.reply')
    .requireAuthenticated()
    .correlate('reply', eventPath.data('ref'))
    .resume('order')
    .build(),
  eventRoute('fence').types('fence').wake('fence').build(),
  eventRoute('slow').types('slow').instanceKey(eventPath.data('k')).wake('slow').build(),
];

interface Fleet {
  dir: string;
  schema: string;
  store: AxPostgresEventStore;
  publisher: AxEventRuntime;
  worker(role: string, ...flags: string[]): ChildProcess & { output: () => string };
  logs<T = Record<string, unknown>>(): T[];
  close(): Promise<void>;
}

async function fleet(): Promise<Fleet> {
  const dir = mkdtempSync(join(work, 'fleet-'));
  const schema = `ax_test_${randomBytes(6).toString('hex')}`;
  schemas.add(schema);
  const store = await AxPostgresEventStore.open({ connectionString: url, schema, poolSize: 8 });
  const publisher = eventRuntime({ routes, store, scheduling: 'host', coordination: 'multi-worker' });
  return {
    dir,
    schema,
    store,
    publisher,
    worker(role, ...flags) {
      const args = [
        '--store',
        url as string,
        '--schema',
        schema,
        '--module',
        join(out, 'module.mjs'),
        ...flags,
      ];
      const proc = spawn(process.execPath, [join(out, 'worker.mjs'), ...args], {
        env: { ...process.env, AX_TEST_ROLE: role, AX_TEST_DIR: dir },
        stdio: ['ignore', 'pipe', 'inherit'],
      }) as ChildProcess & { output: () => string };
      let text = '';
      proc.stdout?.on('data', (chunk: Buffer) => {
        text += chunk.toString();
      });
      proc.output = () => text;
      children.add(proc);
      proc.on('exit', () => children.delete(proc));
      return proc;
    },
    logs<T>() {
      return readdirSync(dir)
        .filter((name) => name.startsWith('log-'))
        .flatMap((name) =>
          readFileSync(join(dir, name), 'utf8')
            .split('\n')
            .filter((line) => line.length > 0)
            .map((line) => JSON.parse(line) as T),
        );
    },
    async close() {
      await publisher.close({ drain: false });
      await store.close();
    },
  };
}

const exited = (proc: ChildProcess) =>
  new Promise<number | null>((r) =>
    proc.exitCode !== null || proc.signalCode !== null
      ? r(proc.exitCode)
      : proc.on('exit', (code) => r(code)),
  );

const ready = (proc: ChildProcess & { output: () => string }) =>
  vi.waitFor(() => expect(proc.output()).toMatch(/ info {2}worker \S+ started: /), {
    timeout: 20_000,
    interval: 20,
  });

const status = async (schema: string) =>
  (
    await admin().query(
      `SELECT status, count(*)::int AS n FROM "${schema}".ax_event_deliveries WHERE kind = 'event'
       GROUP BY status ORDER BY status`,
    )
  ).rows.map((r) => [r.status, r.n]);

beforeAll(() => {
  if (!url) return;
  mkdirSync(cacheRoot, { recursive: true });
  out = mkdtempSync(join(cacheRoot, 'pg-build-'));
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const args = [
    ...['--outDir', out, '--rootDir', join(root, 'src')],
    ...['--module', 'NodeNext', '--moduleResolution', 'NodeNext', '--target', 'ES2022'],
    ...['--lib', 'ES2023,DOM', '--types', 'node', '--skipLibCheck', '--strict'],
    join(root, 'src/events/index.ts'),
    join(root, 'src/cli/worker.ts'),
  ];
  execFileSync(process.execPath, [tsc, ...args], { cwd: root, stdio: 'pipe' });
  writeFileSync(join(out, 'package.json'), '{"type":"module"}');
  writeFileSync(join(out, 'module.mjs'), MODULE(pathToFileURL(join(out, 'events/index.js')).href));
  writeFileSync(join(out, 'worker.mjs'), WORKER);
}, 120_000);

afterAll(async () => {
  for (const proc of children) proc.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
  if (out) rmSync(out, { recursive: true, force: true });
  if (!url) return;
  for (const schema of schemas) await admin().query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await adminPool?.end();
});

const tenant = (t: string): AxEventIdentity => ({ tenantId: t, userId: 'u' });
const scopeOf = (t: string) => `id:${t}//u/`;

describe.skipIf(!url)('PostgreSQL event store across worker processes', () => {
  it('a third signal ends a worker whose target ignores its abort signal, with exit code 130', async () => {
    const f = await fleet();
    await f.publisher.publish({ event: { id: 'stuck-1', source: 'app://stuck', type: 'stuck', data: {} } });
    const worker = f.worker('work');
    await vi.waitFor(() => expect(existsSync(join(f.dir, 'started-stuck'))).toBe(true), {
      timeout: 20_000,
      interval: 10,
    });
    const started = Date.now();
    for (let i = 0; i < 3; i++) {
      worker.kill('SIGTERM');
      await sleep(200);
    }
    expect(await exited(worker)).toBe(130);
    expect(Date.now() - started).toBeLessThan(10_000);
    await f.close();
  }, 60_000);

  it('four worker processes share 10,000 events: each delivery runs once, ends in one terminal record, in order per (scope, instance)', async () => {
    const f = await fleet();
    const workers = Array.from({ length: 4 }, () => f.worker('work', '--concurrency', '4'));
    await Promise.all(workers.map(ready));
    const total = 10_000;
    const ids: string[] = [];
    const expectedScope = new Map<string, string>();
    const t0 = performance.now();
    // Publish from 16 concurrent producers while the fleet is already running. Each producer owns
    // one instance key k (i = 64m + 4k + tenant), so events of one (tenant, k) are published one
    // after another in index order: the order the fleet must keep. (Two producers racing on one
    // key would commit in either order, and either run order would then be right.)
    await Promise.all(
      Array.from({ length: 16 }, async (_, k) => {
        for (let i = 4 * k; i < total; i += i % 4 === 3 ? 61 : 1) {
          const t = `t${i % 4}`;
          const receipt = await f.publisher.publish({
            event: {
              id: `j${i}`,
              source: 'app://fleet',
              type: 'job',
              data: { k: `k${Math.floor(i / 4) % 16}`, i },
            },
            identity: tenant(t),
            trust: 'authenticated',
          });
          for (const id of receipt.deliveryIds) {
            ids.push(id);
            expectedScope.set(id, scopeOf(t));
          }
        }
      }),
    );
    const published = performance.now();
    await vi.waitFor(async () => expect(await f.store.countPending()).toBe(0), {
      timeout: 60_000,
      interval: 100,
    });
    const finished = performance.now();
    console.log(
      `[fleet] 10,000 events published in ${Math.round(published - t0)} ms; all delivered after ${Math.round(finished - t0)} ms ` +
        `(${Math.round((total / (finished - t0)) * 1000)} deliveries/s with 4 workers × 4 lanes)`,
    );
    for (const w of workers) w.kill('SIGTERM');
    expect(await Promise.all(workers.map(exited))).toEqual([0, 0, 0, 0]);
    for (const w of workers) expect(w.output()).toMatch(/ info {2}worker \S+ stopped$/m);

    // Exactly one terminal record per delivery: one row each, succeeded on the first attempt.
    expect(ids).toHaveLength(total);
    expect(await status(f.schema)).toEqual([['succeeded', total]]);
    const rows = await admin().query(
      `SELECT count(DISTINCT id)::int AS ids, count(*) FILTER (WHERE attempt <> 1)::int AS retried,
         count(*) FILTER (WHERE finished_at IS NULL OR lease_owner IS NOT NULL)::int AS open
       FROM "${f.schema}".ax_event_deliveries`,
    );
    expect(rows.rows[0]).toEqual({ ids: total, retried: 0, open: 0 });
    expect(await f.store.listDeadLetters()).toEqual([]);

    type Line = { id: string; scope: string; k: string; i: number; start: number; end: number; pid: number };
    const lines = f.logs<Line>();
    // Each delivery ran exactly once, somewhere in the fleet, with its own identity scope.
    expect(lines.map((l) => l.id).sort()).toEqual([...ids].sort());
    for (const l of lines) expect(l.scope).toBe(expectedScope.get(l.id));
    const perWorker = workers.map((w) => lines.filter((l) => l.pid === w.pid).length);
    expect(perWorker.every((n) => n > 0)).toBe(true);
    console.log(`[fleet] deliveries per worker: ${perWorker.join(', ')}`);
    // Strict order per (target, identity scope, instance), across processes: by publish
    // index, and never two at once.
    const byKey = new Map<string, Line[]>();
    for (const l of lines) byKey.set(`${l.scope} ${l.k}`, [...(byKey.get(`${l.scope} ${l.k}`) ?? []), l]);
    expect(byKey.size).toBe(64);
    let crossProcess = 0;
    for (const runs of byKey.values()) {
      runs.sort((a, b) => a.start - b.start);
      expect(runs.map((r) => r.i)).toEqual([...runs.map((r) => r.i)].sort((a, b) => a - b));
      for (let j = 1; j < runs.length; j++) {
        const [prev, cur] = [runs[j - 1] as Line, runs[j] as Line];
        expect(cur.start).toBeGreaterThanOrEqual(prev.end);
        if (cur.pid !== prev.pid) crossProcess++;
      }
    }
    // The order held while instances moved between processes.
    expect(crossProcess).toBeGreaterThan(0);
    await f.close();
  }, 120_000);

  it('a worker killed with SIGKILL mid-run loses nothing: another process takes its leases over, reruns only what is idempotent', async () => {
    const f = await fleet();
    const doomed = f.worker('crash', '--lease-ms', '1000', '--concurrency', '4');
    await ready(doomed);
    const risky = await f.publisher.publish({
      event: { id: 'risky-1', source: 'app://crash', type: 'risky' },
    });
    const jobs: string[] = [];
    for (let i = 0; i < 200; i++) {
      const r = await f.publisher.publish({
        event: { id: `c${i}`, source: 'app://crash', type: 'job', data: { k: `k${i % 4}`, i } },
      });
      jobs.push(...r.deliveryIds);
    }
    await vi.waitFor(
      () =>
        expect(existsSync(join(f.dir, 'started-safe')) && existsSync(join(f.dir, 'started-unsafe'))).toBe(
          true,
        ),
      { timeout: 20_000, interval: 20 },
    );
    const [safeId, unsafeId] = risky.deliveryIds as [string, string];
    doomed.kill('SIGKILL');
    expect(await exited(doomed)).toBeNull();
    // The dead process still holds both leases: nothing is lost, nothing is free yet. Only
    // the target that is not idempotent marked itself running: that mark is what stops a
    // replay; the idempotent one stays claimed while it runs.
    const held = await admin().query(
      `SELECT id, status, lease_owner FROM "${f.schema}".ax_event_deliveries WHERE id = ANY($1)`,
      [[safeId, unsafeId]],
    );
    const statusOf = (id: string) => held.rows.find((r) => r.id === id)?.status;
    expect([statusOf(safeId), statusOf(unsafeId)]).toEqual(['claimed', 'running']);
    const deadOwner = held.rows[0]?.lease_owner as string;

    const survivor = f.worker('work', '--concurrency', '4');
    await ready(survivor);
    await vi.waitFor(async () => expect(await f.store.countPending()).toBe(0), {
      timeout: 30_000,
      interval: 50,
    });
    survivor.kill('SIGTERM');
    expect(await exited(survivor)).toBe(0);

    // The idempotent target ran again, once, in the survivor, under a new fencing token.
    type Line = { t: string; id: string; attempt?: number; pid: number };
    const lines = f.logs<Line>();
    expect(lines.filter((l) => l.t === 'safe')).toEqual([
      { t: 'safe', id: safeId, attempt: 2, pid: survivor.pid },
    ]);
    expect(await f.store.getRun(safeId)).toMatchObject({
      status: 'succeeded',
      attempt: 2,
      output: { by: survivor.pid },
    });
    // The other one is never replayed: its outcome is unknown and it waits for a human.
    expect(lines.some((l) => l.t === 'unsafe')).toBe(false);
    expect(await f.store.getRun(unsafeId)).toMatchObject({ status: 'outcome_unknown', attempt: 2 });
    expect((await f.store.listDeadLetters()).map((l) => [l.deliveryId, l.reason])).toEqual([
      [unsafeId, 'outcome_unknown'],
    ]);
    // Every job of the dead worker's queue reached its one terminal record.
    expect(new Set(lines.filter((l) => l.t === 'work').map((l) => l.id))).toEqual(new Set(jobs));
    for (const id of jobs) expect((await f.store.getRun(id))?.status).toBe('succeeded');
    const owners = await admin().query(
      `SELECT count(*)::int AS n FROM "${f.schema}".ax_event_deliveries WHERE lease_owner = $1`,
      [deadOwner],
    );
    expect(owners.rows[0].n).toBe(0);
    await f.close();
  }, 90_000);

  it('rejects the late commit of a fenced-out worker process that paused past its lease', async () => {
    const f = await fleet();
    const paused = f.worker('stall', '--lease-ms', '600', '--concurrency', '1');
    await ready(paused);
    const receipt = await f.publisher.publish({
      event: { id: 'fence-1', source: 'app://fence', type: 'fence' },
    });
    const id = receipt.deliveryIds[0] as string;
    await vi.waitFor(() => expect(existsSync(join(f.dir, 'started-fence'))).toBe(true), {
      timeout: 20_000,
      interval: 10,
    });
    // Freeze it mid-run (a long GC pause, a stopped VM): no heartbeats, the lease runs out.
    paused.kill('SIGSTOP');
    const other = f.worker('work', '--concurrency', '1');
    await ready(other);
    await vi.waitFor(async () => expect((await f.store.getRun(id))?.status).toBe('succeeded'), {
      timeout: 20_000,
      interval: 20,
    });
    paused.kill('SIGCONT');
    // The paused target finishes its work and tries to record it with its old fencing token.
    type Line = { t: string; id: string; attempt: number; fencing: number; pid: number };
    await vi.waitFor(() => expect(f.logs<Line>().filter((l) => l.pid === paused.pid)).toHaveLength(1), {
      timeout: 10_000,
      interval: 20,
    });
    await new Promise((r) => setTimeout(r, 300));
    const lines = f.logs<Line>().sort((a, b) => a.attempt - b.attempt);
    expect(lines.map((l) => [l.pid, l.attempt])).toEqual([
      [paused.pid, 1],
      [other.pid, 2],
    ]);
    expect((lines[1] as Line).fencing).toBeGreaterThan((lines[0] as Line).fencing);
    // Exactly one success record, and it is the new owner's.
    expect(await f.store.getRun(id)).toMatchObject({
      status: 'succeeded',
      attempt: 2,
      output: { by: other.pid },
    });
    expect(await status(f.schema)).toEqual([['succeeded', 1]]);
    paused.kill('SIGTERM');
    other.kill('SIGTERM');
    expect(await Promise.all([exited(paused), exited(other)])).toEqual([0, 0]);
    await f.close();
  }, 60_000);

  it('keeps continuations in their identity scope across workers: only the same scope resumes a run', async () => {
    const f = await fleet();
    const first = f.worker('work', '--concurrency', '2');
    await ready(first);
    const placed = new Map<string, string>();
    for (const t of ['A', 'B']) {
      for (const ref of ['r1', 'r2', 'r3']) {
        const r = await f.publisher.publish({
          event: { id: `${t}-${ref}`, source: 'app://orders', type: 'order.placed', data: { ref } },
          identity: tenant(t),
          trust: 'authenticated',
        });
        placed.set(`${t} ${ref}`, r.deliveryIds[0] as string);
      }
    }
    await vi.waitFor(async () => expect(await f.store.countPending()).toBe(0), {
      timeout: 20_000,
      interval: 20,
    });
    for (const id of placed.values()) expect((await f.store.getRun(id))?.status).toBe('waiting_event');
    // The worker that registered the continuations leaves; another one resumes them.
    first.kill('SIGTERM');
    expect(await exited(first)).toBe(0);
    const second = f.worker('work', '--concurrency', '2');
    await ready(second);
    const reply = (t: string, ref: string, id = `${t}-reply-${ref}`) =>
      f.publisher.publish({
        event: { id, source: 'app://orders', type: 'order.reply', data: { ref } },
        identity: tenant(t),
        trust: 'authenticated',
      });
    for (const ref of ['r1', 'r2', 'r3']) await reply('A', ref);
    await reply('B', 'r1');
    const intruder = await reply('C', 'r1');
    expect((await reply('A', 'r1')).duplicate).toBe(true);
    await vi.waitFor(async () => expect(await f.store.countPending()).toBe(0), {
      timeout: 20_000,
      interval: 20,
    });
    second.kill('SIGTERM');
    expect(await exited(second)).toBe(0);

    type Line = {
      t: string;
      run: string;
      scope: string;
      ref: string;
      cscope: string | null;
      crun: string | null;
      pid: number;
    };
    const lines = f.logs<Line>();
    const wakes = lines.filter((l) => l.t === 'wake');
    const resumes = lines.filter((l) => l.t === 'resume');
    expect(wakes.every((l) => l.pid === first.pid)).toBe(true);
    expect(resumes.every((l) => l.pid === second.pid)).toBe(true);
    expect(resumes.map((l) => `${l.scope} ${l.ref}`).sort()).toEqual(
      [`${scopeOf('A')} r1`, `${scopeOf('A')} r2`, `${scopeOf('A')} r3`, `${scopeOf('B')} r1`].sort(),
    );
    for (const r of resumes) {
      expect(r.cscope).toBe(r.scope);
      const owner = wakes.find((w) => w.run === r.crun);
      expect([owner?.scope, owner?.ref]).toEqual([r.scope, r.ref]);
    }
    for (const [key, id] of placed) {
      const expected = key.startsWith('A') || key === 'B r1' ? 'succeeded' : 'waiting_event';
      expect([key, (await f.store.getRun(id))?.status]).toEqual([key, expected]);
    }
    expect(await f.store.getRun(intruder.deliveryIds[0] as string)).toMatchObject({
      status: 'dead_lettered',
    });
    expect((await f.store.listDeadLetters()).map((l) => [l.deliveryId, l.reason])).toEqual([
      [intruder.deliveryIds[0], 'continuation_not_found'],
    ]);
    await f.close();
  }, 60_000);

  it('drains on SIGTERM: running deliveries finish, nothing new is claimed, the process exits 0', async () => {
    const f = await fleet();
    const ids: string[] = [];
    for (const k of ['a', 'b', 'c']) {
      const r = await f.publisher.publish({
        event: { id: `s-${k}`, source: 'app://slow', type: 'slow', data: { k } },
      });
      ids.push(r.deliveryIds[0] as string);
    }
    const worker = f.worker('work', '--concurrency', '2');
    await vi.waitFor(
      () => expect(readdirSync(f.dir).filter((n) => n.startsWith('started-slow-'))).toHaveLength(2),
      { timeout: 20_000, interval: 10 },
    );
    worker.kill('SIGTERM');
    expect(await exited(worker)).toBe(0);
    expect(worker.output()).toMatch(/draining[\s\S]*stopped/);
    const runs = await Promise.all(ids.map((id) => f.store.getRun(id)));
    expect(runs.map((r) => r?.status).sort()).toEqual(['queued', 'succeeded', 'succeeded']);
    expect(f.logs()).toHaveLength(2);
    await f.close();
  }, 60_000);
});
