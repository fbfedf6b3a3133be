import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { AxMCPError } from '../protocol/errors.js';
import { type AxMCPAuthentication, applyAuthentication } from './authentication.js';
import {
  axMCPAPIKeyAuthentication,
  axMCPBasicAuthentication,
  axMCPBearerAuthentication,
} from './strategies.js';

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

describe('axMCPBearerAuthentication', () => {
  it('sets Authorization from a fixed token', async () => {
    const { headers } = await run(axMCPBearerAuthentication('tok-123'));
    expect(headers.get('authorization')).toBe('Bearer tok-123');
  });

  it('asks a token function on every request, passing the request', async () => {
    let n = 0;
    const seen: string[] = [];
    const strategy = axMCPBearerAuthentication(async (request) => {
      seen.push(`${request.method} ${request.url.pathname}`);
      return `tok-${++n}`;
    });
    expect((await run(strategy)).headers.get('authorization')).toBe('Bearer tok-1');
    expect((await run(strategy, undefined, 'get')).headers.get('authorization')).toBe('Bearer tok-2');
    expect(seen).toEqual(['POST /mcp', 'GET /mcp']);
  });

  it('refuses a token that would break the header, without echoing it', async () => {
    expect(() => axMCPBearerAuthentication('secret\r\nX-Evil: 1')).toThrow(AxMCPError);
    const error = await run(axMCPBearerAuthentication(() => 'has space-secret')).catch((e) => e);
    expect(error).toBeInstanceOf(AxMCPError);
    expect(error.code).toBe('invalid_argument');
    expect(error.message).not.toContain('space-secret');
  });

  it('redacts itself', () => {
    const strategy = axMCPBearerAuthentication('tok-very-secret');
    expect(strategy.toJSON()).toEqual({ kind: 'bearer', token: '[redacted]' });
    expect(String(strategy)).toBe('[AxMCPAuthentication bearer]');
    expectRedacted(strategy, 'tok-very-secret');
  });
});

describe('axMCPBasicAuthentication', () => {
  it('matches the RFC 7617 examples', async () => {
    const aladdin = await run(axMCPBasicAuthentication({ username: 'Aladdin', password: 'open sesame' }));
    expect(aladdin.headers.get('authorization')).toBe('Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==');
    const pound = await run(axMCPBasicAuthentication({ username: 'test', password: '123\u00a3' }));
    expect(pound.headers.get('authorization')).toBe('Basic dGVzdDoxMjPCow==');
  });

  it('encodes any Unicode as UTF-8', async () => {
    const username = '用户';
    const password = 'пароль🔑';
    const { headers } = await run(axMCPBasicAuthentication({ username, password }));
    const expected = Buffer.from(`${username}:${password}`, 'utf8').toString('base64');
    expect(headers.get('authorization')).toBe(`Basic ${expected}`);
  });

  it('refuses a username with a colon and redacts itself', () => {
    expect(() => axMCPBasicAuthentication({ username: 'a:b', password: 'p' })).toThrow(
      expect.objectContaining({
        code: 'invalid_options',
        path: 'username',
        message: expect.stringMatching(/without ":"/),
      }),
    );
    const strategy = axMCPBasicAuthentication({ username: 'alice-user', password: 'hunter2-pass' });
    expect(strategy.toJSON()).toEqual({ kind: 'basic', username: '[redacted]', password: '[redacted]' });
    expectRedacted(
      strategy,
      'alice-user',
      'hunter2-pass',
      Buffer.from('alice-user:hunter2-pass').toString('base64'),
    );
  });
});

describe('axMCPAPIKeyAuthentication', () => {
  it('sends the key in X-API-Key by default', async () => {
    const result = await run(axMCPAPIKeyAuthentication({ key: 'k-1' }));
    expect(result.headers.get('x-api-key')).toBe('k-1');
    expect(result.url).toBe(url);
  });

  it('sends the key in a named header', async () => {
    const strategy = axMCPAPIKeyAuthentication({ key: () => 'k-2', header: 'X-Service-Token' });
    const result = await run(strategy);
    expect(result.headers.get('x-service-token')).toBe('k-2');
    expect(result.headers.has('x-api-key')).toBe(false);
    expect(strategy.sensitiveHeaders).toEqual(['x-service-token']);
  });

  it('sends the key as a query parameter on a copy of the URL', async () => {
    const result = await run(axMCPAPIKeyAuthentication({ key: 'k 3&x', query: 'api_key' }));
    expect(result.url.href).toBe('https://mcp.example.com/mcp?tenant=7&api_key=k+3%26x');
    expect(url.href).toBe('https://mcp.example.com/mcp?tenant=7');
    expect([...result.headers.keys()]).toEqual([]);
  });

  it('refuses header and query together, and redacts itself', () => {
    expect(() => axMCPAPIKeyAuthentication({ key: 'k', header: 'X-K', query: 'k' })).toThrow(/not both/);
    expect(() => axMCPAPIKeyAuthentication({ key: 'k', header: 'bad header' })).toThrow(/header name/);
    const strategy = axMCPAPIKeyAuthentication({ key: 'key-secret-999' });
    expect(strategy.toJSON()).toEqual({ kind: 'api-key', header: 'X-API-Key', key: '[redacted]' });
    expectRedacted(strategy, 'key-secret-999');
  });
});
