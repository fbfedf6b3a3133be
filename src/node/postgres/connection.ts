/**
 * What the PostgreSQL stores of `ax-mcp/node` share: the pool (given, or made from a
 * connection string and then owned), checked schema names, one transaction per operation
 * retried on deadlocks, versioned migrations, and a reversible encoding for the strings a
 * PostgreSQL `text` column cannot hold. Internal to `AxPostgresEventStore`,
 * `AxMCPPostgresEraStore` and `AxMCPPostgresTokenStore`.
 */

import type pg from 'pg';
import { type AxOptionsIssue, instance, type Keys, number } from '../../options/check.js';
import { CONNECTION_STRING } from './connection-string.js';

/** A PostgreSQL schema name the stores accept: lower-case letters, digits, `_`; not `pg_…`. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,39}$/;

/** Why `name` is not an acceptable schema name, or `null` when it is. */
export function schemaNameProblem(name: unknown): string | null {
  if (typeof name !== 'string' || !SCHEMA_NAME.test(name)) {
    return 'schema must be 1 to 40 lower-case letters, digits or "_", not starting with a digit';
  }
  if (name.startsWith('pg_')) return 'schema names starting with "pg_" are reserved by PostgreSQL';
  return null;
}

/** Connection options every PostgreSQL store takes. */
export interface AxPostgresConnectionOptions {
  /** A `pg` pool to use. The store never ends a pool you pass. */
  pool?: pg.Pool;
  /** Or a connection string: the store makes its own pool (loading `pg` on demand) and ends it on `close()`. */
  connectionString?: string;
  /** The schema holding the store's tables, created if missing. Default `ax_mcp`. */
  schema?: string;
  /** Most connections of a pool made from `connectionString`. Default 10. */
  poolSize?: number;
}

/** The shapes of the keys of {@link AxPostgresConnectionOptions}, for every store's options schema. */
export const POSTGRES_CONNECTION_KEYS: Keys = {
  pool: instance('a pg Pool', (value) => {
    if (typeof value !== 'object' || value === null) return false;
    const pool = value as Record<string, unknown>;
    return typeof pool.query === 'function' && typeof pool.connect === 'function';
  }),
  connectionString: CONNECTION_STRING,
  schema: instance(
    'a schema name: 1 to 40 lower-case letters, digits or "_", not starting with a digit or "pg_"',
    (value) => schemaNameProblem(value) === null,
  ),
  poolSize: number({ integer: true, min: 1 }),
};

/** Names users reach for instead of the connection options. */
export const POSTGRES_CONNECTION_ALIASES: Readonly<Record<string, string>> = {
  url: 'connectionString',
  connectionURL: 'connectionString',
  connectionUrl: 'connectionString',
  databaseUrl: 'connectionString',
  max: 'poolSize',
  maxConnections: 'poolSize',
  schemaName: 'schema',
};

/** The one rule beyond shapes: exactly one of `pool` and `connectionString`. */
export function connectionSourceIssue(options: AxPostgresConnectionOptions): AxOptionsIssue | undefined {
  if ((options.pool === undefined) !== (options.connectionString === undefined)) return undefined;
  return {
    path: options.pool === undefined ? 'connectionString' : 'pool',
    expected: 'exactly one of pool and connectionString',
    received: options.pool === undefined ? 'neither' : 'both',
  };
}

/** How a store reports configuration problems, use after close, and database failures. */
export interface StoreErrors {
  config(message: string, cause?: unknown): Error;
  closed(): Error;
  /** Wrap a failure (typed errors of the store pass through unchanged). */
  wrap(error: unknown): Error;
}

/** One schema migration: statements run in one transaction, given the quoted schema name. */
export interface Migration {
  version: number;
  statements: (schema: string) => string[];
}

/** Codes PostgreSQL uses for a transaction it rolled back and that may simply be run again. */
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_RETRIES = 8;

/** The SQLSTATE of a database error, if it has one. */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Controls of a transaction body. */
export interface TxControl {
  /** Roll the transaction back instead of committing it (the body's result is still returned). */
  rollback(): void;
}

/** A small 32-bit FNV-1a hash, as a signed integer (advisory lock spaces, statement names). */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}

