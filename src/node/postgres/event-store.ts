/**
 * A durable `AxEventStore` on PostgreSQL (`pg` 8, an optional peer dependency) for any number
 * of workers on any number of machines: deliveries claimed with `FOR UPDATE SKIP LOCKED`,
 * leases with fencing tokens, compare-and-set transitions, strict order per ordering key
 * (kept by the database, see `event-store-schema.ts`), a unique dedupe key,
 * versioned migrations it applies itself, and `LISTEN/NOTIFY` so idle workers wake when
 * there is work instead of polling hot. Its semantics mirror `AxSQLiteEventStore`.
 * Appends are `event-store-append.ts`, a lease holder's writes `event-store-transition.ts`.
 */

import type pg from 'pg';
import { UnheardErrors } from '../../errors/unheard.js';
import { checkContinuationQuery, checkRunQuery } from '../../events/run-listing.js';
import type {
  AxEventAppendInput,
  AxEventAppendManyInput,
  AxEventAppendResult,
  AxEventClaim,
  AxEventContinuation,
  AxEventContinuationListing,
  AxEventDeadLetter,
  AxEventPruneResult,
  AxEventRun,
  AxEventRunPage,
  AxEventRunQuery,
  AxEventRunStatus,
  AxEventStore,
  AxEventTransition,
} from '../../events/store.js';
import { isTerminalRunStatus } from '../../events/store.js';
import { deliveryToRun } from '../../events/store-helpers.js';
import {
  fromPgText,
  hash32,
  type Migration,
  migrated,
  PostgresConnection,
  toPgText as t,
} from './connection.js';
import { type AppendingStore, appendEvent } from './event-store-append.js';
import { appendEvents } from './event-store-append-many.js';
import {
  type AxPostgresEventStoreOptions,
  checkStoreOptions,
  eventStoreErrors,
  LABEL,
} from './event-store-options.js';
import {
  DAY,
  type Row,
  toContinuation,
  toDeadLetter,
  toDelivery,
  toJoinedEvent,
} from './event-store-rows.js';
import { eventStoreMigrations, PENDING_SQL as PENDING } from './event-store-schema.js';
import { WorkSignal } from './event-store-signal.js';
import { CLAIM } from './event-store-sql.js';
import { EventTables } from './event-store-tables.js';
import {
  isSimpleTransition,
  putContinuations,
  transitionLeased,
  transitionTogether,
} from './event-store-transition.js';
import { listContinuations, listRuns } from './listing.js';
import { type ClaimRequest, SharedStatements, sharedClaims } from './shared-statements.js';

export { type AxPostgresEventStoreOptions, POSTGRES_EVENT_STORE_OPTIONS } from './event-store-options.js';

/**
 * A durable {@link AxEventStore} on PostgreSQL, safe for many worker processes on many
 * machines. Create it with `new` (tables are created or migrated on first use) or with
 * {@link AxPostgresEventStore.open} (migrated before it returns).
 */
