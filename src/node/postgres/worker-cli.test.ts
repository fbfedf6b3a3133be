/**
 * `ax-mcp worker` (`runWorker`, src/cli/worker.ts) in-process: argument checks, module
 * loading, a run stopped by its signal. The multi-process behaviour is in
 * event-store.process.test.ts.
 */

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { runWorker, WORKER_HELP } from '../../cli/worker.js';
import { eventRuntime } from '../../events/runtime.js';
import { AxPostgresEventStore } from './event-store.js';

const url = process.env.AX_MCP_TEST_POSTGRES_URL;
if (!url) {
  console.warn(
    '[postgres/worker-cli.test] SKIPPED (the database part): AX_MCP_TEST_POSTGRES_URL is not set, so ' +
      '`ax-mcp worker` was not run against PostgreSQL (a run; its log when the connections are cut: one ' +
      'error line, one recovered line, no password). Set it, e.g. postgres://postgres@127.0.0.1:5432/test',
  );
}

const dir = mkdtempSync(join(tmpdir(), 'ax-worker-cli-'));
const schemas = new Set<string>();
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (!url || schemas.size === 0) return;
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
});

/** Every text line: an ISO-8601 time, a level, then the message. */
const TEXT_LINE = /^\d{4}-\d\d-\d\dT.*Z (info|warn|error) /;

/**
 * The test database's URL with a password (one the test knows, to look for in the output:
 * under trust authentication the server never asks for it) and an application name that
 * picks this worker's connections out of pg_stat_activity.
 */
function workerUrl(application: string): { url: string; password: string } {
  const u = new URL(url as string);
  if (!u.password) u.password = `pw-${randomBytes(6).toString('hex')}`;
  u.searchParams.set('application_name', application);
  return { url: u.toString(), password: decodeURIComponent(u.password) };
}

/** Cut every connection of `application` (never this session's own). */
async function cutConnections(application: string): Promise<number> {
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  try {
    const cut = await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()',
      [application],
    );
    return cut.rowCount ?? 0;
  } finally {
    await admin.end();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function capture() {
  const lines: string[] = [];
  return {
    lines,
    io: { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l), handleSignals: false },
  };
}

describe('ax-mcp worker: arguments', () => {
  it.each([
    [['--bogus'], /unknown flag --bogus/],
    [['--log-fromat', 'json'], /unknown flag --log-fromat \(did you mean --log-format\?\)/],
    [
      ['--store', 'postgres://db/x', '--module', 'x.js', '--log-format', 'jsno'],
      /--log-format must be text or json, not "jsno" \(did you mean json\?\)/,
    ],
    [['--module', 'x.js'], /--store \(or AX_MCP_STORE\) is required/],
    [['--store', 'mysql://db/x', '--module', 'x.js'], /--store must be a postgres:\/\/ URL/],
    [
      ['--store', 'postgres://db/x?sslmode=requir', '--module', 'x.js'],
      /--store must be a postgres:\/\/ URL, not sslmode 'requir' \(did you mean require\?\)/,
    ],
    [['--store', 'postgres://db/x'], /--module is required/],
    [
      ['--store', 'postgres://db/x', '--module', 'x.js', '--concurrency', '0'],
      /--concurrency must be a positive/,
    ],
    // Node reads "-5" as a flag: the message says so and how to give such a value.
    [['--lease-ms', '-5'], /--lease-ms needs a value: "-5" reads as a flag; .* write --lease-ms=-5/],
    [['--lease-ms=-5', '--store', 'postgres://db/x', '--module', 'x.js'], /--lease-ms must be a positive/],
  ])('%j is a usage error (exit 2, with the help)', async (argv, message) => {
    const { lines, io } = capture();
    const previous = process.env.AX_MCP_STORE;
    delete process.env.AX_MCP_STORE;
    try {
      expect(await runWorker(argv, io)).toBe(2);
    } finally {
      if (previous !== undefined) process.env.AX_MCP_STORE = previous;
    }
    expect(lines.join('\n')).toMatch(message);
    expect(lines.join('\n')).toContain('ax-mcp worker --store');
  });

  it('prints its help', async () => {
    const { lines, io } = capture();
    expect(await runWorker(['--help'], io)).toBe(0);
    expect(lines).toEqual([WORKER_HELP]);
  });

  it('explains a module that exports no routes', async () => {
    const file = join(dir, 'empty.mjs');
    writeFileSync(file, 'export const targets = [];\n');
    const { lines, io } = capture();
    expect(await runWorker(['--store', 'postgres://127.0.0.1:1/none', '--module', file], io)).toBe(2);
    expect(lines.join('\n')).toMatch(/must export routes/);
  });
});

