/**
 * `AxMCPStdioTransport.terminate()`: ends the server's process tree (the server and a
 * grandchild in its group), is idempotent, and leaves the transport closed.
 */
import { readFileSync } from 'node:fs';
import process from 'node:process';
import { describe, expect, it } from 'vitest';
import { AxMCPTransportError } from '../../protocol/errors.js';
import type { JSONRPCNotification } from '../../protocol/jsonrpc.js';
import { AxMCPStdioTransport } from './transport.js';

const POSIX = process.platform !== 'win32';

/** A server that starts a grandchild, announces both pids, answers `ping`, and ignores EOF. */
const SERVER = `
const { spawn } = require('node:child_process');
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
send({ jsonrpc: '2.0', method: 'test/pids', params: { server: process.pid, grandchild: child.pid } });
let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (data) => {
  buffer += data;
  let i;
  while ((i = buffer.indexOf('\\n')) >= 0) {
    const m = JSON.parse(buffer.slice(0, i));
    buffer = buffer.slice(i + 1);
    if (m.method === 'ping') send({ jsonrpc: '2.0', id: m.id, result: {} });
  }
});
setInterval(() => {}, 1000);
`;

/** True once the process no longer runs (ESRCH, or an unreaped zombie). */
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

describe.runIf(POSIX)('AxMCPStdioTransport.terminate', () => {
  it('ends the process tree, twice without harm, and later requests fail as closed', async () => {
    const transport = new AxMCPStdioTransport({
      command: process.execPath,
      args: ['-e', SERVER],
      killGraceMs: 200,
    });
    let pids: { server: number; grandchild: number } | undefined;
    transport.setHandlers({
      onMessage: (message) => {
        if (message.method === 'test/pids') pids = (message as JSONRPCNotification).params as typeof pids;
      },
    });
    await transport.start();
    expect(await transport.request({ jsonrpc: '2.0', id: 1, method: 'ping' })).toMatchObject({ result: {} });
    const deadline = Date.now() + 5000;
    while (!pids && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(pids).toBeDefined();
    const { server, grandchild } = pids!;
    expect(transport.pid).toBe(server);
    expect(gone(server)).toBe(false);
    expect(gone(grandchild)).toBe(false);

    // Twice at once, then once more: the same end, no error.
    await Promise.all([transport.terminate(), transport.terminate()]);
    await transport.terminate();
    await transport.close();
    expect(gone(server), `server ${server}`).toBe(true);
    expect(gone(grandchild), `grandchild ${grandchild}`).toBe(true);
    expect(transport.pid).toBeUndefined();

    const error = await transport.request({ jsonrpc: '2.0', id: 2, method: 'ping' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AxMCPTransportError);
    expect((error as AxMCPTransportError).code).toBe('closed');
    await expect(transport.start()).rejects.toMatchObject({ code: 'closed' });
  });
});
