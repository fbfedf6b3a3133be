/**
 * A durable `EventStore` on PostgreSQL (`pg` 8, an optional peer dependency) for any number
 * of workers on any number of machines: deliveries claimed with `FOR UPDATE SKIP LOCKED`,
 * leases with fencing tokens, compare-and-set transitions, strict order per ordering key
 * (kept by the database, see `postgres-event-store-schema.ts`), a unique dedupe key,
 * versioned migrations it applies itself, and `LISTEN/NOTIFY` so idle workers wake when
 * there is work instead of polling hot. Its semantics mirror `AxSQLiteEventStore`.
 */

import type pg from 'pg';
import {
  AxEventClosedError,
  AxEventConfigError,
  AxEventError,
  AxEventInputError,
  assertEventOptions,
  eventRuleError,
} from '../events/errors.js';
import type {
  AxEventAppendInput,
  AxEventAppendResult,
  AxEventClaim,
  AxEventContinuation,
  AxEventDeadLetter,
  AxEventDedupeKey,
  AxEventPruneResult,
  AxEventRun,
  AxEventRunStatus,
  AxEventTransition,
  EventStore,
} from '../events/store.js';
import { isTerminalRunStatus } from '../events/store.js';
import { deliveryToRun } from '../events/store-helpers.js';
import { boolean, func, number, object } from '../options/check.js';
import {
  type AxPostgresConnectionOptions,
  connectionSourceIssue,
  fromPgText,
  hash32,
  type Migration,
  POSTGRES_CONNECTION_ALIASES,
  POSTGRES_CONNECTION_KEYS,
  PostgresConnection,
  type StoreErrors,
  sqlState,
  toPgText as t,
  toPgTextOrNull as tn,
} from './postgres-event-store-connection.js';
import {
  DAY,
  json,
  parse,
  type Row,
  toContinuation,
  toDeadLetter,
  toDelivery,
  toJoinedEvent,
} from './postgres-event-store-rows.js';
import { eventStoreMigrations, PENDING_SQL as PENDING } from './postgres-event-store-schema.js';
import { WorkSignal } from './postgres-event-store-signal.js';
import { APPEND, CLAIM, draftColumns, insertDeliveries, UPDATE_LEASED } from './postgres-event-store-sql.js';

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
  /** At most one `NOTIFY` per this many milliseconds from this store (the last is never dropped). Default 25. */
  notifyIntervalMs?: number;
  /** Failures with no caller to throw to: the `LISTEN` connection, idle pool connections, `NOTIFY`. */
  onError?: (error: unknown) => void;
}

const LABEL = 'AxPostgresEventStore options';

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
function checkStoreOptions(options: AxPostgresEventStoreOptions, label: string): void {
  assertEventOptions(POSTGRES_EVENT_STORE_OPTIONS, options, label);
  const issue = connectionSourceIssue(options);
  if (issue) throw eventRuleError(label, issue);
}

const errors: StoreErrors = {
  config: (message, cause) => new AxEventConfigError(message, cause === undefined ? {} : { cause }),
  closed: () => new AxEventClosedError('PostgreSQL event store'),
  wrap: (error) =>
    error instanceof AxEventError
      ? error
      : new AxEventError('store_error', `PostgreSQL event store: ${(error as Error)?.message ?? error}`, {
          cause: error,
        }),
};

/** A transaction to run again: another append recorded the same dedupe key first. */
class DedupeRace extends Error {}

/**
 * A durable {@link EventStore} on PostgreSQL, safe for many worker processes on many
 * machines. Create it with `new` (tables are created or migrated on first use) or with
 * {@link AxPostgresEventStore.open} (migrated before it returns).
 */
export class AxPostgresEventStore implements EventStore {
  readonly durability = 'durable' as const;
  readonly capabilities = { multiWorker: true };
  /** The schema holding the store's tables. */
  readonly schema: string;
  readonly #c: PostgresConnection;
  readonly #o: Required<
    Pick<
      AxPostgresEventStoreOptions,
      | 'retentionMs'
      | 'deadLetterRetentionMs'
      | 'maxPendingDeliveries'
      | 'maxEventBytes'
      | 'notify'
      | 'notifyIntervalMs'
    >
  >;
  readonly #onError: ((error: unknown) => void) | undefined;
  readonly #lockSpace: number;
  readonly #migrations: Migration[];
  readonly #statements = new Map<string, { name: string; text: string }>();
  readonly #signal: WorkSignal;
  #closed = false;
  #closing: Promise<void> | null = null;

