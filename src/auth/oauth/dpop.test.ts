import { describe, expect, it } from 'vitest';
import { DPoPKey } from './dpop.js';

function decode(part: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
}

describe('DPoP proofs', () => {
  it('signs a fresh proof per request with htm, htu (no query), ath and the latest nonce', async () => {
    const key = await DPoPKey.generate();
    const url = new URL('https://mcp.example.com/mcp?tenant=1#x');
    const first = await key.proof('post', url, 'access-token');
    const [h, p, s] = first.split('.');
    const header = decode(h!);
    const payload = decode(p!);
    expect(header.typ).toBe('dpop+jwt');
    expect(header.alg).toBe('ES256');
    expect((header.jwk as Record<string, unknown>).d).toBeUndefined();
    expect(payload.htm).toBe('POST');
    expect(payload.htu).toBe('https://mcp.example.com/mcp');
    const ath = Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode('access-token')));
    expect(payload.ath).toBe(ath.toString('base64url'));
    expect(payload.nonce).toBeUndefined();
    const publicKey = await crypto.subtle.importKey(
      'jwk',
      header.jwk as JsonWebKey,
      { name: 'ECDSA', namedCurve: 'P-256' },
      false,
      ['verify'],
    );
    const valid = await crypto.subtle.verify(
      { name: 'ECDSA', hash: 'SHA-256' },
      publicKey,
      Buffer.from(s!, 'base64url'),
      new TextEncoder().encode(`${h}.${p}`),
    );
    expect(valid).toBe(true);

    expect(key.rememberNonce(url, 'n-1')).toBe(true);
    expect(key.rememberNonce(url, 'n-1')).toBe(false);
    const second = decode((await key.proof('GET', url, 'access-token')).split('.')[1]!);
    expect(second.nonce).toBe('n-1');
    expect(second.jti).not.toBe(payload.jti);
    // Nonces are per origin.
    const other = decode(
      (await key.proof('GET', new URL('https://other.example.com/mcp'), 't')).split('.')[1]!,
    );
    expect(other.nonce).toBeUndefined();
  });

  it('computes the RFC 7638 thumbprint of its public key', async () => {
    const key = await DPoPKey.generate();
    const [h] = (await key.proof('GET', new URL('https://a.example.com/'), 't')).split('.');
    const jwk = decode(h!).jwk as Record<string, string>;
    const canonical = `{"crv":"${jwk.crv}","kty":"${jwk.kty}","x":"${jwk.x}","y":"${jwk.y}"}`;
    const digest = Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(canonical)));
    expect(key.thumbprint).toBe(digest.toString('base64url'));
    expect(JSON.stringify(key)).not.toContain(jwk.x!);
  });
});
