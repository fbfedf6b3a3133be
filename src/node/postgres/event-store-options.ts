/** The options of `AxPostgresEventStore`, their schema, and the store's typed errors. */
import {
  AxEventClosedError,
  AxEventConfigError,
  AxEventError,
  assertEventOptions,
  eventRuleError,
} from '../../events/errors.js';
import { boolean, func, number, object } from '../../options/check.js';
import {
  type AxPostgresConnectionOptions,
  connectionSourceIssue,
  POSTGRES_CONNECTION_ALIASES,
  POSTGRES_CONNECTION_KEYS,
  type StoreErrors,
} from './connection.js';

/** Options of {@link AxPostgresEventStore}. */
export interface AxPostgresEventStoreOptions extends AxPostgresConnectionOptions {
  /** How long finished runs and dedupe keys are kept. Default seven days. */
  retentionMs?: number;
  /** How long dead letters are kept. Default thirty days. */
  deadLetterRetentionMs?: number;
  /**
   * Non-terminal deliveries held at once before `append` reports full. Default 1,000,000.
   * Concurrent appends from several processes may overshoot it by the deliveries they add.
   */
  maxPendingDeliveries?: number;
  /** Largest single event, in bytes. Default 1 MiB. */
  maxEventBytes?: number;
  /** Send `NOTIFY` when work becomes claimable, so idle workers elsewhere wake. Default `true`. */
  notify?: boolean;
  /**
   * Least time in milliseconds between two `NOTIFY`s from this store (the last is never
   * dropped). Default 0: one `NOTIFY` is on the wire at a time, and what becomes claimable
   * meanwhile rides on the next, so the latency from publish to start stays one round trip.
   * A larger value trades that latency for fewer wake-ups on a busy fleet.
   */
  notifyIntervalMs?: number;
  /**
   * Failures with no caller to throw to: the `LISTEN` connection, idle pool connections,
   * `NOTIFY`. Without it, the first failure of each kind is written to the console.
   */
  onError?: (error: unknown) => void;
}

export const LABEL = 'AxPostgresEventStore options';

/**
 * What {@link AxPostgresEventStore} accepts (the connection keys of
 * `AxPostgresConnectionOptions` included); checked once in the constructor, before any pool
 * or connection is made.
 */
export const POSTGRES_EVENT_STORE_OPTIONS = object(
  {
    ...POSTGRES_CONNECTION_KEYS,
    retentionMs: number({ min: 0 }),
    deadLetterRetentionMs: number({ min: 0 }),
    maxPendingDeliveries: number({ integer: true, min: 1 }),
    maxEventBytes: number({ integer: true, min: 1 }),
    notify: boolean(),
    notifyIntervalMs: number({ min: 0 }),
    onError: func(),
  },
  {
    expected: 'options { pool } or { connectionString }, with schema?, retentionMs?, …',
    aliases: POSTGRES_CONNECTION_ALIASES,
  },
);

/** Shapes first, then the one rule beyond them: exactly one of `pool` and `connectionString`. */
export function checkStoreOptions(options: AxPostgresEventStoreOptions, label: string): void {
  assertEventOptions(POSTGRES_EVENT_STORE_OPTIONS, options, label);
  const issue = connectionSourceIssue(options);
  if (issue) throw eventRuleError(label, issue);
}

/** The store's errors, for the connection layer. */
export const eventStoreErrors: StoreErrors = {
  config: (message, cause) => new AxEventConfigError(message, cause === undefined ? {} : { cause }),
  closed: () => new AxEventClosedError('PostgreSQL event store'),
  wrap: (error) =>
    error instanceof AxEventError
      ? error
      : new AxEventError('store_error', `PostgreSQL event store: ${(error as Error)?.message ?? error}`, {
          cause: error,
        }),
};
