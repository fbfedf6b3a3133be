/**
 * A stdio server whose answer is a line over `maxMessageBytes` (test/servers/hostile-stdio.mjs):
 * the line is dropped unread, as documented, and the request it answered fails at once with
 * code `message_too_large` instead of waiting for its timeout — when the id is readable from the
 * line's start, and when it is not but the owner is certain. A request whose answer may still
 * come is never failed.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { AxMCPClient, type AxMCPError, AxMCPMemoryEraStore } from '../src/index.js';
import { AxMCPStdioTransport } from '../src/node.js';

const SERVER = fileURLToPath(new URL('./servers/hostile-stdio.mjs', import.meta.url));
/** Long enough that a request failing "at once" is told apart from one that timed out. */
const TIMEOUT_MS = 20_000;

const clients: AxMCPClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

async function hostile() {
  const reports: AxMCPError[] = [];
  const transport = new AxMCPStdioTransport({
    command: process.execPath,
    args: [SERVER],
    maxMessageBytes: 16 * 1024,
    killGraceMs: 500,
    onProtocolError: (error) => reports.push(error),
  });
  const client = new AxMCPClient(transport, {
    namespace: 'hostile',
    era: 'legacy',
    eraStore: new AxMCPMemoryEraStore(),
    timeoutMs: TIMEOUT_MS,
  });
  clients.push(client);
  await client.init();
  await client.listTools();
  return { client, reports };
}

function text(result: { content: ReadonlyArray<{ type: string; [key: string]: unknown }> }): string {
  return result.content.map((block) => (block.type === 'text' ? String(block.text) : '')).join('');
}

async function failure(promise: Promise<unknown>): Promise<AxMCPError> {
  try {
    await promise;
  } catch (error) {
    return error as AxMCPError;
  }
  throw new Error('expected a rejection');
}

describe('stdio: an answer over maxMessageBytes', () => {
  it('with its id at the start: the request fails at once with message_too_large, the client goes on', async () => {
    const { client, reports } = await hostile();
    const started = Date.now();
    const error = await failure(client.callTool('big', { layout: 'id-first' }));
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error.code).toBe('message_too_large');
    expect(error.message).toContain('"tools/call"');
    expect(reports.map((report) => report.code)).toEqual(['message_too_large']);
    expect(text(await client.callTool('ok'))).toBe('ok');
  });

  it('with its id out of reach, while it was the only request waiting: that request fails at once', async () => {
    const { client, reports } = await hostile();
    const started = Date.now();
    const error = await failure(client.callTool('big', { layout: 'result-first' }));
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error.code).toBe('message_too_large');
    expect(reports.map((report) => report.code)).toEqual(['message_too_large']);
    expect(text(await client.callTool('ok'))).toBe('ok');
  });

  it('with its id out of reach among two waiting: the owner fails once the other got its own answer', async () => {
    const { client } = await hostile();
    const order: string[] = [];
    const slow = client.callTool('slow', { ms: 600 }).then((result) => {
      order.push('slow answered');
      return result;
    });
    const big = failure(client.callTool('big', { layout: 'result-first' })).then((error) => {
      order.push('big failed');
      return error;
    });
    const started = Date.now();
    expect(text(await slow)).toBe('slow done');
    const error = await big;
    expect(error.code).toBe('message_too_large');
    // Not before the slow answer ruled the slow call out, not at the timeout.
    expect(order).toEqual(['slow answered', 'big failed']);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('an oversized notification fails nobody: the waiting request gets its answer', async () => {
    const { client, reports } = await hostile();
    expect(text(await client.callTool('big', { layout: 'notification' }))).toBe('after the notification');
    expect(reports.map((report) => report.code)).toEqual(['message_too_large']);
  });

  it('a lost answer that may be an aborted request’s late one fails no request still waiting', async () => {
    const { client } = await hostile();
    const stop = new AbortController();
    // Aborted after 100 ms; the server ignores the cancellation and answers it, oversized, at 500 ms.
    const aborted = failure(client.callTool('slow', { ms: 500, oversized: true }, { signal: stop.signal }));
    setTimeout(() => stop.abort(), 100);
    expect((await aborted).code).toBe('aborted');
    // Waiting while that late, unreadable answer arrives: it may be either request's.
    const waiting = client.callTool('slow', { ms: 1_000 });
    expect(text(await waiting)).toBe('slow done');
  });
});
