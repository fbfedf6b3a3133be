/**
 * The durable event stores and the PostgreSQL worker check their options before they touch a
 * file or a database: a mistake is `invalid_options` with its path, never a connection error
 * (the PostgreSQL cases point at a port nothing listens on), and no file is created.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { AxEventConfigError } from '../events/errors.js';
import { eventRoute } from '../events/route-builder.js';
import { eventTarget } from '../events/target-builder.js';
import { AxPostgresEventStore } from './postgres/event-store.js';
import { AxPostgresEventWorker } from './postgres/event-store-worker.js';
import { AxSQLiteEventStore } from './sqlite/event-store.js';

const dir = mkdtempSync(join(tmpdir(), 'ax-store-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, 'never.db');

/** Nothing listens here: a store that tried to connect would fail with ECONNREFUSED. */
const UNREACHABLE = 'postgres://postgres@127.0.0.1:1/test';
/** A pool that records use: a configuration error must not touch it. */
const pool = { query: vi.fn(), connect: vi.fn(), on: vi.fn(), end: vi.fn() };
const invoked = vi.fn();
const target = eventTarget('t').invoke(invoked).build();
const store = new AxPostgresEventStore({ connectionString: UNREACHABLE });
afterAll(() => store.close());

/** Misuse of a type-checked API, as JavaScript or configuration read from a file would do it. */
// biome-ignore lint/suspicious/noExplicitAny: the point is to pass what the types forbid
const loose = (value: unknown): any => value;

const CASES: { name: string; make: () => unknown; path: string; suggestion?: string }[] = [
  {
    name: 'SQLite open: a misspelled tablePrefix',
    make: () => AxSQLiteEventStore.open(loose({ filename: file, tablePrefx: 'app_' })),
    path: 'tablePrefx',
    suggestion: 'tablePrefix',
  },
  {
    name: 'SQLite open: an unsafe tablePrefix',
    make: () => AxSQLiteEventStore.open({ filename: file, tablePrefix: 'app-events; DROP' }),
    path: 'tablePrefix',
  },
  {
    name: 'SQLite open: busyTimeout for busyTimeoutMs',
    make: () => AxSQLiteEventStore.open(loose({ filename: file, busyTimeout: 100 })),
    path: 'busyTimeout',
    suggestion: 'busyTimeoutMs',
  },
  {
    name: 'SQLite open: no filename',
    make: () => AxSQLiteEventStore.open(loose({ path: file })),
    path: 'path',
    suggestion: 'filename',
  },
  {
    name: 'SQLite: something that is not a database',
    make: () => new AxSQLiteEventStore(loose({ database: { name: file } })),
    path: 'database',
  },
  {
    name: 'PostgreSQL open: a misspelled retention, on an unreachable port',
    make: () => AxPostgresEventStore.open(loose({ connectionString: UNREACHABLE, retentionMS: 5 })),
    path: 'retentionMS',
    suggestion: 'retentionMs',
  },
  {
    name: 'PostgreSQL open: an unsafe schema name, on an unreachable port',
    make: () => AxPostgresEventStore.open({ connectionString: UNREACHABLE, schema: 'Events"; --' }),
    path: 'schema',
  },
  {
    name: 'PostgreSQL: both a pool and a connection string',
    make: () => new AxPostgresEventStore(loose({ connectionString: UNREACHABLE, pool })),
    path: 'pool',
  },
  {
    name: 'PostgreSQL: url for connectionString',
    make: () => new AxPostgresEventStore(loose({ url: UNREACHABLE })),
    path: 'url',
    suggestion: 'connectionString',
  },
  {
    name: 'PostgreSQL: notify as a string',
    make: () => new AxPostgresEventStore(loose({ pool, notify: 'yes' })),
    path: 'notify',
  },
  {
    name: 'worker: a misspelled workerConcurrency',
    make: () => new AxPostgresEventWorker(loose({ store, workerConcurency: 2 })),
    path: 'workerConcurency',
    suggestion: 'workerConcurrency',
  },
  {
    name: 'worker: scheduling, which the worker sets itself',
    make: () => new AxPostgresEventWorker(loose({ store, scheduling: 'host' })),
    path: 'scheduling',
  },
  {
    name: 'worker: a bad route among its routes',
    make: () =>
      new AxPostgresEventWorker({
        store,
        routes: [
          eventRoute('ok').types('a').wake(target).build(),
          loose({ id: 'bad', match: { types: ['b'] }, action: 'wake', target, debounceMs: -1 }),
        ],
      }),
    path: 'routes[1].debounceMs',
  },
  {
    name: 'worker: a store that is not a PostgreSQL store',
    make: () => new AxPostgresEventWorker(loose({ store: {} })),
    path: 'store',
  },
];

describe('durable store and worker options', () => {
  it.each(CASES)('$name', async ({ make, path, suggestion }) => {
    let error: unknown;
    try {
      await make();
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(AxEventConfigError);
    expect(error).toMatchObject({ code: 'invalid_options', path, suggestion });
    // Nothing ran: no file, no use of the pool, no target.
    expect(existsSync(file)).toBe(false);
    expect(pool.query).not.toHaveBeenCalled();
    expect(pool.connect).not.toHaveBeenCalled();
    expect(invoked).not.toHaveBeenCalled();
  });

  it('the unreachable port is really unreachable: a valid store fails to connect, with another code', async () => {
    await expect(
      AxPostgresEventStore.open({ connectionString: UNREACHABLE, schema: 'ax_never' }),
    ).rejects.not.toMatchObject({ code: 'invalid_options' });
  });
});