  /** Create the store and apply its migrations before returning. */
  static async open(options: AxPostgresEventStoreOptions): Promise<AxPostgresEventStore> {
    const store = new AxPostgresEventStore(options);
    try {
      await store.migrate();
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  /**
   * Nothing touches the database until the first operation (or `migrate()`). The options are
   * checked here first: a problem throws {@link AxEventConfigError} (`invalid_options`) with
   * its path, and no pool is made.
   */
  constructor(options: AxPostgresEventStoreOptions) {
    checkStoreOptions(options, LABEL);
    this.#onError = options.onError;
    this.#c = new PostgresConnection(options, errors, (error) => this.#report(error));
    this.schema = this.#c.schema;
    this.#o = {
      retentionMs: options.retentionMs ?? 7 * DAY,
      deadLetterRetentionMs: options.deadLetterRetentionMs ?? 30 * DAY,
      maxPendingDeliveries: options.maxPendingDeliveries ?? 1_000_000,
      maxEventBytes: options.maxEventBytes ?? 1024 * 1024,
      notify: options.notify ?? true,
      notifyIntervalMs: options.notifyIntervalMs ?? 25,
    };
    this.#lockSpace = hash32(`ax-mcp events ${this.schema}`);
    this.#migrations = eventStoreMigrations(this.#lockSpace);
    this.#signal = new WorkSignal(this.#c, {
      channel: `ax_event_work_${this.schema}`,
      notify: this.#o.notify,
      intervalMs: this.#o.notifyIntervalMs,
      report: (error) => this.#report(error),
      wrap: errors.wrap,
    });
  }

  /** Create the schema and tables, or migrate them to this library's version (idempotent). */
  migrate(): Promise<void> {
    if (this.#closed) return Promise.reject(errors.closed());
    return this.#c.ready('events', this.#migrations);
  }

  #report(error: unknown): void {
    try {
      this.#onError?.(error);
    } catch {
      // A throwing error handler must not break the store.
    }
  }

  /** A statement with `{table}` names filled in, prepared once per connection under a stable name. */
  #s(sql: string): { name: string; text: string } {
    let statement = this.#statements.get(sql);
    if (!statement) {
      const text = sql.replace(/\{(\w+)\}/g, (_, name: string) => `${this.#c.q}.ax_event_${name}`);
      // Named after the text itself: stores sharing a pool never give one name two texts.
      const h = (seed: string) => (hash32(seed + text) >>> 0).toString(36);
      statement = { name: `axev_${h('a')}${h('b')}`, text };
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  async #query(sql: string, values: unknown[] = []): Promise<pg.QueryResult<Row>> {
    await this.#ready();
    const { name, text } = this.#s(sql);
    return this.#c.query<Row>(text, values, name);
  }

  #run(client: pg.PoolClient, sql: string, values: unknown[] = []): Promise<pg.QueryResult<Row>> {
    const { name, text } = this.#s(sql);
    return client.query<Row>({ name, text, values });
  }

  async #tx<T>(
    body: (client: pg.PoolClient, rollback: () => void) => Promise<T>,
    retryOn?: (error: unknown) => boolean,
  ): Promise<T> {
    await this.#ready();
    return this.#c.tx((client, control) => body(client, control.rollback), retryOn);
  }

  #ready(): Promise<void> {
    if (this.#closed) return Promise.reject(errors.closed());
    return this.migrate();
  }

  /**
   * Call `listener` whenever work may have become claimable anywhere on this database (a
   * `NOTIFY` from any store on the same schema: new events, sink writes, retries, redrives,
   * recovered leases), and once when listening starts. The first listener opens a `LISTEN`
   * connection (one pool connection, kept while anyone listens, reopened after a failure).
   * Returns the function that removes the listener.
   */
  onWork(listener: () => void): () => void {
    if (this.#closed) return () => undefined;
    return this.#signal.onWork(listener);
  }

  async #knownIds(d: AxEventDedupeKey): Promise<string[] | null> {
    const known = await this.#query(
      'SELECT delivery_ids FROM {dedupe} WHERE scope = $1 AND source = $2 AND event_id = $3',
      [t(d.scope), t(d.source), t(d.id)],
    );
    const row = known.rows[0];
    return row ? (parse<string[]>(row.delivery_ids) ?? []) : null;
  }

  async append(input: AxEventAppendInput): Promise<AxEventAppendResult> {
    await this.#ready();
    const d = input.dedupe;
    if (input.event.bytes > this.#o.maxEventBytes) {
      const known = await this.#knownIds(d);
      if (known) return { status: 'duplicate', deliveryIds: known };
      throw new AxEventInputError('event_too_large', `The event exceeds ${this.#o.maxEventBytes} bytes`);
    }
    if (input.deliveries.some((draft) => draft.coalesceKey !== null)) {
      const result = await this.#appendCoalescing(input);
      if (result.status === 'appended' && result.deliveryIds.length > 0) this.#signal.wake();
      return result;
    }
    const ids = input.deliveries.map((draft) => draft.id);
    const e = input.event;
    const n = input.deliveries.length;
    for (;;) {
      const result = await this.#query(APPEND, [
        t(d.scope),
        t(d.source),
        t(d.id),
        JSON.stringify(ids),
        input.now,
        t(e.key),
        t(e.scope),
        JSON.stringify(e.ingress),
        e.bytes,
        e.receivedAt,
        n,
        this.#o.maxPendingDeliveries,
        ...draftColumns(input.deliveries),
      ]);
      const row = result.rows[0] as Row;
      if (row.appended === 1) {
        if (n > 0) this.#signal.wake();
        return { status: 'appended', deliveryIds: ids };
      }
      const known = await this.#knownIds(d);
      if (known) return { status: 'duplicate', deliveryIds: known };
      if (row.room !== true) {
        const pending = await this.countPending();
        return { status: 'full', reason: `${pending} pending deliveries` };
      }
      // The conflicting dedupe key was pruned in between: try again.
    }
  }

  /** The append of an event with a coalescing delivery: SQLite's steps, in one transaction. */
  #appendCoalescing(input: AxEventAppendInput): Promise<AxEventAppendResult> {
    const d = input.dedupe;
    const e = input.event;
    return this.#tx<AxEventAppendResult>(
      async (client, rollback) => {
        const keys = [...new Set(input.deliveries.flatMap((x) => (x.coalesceKey ? [t(x.coalesceKey)] : [])))];
        for (const key of keys.sort()) {
          await this.#run(client, 'SELECT pg_advisory_xact_lock($1::integer, hashtext($2::text))', [
            this.#lockSpace,
            key,
          ]);
        }
        const known = await this.#run(
          client,
          'SELECT delivery_ids FROM {dedupe} WHERE scope = $1 AND source = $2 AND event_id = $3',
          [t(d.scope), t(d.source), t(d.id)],
        );
        if (known.rows[0]) {
          return { status: 'duplicate', deliveryIds: parse<string[]>(known.rows[0].delivery_ids) ?? [] };
        }
        const pending = await this.#pendingIn(client);
        if (pending + input.deliveries.length > this.#o.maxPendingDeliveries) {
          return { status: 'full', reason: `${pending} pending deliveries` };
        }
        await this.#run(
          client,
          'INSERT INTO {events} (key, scope, ingress, bytes, received_at) VALUES ($1, $2, $3, $4, $5)',
          [t(e.key), t(e.scope), JSON.stringify(e.ingress), e.bytes, e.receivedAt],
        );
        const ids: string[] = [];
        const fresh: AxEventAppendInput['deliveries'] = [];
        for (const draft of input.deliveries) {
          const existing = draft.coalesceKey
            ? (
                await this.#run(
                  client,
                  `SELECT id, event_key FROM {deliveries}
                   WHERE coalesce_key = $1 AND status = 'queued' AND attempt = 0 FOR UPDATE`,
                  [t(draft.coalesceKey)],
                )
              ).rows[0]
            : undefined;
          if (existing) {
            await this.#run(
              client,
              'UPDATE {deliveries} SET event_key = $1, due_at = $2, correlation = $3, plan_error = $4 WHERE id = $5',
              [t(e.key), draft.dueAt, json(draft.correlation), json(draft.planError), existing.id],
            );
            await this.#run(
              client,
              `DELETE FROM {events} WHERE key = $1
               AND NOT EXISTS (SELECT 1 FROM {deliveries} WHERE event_key = $1)`,
              [existing.event_key],
            );
            ids.push(fromPgText(existing.id as string));
            continue;
          }
          fresh.push(draft);
          ids.push(draft.id);
        }
        if (fresh.length > 0) {
          await this.#run(
            client,
            `${insertDeliveries(3, '$1::text', '$2::float8')} ORDER BY hashtext(x.ordering_key), x.ord`,
            [t(e.key), input.now, ...draftColumns(fresh)],
          );
        }
        const recorded = await this.#run(
          client,
          `INSERT INTO {dedupe} (scope, source, event_id, delivery_ids, created_at) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT DO NOTHING RETURNING 1`,
          [t(d.scope), t(d.source), t(d.id), JSON.stringify(ids), input.now],
        );
        if (recorded.rowCount === 0) {
          rollback();
          throw new DedupeRace();
        }
        return { status: 'appended', deliveryIds: ids };
      },
      (error) => error instanceof DedupeRace,
    );
  }

  async #pendingIn(client: pg.PoolClient): Promise<number> {
    const row = (await this.#run(client, 'SELECT COALESCE(sum(pending), 0)::float8 AS n FROM {counters}'))
      .rows[0] as Row;
    return row.n as number;
  }

  async claim(input: {
    workerId: string;
    now: number;
    leaseMs: number;
    limit: number;
  }): Promise<AxEventClaim[]> {
    const limit = Math.max(0, Math.floor(input.limit));
    if (limit === 0) {
      await this.#ready();
      return [];
    }
    const result = await this.#query(CLAIM, [input.now, limit, t(input.workerId), input.now + input.leaseMs]);
    return result.rows.map((row) => {
      const previousStatus = row.previous_status as AxEventRunStatus;
      return {
        delivery: toDelivery(row),
        event: row.kind === 'event' ? toJoinedEvent(row) : null,
        recovered: previousStatus === 'claimed' || previousStatus === 'running',
        previousStatus,
      };
    });
  }

  async heartbeat(input: { deliveryId: string; fencingToken: number; leaseUntil: number }) {
    const result = await this.#query(
      // Like a claim, a lost heartbeat only shortens a lease that fencing already guards.
      `WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true) AS done)
       UPDATE {deliveries} SET lease_until = $3 FROM relaxed
       WHERE id = $1 AND fencing = $2 AND status IN ('claimed','running') RETURNING cancel_requested`,
      [t(input.deliveryId), input.fencingToken, input.leaseUntil],
    );
    const row = result.rows[0];
    return row
      ? { held: true, cancelRequested: row.cancel_requested === true }
      : { held: false, cancelRequested: false };
  }

  #transitionValues(x: AxEventTransition): unknown[] {
    const requeue = x.status === 'queued' || x.status === 'failed';
    const terminal = isTerminalRunStatus(x.status);
    return [
      t(x.deliveryId),
      x.fencingToken,
      x.status,
      tn(x.targetId),
      tn(x.instanceKey),
      x.startedAt ?? null,
      x.output !== undefined,
      x.output !== undefined ? json(x.output) : null,
      x.error !== undefined,
      x.error !== undefined ? json(x.error) : null,
      x.attempt ?? null,
      requeue,
      requeue ? (x.dueAt ?? x.now) : null,
      requeue || terminal,
      terminal ? x.now : null,
    ];
  }

  async transition(x: AxEventTransition): Promise<boolean> {
    const simple =
      !x.sinks?.length &&
      !x.consumeContinuationId &&
      !x.deadLetter &&
      x.status !== 'dead_lettered' &&
      x.status !== 'cancelled';
    if (simple) {
      // One compare-and-set statement: the fencing token and lease state are its condition.
      const result = await this.#query(UPDATE_LEASED, this.#transitionValues(x));
      const ok = result.rowCount === 1;
      if (ok && (x.status === 'queued' || x.status === 'failed')) this.#signal.wake();
      return ok;
    }
    const ok = await this.#tx(async (client) => {
      const leased = await this.#run(
        client,
        "SELECT * FROM {deliveries} WHERE id = $1 AND fencing = $2 AND status IN ('claimed','running') FOR UPDATE",
        [t(x.deliveryId), x.fencingToken],
      );
      const row = leased.rows[0];
      if (!row) return false;
      const d = toDelivery(row);
      const error = x.error !== undefined ? x.error : d.error;
      await this.#run(client, UPDATE_LEASED, this.#transitionValues(x));
      if (x.status === 'dead_lettered' || x.status === 'cancelled') {
        await this.#run(client, 'DELETE FROM {continuations} WHERE delivery_id = $1', [t(d.id)]);
      }
      if (x.sinks?.length) {
        await this.#run(
          client,
          `INSERT INTO {deliveries} (id, run_id, kind, sink_id, event_key, route_id, action, target_id,
             instance_key, ordering_key, due_at, status, created_at)
           SELECT s.id, $3::text, 'sink', s.sink_id, NULL, $4::text, $5::text, $6::text, $7::text, NULL,
             $8::float8, 'queued', $8::float8
           FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS s(id, sink_id, ord) ORDER BY s.ord`,
          [
            x.sinks.map((s) => t(s.id)),
            x.sinks.map((s) => t(s.sinkId)),
            t(d.runId),
            t(d.routeId),
            d.action,
            tn(x.targetId ?? d.targetId),
            t(d.instanceKey),
            x.now,
          ],
        );
      }
      if (x.consumeContinuationId) await this.#consume(client, x.consumeContinuationId, x.now);
      if (x.deadLetter) {
        await this.#run(
          client,
          `INSERT INTO {dead_letters} (id, kind, delivery_id, run_id, sink_id, reason, error, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [
            t(x.deadLetter.id),
            d.kind === 'sink' ? 'sink' : 'delivery',
            t(d.id),
            t(d.runId),
            tn(d.sinkId),
            x.deadLetter.reason,
            json(error),
            x.now,
          ],
        );
      }
      return true;
    });
    // A finished delivery may unblock the next of its ordering key, but the lane that
    // finished it claims again at once; only new work (sinks, a retry time) wakes the fleet.
    if (ok && (x.sinks?.length || x.status === 'queued' || x.status === 'failed')) this.#signal.wake();
    return ok;
  }

  /** Delete a continuation; its run, if waiting and now without continuations, has succeeded. */
  async #consume(client: pg.PoolClient, continuationId: string, now: number): Promise<void> {
    const found = await this.#run(client, 'SELECT delivery_id FROM {continuations} WHERE id = $1', [
      t(continuationId),
    ]);
    const owner = found.rows[0]?.delivery_id as string | undefined;
    if (owner === undefined) return;
    // Lock the owning run first (as cancel does), so two resumes of one run see each other.
    await this.#run(client, 'SELECT 1 FROM {deliveries} WHERE id = $1 FOR UPDATE', [owner]);
    await this.#run(client, 'DELETE FROM {continuations} WHERE id = $1', [t(continuationId)]);
    await this.#run(
      client,
      `UPDATE {deliveries} SET status = 'succeeded', finished_at = $1
       WHERE id = $2 AND status = 'waiting_event'
         AND NOT EXISTS (SELECT 1 FROM {continuations} WHERE delivery_id = $2)`,
      [now, owner],
    );
  }

  async #runOf(client: pg.PoolClient | null, id: string): Promise<AxEventRun | null> {
    const sql = `WITH r AS (SELECT * FROM {deliveries} WHERE kind = 'event' AND (run_id = $1 OR id = $1) LIMIT 1)
      SELECT 0 AS part, r.* FROM r
      UNION ALL
      SELECT 1 AS part, s.* FROM {deliveries} s JOIN r ON s.run_id = r.run_id WHERE s.kind = 'sink'
      ORDER BY part, seq`;
    const rows = (client ? await this.#run(client, sql, [t(id)]) : await this.#query(sql, [t(id)])).rows;
    const [first, ...sinks] = rows;
    return first ? deliveryToRun(toDelivery(first), sinks.map(toDelivery)) : null;
  }

  async cancel(input: { id: string; now: number }): Promise<AxEventRun | null> {
    let released = false;
    const run = await this.#tx(async (client) => {
      const found = await this.#run(
        client,
        "SELECT id, status FROM {deliveries} WHERE kind = 'event' AND (run_id = $1 OR id = $1) LIMIT 1 FOR UPDATE",
        [t(input.id)],
      );
      const row = found.rows[0];
      if (!row) return null;
      const status = row.status as AxEventRunStatus;
      if (status === 'queued' || status === 'failed' || status === 'waiting_event') {
        await this.#run(
          client,
          `UPDATE {deliveries} SET status = 'cancelled', finished_at = $1, lease_owner = NULL, lease_until = NULL
           WHERE id = $2`,
          [input.now, row.id],
        );
        await this.#run(client, 'DELETE FROM {continuations} WHERE delivery_id = $1', [row.id]);
        released = status !== 'waiting_event';
      } else if (status === 'claimed' || status === 'running') {
        await this.#run(client, 'UPDATE {deliveries} SET cancel_requested = true WHERE id = $1', [row.id]);
      }
      return this.#runOf(client, input.id);
    });
    if (released) this.#signal.wake();
    return run;
  }

  async putContinuations(input: {
    deliveryId: string;
    fencingToken: number;
    now: number;
    continuations: AxEventContinuation[];
  }): Promise<boolean> {
    return this.#tx(
      async (client) => {
        const leased = await this.#run(
          client,
          `SELECT continuation_ids FROM {deliveries}
           WHERE id = $1 AND fencing = $2 AND status IN ('claimed','running') FOR UPDATE`,
          [t(input.deliveryId), input.fencingToken],
        );
        const row = leased.rows[0];
        if (!row) return false;
        const ids = parse<string[]>(row.continuation_ids) ?? [];
        for (const c of input.continuations) {
          const existing = (
            await this.#run(
              client,
              'SELECT id, delivery_id, expires_at FROM {continuations} WHERE scope = $1 AND kind = $2 AND value = $3 FOR UPDATE',
              [t(c.scope), t(c.kind), t(c.value)],
            )
          ).rows[0];
          if (existing) {
            const live = existing.expires_at === null || (existing.expires_at as number) > input.now;
            if (live && existing.delivery_id !== t(input.deliveryId)) {
              throw new AxEventError(
                'continuation_conflict',
                `A live continuation of kind "${c.kind}" already exists`,
              );
            }
            await this.#run(client, 'DELETE FROM {continuations} WHERE id = $1', [existing.id]);
          }
          await this.#run(
            client,
            `INSERT INTO {continuations} (id, scope, kind, value, target_id, instance_key, run_id, delivery_id,
               expires_at, metadata, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
            [
              t(c.id),
              t(c.scope),
              t(c.kind),
              t(c.value),
              t(c.targetId),
              t(c.instanceKey),
              t(c.runId),
              t(input.deliveryId),
              c.expiresAt,
              json(c.metadata),
              c.createdAt,
            ],
          );
          if (!ids.includes(c.id)) ids.push(c.id);
        }
        await this.#run(client, 'UPDATE {deliveries} SET continuation_ids = $1 WHERE id = $2', [
          JSON.stringify(ids),
          t(input.deliveryId),
        ]);
        return true;
      },
      // Another delivery inserted the same (scope, kind, value) at the same moment: look again.
      (error) => sqlState(error) === '23505',
    );
  }

  async findContinuation(input: { scope: string; kind: string; value: string; now: number }) {
    const result = await this.#query(
      `SELECT * FROM {continuations}
       WHERE scope = $1 AND kind = $2 AND value = $3 AND (expires_at IS NULL OR expires_at > $4)`,
      [t(input.scope), t(input.kind), t(input.value), input.now],
    );
    const row = result.rows[0];
    return row ? toContinuation(row) : null;
  }

  async getRun(id: string): Promise<AxEventRun | null> {
    await this.#ready();
    return this.#runOf(null, id);
  }

  async listDeadLetters(input: { limit?: number } = {}): Promise<AxEventDeadLetter[]> {
    const result = await this.#query('SELECT * FROM {dead_letters} ORDER BY created_at, n LIMIT $1', [
      Math.max(0, Math.floor(input.limit ?? 1000)),
    ]);
    return result.rows.map(toDeadLetter);
  }

  async redrive(input: { deadLetterId: string; now: number }): Promise<string | null> {
    let requeued = false;
    const id = await this.#tx(async (client) => {
      const letter = (
        await this.#run(client, 'DELETE FROM {dead_letters} WHERE id = $1 RETURNING delivery_id', [
          t(input.deadLetterId),
        ])
      ).rows[0];
      if (!letter) return null;
      const row = (
        await this.#run(client, 'SELECT id, status FROM {deliveries} WHERE id = $1 FOR UPDATE', [
          letter.delivery_id,
        ])
      ).rows[0];
      if (!row) return null;
      if (isTerminalRunStatus(row.status as AxEventRunStatus)) {
        await this.#run(
          client,
          `UPDATE {deliveries} SET status = 'queued', attempt = 0, due_at = $1, cancel_requested = false,
             finished_at = NULL, lease_owner = NULL, lease_until = NULL WHERE id = $2`,
          [input.now, row.id],
        );
        requeued = true;
      }
      return row.id as string;
    });
    if (requeued) this.#signal.wake();
    return id === null ? null : fromPgText(id);
  }

  async nextDueAt(): Promise<number | null> {
    const result = await this.#query(
      `SELECT LEAST(
         (SELECT due_at FROM {deliveries} WHERE status IN ('queued','failed') AND is_head
          ORDER BY due_at, seq LIMIT 1),
         (SELECT min(lease_until) FROM {deliveries} WHERE status IN ('claimed','running'))) AS t`,
    );
    const value = result.rows[0]?.t;
    return typeof value === 'number' ? value : null;
  }

  async countPending(): Promise<number> {
    const result = await this.#query('SELECT COALESCE(sum(pending), 0)::float8 AS n FROM {counters}');
    return (result.rows[0] as Row).n as number;
  }

  async recoverLeases(input: { now: number }): Promise<number> {
    const result = await this.#query(
      "UPDATE {deliveries} SET lease_until = $1 WHERE status IN ('claimed','running') AND lease_until > $1",
      [input.now],
    );
    const n = result.rowCount ?? 0;
    if (n > 0) this.#signal.wake();
    return n;
  }

  async prune(input: { now: number }): Promise<AxEventPruneResult> {
    return this.#tx(async (client) => {
      const horizon = input.now - this.#o.retentionMs;
      const count = async (sql: string, values: unknown[]) =>
        (await this.#run(client, sql, values)).rowCount ?? 0;
      const continuations = await count(
        'DELETE FROM {continuations} WHERE expires_at IS NOT NULL AND expires_at <= $1',
        [input.now],
      );
      const dedupeKeys = await count('DELETE FROM {dedupe} WHERE created_at <= $1', [horizon]);
      const deadLetters = await count('DELETE FROM {dead_letters} WHERE created_at <= $1', [
        input.now - this.#o.deadLetterRetentionMs,
      ]);
      const gone = await this.#run(
        client,
        `WITH old AS (
           SELECT d.run_id FROM {deliveries} d
           WHERE d.kind = 'event' AND d.status NOT IN ${PENDING} AND d.finished_at <= $1
             AND NOT EXISTS (SELECT 1 FROM {dead_letters} l WHERE l.run_id = d.run_id)
             AND NOT EXISTS (SELECT 1 FROM {continuations} c WHERE c.delivery_id = d.id)
             AND NOT EXISTS (SELECT 1 FROM {deliveries} s WHERE s.run_id = d.run_id AND s.kind = 'sink'
               AND s.status IN ${PENDING})),
         sinks AS (
           DELETE FROM {deliveries} s USING old WHERE s.kind = 'sink' AND s.run_id = old.run_id RETURNING s.id)
         DELETE FROM {deliveries} e USING old WHERE e.kind = 'event' AND e.run_id = old.run_id
         RETURNING e.event_key, (SELECT count(*) FROM sinks)::integer AS sinks`,
        [horizon],
      );
      const keys = [
        ...new Set(gone.rows.flatMap((r) => (typeof r.event_key === 'string' ? [r.event_key] : []))),
      ];
      const events =
        keys.length === 0
          ? 0
          : await count(
              `DELETE FROM {events} e WHERE e.key = ANY($1::text[])
               AND NOT EXISTS (SELECT 1 FROM {deliveries} d WHERE d.event_key = e.key)`,
              [keys],
            );
      const deliveries = (gone.rowCount ?? 0) + ((gone.rows[0]?.sinks as number | undefined) ?? 0);
      return { deliveries, events, dedupeKeys, continuations, deadLetters };
    });
  }

  /**
   * Stop listening, send a pending `NOTIFY`, wait for running operations and end the pool
   * if the store made it (a pool you passed stays open). Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      await this.#signal.close();
      await this.#c.close();
    })();
    return this.#closing;
  }
}
