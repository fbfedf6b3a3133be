import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AxMCPError } from '../../protocol/errors.js';
import type { JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '../../protocol/jsonrpc.js';
import { AxMCPProcessExitError, AxMCPStdioTransport, type AxMCPStdioTransportOptions } from './index.js';

const NODE = process.execPath;
const require = createRequire(import.meta.url);
const EVERYTHING = join(
  dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist/index.js',
);
const POSIX = process.platform !== 'win32';

/**
 * A scripted MCP-ish server, run with `node -e`. It announces its pid as a `test/pid`
 * notification and answers a few test methods. Behaviour switches come from the environment:
 * GRANDCHILD spawns a grandchild (same process group) that announces itself too,
 * IGNORE_TERM makes both ignore SIGTERM (SERVER_IGNORES_TERM only the server), EXIT_ON_EOF makes
 * the server exit when stdin ends (otherwise it keeps running).
 */
const GRANDCHILD_CODE = `
if (process.env.IGNORE_TERM) process.on('SIGTERM', () => {});
process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'test/pid', params: { role: 'grandchild', pid: process.pid } }) + '\\n');
setInterval(() => {}, 1000);
`;

const SERVER_CODE = `
const { spawn } = require('node:child_process');
const send = (m, cb) => process.stdout.write(JSON.stringify(m) + '\\n', cb);
if (process.env.IGNORE_TERM || process.env.SERVER_IGNORES_TERM) process.on('SIGTERM', () => {});
if (process.env.GRANDCHILD) {
  spawn(process.execPath, ['-e', process.env.GC_CODE], { stdio: ['ignore', 'inherit', 'inherit'], env: process.env });
}
send({ jsonrpc: '2.0', method: 'test/pid', params: { role: 'server', pid: process.pid } });
process.stdin.setEncoding('utf8');
let buffer = '';
process.stdin.on('data', (data) => {
  buffer += data;
  let i;
  while ((i = buffer.indexOf('\\n')) >= 0) {
    const line = buffer.slice(0, i);
    buffer = buffer.slice(i + 1);
    handle(JSON.parse(line));
  }
});
process.stdin.on('end', () => { if (process.env.EXIT_ON_EOF) process.exit(0); });
setInterval(() => {}, 1000);
const ok = (id, result = {}) => ({ jsonrpc: '2.0', id, result });
function handle(m) {
  if (!('id' in m)) {
    if (m.method === 'test/echo-notification') send({ jsonrpc: '2.0', method: 'test/echoed', params: m.params });
    return;
  }
  switch (m.method) {
    case 'ping': return send(ok(m.id, { pid: process.pid }));
    case 'crash': return process.exit(3);
    case 'kill-self': return process.kill(process.pid, 'SIGKILL');
    case 'answer-then-exit': return send(ok(m.id, { last: true }), () => process.exit(0));
    case 'garbage': {
      const limit = Number(process.env.LIMIT);
      process.stdout.write('this is not json\\n');
      process.stdout.write('{"jsonrpc":"2.0"}\\n');
      // An oversized line that would parse as the awaited response, written in pieces.
      const big = JSON.stringify(ok(m.id, { big: 'x'.repeat(limit) }));
      process.stdout.write(big.slice(0, 100));
      process.stdout.write(big.slice(100, limit - 10));
      process.stdout.write(big.slice(limit - 10) + '\\n');
      process.stdout.write(Buffer.from([0xff, 0xfe, 0x0a]));
      send(ok('nobody-asked'));
      process.stdout.write('\\n   \\n');
      // The real answer, split across writes, padded to exactly LIMIT bytes (without the newline).
      const real = JSON.stringify(ok(m.id, { fine: true }));
      const exact = real.slice(0, -1) + ' '.repeat(limit - real.length) + '}';
      process.stdout.write(exact.slice(0, 7));
      return setTimeout(() => process.stdout.write(exact.slice(7) + '\\n'), 20);
    }
    case 'stderr-flood':
      // Far more than a pipe holds: the write never completes unless the parent drains stderr.
      return process.stderr.write('e'.repeat(1024 * 1024) + '\\n', () => send(ok(m.id, { flooded: true })));
    case 'stderr-lines':
      process.stderr.write('hello\\nwor');
      return setTimeout(() => { process.stderr.write('ld\\r\\n'); send(ok(m.id)); }, 20);
    default:
      return send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no ' + m.method } });
  }
}
`;

const open: AxMCPStdioTransport[] = [];

function scripted(
  env: Record<string, string> = {},
  options: Partial<AxMCPStdioTransportOptions> = {},
): {
  transport: AxMCPStdioTransport;
  messages: (JSONRPCRequest | JSONRPCNotification)[];
  closes: (AxMCPError | undefined)[];
  reports: AxMCPError[];
} {
  const messages: (JSONRPCRequest | JSONRPCNotification)[] = [];
  const closes: (AxMCPError | undefined)[] = [];
  const reports: AxMCPError[] = [];
  const transport = new AxMCPStdioTransport({
    command: NODE,
    args: ['-e', SERVER_CODE, 'scripted-server'],
    env: { GC_CODE: GRANDCHILD_CODE, ...env },
    killGraceMs: 300,
    onProtocolError: (error) => reports.push(error),
    ...options,
  });
  transport.setHandlers({ onMessage: (m) => messages.push(m), onClose: (e) => closes.push(e) });
  open.push(transport);
  return { transport, messages, closes, reports };
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((t) => t.close()));
});