/** A pool, a schema and the transaction, retry and migration rules around them. */
export class PostgresConnection {
  /** The schema name, checked. */
  readonly schema: string;
  /** The schema name quoted for SQL text. */
  readonly q: string;
  readonly #errors: StoreErrors;
  readonly #options: AxPostgresConnectionOptions;
  readonly #owned: boolean;
  readonly #active = new Set<Promise<unknown>>();
  readonly #ready = new Map<string, Promise<void>>();
  #pool: pg.Pool | null;
  #making: Promise<pg.Pool> | null = null;
  #closed = false;
  #onIdleError: ((error: unknown) => void) | undefined;

  constructor(
    options: AxPostgresConnectionOptions,
    errors: StoreErrors,
    onIdleError?: (error: unknown) => void,
  ) {
    this.#errors = errors;
    const schema = options.schema ?? 'ax_mcp';
    const problem = schemaNameProblem(schema);
    if (problem) throw errors.config(problem);
    if ((options.pool === undefined) === (options.connectionString === undefined)) {
      throw errors.config('Pass exactly one of pool and connectionString');
    }
    if (options.connectionString !== undefined && typeof options.connectionString !== 'string') {
      throw errors.config('connectionString must be a string');
    }
    const size = options.poolSize ?? 10;
    if (!(Number.isInteger(size) && size >= 1)) throw errors.config('poolSize must be a positive integer');
    this.schema = schema;
    this.q = `"${schema}"`;
    this.#options = options;
    this.#owned = options.pool === undefined;
    this.#pool = options.pool ?? null;
    this.#onIdleError = onIdleError;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** The pool, made on first use from the connection string. */
  pool(): Promise<pg.Pool> {
    if (this.#pool) return Promise.resolve(this.#pool);
    this.#making ??= (async () => {
      let Pool: typeof pg.Pool;
      try {
        Pool = (await import('pg')).default.Pool;
      } catch (cause) {
        throw this.#errors.config('The PostgreSQL stores need the pg package (npm i pg@8)', cause);
      }
      const pool = new Pool({
        connectionString: this.#options.connectionString,
        max: this.#options.poolSize ?? 10,
      });
      // An idle client that loses its connection emits on the pool; without a listener that
      // would end the process.
      pool.on('error', (error) => this.#onIdleError?.(error));
      this.#pool = pool;
      return pool;
    })();
    return this.#making;
  }

  #track<T>(work: Promise<T>): Promise<T> {
    this.#active.add(work);
    const done = () => this.#active.delete(work);
    work.then(done, done);
    return work;
  }

