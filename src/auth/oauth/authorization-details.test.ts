import { describe, expect, it } from 'vitest';
import { grantedAuthorizationDetails } from './authorization-details.js';
import { axMCPOAuth } from './oauth.js';
import { parseOAuthRecord } from './token-store.js';

describe('authorization details (RFC 9396)', () => {
  it('checks the option: a type on each, JSON values only, unknown option names suggested', () => {
    expect(() =>
      axMCPOAuth({ authorizationDetails: [{ type: 'mcp_tools', actions: ['read'], x: { y: [1] } }] }),
    ).not.toThrow();
    expect(() => axMCPOAuth({ authorizationDetails: [] })).toThrow(
      /authorizationDetails: expected at least 1/,
    );
    expect(() => axMCPOAuth({ authorizationDetails: [{ actions: ['read'] } as never] })).toThrow(
      /authorizationDetails\[0\]\.type: expected a non-empty string/,
    );
    expect(() => axMCPOAuth({ authorizationDetails: [{ type: 't', actions: 'read' } as never] })).toThrow(
      /authorizationDetails\[0\]\.actions/,
    );
    expect(() => axMCPOAuth({ authorizationDetails: [{ type: 't', when: new Date() } as never] })).toThrow(
      /JSON values only/,
    );
    expect(() => axMCPOAuth({ rar: [{ type: 't' }] } as never)).toThrow(/did you mean authorizationDetails/);
  });

  it('reads what a server granted defensively: plain copies, unsafe keys dropped, bounded', () => {
    const hostile = JSON.parse(
      '[{"type":"t","__proto__":{"polluted":true},"nested":{"constructor":1,"ok":2}}]',
    );
    const granted = grantedAuthorizationDetails(hostile);
    expect(granted).toEqual([{ type: 't', nested: { ok: 2 } }]);
    expect(Object.getPrototypeOf(granted![0])).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(grantedAuthorizationDetails([{ actions: ['x'] }])).toBeUndefined();
    expect(grantedAuthorizationDetails('[]')).toBeUndefined();
    expect(grantedAuthorizationDetails(Array.from({ length: 65 }, () => ({ type: 't' })))).toBeUndefined();
    expect(grantedAuthorizationDetails([{ type: 't', big: 'x'.repeat(70_000) }])).toBeUndefined();
    let deep: unknown = 1;
    for (let i = 0; i < 12; i++) deep = { deep };
    expect(grantedAuthorizationDetails([{ type: 't', deep }])).toBeUndefined();
  });

  it('survives a token store round trip, and a hostile record loses only what is unsafe', () => {
    const record = parseOAuthRecord({
      tokens: {
        accessToken: 'at',
        tokenType: 'Bearer',
        issuer: 'https://as.example.com',
        resource: 'https://mcp.example.com/mcp',
        scopes: [],
        requestedScopes: [],
        authorizationDetails: [{ type: 'mcp_tools', actions: ['read'] }],
      },
    });
    expect(record?.tokens?.authorizationDetails).toEqual([{ type: 'mcp_tools', actions: ['read'] }]);
    const garbage = parseOAuthRecord({ tokens: { ...record!.tokens!, authorizationDetails: [{ nope: 1 }] } });
    expect(garbage?.tokens?.accessToken).toBe('at');
    expect(garbage?.tokens?.authorizationDetails).toBeUndefined();
  });
});