let nextId = 1;
const request = (method: string, params?: Record<string, unknown>): JSONRPCRequest => ({
  jsonrpc: '2.0',
  id: nextId++,
  method,
  ...(params ? { params } : {}),
});

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function announced(messages: (JSONRPCRequest | JSONRPCNotification)[], role: string): number[] {
  return messages
    .filter((m) => m.method === 'test/pid' && m.params?.role === role)
    .map((m) => m.params?.pid as number);
}

/**
 * True once the process no longer runs: ESRCH, or a zombie. This sandbox's PID 1 does not
 * reap orphans, so a killed grandchild can linger as a zombie (it is dead, just unreaped).
 */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  if (process.platform !== 'linux') return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2)[0];
    return state === 'Z' || state === 'X';
  } catch {
    return true;
  }
}

async function rejection(promise: Promise<unknown>): Promise<AxMCPError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(AxMCPError);
    return error as AxMCPError;
  }
  throw new Error('expected a rejection');
}

function resultOf(response: JSONRPCResponse): Record<string, unknown> {
  if (!('result' in response)) throw new Error(`error response: ${JSON.stringify(response)}`);
  return response.result;
}

/** Counts per resource type (`PipeWrap`, `ProcessWrap`, `Timeout`, …). */
const resources = () => {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
};
/**
 * What is active now beyond the baseline. Vitest's own timers may come and go, so a type may
 * drop below its baseline; none may rise above it.
 */
const extra = (baseline: Map<string, number>) =>
  [...resources()].filter(([type, count]) => count > (baseline.get(type) ?? 0)).map(([type]) => type);

describe('AxMCPStdioTransport against @modelcontextprotocol/server-everything', () => {
  it('initializes, lists tools and calls one over stdio', async () => {
    const stderr: string[] = [];
    const messages: (JSONRPCRequest | JSONRPCNotification)[] = [];
    const transport = new AxMCPStdioTransport({
      command: NODE,
      args: [EVERYTHING, 'stdio'],
      onStderr: (line) => stderr.push(line),
      killGraceMs: 10_000,
    });
    open.push(transport);
    transport.setHandlers({ onMessage: (m) => messages.push(m) });
    expect(transport.kind).toBe('stdio');
    expect(transport.endpoint).toBe(`${NODE} ${EVERYTHING} stdio`);
    expect(transport.endpointKey).toBe(`stdio:${NODE} ${EVERYTHING} stdio`);

    await transport.start();
    const pid = transport.pid;
    expect(pid).toBeGreaterThan(0);
    const init = await transport.request({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'ax-mcp-test', version: '0.0.0' },
      },
    });
    expect(init.id).toBe(1);
    const initResult = resultOf(init);
    expect(initResult.protocolVersion).toBe('2025-11-25');
    expect(initResult.serverInfo).toMatchObject({ name: expect.any(String), version: expect.any(String) });
    expect(initResult.capabilities).toMatchObject({ tools: expect.any(Object) });
    await transport.notify({ jsonrpc: '2.0', method: 'notifications/initialized' });

    const list = resultOf(await transport.request({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
    const tools = list.tools as { name: string; inputSchema: { type: string } }[];
    expect(Array.isArray(tools)).toBe(true);
    expect(tools.length).toBeGreaterThan(3);
    for (const tool of tools) expect(tool.inputSchema.type).toBe('object');
    expect(tools.map((t) => t.name)).toContain('echo');

    const call = resultOf(
      await transport.request({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'echo', arguments: { message: 'hello over stdio' } },
      }),
    );
    expect(JSON.stringify(call.content)).toContain('hello over stdio');
    expect(stderr.join('\n')).toContain('Starting default (STDIO) server');

    const started = Date.now();
    await transport.close();
    // The server exits on stdin EOF, so close() does not wait out the grace period.
    expect(Date.now() - started).toBeLessThan(5000);
    expect(gone(pid!)).toBe(true);
  });
});

