/**
 * A regression test of what the chaos campaign found (a 503 at the proxy while a source's client
 * re-initialized a lost 2025-11-25 session): when the handshake of a session recovery fails,
 * `LegacyWire.recover()` leaves a rejected promise nobody handles — `#handshaking =
 * handshake.then(() => {})` is only awaited (with a catch) by requests that arrive during the
 * handshake. With Node's default `unhandledRejection` behaviour the process ends: one 503 on
 * `notifications/initialized` (or on `initialize`) after a server restart kills a source process.
 *
 * The peer is a raw node:http MCP endpoint: it answers `initialize` with a session, then loses
 * the session (404) and answers the second `notifications/initialized` with 503.
 *
 * Fixed; this test keeps it fixed.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { httpClient } from '../helpers/clients.js';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
});

describe('a session recovery whose handshake fails', () => {
  it('leaves no unhandled rejection behind (one would end a Node process)', async () => {
    let sessions = 0;
    let initialized = 0;
    const http = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method !== 'POST') return void res.writeHead(405).end();
        const body = JSON.parse(Buffer.concat(chunks).toString() || '{}');
        const session = req.headers['mcp-session-id'];
        if (body.method === 'initialize') {
          sessions++;
          res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': `s${sessions}` });
          return void res.end(
            JSON.stringify({
              jsonrpc: '2.0',
              id: body.id,
              result: {
                protocolVersion: '2025-11-25',
                capabilities: {},
                serverInfo: { name: 'r', version: '1' },
              },
            }),
          );
        }
        if (body.method === 'notifications/initialized') {
          initialized++;
          return void res.writeHead(initialized === 1 ? 202 : 503).end();
        }
        // Session s1 is lost: the client must re-initialize.
        if (session === 's1') {
          res.writeHead(404, { 'content-type': 'application/json' });
          return void res.end(
            JSON.stringify({
              jsonrpc: '2.0',
              id: body.id,
              error: { code: -32001, message: 'Session not found' },
            }),
          );
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: {} }));
      });
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise((r) => http.close(r)));
    const port = (http.address() as AddressInfo).port;

    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    closers.push(async () => process.off('unhandledRejection', onUnhandled));

    const client = httpClient(`http://127.0.0.1:${port}/mcp`, { era: 'legacy' }, { retry: { attempts: 1 } });
    closers.push(() => client.close());
    await client.init();
    // The server lost the session: the ping triggers a recovery whose handshake gets a 503.
    const ping = await client.ping().then(
      () => 'ok',
      (error: unknown) => String(error),
    );
    await new Promise((r) => setTimeout(r, 200));
    console.log(
      `[regression] ping: ${ping}; sessions ${sessions}; unhandled: ${unhandled.map(String).join('; ')}`,
    );
    expect(sessions).toBe(2);
    expect(unhandled).toEqual([]);
  });
});