  /** Run once per component: apply its migrations (memoized; a failure is retried on the next call). */
  ready(component: string, migrations: readonly Migration[]): Promise<void> {
    let ready = this.#ready.get(component);
    if (!ready) {
      ready = this.migrate(component, migrations);
      this.#ready.set(component, ready);
      ready.catch(() => this.#ready.delete(component));
    }
    return ready;
  }

  /**
   * Bring the component's tables to the newest version, under an advisory lock so that many
   * processes starting at once migrate one after another. Refuses a newer schema.
   */
  async migrate(component: string, migrations: readonly Migration[]): Promise<void> {
    const latest = migrations.reduce((max, m) => Math.max(max, m.version), 0);
    await this.tx(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1::integer, $2::integer)', [
        hash32('ax-mcp migrate'),
        hash32(this.schema),
      ]);
      const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [this.schema]);
      if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${this.q}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${this.q}.ax_schema_versions (
           component text PRIMARY KEY,
           version integer NOT NULL,
           updated_at timestamptz NOT NULL DEFAULT now())`,
      );
      const row = await client.query<{ version: number }>(
        `SELECT version FROM ${this.q}.ax_schema_versions WHERE component = $1`,
        [component],
      );
      const current = row.rows[0]?.version ?? 0;
      if (current > latest) {
        throw this.#errors.config(
          `The ${component} tables in schema ${this.schema} are version ${current}; this library knows ${latest}`,
        );
      }
      for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
        if (migration.version <= current) continue;
        for (const sql of migration.statements(this.q)) await client.query(sql);
      }
      if (current < latest) {
        await client.query(
          `INSERT INTO ${this.q}.ax_schema_versions (component, version) VALUES ($1, $2)
           ON CONFLICT (component) DO UPDATE SET version = EXCLUDED.version, updated_at = now()`,
          [component, latest],
        );
      }
    });
  }

  /** One statement outside an explicit transaction (atomic on its own), retried on deadlock. */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values: unknown[] = [],
    name?: string,
  ): Promise<pg.QueryResult<R>> {
    if (this.#closed) return Promise.reject(this.#errors.closed());
    return this.#track(
      (async () => {
        const pool = await this.pool();
        for (let attempt = 0; ; attempt++) {
          try {
            return await pool.query<R>(name ? { name, text, values } : { text, values });
          } catch (error) {
            if (attempt < MAX_RETRIES && RETRYABLE.has(sqlState(error) ?? '')) continue;
            throw this.#errors.wrap(error);
          }
        }
      })(),
    );
  }

  /**
   * Run `body` in one READ COMMITTED transaction on one pooled client. A deadlock or
   * serialization failure (the database rolled everything back) runs it again, as does an
   * error `retryOn` accepts.
   */
  tx<T>(
    body: (client: pg.PoolClient, control: TxControl) => Promise<T>,
    retryOn?: (error: unknown) => boolean,
  ): Promise<T> {
    if (this.#closed) return Promise.reject(this.#errors.closed());
    return this.#track(
      (async () => {
        const pool = await this.pool();
        for (let attempt = 0; ; attempt++) {
          let client: pg.PoolClient;
          try {
            client = await pool.connect();
          } catch (error) {
            throw this.#errors.wrap(error);
          }
          let broken: Error | undefined;
          // A checked-out client has no listener of the pool's: a connection that ends while
          // this transaction holds it (a terminated backend, a failover) would emit an
          // unhandled 'error' and end the process. Its queries reject on their own.
          const lost = (error: Error) => {
            broken ??= error;
          };
          client.on('error', lost);
          try {
            await client.query('BEGIN');
            let rollback = false;
            const result = await body(client, { rollback: () => (rollback = true) });
            await client.query(rollback ? 'ROLLBACK' : 'COMMIT');
            return result;
          } catch (error) {
            try {
              await client.query('ROLLBACK');
            } catch (rollbackError) {
              broken = rollbackError instanceof Error ? rollbackError : new Error('ROLLBACK failed');
            }
            const again = RETRYABLE.has(sqlState(error) ?? '') || (retryOn?.(error) ?? false);
            if (attempt < MAX_RETRIES && again && !broken) continue;
            throw this.#errors.wrap(error);
          } finally {
            client.removeListener('error', lost);
            client.release(broken);
          }
        }
      })(),
    );
  }

  /** Refuse new work, wait for running operations, and end the pool if it is ours. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([...this.#active]);
    const pool = this.#pool ?? (this.#making ? await this.#making.catch(() => null) : null);
    if (this.#owned && pool && !pool.ended && !pool.ending) await pool.end();
  }
}

/**
 * Strings PostgreSQL `text` cannot hold exactly (a NUL character, an unpaired surrogate) are
 * stored as `\u0001` + their JSON text, and so is any string that starts with `\u0001`; every
 * other string is stored as itself. The mapping is one-to-one, so equality lookups still work.
 */
const UNSAFE_TEXT = /\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A string as stored. */
export function toPgText(value: string): string {
  return value.charCodeAt(0) === 1 || UNSAFE_TEXT.test(value) ? `\u0001${JSON.stringify(value)}` : value;
}

/** A nullable string as stored. */
export function toPgTextOrNull(value: string | null | undefined): string | null {
  return value === null || value === undefined ? null : toPgText(value);
}

/** A stored string back. */
export function fromPgText(value: string): string {
  return value.charCodeAt(0) === 1 ? (JSON.parse(value.slice(1)) as string) : value;
}

/** A stored nullable string back. */
export function fromPgTextOrNull(value: unknown): string | null {
  return typeof value === 'string' ? fromPgText(value) : null;
}

/** Migrates a new store before it is handed over; a store that cannot migrate is closed, not leaked. */
export async function migrated<S extends { migrate(): Promise<void>; close(): Promise<void> }>(
  store: S,
): Promise<S> {
  try {
    await store.migrate();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
