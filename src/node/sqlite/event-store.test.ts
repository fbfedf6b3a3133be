import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { AxManualEventClock } from '../../events/clock.js';
import { eventRoute } from '../../events/route-builder.js';
import { eventRuntime } from '../../events/runtime.js';
import { AxPushEventSource } from '../../events/source.js';
import { eventTarget } from '../../events/target-builder.js';
import { runEventStoreConformance } from '../../testing/event-store-conformance.js';
import { AxSQLiteEventStore } from './event-store.js';

const dir = mkdtempSync(join(tmpdir(), 'ax-sqlite-events-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const dbFile = () => join(dir, `store-${++files}.db`);

runEventStoreConformance({
  name: 'AxSQLiteEventStore conformance (file)',
  describe,
  it,
  create: () => AxSQLiteEventStore.open({ filename: dbFile() }),
});

runEventStoreConformance({
  name: 'AxSQLiteEventStore conformance (in-memory database)',
  describe,
  it,
  create: () => new AxSQLiteEventStore({ database: new Database(':memory:') }),
});

describe('AxSQLiteEventStore', () => {
  it('publishes a batch in one transaction: a batch with no room is refused whole', async () => {
    const store = new AxSQLiteEventStore({ database: new Database(':memory:'), maxPendingDeliveries: 3 });
    const target = eventTarget('t')
      .invoke(() => undefined)
      .build();
    const runtime = eventRuntime({
      routes: [eventRoute('r').types('job').wake(target).build()],
      store,
      scheduling: 'host',
      publishTimeoutMs: 0,
    });
    const job = (id: string) => ({ event: { id, source: 'app://jobs', type: 'job' } });
    const first = await runtime.publishMany([job('a'), job('b'), job('a')]);
    expect(first.map((r) => r.duplicate)).toEqual([false, false, true]);
    await expect(runtime.publishMany([job('c'), job('d')])).rejects.toMatchObject({ code: 'backpressure' });
    expect(await store.countPending()).toBe(2);
    // Nothing of the refused batch was recorded, not even its dedupe keys.
    expect(await store.appendMany({ items: [], now: 0 })).toEqual([]);
    await runtime.runDue();
    const again = await runtime.publishMany([job('c'), job('d'), job('b')]);
    expect(again.map((r) => r.duplicate)).toEqual([false, false, true]);
    await runtime.close();
    await store.close();
  });

  it('is durable with WAL on a file, volatile in memory', async () => {
    const file = await AxSQLiteEventStore.open({ filename: dbFile() });
    expect(file.durability).toBe('durable');
    expect(file.capabilities.multiWorker).toBe(true);
    await file.close();
    const db = new Database(':memory:');
    const memory = new AxSQLiteEventStore({ database: db });
    expect(memory.durability).toBe('volatile');
    await memory.close();
    expect(db.open).toBe(true);
    db.close();
  });

  it('keeps queued work, runs and dead letters across reopening the file', async () => {
    const filename = dbFile();
    const clock = new AxManualEventClock(0);
    const fail = eventTarget('fail')
      .invoke(() => {
        throw new Error('nope');
      })
      .build();
    const ok = vi.fn(async () => ({ ok: true }));
    const good = eventTarget('good').retrySafety('idempotent').invoke(ok).build();
    const routes = [
      eventRoute('f').types('f').wake(fail).build(),
      eventRoute('g').types('g').wake(good).build(),
    ];
    const store1 = await AxSQLiteEventStore.open({ filename });
    const first = eventRuntime({ routes, store: store1, clock, scheduling: 'host' });
    const failed = await first.publish({ event: { id: '1', source: 's', type: 'f' } });
    await first.runDue();
    const queued = await first.publish({ event: { id: '2', source: 's', type: 'g', data: { x: 1 } } });
    await first.close();
    await store1.close();

    const store2 = await AxSQLiteEventStore.open({ filename });
    const second = eventRuntime({ routes, store: store2, clock, scheduling: 'host' });
    expect((await second.publish({ event: { id: '2', source: 's', type: 'g' } })).duplicate).toBe(true);
    expect((await second.getRun(failed.deliveryIds[0] as string))?.status).toBe('outcome_unknown');
    expect((await second.listDeadLetters()).map((l) => l.reason)).toEqual(['outcome_unknown']);
    await second.runDue();
    expect(ok).toHaveBeenCalledWith({ x: 1 }, expect.anything());
    expect((await second.getRun(queued.deliveryIds[0] as string))?.output).toEqual({ ok: true });
    await second.close();
    await store2.close();
  });

  it('lets a durable source run on it without allowVolatile', async () => {
    const store = await AxSQLiteEventStore.open({ filename: dbFile() });
    const runtime = eventRuntime({
      store,
      scheduling: 'host',
      sources: [new AxPushEventSource({ id: 'p', requiresDurable: true })],
      coordination: 'multi-worker',
    });
    await runtime.start();
    await runtime.close();
    await store.close();
  });

  it('keeps its pending counter equal to the real count through every kind of change', async () => {
    const db = new Database(':memory:');
    const store = new AxSQLiteEventStore({ database: db });
    const clock = new AxManualEventClock(0);
    let calls = 0;
    const flaky = eventTarget('flaky')
      .retrySafety('idempotent')
      .invoke(() => {
        if (++calls % 3 === 0) throw new Error('every third fails');
        return calls;
      })
      .sink({ id: 'log', write: () => undefined })
      .build();
    const runtime = eventRuntime({
      routes: [eventRoute('r').types('x').wake(flaky).build()],
      store,
      clock,
      scheduling: 'host',
      maxAttempts: 2,
      retryBaseMs: 10,
    });
    const real = () =>
      (
        db
          .prepare(
            "SELECT count(*) AS n FROM ax_event_deliveries WHERE status IN ('queued','failed','claimed','running')",
          )
          .get() as { n: number }
      ).n;
    const receipts = [];
    for (let i = 0; i < 30; i++)
      receipts.push(await runtime.publish({ event: { id: `${i}`, source: 's', type: 'x' } }));
    expect(await store.countPending()).toBe(real());
    await runtime.cancelRun(receipts[0]?.deliveryIds[0] as string);
    await runtime.runDue({ limit: 10 });
    expect(await store.countPending()).toBe(real());
    for (let i = 0; i < 5; i++) {
      clock.advance(100);
      await runtime.runDue();
    }
    for (const letter of await runtime.listDeadLetters()) await runtime.redrive(letter.id);
    expect(await store.countPending()).toBe(real());
    await runtime.runDue();
    clock.advance(10 * 24 * 60 * 60 * 1000);
    await store.prune({ now: clock.now() });
    expect(await store.countPending()).toBe(real());
    await runtime.close();
    await store.close();
    db.close();
  });

  it('refuses a schema newer than it knows', async () => {
    const filename = dbFile();
    const db = new Database(filename);
    db.exec(
      "CREATE TABLE ax_event_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO ax_event_meta VALUES ('schema_version', '99')",
    );
    db.close();
    await expect(AxSQLiteEventStore.open({ filename })).rejects.toThrow(/version 99/);
  });
});
