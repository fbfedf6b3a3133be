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
import { afterAll, describe, expect, it, vi } from 'vitest';
import { runWorker, WORKER_HELP } from '../../cli/worker.js';
import { eventRuntime } from '../../events/runtime.js';
import { AxPostgresEventStore } from './event-store.js';

const url = process.env.AX_MCP_TEST_POSTGRES_URL;
if (!url) {
  console.warn(
    '[postgres/worker-cli.test] SKIPPED (the database part): AX_MCP_TEST_POSTGRES_URL is not set, so ' +
      '`ax-mcp worker` was not run against PostgreSQL. Set it, e.g. postgres://postgres@127.0.0.1:5432/test',
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

function capture() {
  const lines: string[] = [];
  return {
    lines,
    io: { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l), handleSignals: false },
  };
}

describe('ax-mcp worker: arguments', () => {
  it.each([
    [['--bogus'], /Unknown option '--bogus'/],
    [['--module', 'x.js'], /--store \(or AX_MCP_STORE\) is required/],
    [['--store', 'mysql://db/x', '--module', 'x.js'], /--store must be a postgres:\/\/ URL/],
    [['--store', 'postgres://db/x'], /--module is required/],
    [
      ['--store', 'postgres://db/x', '--module', 'x.js', '--concurrency', '0'],
      /--concurrency must be a positive/,
    ],
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
    await vi.waitFor(() => expect(lines.join('\n')).toContain('cli-1: running on '), { timeout: 10_000 });
    expect(lines.join('\n')).not.toContain('postgres://');
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
    expect(lines.join('\n')).toMatch(/draining[\s\S]*cli-1: stopped/);
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
