/**
 * Wake-ups of the PostgreSQL event store: `NOTIFY` on the schema's channel when work becomes
 * claimable (one in flight at a time, optionally spaced by an interval; the last one never
 * dropped), and a `LISTEN` connection that calls its listeners. Internal to
 * `AxPostgresEventStore`.
 */

import type pg from 'pg';
import { AxEventError } from '../../events/errors.js';
import type { PostgresConnection } from './connection.js';

const NOTIFY = "SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, $2)";

/**
 * A notification's payload: the number of deliveries announced, then `~` and the earliest due
 * time (epoch ms) when some of them are not due yet. Older senders send a bare count or ''.
 */
const PAYLOAD = /^(\d+)(?:~(\d+))?$/;

/** What a `LISTEN`er is told: work was added (see `AxEventStore.onWork`). */
export type WorkListener = (count?: number, laterDueAt?: number) => void;

/** Options of {@link WorkSignal}. */
export interface WorkSignalOptions {
  /** The channel (a checked identifier). */
  channel: string;
  /** Send `NOTIFY` at all. */
  notify: boolean;
  /** Least time between the starts of two `NOTIFY`s (0: the next one goes as soon as the last is answered). */
  intervalMs: number;
  /** Failures with no caller. */
  report: (error: unknown) => void;
  /** Wrap a database failure in the store's error type. */
  wrap: (error: unknown) => Error;
}

/** The `NOTIFY` sender and `LISTEN` receiver of one store. */
export class WorkSignal {
  readonly #c: PostgresConnection;
  readonly #o: WorkSignalOptions;
  readonly #listeners = new Set<WorkListener>();
  #listenStop: AbortController | null = null;
  #listening: Promise<void> | null = null;
  #notifyTimer: ReturnType<typeof setTimeout> | null = null;
  /** The `NOTIFY` on the wire, if any: a wake-up meanwhile rides on the next one. */
  #notifying: Promise<void> | null = null;
  #lastNotify = 0;
  /** Deliveries made claimable since the last NOTIFY. */
  #count = 0;
  /** The earliest due time among them of those not due yet, if any. */
  #laterDueAt: number | undefined;
  #closed = false;

  constructor(connection: PostgresConnection, options: WorkSignalOptions) {
    this.#c = connection;
    this.#o = options;
  }

  /**
   * Call `listener` whenever work may have become claimable anywhere on this database (a
   * `NOTIFY` from any store on the same schema) with the number of deliveries it announced,
   * and once, with no number, when listening starts. The first
   * listener opens a `LISTEN` connection (one pool connection, kept while anyone listens,
   * reopened after a failure); returns the function that removes the listener.
   */
  onWork(listener: WorkListener): () => void {
    if (this.#closed) return () => undefined;
    this.#listeners.add(listener);
    if (!this.#listenStop || this.#listenStop.signal.aborted) {
      const stop = new AbortController();
      this.#listenStop = stop;
      const previous = this.#listening ?? Promise.resolve();
      this.#listening = previous.then(() => this.#listen(stop.signal));
    }
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.#listenStop?.abort();
    };
  }