describe('AxMCPStdioTransport lifecycle', () => {
  it('shares one spawn between concurrent starts and starts lazily on the first request', async () => {
    const { transport, messages } = scripted();
    expect(transport.pid).toBeUndefined();
    await Promise.all([transport.start(), transport.start(), transport.start()]);
    const pid = transport.pid;
    await transport.start();
    expect(transport.pid).toBe(pid);
    expect(resultOf(await transport.request(request('ping'))).pid).toBe(pid);
    expect(announced(messages, 'server')).toEqual([pid]);

    const lazy = scripted();
    expect(resultOf(await lazy.transport.request(request('ping'))).pid).toBe(lazy.transport.pid);
  });

  it('passes notifications both ways and only the given env on top of a minimal inherited set', async () => {
    const { transport, messages } = scripted({ EXTRA: 'yes' });
    await transport.notify({ jsonrpc: '2.0', method: 'test/echo-notification', params: { n: 1 } });
    await until(() => messages.some((m) => m.method === 'test/echoed'));
    expect(messages.find((m) => m.method === 'test/echoed')?.params).toEqual({ n: 1 });

    const printEnv = new AxMCPStdioTransport({
      command: NODE,
      args: [
        '-e',
        'process.stdout.write(JSON.stringify({jsonrpc:"2.0",method:"env",params:process.env})+"\\n")',
      ],
      env: { EXTRA: 'yes' },
    });
    open.push(printEnv);
    const seen: JSONRPCNotification[] = [];
    printEnv.setHandlers({ onMessage: (m) => seen.push(m) });
    process.env.AX_MCP_TEST_SECRET = 'do-not-leak';
    try {
      await printEnv.start();
      await until(() => seen.length > 0);
    } finally {
      delete process.env.AX_MCP_TEST_SECRET;
    }
    const env = seen[0]?.params ?? {};
    expect(env.EXTRA).toBe('yes');
    expect(env.PATH).toBe(process.env.PATH);
    expect(env.AX_MCP_TEST_SECRET).toBeUndefined();
  });

  it('fails to start a missing command with a typed error naming it, and leaks nothing', async () => {
    const before = resources();
    const transport = new AxMCPStdioTransport({
      command: '/nonexistent/ax-mcp-no-such-server',
      args: ['--x'],
    });
    open.push(transport);
    const error = await rejection(transport.start());
    expect(error.code).toBe('transport_error');
    expect(error.message).toContain('/nonexistent/ax-mcp-no-such-server');
    expect(error.message).toContain('ENOENT');
    expect(error.endpoint).toBe('/nonexistent/ax-mcp-no-such-server --x');
    expect((await rejection(transport.request(request('ping')))).code).toBe('transport_error');
    await transport.close();
    expect((await rejection(transport.start())).code).toBe('closed');
    await new Promise((resolve) => setImmediate(resolve));
    expect(extra(before)).toEqual([]);
  });

  it('rejects an aborted start and request with an abort error', async () => {
    const { transport } = scripted();
    expect((await rejection(transport.start(AbortSignal.abort()))).code).toBe('aborted');
    await transport.start();
    const error = await rejection(
      transport.request(request('never-answered-slowly'), { signal: AbortSignal.abort() }),
    );
    expect(error.code).toBe('aborted');
  });
});

