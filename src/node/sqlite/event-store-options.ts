/** The options of `AxSQLiteEventStore` and `AxSQLiteEventStore.open`, and their schemas. */
import type BetterSqlite3 from 'better-sqlite3';
import { instance, number, object, required, string } from '../../options/check.js';

/** Options of {@link AxSQLiteEventStore}. */
export interface AxSQLiteEventStoreOptions {
  /** An open better-sqlite3 database. The store does not close a database you pass. */
  database: BetterSqlite3.Database;
  /** Prefix of the store's tables. Default `ax_event_`. Letters, digits and `_` only. */
  tablePrefix?: string;
  /** How long finished runs and dedupe keys are kept. Default seven days. */
  retentionMs?: number;
  /** How long dead letters are kept. Default thirty days. */
  deadLetterRetentionMs?: number;
  /** Non-terminal deliveries held at once before `append` reports full. Default 1,000,000. */
  maxPendingDeliveries?: number;
  /** Largest single event, in bytes. Default 1 MiB. */
  maxEventBytes?: number;
}

/** Options of {@link AxSQLiteEventStore.open}. */
export interface AxSQLiteEventStoreOpenOptions extends Omit<AxSQLiteEventStoreOptions, 'database'> {
  /** Database file path. */
  filename: string;
  /** How long a writer waits for another process's transaction. Default 5000 ms. */
  busyTimeoutMs?: number;
}

const TABLE_PREFIX = /^[A-Za-z_][A-Za-z0-9_]{0,40}$/;

/** The keys both forms of options share. */
const COMMON_KEYS = {
  tablePrefix: instance(
    'a table prefix of letters, digits and "_" (at most 41, not starting with a digit)',
    (v) => typeof v === 'string' && TABLE_PREFIX.test(v),
  ),
  retentionMs: number({ min: 0 }),
  deadLetterRetentionMs: number({ min: 0 }),
  maxPendingDeliveries: number({ integer: true, min: 1 }),
  maxEventBytes: number({ integer: true, min: 1 }),
};

/** What the store's constructor accepts; checked once, before the database is touched. */
export const SQLITE_EVENT_STORE_OPTIONS = object(
  {
    database: required(
      instance(
        'an open better-sqlite3 Database',
        (v) =>
          typeof v === 'object' &&
          v !== null &&
          typeof (v as BetterSqlite3.Database).prepare === 'function' &&
          typeof (v as BetterSqlite3.Database).pragma === 'function' &&
          typeof (v as BetterSqlite3.Database).transaction === 'function',
      ),
    ),
    ...COMMON_KEYS,
  },
  {
    expected: 'options { database, tablePrefix?, retentionMs?, … }',
    aliases: { db: 'database', prefix: 'tablePrefix' },
  },
);

/** What {@link AxSQLiteEventStore.open} accepts; checked once, before the file is opened. */
export const SQLITE_EVENT_STORE_OPEN_OPTIONS = object(
  { filename: required(string({ nonEmpty: true })), busyTimeoutMs: number({ min: 0 }), ...COMMON_KEYS },
  {
    expected: 'options { filename, busyTimeoutMs?, tablePrefix?, … }',
    aliases: {
      path: 'filename',
      file: 'filename',
      prefix: 'tablePrefix',
      timeout: 'busyTimeoutMs',
      busyTimeout: 'busyTimeoutMs',
    },
  },
);
