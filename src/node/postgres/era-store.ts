/**
 * Era verdicts in PostgreSQL, so a fleet of processes classifies each endpoint once: one
 * row per endpoint key in `<schema>.ax_era_verdicts`.
 */

import type { AxMCPEraStore, AxMCPEraVerdict } from '../../client/era-store.js';
import { optionsError } from '../../net/options-error.js';
import { object, type Shape } from '../../options/check.js';
import { AxMCPError, assertMCPOptions } from '../../protocol/errors.js';
import {
  type AxPostgresConnectionOptions,
  connectionSourceIssue,
  fromPgText,
  type Migration,
  migrated,
  POSTGRES_CONNECTION_ALIASES,
  POSTGRES_CONNECTION_KEYS,
  PostgresConnection,
  type StoreErrors,
  toPgText,
} from './connection.js';

/**
 * Checks the options of a client-side PostgreSQL store before any pool or connection is made:
 * the shape, then that exactly one of `pool` and `connectionString` is given.
 */
export function assertPostgresStoreOptions(shape: Shape, options: unknown, label: string): void {
  assertMCPOptions(shape, options, label);
  const issue = connectionSourceIssue(options as AxPostgresConnectionOptions);
  if (issue) {
    throw optionsError(label, issue);
  }
}

/** The errors of the PostgreSQL client-side stores (era verdicts, tokens). */
export function clientStoreErrors(label: string): StoreErrors {
  return {
    config: (message, cause) =>
      new AxMCPError('invalid_argument', `${label}: ${message}`, cause === undefined ? {} : { cause }),
    closed: () => new AxMCPError('closed', `${label} is closed`),
    wrap: (error) =>
      error instanceof AxMCPError
        ? error
        : new AxMCPError('transport_error', `${label}: ${(error as Error)?.message ?? String(error)}`, {
            cause: error,
          }),
  };
}

const errors = clientStoreErrors('PostgreSQL era store');

const MIGRATIONS: Migration[] = [
  {
    version: 1,
    statements: (s) => [
      `CREATE TABLE ${s}.ax_era_verdicts (
         endpoint_key text PRIMARY KEY,
         verdict text NOT NULL,
         updated_at timestamptz NOT NULL DEFAULT now())`,
    ],
  },
];

/** Options of {@link AxMCPPostgresEraStore}. */
export type AxMCPPostgresEraStoreOptions = AxPostgresConnectionOptions;

/** The shape of {@link AxMCPPostgresEraStoreOptions}. */
const POSTGRES_ERA_STORE_OPTIONS = object(POSTGRES_CONNECTION_KEYS, {
  expected: 'an options object { pool } or { connectionString }, with schema? and poolSize?',
  aliases: POSTGRES_CONNECTION_ALIASES,
});

/** Era verdicts shared by every process that uses the same PostgreSQL schema. */
export class AxMCPPostgresEraStore implements AxMCPEraStore {
  /** The schema holding the table. */
  readonly schema: string;
  readonly #c: PostgresConnection;

  /** Create the store and its table before returning. */
  static async open(options: AxMCPPostgresEraStoreOptions): Promise<AxMCPPostgresEraStore> {
    // async: a refused option rejects the promise, as every other failure of open() does.
    return migrated(new AxMCPPostgresEraStore(options));
  }

  /** Checks `options` (`invalid_options`); nothing touches the database until the first call. */
  constructor(options: AxMCPPostgresEraStoreOptions) {
    assertPostgresStoreOptions(POSTGRES_ERA_STORE_OPTIONS, options, 'AxMCPPostgresEraStore options');
    this.#c = new PostgresConnection(options, errors);
    this.schema = this.#c.schema;
  }

  /** Create or migrate the table (idempotent). */
  migrate(): Promise<void> {
    if (this.#c.closed) return Promise.reject(errors.closed());
    return this.#c.ready('era', MIGRATIONS);
  }

  async get(endpointKey: string): Promise<AxMCPEraVerdict | undefined> {
    await this.migrate();
    const result = await this.#c.query<{ verdict: string }>(
      `SELECT verdict FROM ${this.#c.q}.ax_era_verdicts WHERE endpoint_key = $1`,
      [toPgText(endpointKey)],
    );
    const text = result.rows[0]?.verdict;
    if (text === undefined) return undefined;
    try {
      const parsed: unknown = JSON.parse(text);
      // A damaged or foreign row counts as unknown: the client classifies again and replaces it.
      return isVerdict(parsed) ? parsed : undefined;
    } catch {
      return undefined;
    }
  }

  async set(endpointKey: string, verdict: AxMCPEraVerdict): Promise<void> {
    if (!isVerdict(verdict)) throw errors.config('not an era verdict');
    await this.migrate();
    await this.#c.query(
      `INSERT INTO ${this.#c.q}.ax_era_verdicts (endpoint_key, verdict) VALUES ($1, $2)
       ON CONFLICT (endpoint_key) DO UPDATE SET verdict = EXCLUDED.verdict, updated_at = now()`,
      [toPgText(endpointKey), JSON.stringify(verdict)],
    );
  }

  async delete(endpointKey: string): Promise<void> {
    await this.migrate();
    await this.#c.query(`DELETE FROM ${this.#c.q}.ax_era_verdicts WHERE endpoint_key = $1`, [
      toPgText(endpointKey),
    ]);
  }

  /** Every endpoint key with a verdict (for inspection tools). */
  async keys(): Promise<string[]> {
    await this.migrate();
    const result = await this.#c.query<{ endpoint_key: string }>(
      `SELECT endpoint_key FROM ${this.#c.q}.ax_era_verdicts ORDER BY endpoint_key`,
    );
    return result.rows.map((row) => fromPgText(row.endpoint_key));
  }

  /** Wait for running calls and end the pool if the store made it. */
  close(): Promise<void> {
    return this.#c.close();
  }
}

function isVerdict(value: unknown): value is AxMCPEraVerdict {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const verdict = value as Record<string, unknown>;
  return (
    (verdict.era === 'legacy' || verdict.era === 'modern') &&
    typeof verdict.protocolVersion === 'string' &&
    typeof verdict.decidedAt === 'number' &&
    (verdict.discover === undefined ||
      (verdict.discover !== null && typeof verdict.discover === 'object' && !Array.isArray(verdict.discover)))
  );
}

/** @deprecated Renamed {@link AxMCPPostgresEraStore}: era and token stores are `AxMCP<Backend><Thing>Store` on every backend. */
export const AxPostgresEraStore = AxMCPPostgresEraStore;
/** @deprecated Renamed {@link AxMCPPostgresEraStore}. */
export type AxPostgresEraStore = AxMCPPostgresEraStore;
/** @deprecated Renamed {@link AxMCPPostgresEraStoreOptions}. */
export type AxPostgresEraStoreOptions = AxMCPPostgresEraStoreOptions;
