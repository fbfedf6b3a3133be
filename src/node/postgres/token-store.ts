/**
 * An encrypted key → JSON value store in PostgreSQL, for credentials a fleet shares (OAuth
 * tokens, client registrations). Values are sealed with AES-GCM (WebCrypto) under a key the
 * host supplies; the database holds only the key id, a random 96-bit IV and the ciphertext.
 * The additional authenticated data binds each ciphertext to its key, so a row copied under
 * another key does not decrypt. Keys (the lookup names) are stored in clear:
 * do not put secrets in them.
 */

import { optionsError } from '../../net/options-error.js';
import { anyOf, array, instance, object, required } from '../../options/check.js';
import { AxMCPError } from '../../protocol/errors.js';
import {
  type AxPostgresConnectionOptions,
  fromPgText,
  type Migration,
  migrated,
  POSTGRES_CONNECTION_ALIASES,
  POSTGRES_CONNECTION_KEYS,
  PostgresConnection,
  toPgText,
} from './connection.js';
import { assertPostgresStoreOptions, clientStoreErrors } from './era-store.js';

const errors = clientStoreErrors('PostgreSQL token store');

const MIGRATIONS: Migration[] = [
  {
    version: 1,
    statements: (s) => [
      `CREATE TABLE ${s}.ax_tokens (
         key text PRIMARY KEY,
         key_id text NOT NULL,
         iv bytea NOT NULL,
         ciphertext bytea NOT NULL,
         updated_at timestamptz NOT NULL DEFAULT now())`,
    ],
  },
];

/** An encryption key with the id stored beside what it encrypted. */
export interface AxTokenEncryptionKey {
  /** A short name for the key (1–64 characters), so older keys can still be found after rotation. */
  id: string;
  /** 16, 24 or 32 raw bytes (AES-128/192/256-GCM), or a WebCrypto AES-GCM `CryptoKey` allowed to encrypt and decrypt. */
  key: Uint8Array | CryptoKey;
}

/** Options of {@link AxMCPPostgresTokenStore}. */
export interface AxMCPPostgresTokenStoreOptions extends AxPostgresConnectionOptions {
  /** The key that encrypts every value written. */
  key: AxTokenEncryptionKey;
  /** Older keys, accepted for reading only; a value is re-encrypted with `key` when next set. */
  previousKeys?: readonly AxTokenEncryptionKey[];
}

/** The shape of {@link AxTokenEncryptionKey}. */
const ENCRYPTION_KEY = object(
  {
    id: required(
      instance(
        'a key id of 1 to 64 characters',
        (value) => typeof value === 'string' && value.length >= 1 && value.length <= 64,
      ),
    ),
    key: required(
      anyOf(
        instance(
          '16, 24 or 32 raw bytes (a Uint8Array)',
          (value) => value instanceof Uint8Array && [16, 24, 32].includes(value.byteLength),
        ),
        instance('an AES-GCM CryptoKey allowed to encrypt and decrypt', isAESGCMKey),
      ),
    ),
  },
  {
    expected: 'an encryption key { id, key }',
    aliases: { keyId: 'id', name: 'id', bytes: 'key', secret: 'key' },
  },
);

/** The shape of {@link AxMCPPostgresTokenStoreOptions}, every key of it (the connection's included). */
const POSTGRES_TOKEN_STORE_OPTIONS = object(
  { ...POSTGRES_CONNECTION_KEYS, key: required(ENCRYPTION_KEY), previousKeys: array(ENCRYPTION_KEY) },
  {
    expected:
      'an options object { key, pool } or { key, connectionString }, with schema?, poolSize?, previousKeys?',
    aliases: {
      ...POSTGRES_CONNECTION_ALIASES,
      encryptionKey: 'key',
      keys: 'previousKeys',
      oldKeys: 'previousKeys',
    },
  },
);

