import { createHash, createHmac } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { type AxMCPAuthentication, applyAuthentication } from './authentication.js';
import { axMCPHMACAuthentication } from './hmac.js';
import { axMCPAPIKeyAuthentication } from './strategies.js';

const url = new URL('https://mcp.example.com/mcp?tenant=7');

async function run(strategy: AxMCPAuthentication | AxMCPAuthentication[], body?: string, method = 'POST') {
  const input = body === undefined ? { method, url } : { method, url, body };
  return applyAuthentication(strategy, input);
}

/** Asserts that a strategy's printable forms do not contain any of `secrets`. */
function expectRedacted(strategy: AxMCPAuthentication, ...secrets: string[]) {
  const forms = [JSON.stringify(strategy), String(strategy), inspect(strategy, { depth: 5 })];
  for (const form of forms) for (const secret of secrets) expect(form).not.toContain(secret);
}

describe('axMCPHMACAuthentication', () => {
  const secret = 'shh-hmac-secret';
  const fixed = { keyId: 'key-1', secret, now: () => 1_700_000_000_123, nonce: () => 'nonce-abc' };

  function expectedSignature(canonical: string, key: string | Buffer = secret): string {
    return createHmac('sha256', key).update(canonical, 'utf8').digest('hex');
  }

  it('signs method, path and query, body hash, timestamp and nonce', async () => {
    const body = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}';
    const { headers } = await run(axMCPHMACAuthentication(fixed), body);
    const bodyHash = createHash('sha256').update(body, 'utf8').digest('hex');
    const canonical = `POST\n/mcp?tenant=7\n${bodyHash}\n1700000000\nnonce-abc`;
    expect(headers.get('x-signature')).toBe(
      `keyId=key-1,algorithm=hmac-sha256,signature=${expectedSignature(canonical)}`,
    );
    expect(headers.get('x-timestamp')).toBe('1700000000');
    expect(headers.get('x-nonce')).toBe('nonce-abc');
  });

  it('hashes an absent body as empty and accepts a byte secret', async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 251, 252]);
    const strategy = axMCPHMACAuthentication({ ...fixed, secret: new Uint8Array(bytes) });
    const { headers } = await applyAuthentication(strategy, {
      method: 'get',
      url: 'https://mcp.example.com/sse',
    });
    const empty = createHash('sha256').update('').digest('hex');
    const canonical = `GET\n/sse\n${empty}\n1700000000\nnonce-abc`;
    expect(headers.get('x-signature')).toContain(`signature=${expectedSignature(canonical, bytes)}`);
  });

  it('covers the query parameters of earlier strategies', async () => {
    const strategies = [
      axMCPAPIKeyAuthentication({ key: 'k', query: 'key' }),
      axMCPHMACAuthentication(fixed),
    ];
    const { headers, url: signed } = await run(strategies);
    expect(signed.search).toBe('?tenant=7&key=k');
    const canonical = `POST\n/mcp?tenant=7&key=k\n${createHash('sha256').update('').digest('hex')}\n1700000000\nnonce-abc`;
    expect(headers.get('x-signature')).toContain(`signature=${expectedSignature(canonical)}`);
  });

  it('uses a fresh random nonce by default', async () => {
    const strategy = axMCPHMACAuthentication({ keyId: 'k', secret });
    const a = (await run(strategy)).headers.get('x-nonce');
    const b = (await run(strategy)).headers.get('x-nonce');
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(b).toMatch(/^[0-9a-f]{32}$/);
    expect(a).not.toBe(b);
  });

  it('validates its options and redacts itself', () => {
    expect(() => axMCPHMACAuthentication({ keyId: 'a,b', secret })).toThrow(/keyId/);
    expect(() => axMCPHMACAuthentication({ keyId: 'k', secret: '' })).toThrow(/empty/);
    const strategy = axMCPHMACAuthentication(fixed);
    expect(strategy.toJSON()).toEqual({ kind: 'hmac', keyId: 'key-1', secret: '[redacted]' });
    expectRedacted(strategy, secret);
  });
});
