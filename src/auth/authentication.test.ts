import { describe, expect, it } from 'vitest';
import { AxMCPError } from '../protocol/errors.js';
import {
  type AxMCPAuthentication,
  applyAuthentication,
  authenticationSensitiveHeaders,
} from './authentication.js';
import { axMCPHMACAuthentication } from './hmac.js';
import { axMCPAPIKeyAuthentication, axMCPBearerAuthentication } from './strategies.js';

const url = new URL('https://mcp.example.com/mcp?tenant=7');

async function run(strategy: AxMCPAuthentication | AxMCPAuthentication[]) {
  return applyAuthentication(strategy, { method: 'POST', url });
}

describe('applyAuthentication', () => {
  it('runs strategies in order; later ones override headers and see earlier ones', async () => {
    const seenByLast: (string | null)[] = [];
    const last: AxMCPAuthentication = {
      authenticate(request) {
        seenByLast.push(request.headers.get('authorization'));
        return { headers: { Authorization: 'Bearer second', 'X-Extra': '1' } };
      },
    };
    const input = new Headers({ accept: 'application/json' });
    const { headers, url: out } = await applyAuthentication([axMCPBearerAuthentication('first'), last], {
      method: 'POST',
      url,
      headers: input,
    });
    expect(seenByLast).toEqual(['Bearer first']);
    expect(headers.get('authorization')).toBe('Bearer second');
    expect(headers.get('x-extra')).toBe('1');
    expect(headers.get('accept')).toBe('application/json');
    expect(input.has('authorization')).toBe(false);
    expect(out).toBe(url);
  });

  it('returns a copy of the headers when there is nothing to apply', async () => {
    const input = new Headers({ a: '1' });
    const result = await applyAuthentication(undefined, { method: 'GET', url, headers: input });
    expect(result.headers).not.toBe(input);
    expect(result.headers.get('a')).toBe('1');
    expect(result.url).toBe(url);
  });

  it('refuses an invalid header from a custom strategy without echoing the value', async () => {
    const bad: AxMCPAuthentication = { authenticate: () => ({ headers: { 'X-Token': 'leak\nme' } }) };
    const error = await run(bad).catch((e) => e);
    expect(error).toBeInstanceOf(AxMCPError);
    expect(error.message).toContain('X-Token');
    expect(error.message).not.toContain('leak');
  });

  it('rejects with the abort reason', async () => {
    const controller = new AbortController();
    const stop: AxMCPAuthentication = {
      authenticate() {
        controller.abort(new Error('cancelled'));
        return {};
      },
    };
    const never: AxMCPAuthentication = {
      authenticate() {
        throw new Error('must not run');
      },
    };
    await expect(
      applyAuthentication([stop, never], { method: 'GET', url, signal: controller.signal }),
    ).rejects.toThrow('cancelled');
  });

  it('collects the sensitive header names of the strategies', () => {
    expect(
      authenticationSensitiveHeaders([
        axMCPBearerAuthentication('t'),
        axMCPAPIKeyAuthentication({ key: 'k', header: 'X-Key' }),
        axMCPAPIKeyAuthentication({ key: 'k', query: 'k' }),
        axMCPHMACAuthentication({ keyId: 'k', secret: 's' }),
        { authenticate: () => ({}) },
      ]),
    ).toEqual(['authorization', 'x-key', 'x-signature']);
    expect(authenticationSensitiveHeaders(undefined)).toEqual([]);
  });
});