describe.skipIf(!url)('ax-mcp worker: a run', () => {
  it('runs the module’s routes until its signal, then drains and closes everything', async () => {
    const schema = `ax_test_${randomBytes(6).toString('hex')}`;
    schemas.add(schema);
    const seen = join(dir, 'seen.json');
    const file = join(dir, 'runtime.mjs');
    // A module with plain route and target records, and an async default export.
    writeFileSync(
      file,
      `import { writeFileSync } from 'node:fs';
       let closed = false;
       export default async ({ workerId }) => ({
         routes: [{ id: 'ping', match: { types: ['ping'] }, action: 'wake', target: {
           id: 'pong', retrySafety: 'idempotent',
           invoke: (input, ctx) => { writeFileSync(${JSON.stringify(seen)}, JSON.stringify({ input, workerId, closed })); return { ok: true }; },
         } }],
         options: { maxAttempts: 2 },
         close: () => { closed = true; },
       });\n`,
    );
    const stop = new AbortController();
    const { lines, io } = capture();
    const running = runWorker(
      [
        '--store',
        url as string,
        '--schema',
        schema,
        '--module',
        file,
        '--concurrency',
        '2',
        '--worker-id',
        'cli-1',
      ],
      { ...io, signal: stop.signal },
    );
    await vi.waitFor(() => expect(lines.join('\n')).toContain('worker cli-1 started: 2 lanes, store '), {
      timeout: 10_000,
    });
    const store = await AxPostgresEventStore.open({ connectionString: url, schema, poolSize: 2 });
    const publisher = eventRuntime({
      routes: [{ id: 'ping', match: { types: ['ping'] }, action: 'wake', target: 'pong' }],
      store,
      scheduling: 'host',
    });
    const receipt = await publisher.publish({
      event: { id: 'p1', source: 'test://cli', type: 'ping', data: { n: 1 } },
    });
    await vi.waitFor(
      async () => expect((await store.getRun(receipt.deliveryIds[0] as string))?.status).toBe('succeeded'),
      {
        timeout: 10_000,
      },
    );
    stop.abort();
    expect(await running).toBe(0);
    expect(lines.join('\n')).toMatch(/draining[\s\S]*worker cli-1 stopped/);
    for (const line of lines) expect(line).toMatch(TEXT_LINE);
    const { readFileSync } = await import('node:fs');
    expect(JSON.parse(readFileSync(seen, 'utf8'))).toEqual({
      input: { n: 1 },
      workerId: 'cli-1',
      closed: false,
    });
    await publisher.close();
    await store.close();
  });
});

