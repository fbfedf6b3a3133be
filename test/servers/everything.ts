/**
 * `@modelcontextprotocol/server-everything` (the reference server, built on the v1 SDK) as a child
 * process. It binds all interfaces on `PORT` (no host option), so clients must use 127.0.0.1.
 * Modes: `streamableHttp` (endpoint `/mcp`), `sse` (deprecated HTTP+SSE, endpoint `/sse`), `stdio`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer, connect as tcpConnect } from 'node:net';

/** The server's entry script (resolved from this package's dependencies; the package has no exports map). */
export const EVERYTHING_ENTRY = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);

/** Options of {@link startEverythingServer}. */
export interface EverythingOptions {
  mode: 'streamableHttp' | 'sse';
  /** How long to wait for the port to accept connections, ms. Default 15000. */
  startTimeoutMs?: number;
}

/** A running server-everything child process. */
export interface EverythingServer {
  /** `http://127.0.0.1:<port>/mcp` (streamableHttp) or `http://127.0.0.1:<port>/sse` (sse). */
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** The last few KiB of its stderr, for failure messages. */
  stderr(): string;
  /** Kills the process (SIGTERM, then SIGKILL after 3 s) and waits for it to exit. */
  close(): Promise<void>;
}

/** The command line that runs server-everything over stdio (for a stdio client transport). */
export function everythingStdioCommand(): { command: string; args: string[] } {
  return { command: process.execPath, args: [EVERYTHING_ENTRY, 'stdio'] };
}

/** A port that was free a moment ago on 127.0.0.1 (bind 0, read, close). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', resolve);
  });
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.setTimeout(1_000, () => {
      socket.destroy();
      resolve(false);
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
  await exited(child);
  clearTimeout(timer);
}

/** Spawns server-everything on a free port and resolves once it accepts connections. */
export async function startEverythingServer(options: EverythingOptions): Promise<EverythingServer> {
  // A free port can be taken between the probe and the child's bind: retry a few times.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      if (attempt >= 3) throw error;
    }
  }
}

async function startOnce({ mode, startTimeoutMs = 15_000 }: EverythingOptions): Promise<EverythingServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING_ENTRY, mode], {
    env: { ...process.env, PORT: String(port) },
    // stdout carries a log line per request: discard it so the pipe never fills.
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-8_192);
  });
  const deadline = Date.now() + startTimeoutMs;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      await stop(child);
      throw new Error(`server-everything (${mode}) did not start on ${port}: ${stderr.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `http://127.0.0.1:${port}${mode === 'sse' ? '/sse' : '/mcp'}`,
    port,
    pid: child.pid ?? -1,
    stderr: () => stderr,
    close: () => stop(child),
  };
}
