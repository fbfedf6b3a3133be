/**
 * The event store's tables on its connection: SQL written with `{table}` names, filled in
 * with the schema and prepared once per connection under a stable name, run after the
 * migrations (`ready`).
 */
import type pg from 'pg';
import { hash32, type PostgresConnection } from './connection.js';
import type { Row } from './event-store-rows.js';

/** Runs the store's statements: alone (`query`), on a transaction's client (`run`), or as a transaction (`tx`). */
export class EventTables {
  readonly #c: PostgresConnection;
  readonly #ready: () => Promise<void>;
  readonly #statements = new Map<string, { name: string; text: string }>();

  /** `ready` rejects once the store is closed, and migrates before the first statement. */
  constructor(connection: PostgresConnection, ready: () => Promise<void>) {
    this.#c = connection;
    this.#ready = ready;
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

  async query(sql: string, values: unknown[] = []): Promise<pg.QueryResult<Row>> {
    await this.#ready();
    const { name, text } = this.#s(sql);
    return this.#c.query<Row>(text, values, name);
  }

  run(client: pg.PoolClient, sql: string, values: unknown[] = []): Promise<pg.QueryResult<Row>> {
    const { name, text } = this.#s(sql);
    return client.query<Row>({ name, text, values });
  }

  async tx<T>(
    body: (client: pg.PoolClient, rollback: () => void) => Promise<T>,
    retryOn?: (error: unknown) => boolean,
  ): Promise<T> {
    await this.#ready();
    return this.#c.tx((client, control) => body(client, control.rollback), retryOn);
  }
}