function isAESGCMKey(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const key = value as { algorithm?: { name?: unknown }; usages?: unknown };
  return (
    key.algorithm?.name === 'AES-GCM' &&
    Array.isArray(key.usages) &&
    key.usages.includes('encrypt') &&
    key.usages.includes('decrypt')
  );
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Encrypted JSON values under string keys, shared by every process using the same schema. */
export class AxMCPPostgresTokenStore {
  /** The schema holding the table. */
  readonly schema: string;
  readonly #c: PostgresConnection;
  readonly #current: string;
  readonly #keys = new Map<string, Promise<CryptoKey>>();

  /** Create the store and its table before returning. */
  static async open(options: AxMCPPostgresTokenStoreOptions): Promise<AxMCPPostgresTokenStore> {
    // async: a refused option rejects the promise, as every other failure of open() does.
    return migrated(new AxMCPPostgresTokenStore(options));
  }

  /** Checks `options` and the keys at once (`invalid_options`); nothing touches the database until the first call. */
  constructor(options: AxMCPPostgresTokenStoreOptions) {
    const label = 'AxMCPPostgresTokenStore options';
    assertPostgresStoreOptions(POSTGRES_TOKEN_STORE_OPTIONS, options, label);
    const all = [options.key, ...(options.previousKeys ?? [])];
    const ids = new Set<string>();
    all.forEach((entry, index) => {
      if (ids.has(entry.id)) {
        throw optionsError(label, {
          path: `previousKeys[${index - 1}].id`,
          expected: `an id no other key has (two encryption keys have the id ${entry.id})`,
          received: `'${entry.id}'`,
        });
      }
      ids.add(entry.id);
    });
    this.#c = new PostgresConnection(options, errors);
    this.schema = this.#c.schema;
    this.#current = options.key.id;
    for (const entry of all) {
      const key = entry.key;
      this.#keys.set(
        entry.id,
        key instanceof Uint8Array
          ? crypto.subtle.importKey('raw', new Uint8Array(key), { name: 'AES-GCM' }, false, [
              'encrypt',
              'decrypt',
            ])
          : Promise.resolve(key),
      );
    }
    // Reported where the key is used; keep an early import failure from being unhandled.
    for (const key of this.#keys.values()) key.catch(() => undefined);
  }

  /** Create or migrate the table (idempotent). */
  migrate(): Promise<void> {
    if (this.#c.closed) return Promise.reject(errors.closed());
    return this.#c.ready('tokens', MIGRATIONS);
  }

  #aad(key: string): Uint8Array<ArrayBuffer> {
    return encoder.encode(`ax-mcp token v1\u0000${key}`);
  }

  async #cryptoKey(id: string): Promise<CryptoKey> {
    const key = this.#keys.get(id);
    if (!key)
      throw errors.config(`a stored value was encrypted with key ${id}, which this store was not given`);
    try {
      return await key;
    } catch (cause) {
      throw errors.config(`encryption key ${id} could not be imported`, cause);
    }
  }

  /** The value stored under `key`, or `undefined`. Throws if it cannot be decrypted (wrong key, tampering). */
  async get<T = unknown>(key: string): Promise<T | undefined> {
    await this.migrate();
    const result = await this.#c.query<{ key_id: string; iv: Buffer; ciphertext: Buffer }>(
      `SELECT key_id, iv, ciphertext FROM ${this.#c.q}.ax_tokens WHERE key = $1`,
      [toPgText(key)],
    );
    const row = result.rows[0];
    if (!row) return undefined;
    const cryptoKey = await this.#cryptoKey(row.key_id);
    let plain: ArrayBuffer;
    try {
      plain = await crypto.subtle.decrypt(
        { name: 'AES-GCM', iv: new Uint8Array(row.iv), additionalData: this.#aad(key) },
        cryptoKey,
        new Uint8Array(row.ciphertext),
      );
    } catch (cause) {
      throw new AxMCPError(
        'invalid_argument',
        `PostgreSQL token store: the value of "${key}" does not decrypt (wrong key, or the row was altered)`,
        { cause },
      );
    }
    return JSON.parse(decoder.decode(plain)) as T;
  }

  /** Store `value` (anything `JSON.stringify` turns into JSON) under `key`, encrypted with the current key. */
  async set(key: string, value: unknown): Promise<void> {
    let text: string | undefined;
    try {
      text = JSON.stringify(value);
    } catch (cause) {
      throw errors.config('the value is not JSON-serializable', cause);
    }
    if (text === undefined) throw errors.config('the value is not JSON-serializable');
    await this.migrate();
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const sealed = await crypto.subtle.encrypt(
      { name: 'AES-GCM', iv, additionalData: this.#aad(key) },
      await this.#cryptoKey(this.#current),
      encoder.encode(text),
    );
    await this.#c.query(
      `INSERT INTO ${this.#c.q}.ax_tokens (key, key_id, iv, ciphertext) VALUES ($1, $2, $3, $4)
       ON CONFLICT (key) DO UPDATE SET key_id = EXCLUDED.key_id, iv = EXCLUDED.iv,
         ciphertext = EXCLUDED.ciphertext, updated_at = now()`,
      [toPgText(key), this.#current, Buffer.from(iv), Buffer.from(sealed)],
    );
  }

  /** Forget `key`. */
  async delete(key: string): Promise<void> {
    await this.migrate();
    await this.#c.query(`DELETE FROM ${this.#c.q}.ax_tokens WHERE key = $1`, [toPgText(key)]);
  }

  /** Every key (names only; for inspection and re-encryption after a key rotation). */
  async keys(): Promise<string[]> {
    await this.migrate();
    const result = await this.#c.query<{ key: string }>(
      `SELECT key FROM ${this.#c.q}.ax_tokens ORDER BY key`,
    );
    return result.rows.map((row) => fromPgText(row.key));
  }

  /** Wait for running calls and end the pool if the store made it. */
  close(): Promise<void> {
    return this.#c.close();
  }
}

/** @deprecated Renamed {@link AxMCPPostgresTokenStore}: era and token stores are `AxMCP<Backend><Thing>Store` on every backend. */
export const AxPostgresTokenStore = AxMCPPostgresTokenStore;
/** @deprecated Renamed {@link AxMCPPostgresTokenStore}. */
export type AxPostgresTokenStore = AxMCPPostgresTokenStore;
/** @deprecated Renamed {@link AxMCPPostgresTokenStoreOptions}. */
export type AxPostgresTokenStoreOptions = AxMCPPostgresTokenStoreOptions;
