import { describe, expect, it } from 'vitest';
import type { AxUCPError } from './errors.js';
import {
  axUCPSigner,
  contentDigest,
  generateUCPSigningKey,
  signMessage,
  verifyMessage,
} from './signatures.js';
import { parseDictionary } from './structured-fields.js';

async function signed(body = '{"line_items":[]}') {
  const key = await generateUCPSigningKey('k1');
  const signer = axUCPSigner({ keyId: 'k1', privateKey: key.privateKey });
  const headers = new Headers({
    'ucp-agent': 'profile="https://platform.example/.well-known/ucp"',
    'idempotency-key': '550e8400-e29b-41d4-a716-446655440000',
  });
  const parts = {
    method: 'POST',
    url: new URL('https://merchant.example.com/checkout-sessions'),
    headers,
    body: new TextEncoder().encode(body),
  };
  await signMessage(parts, signer);
  return { key, signer, parts };
}

describe('RFC 9421 signatures', () => {
  it('covers the components UCP requires and verifies', async () => {
    const { key, parts } = await signed();
    const input = parts.headers.get('signature-input')!;
    expect(input).toMatch(
      /^sig1=\("@method" "@authority" "@path" "ucp-agent" "idempotency-key" "content-digest" "content-type"\);created=\d+;keyid="k1"$/,
    );
    expect(await verifyMessage(parts, [key.publicKey])).toMatchObject({ label: 'sig1', keyId: 'k1' });
  });

  it('fails typed on a tampered body, an unknown key, a changed path and a missing signature', async () => {
    const { key, parts } = await signed();
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'ok',
        (e: AxUCPError) => e.code,
      );
    expect(
      await code(verifyMessage({ ...parts, body: new TextEncoder().encode('{}') }, [key.publicKey])),
    ).toBe('digest_mismatch');
    expect(await code(verifyMessage(parts, [{ ...key.publicKey, kid: 'other' }]))).toBe('key_not_found');
    expect(await code(verifyMessage(parts, [{ ...key.publicKey, use: 'enc' }]))).toBe('key_not_found');
    expect(await code(verifyMessage(parts, [{ ...key.publicKey, kty: 'RSA' }]))).toBe(
      'algorithm_unsupported',
    );
    const moved = { ...parts, url: new URL('https://merchant.example.com/carts') };
    expect(await code(verifyMessage(moved, [key.publicKey]))).toBe('signature_invalid');
    const headers = new Headers(parts.headers);
    headers.delete('signature');
    expect(await code(verifyMessage({ ...parts, headers }, [key.publicKey]))).toBe('signature_missing');
  });

  it('refuses a signature that does not cover idempotency-key', async () => {
    const { key, parts } = await signed();
    const headers = new Headers(parts.headers);
    headers.set('idempotency-key', 'changed');
    const e = await verifyMessage({ ...parts, headers }, [key.publicKey]).catch((error: AxUCPError) => error);
    expect((e as AxUCPError).code).toBe('signature_invalid');
  });

  it('keeps the private key out of serialization', async () => {
    const { signer } = await signed();
    expect(JSON.stringify({ signer })).toBe('{"signer":{"keyId":"k1"}}');
    expect(String(signer)).toBe('AxUCPSigner(k1)');
  });

  it('computes RFC 9530 digests and parses structured fields', async () => {
    expect(await contentDigest(new TextEncoder().encode('{"hello": "world"}'))).toBe(
      'sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:',
    );
    const dict = parseDictionary('sig1=("@method" "@path");created=1;keyid="a", b=?0, c=:AQID:');
    expect(dict.get('b')).toMatchObject({ value: false });
    expect(() => parseDictionary('a=("x"')).toThrow();
  });
});