describe.skipIf(!POSIX)('AxMCPStdioTransport process-tree cleanup', () => {
  it('ends a shell wrapper, the server under it and a background grandchild', async () => {
    const { transport, messages } = scripted(
      { NODE_BIN: NODE, SERVER_CODE },
      {
        command: '/bin/sh',
        args: ['-c', '"$NODE_BIN" -e "$GC_CODE" & "$NODE_BIN" -e "$SERVER_CODE"; wait'],
      },
    );
    await transport.start();
    const shell = transport.pid!;
    await until(
      () => announced(messages, 'server').length === 1 && announced(messages, 'grandchild').length === 1,
    );
    const [server] = announced(messages, 'server');
    const [grandchild] = announced(messages, 'grandchild');
    expect(resultOf(await transport.request(request('ping'))).pid).toBe(server);
    const pids = [shell, server!, grandchild!];
    for (const pid of pids) expect(gone(pid)).toBe(false);

    await transport.close();
    for (const pid of pids) expect(gone(pid), `pid ${pid}`).toBe(true);
  });

  it('closes stdin first: a server that exits on EOF is not waited for, its grandchild still ends', async () => {
    const { transport, messages } = scripted({ GRANDCHILD: '1', EXIT_ON_EOF: '1' }, { killGraceMs: 5000 });
    await transport.start();
    await until(() => announced(messages, 'grandchild').length === 1);
    const server = transport.pid!;
    const [grandchild] = announced(messages, 'grandchild');
    const started = Date.now();
    await transport.close();
    expect(Date.now() - started).toBeLessThan(2500);
    expect(gone(server)).toBe(true);
    expect(gone(grandchild!)).toBe(true);
  });

  it('signals live server groups if this process exits without closing them', async () => {
    const listenersBefore = process.listeners('exit');
    // The server survives SIGTERM, so the transport sees no exit and does no cleanup of its own:
    // only a signal to the whole group can end the grandchild.
    const { transport, messages, closes } = scripted({ GRANDCHILD: '1', SERVER_IGNORES_TERM: '1' });
    await transport.start();
    await until(() => announced(messages, 'grandchild').length === 1);
    const onParentExit = process.listeners('exit').find((listener) => !listenersBefore.includes(listener));
    expect(onParentExit).toBeTypeOf('function');
    const [grandchild] = announced(messages, 'grandchild');
    // Run the hook as process exit would (emitting 'exit' would also run the test runner's hooks).
    (onParentExit as (code: number) => void)(0);
    await until(() => gone(grandchild!), 5000);
    expect(gone(transport.pid!)).toBe(false);
    expect(closes).toEqual([]);
    await transport.close();
    expect(gone(grandchild!)).toBe(true);
    expect(process.listeners('exit')).toEqual(listenersBefore);
  });

  it('SIGKILLs a tree that ignores EOF and SIGTERM once the grace period is over', async () => {
    const { transport, messages } = scripted({ GRANDCHILD: '1', IGNORE_TERM: '1' }, { killGraceMs: 300 });
    await transport.start();
    await until(() => announced(messages, 'grandchild').length === 1);
    const server = transport.pid!;
    const [grandchild] = announced(messages, 'grandchild');
    const pending = rejection(transport.request(request('never-answered')));
    const started = Date.now();
    await transport.close();
    const elapsed = Date.now() - started;
    // EOF wait (300 ms), then SIGTERM is ignored for the grace (300 ms), then SIGKILL.
    expect(elapsed).toBeGreaterThanOrEqual(550);
    expect(elapsed).toBeLessThan(3000);
    expect(gone(server)).toBe(true);
    expect(gone(grandchild!)).toBe(true);
    expect((await pending).code).toBe('closed');
  });
});

