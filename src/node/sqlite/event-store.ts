/**
 * A durable `AxEventStore` on SQLite (better-sqlite3 12, an optional peer dependency):
 * WAL journaling, one `BEGIN IMMEDIATE` transaction per operation, leases with fencing
 * tokens, compare-and-set transitions, a unique dedupe key, and retention. Several
 * processes may share one database file (`coordination: 'multi-worker'`). Appends are
 * `event-store-append.ts`, a lease holder's writes `event-store-transition.ts`.
 */

import type BetterSqlite3 from 'better-sqlite3';
import { parseIngressRecord } from '../../events/envelope.js';
import {
  AxEventClosedError,
  AxEventConfigError,
  AxEventError,
  assertEventOptions,
} from '../../events/errors.js';
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
import { copyDelivery, deliveryToRun } from '../../events/store-helpers.js';
import { appendEvent, appendEvents, BatchFull, pendingCount } from './event-store-append.js';
import { listContinuations, listRuns } from './event-store-listing.js';
import {
  type AxSQLiteEventStoreOpenOptions,
  type AxSQLiteEventStoreOptions,
  SQLITE_EVENT_STORE_OPEN_OPTIONS,
  SQLITE_EVENT_STORE_OPTIONS,
} from './event-store-options.js';
import {
  DAY,
  PENDING,
  parse,
  type Row,
  type Statements,
  toContinuation,
  toDelivery,
} from './event-store-rows.js';
import { SCHEMA_VERSION, schemaStatements } from './event-store-schema.js';
import { leasedRow, putContinuations, transitionLeased } from './event-store-transition.js';

export {
  type AxSQLiteEventStoreOpenOptions,
  type AxSQLiteEventStoreOptions,
  SQLITE_EVENT_STORE_OPEN_OPTIONS,
  SQLITE_EVENT_STORE_OPTIONS,
} from './event-store-options.js';

/** A durable, multi-process {@link AxEventStore} on SQLite. */
export class AxSQLiteEventStore implements AxEventStore {
  readonly durability: 'durable' | 'volatile';
  readonly capabilities = { multiWorker: true };
  readonly #db: BetterSqlite3.Database;
  readonly #owned: boolean;
  readonly #t: (name: string) => string;
  readonly #o: Required<Omit<AxSQLiteEventStoreOptions, 'database' | 'tablePrefix'>>;
  readonly #stmts = new Map<string, BetterSqlite3.Statement>();
  readonly #runTx: BetterSqlite3.Transaction<(fn: () => unknown) => unknown>;
  readonly #statements: Statements = (sql) => this.#q(sql);
  #closed = false;

