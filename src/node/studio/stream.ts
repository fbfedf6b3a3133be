/**
 * The studio's one SSE stream (`/api/events`): what the observer records, batched every
 * 100 ms into one `data:` line per batch. Each connection has a bounded queue; when a page
 * falls behind, the oldest items go and the next batch says how many (`dropped`).
 */

import type { ServerResponse } from 'node:http';
import type { StudioObserver, StudioStreamItem } from './observe.js';

const FLUSH_MS = 100;
const KEEP_ALIVE_MS = 15_000;
const MAX_QUEUE = 2000;
/** The events a new connection gets first, so a page opened late sees the recent past. */
const BACKLOG = 200;

interface Connection {
  res: ServerResponse;
  queue: StudioStreamItem[];
  dropped: number;
}

export class StudioStream {
  readonly #connections = new Set<Connection>();
  readonly #stop: () => void;
  readonly #observer: StudioObserver;
  #flush: ReturnType<typeof setInterval> | undefined;
  #keepAlive: ReturnType<typeof setInterval> | undefined;

  constructor(observer: StudioObserver) {
    this.#observer = observer;
    this.#stop = observer.listen((item) => {
      for (const connection of this.#connections) {
        connection.queue.push(item);
        if (connection.queue.length > MAX_QUEUE) {
          connection.queue.shift();
          connection.dropped++;
        }
      }
    });
  }

  open(res: ServerResponse): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      connection: 'keep-alive',
    });
    const backlog = this.#observer.events
      .slice(-BACKLOG)
      .map((record) => ({ kind: 'event' as const, record }));
    const connection: Connection = { res, queue: backlog, dropped: 0 };
    this.#connections.add(connection);
    res.write(': ax-mcp studio\n\n');
    res.once('close', () => {
      this.#connections.delete(connection);
      if (this.#connections.size === 0) this.#timers(false);
    });
    this.#timers(true);
  }

  #timers(on: boolean): void {
    if (on && !this.#flush) {
      this.#flush = setInterval(() => this.#send(), FLUSH_MS);
      this.#keepAlive = setInterval(() => {
        for (const { res } of this.#connections) res.write(': keep-alive\n\n');
      }, KEEP_ALIVE_MS);
      this.#flush.unref();
      this.#keepAlive.unref();
    } else if (!on) {
      clearInterval(this.#flush);
      clearInterval(this.#keepAlive);
      this.#flush = undefined;
      this.#keepAlive = undefined;
    }
  }

  #send(): void {
    for (const connection of this.#connections) {
      if (connection.queue.length === 0 && connection.dropped === 0) continue;
      // A socket that cannot take more is skipped this round; its queue stays bounded.
      if (connection.res.writableNeedDrain) continue;
      const batch = { items: connection.queue.splice(0), dropped: connection.dropped };
      connection.dropped = 0;
      connection.res.write(`data: ${JSON.stringify(batch)}\n\n`);
    }
  }

  close(): void {
    this.#stop();
    this.#timers(false);
    for (const { res } of this.#connections) res.end();
    this.#connections.clear();
  }
}