describe('AxMCPStdioTransport with a misbehaving server', () => {
  it('reports invalid, non-UTF-8, unknown-id and oversized lines, and stays usable', async () => {
    const limit = 1024;
    const { transport, reports } = scripted({ LIMIT: String(limit) }, { maxMessageBytes: limit });
    // The oversized line carries this request's answer: the caller learns at once, not at its deadline.
    const error = await rejection(transport.request(request('garbage')));
    expect(error.code).toBe('message_too_large');
    await until(() => reports.length >= 6);
    expect(reports.map((r) => r.code)).toEqual([
      'invalid_message', // not JSON
      'invalid_message', // not JSON-RPC
      'message_too_large', // the oversized answer, never delivered
      'invalid_message', // not UTF-8
      'invalid_message', // unknown id
      'invalid_message', // the second answer with the same id: its request already failed
    ]);
    for (const report of reports) expect(report.endpoint).toBe(transport.endpoint);
    expect(resultOf(await transport.request(request('ping'))).pid).toBe(transport.pid);

    const tooBig = await rejection(transport.request(request('ping', { pad: 'y'.repeat(limit) })));
    expect(tooBig.code).toBe('message_too_large');
    expect(resultOf(await transport.request(request('ping'))).pid).toBe(transport.pid);
  });

  it('warns once, without onProtocolError, of a server that writes what is not JSON to stdout', async () => {
    // Dropped in silence, such a server left the caller with a timeout and no clue.
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const quiet = scripted({ LIMIT: '1024' }, { maxMessageBytes: 1024, onProtocolError: undefined });
      await rejection(quiet.transport.request(request('garbage')));
      await rejection(quiet.transport.request(request('garbage')));
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]?.[0])).toContain(
        `the MCP server ${quiet.transport.endpoint}: The server wrote a line to stdout that is not JSON-RPC, and it was dropped: "this is not json"`,
      );
      const heard = scripted({ LIMIT: '1024' }, { maxMessageBytes: 1024 });
      await rejection(heard.transport.request(request('garbage')));
      await until(() => heard.reports.length >= 1);
      expect(warn).toHaveBeenCalledTimes(1);
    } finally {
      warn.mockRestore();
    }
  });

  it('drains stderr by default and delivers it line by line when asked', async () => {
    const quiet = scripted();
    const flood = quiet.transport.request(request('stderr-flood'), { signal: AbortSignal.timeout(5000) });
    expect(resultOf(await flood)).toEqual({ flooded: true });

    const lines: string[] = [];
    const loud = scripted({}, { onStderr: (line) => lines.push(line) });
    await loud.transport.request(request('stderr-lines'));
    await until(() => lines.length >= 2);
    expect(lines).toEqual(['hello', 'world']);
  });

  it('rejects pending requests and calls onClose when the server crashes; start() spawns again', async () => {
    const { transport, closes } = scripted();
    await transport.start();
    const first = transport.pid;
    const error = await rejection(transport.request(request('crash')));
    expect(error.code).toBe('closed');
    expect(error.cause).toBeInstanceOf(AxMCPProcessExitError);
    expect((error.cause as AxMCPProcessExitError).exitCode).toBe(3);
    expect(closes).toHaveLength(1);
    expect(closes[0]).toBeInstanceOf(AxMCPProcessExitError);
    expect(closes[0]?.message).toContain('code 3');
    expect(gone(first!)).toBe(true);

    const after = await rejection(transport.request(request('ping')));
    expect(after.code).toBe('closed');
    expect(after.message).toContain('start()');

    await transport.start();
    expect(transport.pid).not.toBe(first);
    expect(resultOf(await transport.request(request('ping'))).pid).toBe(transport.pid);

    const killed = await rejection(transport.request(request('kill-self')));
    expect((killed.cause as AxMCPProcessExitError).signal).toBe('SIGKILL');
    expect(closes).toHaveLength(2);
  });

  it('delivers a response written just before the server exits', async () => {
    const { transport, closes } = scripted();
    expect(resultOf(await transport.request(request('answer-then-exit')))).toEqual({ last: true });
    await until(() => closes.length === 1);
    expect((closes[0] as AxMCPProcessExitError).exitCode).toBe(0);
  });
});

describe('AxMCPStdioTransport open handles', () => {
  it('leaves no handle, timer or process listener behind after close', async () => {
    // Handles being closed leave the list one loop turn later (they no longer keep the process alive).
    const settle = async () => {
      await new Promise((resolve) => setTimeout(resolve, 0));
      await new Promise((resolve) => setImmediate(resolve));
    };
    await settle();
    const handles = resources();
    const exitListeners = process.listenerCount('exit');

    const { transport, messages } = scripted({ GRANDCHILD: '1' }, { onStderr: () => {} });
    await transport.start();
    await until(() => announced(messages, 'grandchild').length === 1);
    await transport.request(request('ping'));
    expect(extra(handles)).toEqual(expect.arrayContaining(['PipeWrap', 'ProcessWrap']));
    expect(process.listenerCount('exit')).toBe(exitListeners + 1);

    await transport.close();
    await settle();
    expect(extra(handles)).toEqual([]);
    expect(process.listenerCount('exit')).toBe(exitListeners);

    // Same after the server ended on its own.
    const crashing = scripted();
    await rejection(crashing.transport.request(request('crash')));
    await crashing.transport.close();
    await settle();
    expect(extra(handles)).toEqual([]);
    expect(process.listenerCount('exit')).toBe(exitListeners);
  });
});
