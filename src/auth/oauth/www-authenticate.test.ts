import { describe, expect, it } from 'vitest';
import { findChallenge, parseWWWAuthenticate, splitScopes } from './www-authenticate.js';

describe('parseWWWAuthenticate', () => {
  it('reads the parameters of a Bearer challenge, names case-insensitive, values quoted or not', () => {
    const [challenge] = parseWWWAuthenticate(
      'Bearer Resource_Metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="files:read files:write", error=insufficient_scope',
    );
    expect(challenge?.scheme).toBe('bearer');
    expect(challenge?.params.get('resource_metadata')).toBe(
      'https://mcp.example.com/.well-known/oauth-protected-resource/mcp',
    );
    expect(challenge?.params.get('scope')).toBe('files:read files:write');
    expect(challenge?.params.get('error')).toBe('insufficient_scope');
  });

  it('separates several challenges, keeps escaped quotes and commas inside quoted strings', () => {
    const challenges = parseWWWAuthenticate(
      'Basic realm="a, \\"b\\"", DPoP error="use_dpop_nonce", algs="ES256 PS256", Negotiate abc123==',
    );
    expect(challenges.map((c) => c.scheme)).toEqual(['basic', 'dpop', 'negotiate']);
    expect(challenges[0]?.params.get('realm')).toBe('a, "b"');
    expect(findChallenge(challenges, 'dpop')?.params.get('algs')).toBe('ES256 PS256');
    expect(challenges[2]?.token68).toBe('abc123==');
  });

  it('survives empty and malformed headers without throwing', () => {
    expect(parseWWWAuthenticate(null)).toEqual([]);
    expect(parseWWWAuthenticate('')).toEqual([]);
    const [broken] = parseWWWAuthenticate('Bearer scope="unterminated');
    expect(broken?.scheme).toBe('bearer');
    expect(broken?.params.has('scope')).toBe(false);
  });

  it('never turns a parameter name into an object key', () => {
    const [challenge] = parseWWWAuthenticate('Bearer __proto__="x", constructor="y"');
    expect(challenge?.params.get('__proto__')).toBe('x');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe('splitScopes', () => {
  it('splits on spaces and drops duplicates and empties', () => {
    expect(splitScopes(' a  b a ')).toEqual(['a', 'b']);
    expect(splitScopes(undefined)).toEqual([]);
  });
});