describe.skipIf(!url)('ax-mcp worker: its log when the database connections are cut', () => {
  /** Stops of the workers started, for a test that failed before stopping its own. */
  const opened: (() => Promise<number>)[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((close) => close()));
  });

  /** A worker on a fresh schema, run in-process; its lines and how to stop it. */
  async function start(format: 'text' | 'json', id: string) {
    const schema = `ax_test_${randomBytes(6).toString('hex')}`;
    schemas.add(schema);
    const application = `ax_cli_${randomBytes(6).toString('hex')}`;
    const { url: storeUrl, password } = workerUrl(application);
    const file = join(dir, `cut-${id}.mjs`);
    writeFileSync(
      file,
      `export const routes = [{ id: 'ping', match: { types: ['ping'] }, action: 'wake', target: {
         id: 'pong', retrySafety: 'idempotent', invoke: () => ({ ok: true }) } }];\n`,
    );
    const stop = new AbortController();
    const { lines, io } = capture();
    const argv = ['--store', storeUrl, '--schema', schema, '--module', file, '--worker-id', id];
    const running = runWorker([...argv, '--log-format', format], { ...io, signal: stop.signal });
    await vi.waitFor(() => expect(lines.join('\n')).toContain('started: 4 lanes'), { timeout: 10_000 });
    const store = await AxPostgresEventStore.open({ connectionString: url, schema, poolSize: 2 });
    const publisher = eventRuntime({
      routes: [{ id: 'ping', match: { types: ['ping'] }, action: 'wake', target: 'pong' }],
      store,
      scheduling: 'host',
    });
    const ran = async (n: number) => {
      const receipt = await publisher.publish({
        event: { id: `${id}-${n}`, source: 'test://cli', type: 'ping', data: { n } },
      });
      await vi.waitFor(
        async () => expect((await store.getRun(receipt.deliveryIds[0] as string))?.status).toBe('succeeded'),
        { timeout: 10_000 },
      );
    };
    let stopped: Promise<number> | null = null;
    const close = () => {
      stopped ??= (async () => {
        stop.abort();
        const code = await running;
        await publisher.close();
        await store.close();
        return code;
      })();
      return stopped;
    };
    opened.push(close);
    return { lines, password, application, ran, stop: close };
  }

  it('text: one error line naming the cause, one recovered line, every line timestamped, no password', async () => {
    const worker = await start('text', 'cut-text');
    await worker.ran(1);
    expect(await cutConnections(worker.application)).toBeGreaterThan(0);
    await vi.waitFor(
      () => expect(worker.lines.join('\n')).toMatch(/database recovered after \d+ failures? in /),
      {
        timeout: 15_000,
      },
    );
    // Work goes on, and nothing more is said of the incident.
    await worker.ran(2);
    await sleep(1500);
    expect(await worker.stop()).toBe(0);
    const errors = worker.lines.filter((line) => / error /.test(line));
    expect(errors, worker.lines.join('\n')).toHaveLength(1);
    expect(errors[0]).toMatch(
      / error worker cut-text database unreachable: .*(terminating connection|Connection terminated|LISTEN connection ended)/,
    );
    expect(worker.lines.filter((line) => line.includes('recovered'))).toHaveLength(1);
    for (const line of worker.lines) expect(line).toMatch(TEXT_LINE);
    expect(worker.lines.join('\n')).not.toContain(worker.password);
    expect(worker.lines.join('\n')).toMatch(/started: 4 lanes, store postgres:\/\/…@[^ ]+, schema /);
  }, 40_000);

  it('json: every line parses with time, level and msg; one error record and one recovered record', async () => {
    const worker = await start('json', 'cut-json');
    await worker.ran(1);
    expect(await cutConnections(worker.application)).toBeGreaterThan(0);
    await vi.waitFor(() => expect(worker.lines.join('\n')).toContain('"msg":"database recovered after'), {
      timeout: 15_000,
    });
    await worker.ran(2);
    await sleep(1500);
    expect(await worker.stop()).toBe(0);
    const records = worker.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const record of records) {
      expect(Number.isNaN(Date.parse(record.time as string)), JSON.stringify(record)).toBe(false);
      expect(record.time).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
      expect(['info', 'warn', 'error']).toContain(record.level);
      expect(typeof record.msg).toBe('string');
      expect(record.worker).toBe('cut-json');
    }
    const errors = records.filter((r) => r.level === 'error');
    expect(errors, worker.lines.join('\n')).toHaveLength(1);
    expect(errors[0]).toMatchObject({ incident: 'database', cause: 'unreachable' });
    const recovered = records.filter((r) => String(r.msg).includes('recovered'));
    expect(recovered).toHaveLength(1);
    expect(recovered[0]).toMatchObject({ level: 'info', incident: 'database', cause: 'unreachable' });
    expect(recovered[0]?.failures).toBeGreaterThanOrEqual(1);
    expect(typeof recovered[0]?.durationMs).toBe('number');
    expect(worker.lines.join('\n')).not.toContain(worker.password);
  }, 40_000);
});