  #ring(count?: number, laterDueAt?: number): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(count, laterDueAt);
      } catch (error) {
        this.#o.report(error);
      }
    }
  }

  async #listen(stop: AbortSignal): Promise<void> {
    let delay = 100;
    while (!stop.aborted && !this.#closed) {
      let client: pg.PoolClient | null = null;
      let failure: unknown = null;
      const onNotification = (message: pg.Notification) => {
        if (message.channel !== this.#o.channel) return;
        // The payload counts the deliveries the sender made claimable; older senders send ''.
        const match = PAYLOAD.exec(message.payload ?? '');
        const count = match ? Number(match[1]) : 1;
        const later = match?.[2] === undefined ? undefined : Number(match[2]);
        this.#ring(Number.isSafeInteger(count) && count > 0 ? count : 1, later);
      };
      let onError: (error: Error) => void = () => undefined;
      let onEnd: () => void = () => undefined;
      let onStop: () => void = () => undefined;
      try {
        client = await (await this.#c.pool()).connect();
        const lost = new Promise<unknown>((resolve) => {
          onError = (error) => resolve(error);
          onEnd = () => resolve(new AxEventError('store_error', 'The LISTEN connection ended'));
          onStop = () => resolve(null);
        });
        client.on('error', onError);
        client.on('end', onEnd);
        client.on('notification', onNotification);
        stop.addEventListener('abort', onStop, { once: true });
        if (stop.aborted) onStop();
        await client.query(`LISTEN "${this.#o.channel}"`);
        delay = 100;
        this.#ring();
        failure = await lost;
      } catch (error) {
        failure = error;
      }
      stop.removeEventListener('abort', onStop);
      if (client) {
        client.off('notification', onNotification);
        client.off('end', onEnd);
        if (failure === null) {
          try {
            await client.query(`UNLISTEN "${this.#o.channel}"`);
            client.off('error', onError);
            client.release();
          } catch (error) {
            client.off('error', onError);
            client.release(error instanceof Error ? error : true);
          }
        } else {
          client.off('error', onError);
          client.release(failure instanceof Error ? failure : true);
        }
      }
      if (failure === null || stop.aborted || this.#closed) continue;
      this.#o.report(this.#o.wrap(failure));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, delay);
        function done() {
          clearTimeout(timer);
          stop.removeEventListener('abort', done);
          resolve();
        }
        stop.addEventListener('abort', done, { once: true });
      });
      delay = Math.min(delay * 2, 5000);
    }
  }

  /**
   * Tell idle workers (here and elsewhere) that `count` deliveries became claimable. The
   * `NOTIFY` goes at once unless one is on the wire (or the interval has not passed): then
   * the next one carries the sum since the previous one, so a listener can wake as many lanes
   * as there is work. A `NOTIFY` is a statement of its own, outside the append's transaction:
   * inside, PostgreSQL would serialize the commits of every notifying transaction on the
   * database's notification queue, and appends would stop sharing WAL flushes.
   * `laterDueAt`, the earliest due time of those not due yet, travels with it (the earliest of
   * all it carries): a listener that keeps its next due time knows it may have moved.
   */
  wake(count = 1, laterDueAt?: number): void {
    if (!this.#o.notify || this.#closed) return;
    this.#count += count;
    if (laterDueAt !== undefined && !(this.#laterDueAt !== undefined && this.#laterDueAt <= laterDueAt))
      this.#laterDueAt = laterDueAt;
    this.#schedule();
  }

  #schedule(): void {
    if (this.#notifyTimer || this.#notifying || this.#count === 0) return;
    const wait = this.#lastNotify + this.#o.intervalMs - Date.now();
    if (wait <= 0) {
      this.#send();
      return;
    }
    this.#notifyTimer = setTimeout(() => {
      this.#notifyTimer = null;
      this.#send();
    }, wait);
  }

  #send(): void {
    // One at a time: the next is scheduled once this one is answered.
    this.#notifying = this.#notify().finally(() => {
      this.#notifying = null;
      if (!this.#closed) this.#schedule();
    });
  }

  async #notify(): Promise<void> {
    this.#lastNotify = Date.now();
    const count = this.#count;
    const later = this.#laterDueAt;
    this.#count = 0;
    this.#laterDueAt = undefined;
    const payload = `${Math.max(1, count)}${later === undefined ? '' : `~${Math.ceil(later)}`}`;
    try {
      // A NOTIFY's transaction gets a transaction id, so its commit would wait for a WAL flush
      // of its own, a second one after the append's. A notification is a hint that needs no
      // durability: it commits without waiting.
      await this.#c.query(NOTIFY, [this.#o.channel, payload]);
    } catch (error) {
      if (!this.#c.closed) this.#o.report(error);
    }
  }

  /** Send a pending `NOTIFY` now and stop listening. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#notifying;
    if (this.#notifyTimer) clearTimeout(this.#notifyTimer);
    this.#notifyTimer = null;
    if (this.#count > 0) await this.#notify();
    this.#listeners.clear();
    this.#listenStop?.abort();
    await this.#listening;
  }
}
