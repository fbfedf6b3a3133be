/**
 * The processes of the chaos campaign: the build every child loads, the MCP server (killed and
 * started again on one port), the source processes and the worker processes. Each child writes
 * its stdout and stderr to a file in the campaign directory (no pipe can fill up); `tail(name)`
 * shows the end of it for failure messages.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const ROOT = resolve(import.meta.dirname, '../..');
const HERE = join(ROOT, 'test', 'chaos');

/**
 * Compiles the library (core, node entry, CLI worker) with the project's `tsc` into
 * `node_modules/.cache/ax-mcp-chaos/` (inside the repo, so `pg` and the other dependencies
 * resolve), as the PostgreSQL process tests do. Type errors elsewhere in the tree (others
 * editing it) do not stop the emit: only missing output does.
 */
export function buildLibrary(): string {
  const cache = join(ROOT, 'node_modules', '.cache', 'ax-mcp-chaos');
  mkdirSync(cache, { recursive: true });
  const out = mkdtempSync(join(cache, 'build-'));
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const args = [
    ...['--outDir', out, '--rootDir', join(ROOT, 'src')],
    ...['--module', 'NodeNext', '--moduleResolution', 'NodeNext', '--target', 'ES2022'],
    ...['--lib', 'ES2023,DOM,DOM.Iterable', '--types', 'node', '--skipLibCheck', '--strict'],
    ...['--resolveJsonModule', '--esModuleInterop'],
    join(ROOT, 'src/index.ts'),
    join(ROOT, 'src/node.ts'),
    join(ROOT, 'src/cli/worker.ts'),
  ];
  let diagnostics = '';
  try {
    execFileSync(process.execPath, [tsc, ...args], { cwd: ROOT, stdio: 'pipe' });
  } catch (error) {
    diagnostics = String((error as { stdout?: Buffer }).stdout ?? error).slice(0, 2000);
  }
  for (const file of ['index.js', 'node.js', 'cli/worker.js', 'events/index.js']) {
    if (!existsSync(join(out, file))) throw new Error(`The chaos build has no ${file}:\n${diagnostics}`);
  }
  writeFileSync(join(out, 'package.json'), '{"type":"module"}');
  writeFileSync(
    join(out, 'worker.mjs'),
    `import { runWorker } from './cli/worker.js';\nprocess.exitCode = await runWorker(process.argv.slice(2));\n`,
  );
  return out;
}

/** A child with its output in a file. */
export interface Child {
  readonly name: string;
  readonly proc: ChildProcess;
  readonly outFile: string;
  stopped: boolean;
  exited(): boolean;
  untilExit(): Promise<void>;
  output(): string;
}

export function spawnChild(
  dir: string,
  name: string,
  script: string,
  args: string[],
  env: Record<string, string>,
): Child {
  const outFile = join(dir, `${name}.out`);
  const fd = openSync(outFile, 'a');
  const proc = spawn(process.execPath, [script, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', fd, fd],
  });
  const exit = new Promise<void>((r) => proc.once('exit', () => r()));
  return {
    name,
    proc,
    outFile,
    stopped: false,
    exited: () => proc.exitCode !== null || proc.signalCode !== null,
    untilExit: () => exit,
    output: () => (existsSync(outFile) ? readFileSync(outFile, 'utf8') : ''),
  };
}

/** The last lines a child printed. */
export function tail(child: Child, chars = 1500): string {
  return child.output().slice(-chars);
}

/** SIGCONT if stopped, then `signal`; after `graceMs` SIGKILL. Resolves when it exited. */
export async function stopChild(child: Child, signal: NodeJS.Signals = 'SIGTERM', graceMs = 10_000) {
  if (child.exited()) return;
  if (child.stopped) {
    child.proc.kill('SIGCONT');
    child.stopped = false;
  }
  child.proc.kill(signal);
  const timer = setTimeout(() => child.proc.kill('SIGKILL'), graceMs);
  await child.untilExit();
  clearTimeout(timer);
}

export function accepts(port: number): Promise<boolean> {
  return new Promise((r) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      r(true);
    });
    socket.once('error', () => r(false));
    socket.setTimeout(1000, () => {
      socket.destroy();
      r(false);
    });
  });
}

/** Polls `check` every `everyMs` until it holds; returns false after `timeoutMs`. */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await sleep(everyMs);
  }
}

export interface ServerOptions {
  /** `legacy` (default): `server.mjs`, the v1 SDK; `modern`: `server-modern.mjs`, the v2 SDK. */
  era?: 'legacy' | 'modern';
  dir: string;
  port: number;
  log: string;
  seed: number;
  generation: number;
  emit: boolean;
  uris: number;
  emitMs: number;
}

/** Starts an MCP server process on `port`; resolves when the port accepts connections. */
export async function startServer(o: ServerOptions): Promise<Child> {
  const modern = o.era === 'modern';
  const script = join(HERE, modern ? 'server-modern.mjs' : 'server.mjs');
  const child = spawnChild(o.dir, `server${modern ? '-modern' : ''}-${o.generation}`, script, [], {
    PORT: String(o.port),
    CHAOS_LOG: o.log,
    CHAOS_SEED: String((o.seed + o.generation * 7919) >>> 0),
    CHAOS_EMIT: o.emit ? '1' : '0',
    CHAOS_URIS: String(o.uris),
    CHAOS_EMIT_MS: String(o.emitMs),
  });
  // The port of a SIGKILLed predecessor is free at once; a fresh bind can still race: retry.
  const up = await until(async () => child.exited() || (await accepts(o.port)), 15_000, 25);
  if (!up || child.exited()) {
    throw new Error(`The chaos MCP server did not start on ${o.port}:\n${tail(child)}`);
  }
  return child;
}

/** Calls a control endpoint of the server (straight to its port, not through the proxy). */
export async function control<T = unknown>(port: number, path: string, method = 'POST'): Promise<T> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    signal: AbortSignal.timeout(15_000),
  });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return (await response.json()) as T;
}

export const SOURCE_SCRIPT = join(HERE, 'source.mjs');
export const WORKER_MODULE = join(HERE, 'module.mjs');
