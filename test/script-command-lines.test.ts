import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Every bench and project script's command line, as a user types it: --help answers with the usage, and a
// mistake is refused (exit 2, what is wrong, the usage) before anything runs. A bench that
// took `--systems ax,gwx` or `--rounds three` without a word printed a table of something else.

const root = fileURLToPath(new URL('..', import.meta.url));

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function script(path: string, args: string[], env: Record<string, string> = {}): Promise<Ran> {
  return new Promise((resolve) => {
    // No PostgreSQL URL: a script that got past its arguments would skip or fail, never hang.
    const { AX_MCP_BENCH_POSTGRES_URL: _b, AX_MCP_TEST_POSTGRES_URL: _t, ...rest } = process.env;
    execFile(
      process.execPath,
      [path, ...args],
      { cwd: root, env: { ...rest, ...env }, timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const bench = (name: string, args: string[], env?: Record<string, string>) =>
  script(`bench/${name}`, args, env);

const scripts = [
  'run.mjs',
  'client.mjs',
  'event-routing.mjs',
  'server.mjs',
  'studio.mjs',
  'events.mjs',
  'postgres.mjs',
  'queues.mjs',
  'fleet.mjs',
];

describe('bench command lines', () => {
  it.each(scripts)('%s --help prints its usage and exits 0', async (script) => {
    for (const flag of ['--help', '-h']) {
      const ran = await bench(script, [flag]);
      expect(ran, ran.stderr).toMatchObject({ code: 0, stderr: '' });
      expect(ran.stdout).toMatch(/^Usage: /);
      expect(ran.stdout).toContain(`bench/${script}`);
    }
  });

  it.each(scripts)('%s refuses an unknown option before it runs', async (script) => {
    const ran = await bench(script, ['--no-such-option']);
    expect(ran.code).toBe(2);
    expect(ran.stdout).toBe('');
    expect(ran.stderr).toMatch(/^error: .*--no-such-option/);
    expect(ran.stderr).toContain('Usage: ');
  });

  it.each([
    ['run.mjs', ['--rounds', 'three'], '--rounds must be an integer ≥ 1, not "three"'],
    ['run.mjs', ['--rounds', '0'], '--rounds must be an integer ≥ 1, not "0"'],
    ['run.mjs', ['--scenarios', 'call,catalgo'], '--scenarios: "catalgo" is not one of call, catalog'],
    ['run.mjs', ['--clients', 'ax-mcp/node,'], '--clients has an empty item'],
    ['run.mjs', ['--rounds'], "Option '--rounds <value>' argument missing"],
    ['client.mjs', ['--scenario', 'call'], '--client is required'],
    ['event-routing.mjs', ['--store', 'redis'], '--store: "redis" is not one of memory, sqlite, postgres'],
    ['server.mjs', ['--page', '1.5'], '--page must be an integer ≥ 1, not "1.5"'],
    ['studio.mjs', ['--tools', ''], '--tools must be an integer ≥ 1, not ""'],
    ['events.mjs', ['lots'], 'events must be an integer ≥ 1, not "lots"'],
    ['events.mjs', ['10', '20'], 'unexpected argument "20"'],
    ['postgres.mjs', ['-5'], "Unknown option '-5'"],
    ['queues.mjs', ['1e3x'], 'events must be an integer ≥ 1, not "1e3x"'],
    ['fleet.mjs', ['--systems', 'ax,gwx'], '--systems: "gwx" is not one of ax, gw, gwb, pbb, pbf'],
    ['fleet.mjs', ['--scenarios', 'drain,paced,'], '--scenarios has an empty item'],
    ['fleet.mjs', ['--workers', '-1'], "Option '--workers' argument is ambiguous"],
    ['fleet.mjs', ['--workers=-1'], '--workers must be an integer ≥ 1, not "-1"'],
  ])('%s %j is refused: %s', async (script, args, message) => {
    const ran = await bench(script, args);
    expect(ran.code, ran.stdout + ran.stderr).toBe(2);
    expect(ran.stdout).toBe('');
    expect(ran.stderr.split('\n')[0]).toContain(message);
  });

  it('an integer environment variable is checked like an option', async () => {
    const ran = await bench('queues.mjs', [], { AX_MCP_BENCH_PACED: 'many' });
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain('AX_MCP_BENCH_PACED must be an integer ≥ 1, not "many"');
  });

  it('a well-formed command line gets past its arguments', async () => {
    // fleet.mjs without a database says so and exits 0: the arguments were accepted.
    const ran = await bench('fleet.mjs', ['--quick', '--systems', 'ax,gw', '--scenarios', 'drain']);
    expect(ran).toMatchObject({ code: 0, stderr: '' });
    expect(ran.stdout).toContain('Skipped: set AX_MCP_BENCH_POSTGRES_URL');
  });
});

describe('scripts/conformance.mjs command line', () => {
  it('prints its usage on --help', async () => {
    const ran = await script('scripts/conformance.mjs', ['--help']);
    expect(ran).toMatchObject({ code: 0, stderr: '' });
    expect(ran.stdout).toMatch(/^Usage: node scripts\/conformance.mjs/);
  });

  it.each([
    [['--concurrency', 'x'], '--concurrency must be an integer ≥ 1, not "x"'],
    [['--concurrency', '0'], '--concurrency must be an integer ≥ 1, not "0"'],
    [['--timeout', '500'], '--timeout must be an integer ≥ 1000, not "500"'],
    [['--version', '9.9'], 'unknown --version 9.9 (0.1.16 or alpha)'],
    [['--bogus'], 'unknown argument --bogus'],
  ])('%j is refused before anything runs: %s', async (args, message) => {
    const ran = await script('scripts/conformance.mjs', args);
    expect(ran.code).toBe(2);
    expect(ran.stdout).toBe('');
    expect(ran.stderr.split('\n')[0]).toBe(`conformance: ${message}`);
  });
});