  /**
   * Open (and create or migrate) the store in a database file. better-sqlite3 is loaded on
   * demand, so `ax-mcp/node` does not need it unless you use this store.
   */
  static async open(options: AxSQLiteEventStoreOpenOptions): Promise<AxSQLiteEventStore> {
    assertEventOptions(SQLITE_EVENT_STORE_OPEN_OPTIONS, options, 'AxSQLiteEventStore.open options');
    const { filename, busyTimeoutMs = 5000, ...rest } = options;
    let Database: typeof BetterSqlite3;
    try {
      Database = (await import('better-sqlite3')).default;
    } catch (cause) {
      throw new AxEventConfigError(
        'AxSQLiteEventStore needs the better-sqlite3 package (npm i better-sqlite3@12)',
        {
          cause,
        },
      );
    }
    const db = new Database(filename, { timeout: busyTimeoutMs });
    try {
      return new AxSQLiteEventStore({ ...rest, database: db }, true);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /** Use an open database (WAL and the schema are set up on it). */
  constructor(options: AxSQLiteEventStoreOptions, owned = false) {
    // `open()` checked the same keys before it opened the file.
    if (!owned) assertEventOptions(SQLITE_EVENT_STORE_OPTIONS, options, 'AxSQLiteEventStore options');
    const prefix = options.tablePrefix ?? 'ax_event_';
    this.#db = options.database;
    this.#owned = owned;
    this.#t = (name) => `${prefix}${name}`;
    this.#o = {
      retentionMs: options.retentionMs ?? 7 * DAY,
      deadLetterRetentionMs: options.deadLetterRetentionMs ?? 30 * DAY,
      maxPendingDeliveries: options.maxPendingDeliveries ?? 1_000_000,
      maxEventBytes: options.maxEventBytes ?? 1024 * 1024,
    };
    const memory = this.#db.memory;
    this.durability = memory ? 'volatile' : 'durable';
    if (!memory) this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('synchronous = NORMAL');
    this.#db.pragma('foreign_keys = OFF');
    this.#migrate();
    this.#runTx = this.#db.transaction((fn: () => unknown) => fn());
  }

  #migrate(): void {
    this.#db
      .transaction(() => {
        this.#db.exec(
          `CREATE TABLE IF NOT EXISTS ${this.#t('meta')} (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
        );
        const row = this.#db
          .prepare(`SELECT value FROM ${this.#t('meta')} WHERE key = 'schema_version'`)
          .get() as Row | undefined;
        const version = row ? Number(row.value) : 0;
        if (version > SCHEMA_VERSION) {
          throw new AxEventConfigError(
            `The event store schema is version ${version}; this library knows ${SCHEMA_VERSION}`,
          );
        }
        for (const sql of schemaStatements(this.#t, version)) this.#db.exec(sql);
        this.#db
          .prepare(`INSERT OR REPLACE INTO ${this.#t('meta')} (key, value) VALUES ('schema_version', ?)`)
          .run(String(SCHEMA_VERSION));
      })
      .immediate();
  }

  #q(sql: string): BetterSqlite3.Statement {
    let stmt = this.#stmts.get(sql);
    if (!stmt) {
      stmt = this.#db.prepare(sql.replace(/\{(\w+)\}/g, (_, name: string) => this.#t(name)));
      this.#stmts.set(sql, stmt);
    }
    return stmt;
  }

  /** `deferred` for reads that need one snapshot but must not hold the write lock (a long scan). */
  #tx<T>(fn: () => T, mode: 'immediate' | 'deferred' = 'immediate'): Promise<T> {
    if (this.#closed) return Promise.reject(new AxEventClosedError('SQLite event store'));
    try {
      return Promise.resolve(this.#runTx[mode](fn) as T);
    } catch (error) {
      if (error instanceof AxEventError) return Promise.reject(error);
      return Promise.reject(
        new AxEventError('store_error', `SQLite event store: ${(error as Error).message}`, { cause: error }),
      );
    }
  }

  async append(input: AxEventAppendInput): Promise<AxEventAppendResult> {
    return this.#tx(() => appendEvent(this.#statements, input, this.#o));
  }

  /** One transaction for the whole batch: all of it is written, or (store full) none of it. */
  async appendMany(input: AxEventAppendManyInput): Promise<AxEventAppendResult[]> {
    if (input.items.length === 0) return [];
    try {
      return await this.#tx(() => appendEvents(this.#statements, input, this.#o));
    } catch (error) {
      if (!(error instanceof AxEventError && error.cause instanceof BatchFull)) throw error;
      const reason = error.cause.reason;
      return input.items.map(() => ({ status: 'full', reason }));
    }
  }

  async claim(input: {
    workerId: string;
    now: number;
    leaseMs: number;
    limit: number;
  }): Promise<AxEventClaim[]> {
    return this.#tx(() => {
      const head = `(d.ordering_key IS NULL OR NOT EXISTS (SELECT 1 FROM {deliveries} e
        WHERE e.ordering_key = d.ordering_key AND e.seq < d.seq AND e.status IN ${PENDING}))`;
      // Expired leases first (crash recovery), then due work in (due_at, seq) order.
      const rows = this.#q(
        `SELECT d.* FROM {deliveries} d WHERE d.status IN ('claimed','running') AND d.lease_until <= @now
           AND ${head} ORDER BY d.lease_until LIMIT @limit`,
      ).all({ now: input.now, limit: input.limit }) as Row[];
      if (rows.length < input.limit) {
        const due = this.#q(
          `SELECT d.* FROM {deliveries} d WHERE d.status IN ('queued','failed') AND d.due_at <= @now
             AND ${head} ORDER BY d.due_at, d.seq LIMIT @limit`,
        ).all({ now: input.now, limit: input.limit - rows.length }) as Row[];
        rows.push(...due);
      }
      const update = this.#q(
        `UPDATE {deliveries} SET status = 'claimed', attempt = attempt + 1, fencing = fencing + 1,
           lease_owner = ?, lease_until = ? WHERE id = ?`,
      );
      return rows.map((row) => {
        const previous = toDelivery(row);
        update.run(input.workerId, input.now + input.leaseMs, previous.id);
        const delivery = copyDelivery(previous, {
          status: 'claimed',
          attempt: previous.attempt + 1,
          fencingToken: previous.fencingToken + 1,
          leaseOwner: input.workerId,
          leaseUntil: input.now + input.leaseMs,
        });
        const ev = delivery.eventKey
          ? (this.#q('SELECT * FROM {events} WHERE key = ?').get(delivery.eventKey) as Row | undefined)
          : undefined;
        const event = ev
          ? {
              key: ev.key as string,
              scope: ev.scope as string,
              ingress: parseIngressRecord(ev.ingress as string),
              bytes: ev.bytes as number,
              receivedAt: ev.received_at as number,
            }
          : null;
        const recovered = previous.status === 'claimed' || previous.status === 'running';
        return { delivery, event, recovered, previousStatus: previous.status };
      });
    });
  }

  async heartbeat(input: { deliveryId: string; fencingToken: number; leaseUntil: number }) {
    return this.#tx(() => {
      const row = leasedRow(this.#statements, input.deliveryId, input.fencingToken);
      if (!row) return { held: false, cancelRequested: false };
      this.#q('UPDATE {deliveries} SET lease_until = ? WHERE id = ?').run(input.leaseUntil, input.deliveryId);
      return { held: true, cancelRequested: row.cancel_requested === 1 };
    });
  }

  async transition(t: AxEventTransition): Promise<boolean> {
    return this.#tx(() => transitionLeased(this.#statements, t));
  }

  #eventRow(id: string): Row | undefined {
    return this.#q("SELECT * FROM {deliveries} WHERE kind = 'event' AND (run_id = ? OR id = ?) LIMIT 1").get(
      id,
      id,
    ) as Row | undefined;
  }

  #run(row: Row): AxEventRun {
    const d = toDelivery(row);
    const sinks = (
      this.#q("SELECT * FROM {deliveries} WHERE run_id = ? AND kind = 'sink' ORDER BY seq").all(
        d.runId,
      ) as Row[]
    ).map(toDelivery);
    return deliveryToRun(d, sinks);
  }

  async cancel(input: { id: string; now: number }): Promise<AxEventRun | null> {
    return this.#tx(() => {
      const row = this.#eventRow(input.id);
      if (!row) return null;
      const status = row.status as AxEventRunStatus;
      if (status === 'queued' || status === 'failed' || status === 'waiting_event') {
        this.#q(
          "UPDATE {deliveries} SET status = 'cancelled', finished_at = ?, lease_owner = NULL, lease_until = NULL WHERE id = ?",
        ).run(input.now, row.id);
        this.#q('DELETE FROM {continuations} WHERE delivery_id = ?').run(row.id);
      } else if (status === 'claimed' || status === 'running') {
        this.#q('UPDATE {deliveries} SET cancel_requested = 1 WHERE id = ?').run(row.id);
      }
      return this.#run(this.#eventRow(input.id) as Row);
    });
  }

  async putContinuations(input: {
    deliveryId: string;
    fencingToken: number;
    now: number;
    continuations: AxEventContinuation[];
  }): Promise<boolean> {
    return this.#tx(() => putContinuations(this.#statements, input));
  }

  async findContinuation(input: { scope: string; kind: string; value: string; now: number }) {
    if (this.#closed) throw new AxEventClosedError('SQLite event store');
    const row = this.#q(
      'SELECT * FROM {continuations} WHERE scope = ? AND kind = ? AND value = ? AND (expires_at IS NULL OR expires_at > ?)',
    ).get(input.scope, input.kind, input.value, input.now) as Row | undefined;
    return row ? toContinuation(row) : null;
  }

  async getRun(id: string): Promise<AxEventRun | null> {
    return this.#tx(() => {
      const row = this.#eventRow(id);
      return row ? this.#run(row) : null;
    });
  }

  /**
   * One read transaction per page (see `event-store-listing.ts`): a page scans the event
   * deliveries, so it takes a snapshot, not the write lock.
   */
  async listRuns(input?: AxEventRunQuery): Promise<AxEventRunPage> {
    const query = checkRunQuery(input);
    return this.#tx(() => listRuns(this.#statements, query), 'deferred');
  }

  async listContinuations(input: { now: number; limit?: number }): Promise<AxEventContinuationListing[]> {
    if (this.#closed) throw new AxEventClosedError('SQLite event store');
    return listContinuations(this.#statements, checkContinuationQuery(input));
  }

  async listDeadLetters(input: { limit?: number } = {}): Promise<AxEventDeadLetter[]> {
    if (this.#closed) throw new AxEventClosedError('SQLite event store');
    const rows = this.#q('SELECT * FROM {dead_letters} ORDER BY created_at, rowid LIMIT ?').all(
      input.limit ?? 1000,
    ) as Row[];
    return rows.map((r) => ({
      id: r.id as string,
      kind: r.kind as 'delivery' | 'sink',
      deliveryId: r.delivery_id as string,
      runId: r.run_id as string,
      sinkId: (r.sink_id as string | null) ?? null,
      reason: r.reason as AxEventDeadLetter['reason'],
      error: parse(r.error),
      createdAt: r.created_at as number,
    }));
  }

  async redrive(input: { deadLetterId: string; now: number }): Promise<string | null> {
    return this.#tx(() => {
      const letter = this.#q('SELECT * FROM {dead_letters} WHERE id = ?').get(input.deadLetterId) as
        | Row
        | undefined;
      if (!letter) return null;
      this.#q('DELETE FROM {dead_letters} WHERE id = ?').run(input.deadLetterId);
      const row = this.#q('SELECT * FROM {deliveries} WHERE id = ?').get(letter.delivery_id) as
        | Row
        | undefined;
      if (!row) return null;
      if (isTerminalRunStatus(row.status as AxEventRunStatus)) {
        this.#q(
          `UPDATE {deliveries} SET status = 'queued', attempt = 0, due_at = ?, cancel_requested = 0, finished_at = NULL,
             lease_owner = NULL, lease_until = NULL WHERE id = ?`,
        ).run(input.now, row.id);
      }
      return row.id as string;
    });
  }

  async nextDueAt(): Promise<number | null> {
    if (this.#closed) throw new AxEventClosedError('SQLite event store');
    const due = this.#q(
      `SELECT d.due_at AS t FROM {deliveries} d WHERE d.status IN ('queued','failed')
         AND (d.ordering_key IS NULL OR NOT EXISTS (SELECT 1 FROM {deliveries} e
           WHERE e.ordering_key = d.ordering_key AND e.seq < d.seq AND e.status IN ${PENDING}))
       ORDER BY d.due_at, d.seq LIMIT 1`,
    ).get() as Row | undefined;
    const leased = this.#q(
      "SELECT min(lease_until) AS t FROM {deliveries} WHERE status IN ('claimed','running')",
    ).get() as Row;
    const times = [due?.t, leased.t].filter((t): t is number => typeof t === 'number');
    const row = { t: times.length > 0 ? Math.min(...times) : null };
    return (row.t as number | null) ?? null;
  }

  async countPending(): Promise<number> {
    if (this.#closed) throw new AxEventClosedError('SQLite event store');
    return pendingCount(this.#statements);
  }

  async recoverLeases(input: { now: number }): Promise<number> {
    return this.#tx(
      () =>
        this.#q(
          "UPDATE {deliveries} SET lease_until = ? WHERE status IN ('claimed','running') AND lease_until > ?",
        ).run(input.now, input.now).changes,
    );
  }

  async prune(input: { now: number }): Promise<AxEventPruneResult> {
    return this.#tx(() => {
      const horizon = input.now - this.#o.retentionMs;
      const continuations = this.#q(
        'DELETE FROM {continuations} WHERE expires_at IS NOT NULL AND expires_at <= ?',
      ).run(input.now).changes;
      const dedupeKeys = this.#q('DELETE FROM {dedupe} WHERE created_at <= ?').run(horizon).changes;
      const deadLetters = this.#q('DELETE FROM {dead_letters} WHERE created_at <= ?').run(
        input.now - this.#o.deadLetterRetentionMs,
      ).changes;
      const old = this.#q(
        `SELECT d.id, d.run_id FROM {deliveries} d
         WHERE d.kind = 'event' AND d.status NOT IN ${PENDING} AND d.finished_at <= ?
           AND NOT EXISTS (SELECT 1 FROM {dead_letters} l WHERE l.run_id = d.run_id)
           AND NOT EXISTS (SELECT 1 FROM {continuations} c WHERE c.delivery_id = d.id)
           AND NOT EXISTS (SELECT 1 FROM {deliveries} s WHERE s.run_id = d.run_id AND s.kind = 'sink'
             AND s.status IN ${PENDING})`,
      ).all(horizon) as Row[];
      let deliveries = 0;
      for (const r of old)
        deliveries += this.#q('DELETE FROM {deliveries} WHERE run_id = ?').run(r.run_id).changes;
      const events = this.#q(
        'DELETE FROM {events} WHERE NOT EXISTS (SELECT 1 FROM {deliveries} d WHERE d.event_key = {events}.key)',
      ).run().changes;
      return { deliveries, events, dedupeKeys, continuations, deadLetters };
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stmts.clear();
    if (this.#owned) this.#db.close();
  }
}
