/**
 * Crash and multi-process tests of the SQLite event store.
 *
 * Worker processes cannot load TypeScript sources (vitest transforms them only in its own
 * workers, and Node 20 has no type stripping), so `beforeAll` compiles the event runtime
 * and the store with the project's own `tsc` into `node_modules/.cache/ax-mcp-event-tests/`
 * (inside the repo, so `better-sqlite3` and `@opentelemetry/api` resolve) and each child
 * runs a small plain-JS worker script against that output. This works on a fresh clone
 * with no prior build.
 */

import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { eventPath } from '../../events/path.js';
import { eventRoute } from '../../events/route-builder.js';
import { eventRuntime } from '../../events/runtime.js';
import { AxSQLiteEventStore } from './event-store.js';

const root = resolve(import.meta.dirname, '../../..');
const cacheRoot = join(root, 'node_modules', '.cache', 'ax-mcp-event-tests');
let out = '';
const work = mkdtempSync(join(tmpdir(), 'ax-sqlite-proc-'));
const children = new Set<ChildProcess>();

const WORKER = String.raw`
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { eventRoute, eventRuntime, eventTarget, eventPath } from './events/index.js';
import { AxSQLiteEventStore } from './node/sqlite/event-store.js';

const [mode, filename, dir, lease] = process.argv.slice(2);
const store = await AxSQLiteEventStore.open({ filename });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

if (mode === 'crash') {
  // Both targets start, say so, and never finish: the parent kills this process.
  const hang = (name) => async () => {
    writeFileSync(dir + '/started-' + name, String(process.pid));
    await new Promise(() => {});
  };
  const runtime = eventRuntime({
    routes: [
      eventRoute('safe').types('job').wake(eventTarget('safe').retrySafety('idempotent').invoke(hang('safe')).build()).build(),
      eventRoute('unsafe').types('job').wake(eventTarget('unsafe').invoke(hang('unsafe')).build()).build(),
    ],
    store,
    coordination: 'multi-worker',
    leaseMs: Number(lease),
    pollIntervalMs: 20,
  });
  await runtime.start();
} else {
  const log = dir + '/log-' + process.pid;
  const target = eventTarget('work')
    .retrySafety('idempotent')
    .invoke(async (input, ctx) => {
      // hrtime is the system-wide monotonic clock: comparable across processes, where
      // performance.timeOrigin is fixed per process and was seen 0.9 ms apart.
      const start = Number(process.hrtime.bigint()) / 1e6;
      await sleep(3);
      const end = Number(process.hrtime.bigint()) / 1e6;
      appendFileSync(log, JSON.stringify({ id: ctx.deliveryId, k: input.k, i: input.i, start, end, pid: process.pid }) + '\n');
    })
    .build();
  const runtime = eventRuntime({
    routes: [eventRoute('work').types('job').instanceKey(eventPath.data('k')).wake(target).build()],
    store,
    coordination: 'multi-worker',
    workerConcurrency: 3,
    pollIntervalMs: 10,
  });
  writeFileSync(dir + '/ready-' + process.pid, '');
  while (!existsSync(dir + '/go')) await sleep(5);
  await runtime.start();
  let idle = 0;
  while (idle < 3) {
    await sleep(30);
    idle = (await store.countPending()) === 0 ? idle + 1 : 0;
  }
  await runtime.close();
  await store.close();
}
`;