export class AxPostgresEventStore implements AxEventStore {
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
  /**
   * Failures with no caller: `onError`; without it, the first of each kind to the console (a
   * lost LISTEN connection leaves the fleet on polling: worth a line).
   */
  readonly #report: (error: unknown) => void;
  readonly #migrations: Migration[];
  readonly #tables: EventTables;
  readonly #claims = sharedClaims((request) => this.#claimNow(request));
  /** Simple transitions that overlap share a statement and a commit. */
  readonly #transitions = new SharedStatements<AxEventTransition, boolean>({
    key: () => '',
    run: (batch) => transitionTogether(this.#context, batch),
  });
  readonly #signal: WorkSignal;
  /** What the append and lease-holder writes (their own modules) need of this store. */
  readonly #context: AppendingStore;
  #closed = false;
  #closing: Promise<void> | null = null;

  /** Create the store and apply its migrations before returning. */
  static async open(options: AxPostgresEventStoreOptions): Promise<AxPostgresEventStore> {
    // async: a refused option rejects the promise, as every other failure of open() does.
    return migrated(new AxPostgresEventStore(options));
  }

  /**
   * Nothing touches the database until the first operation (or `migrate()`). The options are
   * checked here first: a problem throws `AxEventConfigError` (`invalid_options`) with
   * its path, and no pool is made.
   */
  constructor(options: AxPostgresEventStoreOptions) {
    checkStoreOptions(options, LABEL);
    this.#report = new UnheardErrors('PostgreSQL event store', 'onError to the store', (message) =>
      console.warn(message),
    ).reporter(options.onError);
    this.#c = new PostgresConnection(options, eventStoreErrors, (error) => this.#report(error));
    this.schema = this.#c.schema;
    this.#o = {
      retentionMs: options.retentionMs ?? 7 * DAY,
      deadLetterRetentionMs: options.deadLetterRetentionMs ?? 30 * DAY,
      maxPendingDeliveries: options.maxPendingDeliveries ?? 1_000_000,
      maxEventBytes: options.maxEventBytes ?? 1024 * 1024,
      notify: options.notify ?? true,
      notifyIntervalMs: options.notifyIntervalMs ?? 0,
    };
    const lockSpace = hash32(`ax-mcp events ${this.schema}`);
    this.#migrations = eventStoreMigrations(lockSpace);
    this.#tables = new EventTables(this.#c, () => this.#ready());
    this.#signal = new WorkSignal(this.#c, {
      channel: `ax_event_work_${this.schema}`,
      notify: this.#o.notify,
      intervalMs: this.#o.notifyIntervalMs,
      report: (error) => this.#report(error),
      wrap: eventStoreErrors.wrap,
    });
    this.#context = {
      tables: this.#tables,
      maxEventBytes: this.#o.maxEventBytes,
      maxPendingDeliveries: this.#o.maxPendingDeliveries,
      lockSpace,
      wake: (count, laterDueAt) => this.#signal.wake(count, laterDueAt),
      countPending: () => this.countPending(),
    };
  }

  /** Create the schema and tables, or migrate them to this library's version (idempotent). */
  migrate(): Promise<void> {
    if (this.#closed) return Promise.reject(eventStoreErrors.closed());
    return this.#c.ready('events', this.#migrations);
  }

  #ready(): Promise<void> {
    if (this.#closed) return Promise.reject(eventStoreErrors.closed());
    return this.migrate();
  }

  /**
   * Call `listener` whenever work may have become claimable anywhere on this database (a
   * `NOTIFY` from any store on the same schema: new events, sink writes, retries, redrives,
   * recovered leases), and once when listening starts. The first listener opens a `LISTEN`
   * connection (one pool connection, kept while anyone listens, reopened after a failure).
   * `count` is how many deliveries the notifying stores made claimable since their previous
   * `NOTIFY` (a hint: others may have claimed them already); it is `undefined` when listening
   * (re)starts, when anything may be waiting. `laterDueAt` is the earliest due time among them
   * when some are not due yet (a retry's backoff, a delayed delivery); stores of versions before
   * it send none. Returns the function that removes the listener.
   */
  onWork(listener: (count?: number, laterDueAt?: number) => void): () => void {
    if (this.#closed) return () => undefined;
    return this.#signal.onWork(listener);
  }

  async append(input: AxEventAppendInput): Promise<AxEventAppendResult> {
    await this.#ready();
    return appendEvent(this.#context, input);
  }

  /**
   * A batch in one statement (one round trip) and one `NOTIFY`: the whole batch is written,
   * or, when the store is full, none of it. A batch with a coalescing delivery goes in item by
   * item (each atomic; the first full item stops it).
   */
  async appendMany(input: AxEventAppendManyInput): Promise<AxEventAppendResult[]> {
    await this.#ready();
    if (input.items.length === 0) return [];
    return appendEvents(this.#context, input);
  }

  /**
   * Lease up to `limit` due deliveries. Claims of this store that overlap (the lanes of a
   * worker) share one statement: see `shared-statements.ts`.
   */
  async claim(input: ClaimRequest): Promise<AxEventClaim[]> {
    const limit = Math.max(0, Math.floor(input.limit));
    if (limit === 0) {
      await this.#ready();
      return [];
    }
    return this.#claims.send({ ...input, limit });
  }

  async #claimNow(input: ClaimRequest): Promise<AxEventClaim[]> {
    const result = await this.#tables.query(CLAIM, [
      input.now,
      input.limit,
      t(input.workerId),
      input.now + input.leaseMs,
    ]);
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
    const result = await this.#tables.query(
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

  transition(x: AxEventTransition): Promise<boolean> {
    if (isSimpleTransition(x)) return this.#transitions.send(x);
    return transitionLeased(this.#context, x);
  }

  async #runOf(client: pg.PoolClient | null, id: string): Promise<AxEventRun | null> {
    const sql = `WITH r AS (SELECT * FROM {deliveries} WHERE kind = 'event' AND (run_id = $1 OR id = $1) LIMIT 1)
      SELECT 0 AS part, r.* FROM r
      UNION ALL
      SELECT 1 AS part, s.* FROM {deliveries} s JOIN r ON s.run_id = r.run_id WHERE s.kind = 'sink'
      ORDER BY part, seq`;
    const rows = (
      client ? await this.#tables.run(client, sql, [t(id)]) : await this.#tables.query(sql, [t(id)])
    ).rows;
    const [first, ...sinks] = rows;
    return first ? deliveryToRun(toDelivery(first), sinks.map(toDelivery)) : null;
  }

  async cancel(input: { id: string; now: number }): Promise<AxEventRun | null> {
    let released = false;
    const run = await this.#tables.tx(async (client) => {
      const found = await this.#tables.run(
        client,
        "SELECT id, status FROM {deliveries} WHERE kind = 'event' AND (run_id = $1 OR id = $1) LIMIT 1 FOR UPDATE",
        [t(input.id)],
      );
      const row = found.rows[0];
      if (!row) return null;
      const status = row.status as AxEventRunStatus;
      if (status === 'queued' || status === 'failed' || status === 'waiting_event') {
        await this.#tables.run(
          client,
          `UPDATE {deliveries} SET status = 'cancelled', finished_at = $1, lease_owner = NULL, lease_until = NULL
           WHERE id = $2`,
          [input.now, row.id],
        );
        await this.#tables.run(client, 'DELETE FROM {continuations} WHERE delivery_id = $1', [row.id]);
        released = status !== 'waiting_event';
      } else if (status === 'claimed' || status === 'running') {
        await this.#tables.run(client, 'UPDATE {deliveries} SET cancel_requested = true WHERE id = $1', [
          row.id,
        ]);
      }
      return this.#runOf(client, input.id);
    });
    if (released) this.#signal.wake();
    return run;
  }

  putContinuations(input: {
    deliveryId: string;
    fencingToken: number;
    now: number;
    continuations: AxEventContinuation[];
  }): Promise<boolean> {
    return putContinuations(this.#context, input);
  }

  async findContinuation(input: { scope: string; kind: string; value: string; now: number }) {
    const result = await this.#tables.query(
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

  /** One statement per page (see `listing.ts`); a page scans the event deliveries. */
  async listRuns(input?: AxEventRunQuery): Promise<AxEventRunPage> {
    return listRuns(this.#tables, checkRunQuery(input));
  }

  async listContinuations(input: { now: number; limit?: number }): Promise<AxEventContinuationListing[]> {
    return listContinuations(this.#tables, checkContinuationQuery(input));
  }

  async listDeadLetters(input: { limit?: number } = {}): Promise<AxEventDeadLetter[]> {
    const result = await this.#tables.query('SELECT * FROM {dead_letters} ORDER BY created_at, n LIMIT $1', [
      Math.max(0, Math.floor(input.limit ?? 1000)),
    ]);
    return result.rows.map(toDeadLetter);
  }

  async redrive(input: { deadLetterId: string; now: number }): Promise<string | null> {
    let requeued = false;
    const id = await this.#tables.tx(async (client) => {
      const letter = (
        await this.#tables.run(client, 'DELETE FROM {dead_letters} WHERE id = $1 RETURNING delivery_id', [
          t(input.deadLetterId),
        ])
      ).rows[0];
      if (!letter) return null;
      const row = (
        await this.#tables.run(client, 'SELECT id, status FROM {deliveries} WHERE id = $1 FOR UPDATE', [
          letter.delivery_id,
        ])
      ).rows[0];
      if (!row) return null;
      if (isTerminalRunStatus(row.status as AxEventRunStatus)) {
        await this.#tables.run(
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
    const result = await this.#tables.query(
      `SELECT LEAST(
         (SELECT due_at FROM {deliveries} WHERE status IN ('queued','failed') AND is_head
          ORDER BY due_at, seq LIMIT 1),
         (SELECT min(lease_until) FROM {deliveries} WHERE status IN ('claimed','running'))) AS t`,
    );
    const value = result.rows[0]?.t;
    return typeof value === 'number' ? value : null;
  }

  async countPending(): Promise<number> {
    const result = await this.#tables.query('SELECT COALESCE(sum(pending), 0)::float8 AS n FROM {counters}');
    return (result.rows[0] as Row).n as number;
  }

  async recoverLeases(input: { now: number }): Promise<number> {
    const result = await this.#tables.query(
      "UPDATE {deliveries} SET lease_until = $1 WHERE status IN ('claimed','running') AND lease_until > $1",
      [input.now],
    );
    const n = result.rowCount ?? 0;
    if (n > 0) this.#signal.wake(n);
    return n;
  }

  async prune(input: { now: number }): Promise<AxEventPruneResult> {
    return this.#tables.tx(async (client) => {
      const horizon = input.now - this.#o.retentionMs;
      const count = async (sql: string, values: unknown[]) =>
        (await this.#tables.run(client, sql, values)).rowCount ?? 0;
      const continuations = await count(
        'DELETE FROM {continuations} WHERE expires_at IS NOT NULL AND expires_at <= $1',
        [input.now],
      );
      const dedupeKeys = await count('DELETE FROM {dedupe} WHERE created_at <= $1', [horizon]);
      const deadLetters = await count('DELETE FROM {dead_letters} WHERE created_at <= $1', [
        input.now - this.#o.deadLetterRetentionMs,
      ]);
      const gone = await this.#tables.run(
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
