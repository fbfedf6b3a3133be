import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { testDatabase } from './test-database.fixture.js';
import { AxMCPPostgresTokenStore, type AxMCPPostgresTokenStoreOptions } from './token-store.js';

const { url, admin, freshSchema } = testDatabase(
  'postgres/token-store.test',
  'the PostgreSQL token store tests',
);

const k1 = { id: 'k1', key: new Uint8Array(randomBytes(32)) };
const k2 = { id: 'k2', key: new Uint8Array(randomBytes(32)) };
const token = {
  access_token: 'eyJhbGciOi.secret-access-token.sig',
  refresh_token: 'refresh-secret-value',
  expires_at: 1_800_000_000,
  scope: ['mcp:read', 'mcp:tools'],
};
const open = (schema: string, options: Partial<AxMCPPostgresTokenStoreOptions> = {}) =>
  AxMCPPostgresTokenStore.open({ connectionString: url, schema, poolSize: 2, key: k1, ...options });
const rows = async (schema: string) =>
  (await admin().query(`SELECT key, key_id, iv, ciphertext FROM "${schema}".ax_tokens ORDER BY key`))
    .rows as {
    key: string;
    key_id: string;
    iv: Buffer;
    ciphertext: Buffer;
  }[];

describe.skipIf(!url)('AxMCPPostgresTokenStore', () => {
  it('keeps JSON values encrypted at rest and shares them between processes holding the key', async () => {
    const schema = freshSchema();
    const one = await open(schema);
    const two = await open(schema);
    await one.set('oauth:https://mcp.example.com/:alice', token);
    await one.set('plain', 'just a string');
    await one.set('number', 42);
    expect(await two.get('oauth:https://mcp.example.com/:alice')).toEqual(token);
    expect(await two.get('plain')).toBe('just a string');
    expect(await two.get('number')).toBe(42);
    expect(await two.get('missing')).toBeUndefined();
    const stored = await rows(schema);
    expect(stored).toHaveLength(3);
    for (const row of stored) {
      expect(row.key_id).toBe('k1');
      expect(row.iv).toHaveLength(12);
      const bytes = row.ciphertext.toString('latin1');
      for (const secret of ['secret-access-token', 'refresh-secret-value', 'just a string', 'mcp:read']) {
        expect(bytes).not.toContain(secret);
      }
    }
    // A fresh IV every time: the same value twice seals differently.
    await one.set('plain', 'just a string');
    const again = (await rows(schema)).find((r) => r.key === 'plain');
    expect(again?.iv.equals(stored.find((r) => r.key === 'plain')?.iv as Buffer)).toBe(false);
    await two.delete('plain');
    expect(await one.get('plain')).toBeUndefined();
    expect(await one.keys()).toEqual(['number', 'oauth:https://mcp.example.com/:alice']);
    await one.close();
    await two.close();
  });

  it('refuses to read with the wrong key, a tampered row, or a row moved under another key', async () => {
    const schema = freshSchema();
    const store = await open(schema);
    await store.set('a', { secret: 'A' });
    await store.set('b', { secret: 'B' });
    const stranger = await open(schema, { key: { id: 'k1', key: new Uint8Array(randomBytes(32)) } });
    await expect(stranger.get('a')).rejects.toMatchObject({ code: 'invalid_argument' });
    const other = await open(schema, { key: k2 });
    await expect(other.get('a')).rejects.toThrow(/key k1, which this store was not given/);
    // Flip one bit of the ciphertext.
    await admin().query(
      `UPDATE "${schema}".ax_tokens SET ciphertext = set_byte(ciphertext, 0, get_byte(ciphertext, 0) # 1) WHERE key = 'a'`,
    );
    await expect(store.get('a')).rejects.toThrow(/does not decrypt/);
    // Copy b's sealed value under the key c: authenticated data ties it to "b".
    await admin().query(
      `INSERT INTO "${schema}".ax_tokens (key, key_id, iv, ciphertext) SELECT 'c', key_id, iv, ciphertext
       FROM "${schema}".ax_tokens WHERE key = 'b'`,
    );
    await expect(store.get('c')).rejects.toMatchObject({ code: 'invalid_argument' });
    expect(await store.get('b')).toEqual({ secret: 'B' });
    await Promise.all([store.close(), stranger.close(), other.close()]);
  });

  it('rotates keys: old values stay readable with previousKeys and are re-sealed with the new key on set', async () => {
    const schema = freshSchema();
    const before = await open(schema);
    await before.set('t', token);
    await before.close();
    const cryptoKey = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, [
      'encrypt',
      'decrypt',
    ]);
    const after = await open(schema, { key: { id: 'k2', key: cryptoKey }, previousKeys: [k1] });
    expect(await after.get('t')).toEqual(token);
    await after.set('t', { ...token, access_token: 'rotated' });
    expect((await rows(schema)).map((r) => r.key_id)).toEqual(['k2']);
    expect(await after.get('t')).toMatchObject({ access_token: 'rotated' });
    await after.close();
  });

  it('checks keys and values up front', async () => {
    const schema = freshSchema();
    expect(
      () =>
        new AxMCPPostgresTokenStore({
          connectionString: url,
          schema,
          key: { id: 'x', key: new Uint8Array(20) },
        }),
    ).toThrow(expect.objectContaining({ code: 'invalid_options', path: 'key.key' }));
    const hmac = await crypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    expect(
      () => new AxMCPPostgresTokenStore({ connectionString: url, schema, key: { id: 'x', key: hmac } }),
    ).toThrow(/AES-GCM CryptoKey/);
    expect(
      () => new AxMCPPostgresTokenStore({ connectionString: url, schema, key: k1, previousKeys: [k1] }),
    ).toThrow(/two encryption keys have the id k1/);
    const store = await open(schema);
    await expect(store.set('u', undefined)).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(store.set('big', 10n)).rejects.toMatchObject({ code: 'invalid_argument' });
    await store.close();
    await expect(store.get('u')).rejects.toMatchObject({ code: 'closed' });
  });
});