function child(mode: string, filename: string, dir: string, leaseMs = 60_000): ChildProcess {
  const proc = spawn(process.execPath, [join(out, 'worker.mjs'), mode, filename, dir, String(leaseMs)], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  children.add(proc);
  proc.on('exit', () => children.delete(proc));
  return proc;
}

const exited = (proc: ChildProcess) =>
  new Promise<number | null>((r) =>
    proc.exitCode !== null ? r(proc.exitCode) : proc.on('exit', (code) => r(code)),
  );

beforeAll(() => {
  mkdirSync(cacheRoot, { recursive: true });
  out = mkdtempSync(join(cacheRoot, 'build-'));
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const args = [
    ...['--outDir', out, '--rootDir', join(root, 'src')],
    ...['--module', 'NodeNext', '--moduleResolution', 'NodeNext', '--target', 'ES2022'],
    ...['--lib', 'ES2023,DOM', '--types', 'node', '--skipLibCheck', '--strict'],
    join(root, 'src/events/index.ts'),
    join(root, 'src/node/sqlite/event-store.ts'),
  ];
  execFileSync(process.execPath, [tsc, ...args], { cwd: root, stdio: 'pipe' });
  writeFileSync(join(out, 'package.json'), '{"type":"module"}');
  writeFileSync(join(out, 'worker.mjs'), WORKER);
}, 120_000);

afterAll(() => {
  for (const proc of children) proc.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
  if (out) rmSync(out, { recursive: true, force: true });
});

describe('SQLite event store across processes', () => {
  it.each([
    ['single', 60_000],
    ['multi-worker', 600],
  ] as const)(
    'loses nothing when a worker is killed with SIGKILL mid-run (%s restart): idempotent reruns, the other ends outcome_unknown',
    async (coordination, leaseMs) => {
      const dir = mkdtempSync(join(work, 'crash-'));
      const filename = join(dir, 'events.db');
      const seed = await AxSQLiteEventStore.open({ filename });
      const routes = [
        eventRoute('safe').types('job').wake('safe').build(),
        eventRoute('unsafe').types('job').wake('unsafe').build(),
      ];
      const publisher = eventRuntime({
        routes,
        targets: [
          { id: 'safe', retrySafety: 'idempotent', invoke: () => 'unused' },
          { id: 'unsafe', invoke: () => 'unused' },
        ],
        store: seed,
        scheduling: 'host',
      });
      const receipt = await publisher.publish({
        event: { id: 'job-1', source: 'app://crash', type: 'job', data: { n: 1 } },
      });
      await publisher.close({ drain: false });
      await seed.close();

      const worker = child('crash', filename, dir, leaseMs);
      await vi.waitFor(
        () =>
          expect(existsSync(join(dir, 'started-safe')) && existsSync(join(dir, 'started-unsafe'))).toBe(true),
        {
          timeout: 20_000,
          interval: 20,
        },
      );
      worker.kill('SIGKILL');
      expect(await exited(worker)).toBeNull();

      // Restart. 'single' takes the dead process's leases back at start(); 'multi-worker'
      // cannot know the process is dead and waits for its leases to expire.
      const store = await AxSQLiteEventStore.open({ filename });
      const [safeId, unsafeId] = receipt.deliveryIds as [string, string];
      // Only the target that is not idempotent marked itself running (the mark that stops a
      // replay); the idempotent one stayed claimed while it ran.
      expect((await store.getRun(safeId))?.status).toBe('claimed');
      expect((await store.getRun(unsafeId))?.status).toBe('running');
      const safe = vi.fn(async () => ({ redone: true }));
      const unsafe = vi.fn(async () => ({ replayed: true }));
      const restarted = eventRuntime({
        routes,
        targets: [
          { id: 'safe', retrySafety: 'idempotent', invoke: safe },
          { id: 'unsafe', invoke: unsafe },
        ],
        store,
        coordination,
      });
      await restarted.start();
      await restarted.waitForIdle({ timeoutMs: 10_000 });
      expect(safe).toHaveBeenCalledTimes(1);
      expect(unsafe).not.toHaveBeenCalled();
      expect(await store.getRun(safeId)).toMatchObject({
        status: 'succeeded',
        attempt: 2,
        output: { redone: true },
      });
      expect(await store.getRun(unsafeId)).toMatchObject({ status: 'outcome_unknown', attempt: 2 });
      expect((await store.listDeadLetters()).map((l) => [l.deliveryId, l.reason])).toEqual([
        [unsafeId, 'outcome_unknown'],
      ]);
      expect(
        (await restarted.publish({ event: { id: 'job-1', source: 'app://crash', type: 'job' } })).duplicate,
      ).toBe(true);
      await restarted.close();
      await store.close();
    },
    60_000,
  );

  it('shares one database between two worker processes: each delivery runs once, in order per instance', async () => {
    const dir = mkdtempSync(join(work, 'multi-'));
    const filename = join(dir, 'events.db');
    const store = await AxSQLiteEventStore.open({ filename });
    const publisher = eventRuntime({
      routes: [eventRoute('work').types('job').instanceKey(eventPath.data('k')).wake('work').build()],
      targets: [{ id: 'work', retrySafety: 'idempotent', invoke: () => undefined }],
      store,
      scheduling: 'host',
      coordination: 'multi-worker',
    });
    const total = 240;
    const ids: string[] = [];
    for (let i = 0; i < total; i++) {
      const r = await publisher.publish({
        event: { id: `j${i}`, source: 'app://multi', type: 'job', data: { k: `k${i % 8}`, i } },
      });
      ids.push(...r.deliveryIds);
    }
    const workers = [child('work', filename, dir), child('work', filename, dir)];
    await vi.waitFor(() => expect(workers.every((w) => existsSync(join(dir, `ready-${w.pid}`)))).toBe(true), {
      timeout: 20_000,
      interval: 20,
    });
    writeFileSync(join(dir, 'go'), '');
    const codes = await Promise.all(workers.map(exited));
    expect(codes).toEqual([0, 0]);

    type Line = { id: string; k: string; i: number; start: number; end: number; pid: number };
    const lines: Line[] = workers.flatMap((w) => {
      const file = join(dir, `log-${w.pid}`);
      return existsSync(file)
        ? readFileSync(file, 'utf8')
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l) as Line)
        : [];
    });
    expect(lines.map((l) => l.id).sort()).toEqual([...ids].sort());
    expect(new Set(lines.map((l) => l.pid)).size).toBe(2);
    for (let k = 0; k < 8; k++) {
      const runs = lines.filter((l) => l.k === `k${k}`).sort((a, b) => a.start - b.start);
      expect(runs.map((r) => r.i)).toEqual([...runs.map((r) => r.i)].sort((a, b) => a - b));
      for (let j = 1; j < runs.length; j++) {
        expect(runs[j]?.start).toBeGreaterThanOrEqual(runs[j - 1]?.end ?? 0);
      }
    }
    for (const id of ids) expect((await store.getRun(id))?.status).toBe('succeeded');
    await publisher.close();
    await store.close();
  }, 90_000);
});
