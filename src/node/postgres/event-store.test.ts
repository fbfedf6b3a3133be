import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { AxManualEventClock } from '../../events/clock.js';
import { normalizeIngress } from '../../events/envelope.js';
import { eventPath } from '../../events/path.js';
import type { AxEventRouteDefinition } from '../../events/route.js';
import { eventRoute } from '../../events/route-builder.js';
import { eventRuntime } from '../../events/runtime.js';
import type { AxEventClaim, AxEventDeliveryDraft, AxEventStore } from '../../events/store.js';
import { eventTarget } from '../../events/target-builder.js';
import { runEventStoreConformance } from '../../testing/event-store-conformance.js';
import { hash32, PostgresConnection } from './connection.js';
import { AxPostgresEventStore, type AxPostgresEventStoreOptions } from './event-store.js';
import { EVENT_STORE_SCHEMA_VERSION, eventStoreMigrations } from './event-store-schema.js';
import { AxPostgresEventWorker } from './event-store-worker.js';
import { testDatabase } from './test-database.fixture.js';

const { url, admin, freshSchema, dropSchema } = testDatabase(
  'postgres/event-store.test',
  'the PostgreSQL event store tests',
  4,
);
const describePg = describe.skipIf(!url);

const open = (options: Partial<AxPostgresEventStoreOptions> = {}) =>
  AxPostgresEventStore.open({ connectionString: url, schema: freshSchema(), poolSize: 4, ...options });

runEventStoreConformance({
  name: 'AxPostgresEventStore conformance',
  describe: describePg,
  it,
  create: () => open(),
  dispose: async (store: AxEventStore) => {
    await store.close();
    await dropSchema((store as AxPostgresEventStore).schema);
  },
});

let n = 0;
const draft = (overrides: Partial<AxEventDeliveryDraft> = {}): AxEventDeliveryDraft => ({
  id: `dlv_${++n}_${randomBytes(3).toString('hex')}`,
  runId: `run_${n}_${randomBytes(3).toString('hex')}`,
  routeId: 'route',
  action: 'wake',
  targetId: 'target',
  instanceKey: 'i',
  orderingKey: null,
  dueAt: 0,
  coalesceKey: null,
  correlation: null,
  planError: null,
  ...overrides,
});

async function publish(
  store: AxEventStore,
  deliveries: AxEventDeliveryDraft[],
  id = `e${++n}`,
  scope = 'anonymous',
) {
  const { record, bytes } = normalizeIngress({ event: { id, source: 'test://pg', type: 't', data: { n } } });
  const result = await store.append({
    dedupe: { scope, source: 'test://pg', id },
    event: {
      key: `evt_${id}_${randomBytes(3).toString('hex')}`,
      scope,
      ingress: record,
      bytes,
      receivedAt: 0,
    },
    deliveries,
    now: 0,
  });
  if (result.status !== 'appended') throw new Error(`append: ${result.status}`);
  return result.deliveryIds;
}

const realPending = async (schema: string) =>
  Number(
    (
      await admin().query(
        `SELECT count(*) AS n FROM "${schema}".ax_event_deliveries WHERE status IN ('queued','failed','claimed','running')`,
      )
    ).rows[0].n,
  );

const waitUntil = async (check: () => boolean | Promise<boolean>, timeoutMs = 5000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describePg('AxPostgresEventStore', () => {
  it('is durable and multi-worker, and refuses unsafe schema names before touching the database', async () => {
    const store = await open();
    expect(store.durability).toBe('durable');
    expect(store.capabilities.multiWorker).toBe(true);
    await store.close();
    for (const schema of ['Ax', 'a-b', 'x"; DROP TABLE t; --', 'pg_mine', '1abc', '', 'a'.repeat(41)]) {
      expect(() => new AxPostgresEventStore({ connectionString: url, schema })).toThrow(
        expect.objectContaining({ code: 'invalid_options' }),
      );
    }
    expect(() => new AxPostgresEventStore({ schema: 'ok' })).toThrow(
      /exactly one of pool and connectionString/,
    );
    await expect(store.countPending()).rejects.toMatchObject({ code: 'closed' });
  });

  it('migrates once when many processes open a fresh schema at once, and refuses a newer schema', async () => {
    const schema = freshSchema();
    const stores = await Promise.all(
      Array.from({ length: 6 }, () =>
        AxPostgresEventStore.open({ connectionString: url, schema, poolSize: 2 }),
      ),
    );
    const versions = await admin().query(`SELECT component, version FROM "${schema}".ax_schema_versions`);
    expect(versions.rows).toEqual([{ component: 'events', version: EVENT_STORE_SCHEMA_VERSION }]);
    await stores[0]?.migrate();
    expect(await stores[1]?.countPending()).toBe(0);
    await Promise.all(stores.map((s) => s.close()));
    await admin().query(`UPDATE "${schema}".ax_schema_versions SET version = 99 WHERE component = 'events'`);
    await expect(AxPostgresEventStore.open({ connectionString: url, schema })).rejects.toThrow(/version 99/);
  });

  it('survives a backend terminated while a transaction holds its connection: the transaction rejects, nothing is thrown elsewhere', async () => {
    const schema = freshSchema();
    const errors = { config: (m: string) => new Error(m), wrap: (e: unknown) => e } as never;
    const connection = new PostgresConnection({ connectionString: url, schema, poolSize: 2 }, errors);
    const unhandled: unknown[] = [];
    const onUncaught = (error: unknown) => unhandled.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      await expect(
        connection.tx(async (client) => {
          const pid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
          await admin().query('SELECT pg_terminate_backend($1)', [pid]);
          // The connection's end arrives while no query runs: the client emits 'error' now.
          await new Promise((r) => setTimeout(r, 200));
          await client.query('SELECT 1');
        }),
      ).rejects.toThrow();
      // The pool is still usable.
      await expect(connection.query('SELECT 1 AS one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
      expect(unhandled).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
      await connection.close();
    }
  });

  it('upgrades a version 1 schema holding pending work: count, order and claims carry over', async () => {
    const schema = freshSchema();
    const errors = { config: (m: string) => new Error(m), wrap: (e: unknown) => e } as never;
    const v1 = new PostgresConnection({ connectionString: url, schema, poolSize: 1 }, errors);
    const migrations = eventStoreMigrations(hash32(`ax-mcp events ${schema}`));
    await v1.migrate('events', migrations.slice(0, 1));
    await v1.close();
    // Four deliveries written under version 1's triggers (sequence, heads, pending count).
    const before = ['k', 'k', null, null].map((key) => ({ ...draft({ orderingKey: key }) }));
    for (const d of before) {
      await admin().query(
        `INSERT INTO "${schema}".ax_event_deliveries (id, run_id, kind, route_id, action, target_id,
           instance_key, ordering_key, due_at, status, created_at)
         VALUES ($1, $2, 'event', 'route', 'wake', 'target', 'i', $3, 0, 'queued', 0)`,
        [d.id, d.runId, d.orderingKey],
      );
    }
    const older = await AxPostgresEventStore.open({ connectionString: url, schema, poolSize: 2 });
    const index = await admin().query(
      `SELECT indexdef FROM pg_indexes WHERE indexname = 'ax_event_deliveries_order' AND schemaname = $1`,
      [schema],
    );
    expect(index.rows[0]?.indexdef).toMatch(/ordering_key IS NOT NULL/);
    const after = await publish(older, [draft({ orderingKey: 'k' }), draft()]);
    expect(await older.countPending()).toBe(6);
    expect(await realPending(schema)).toBe(6);
    const claimed = await older.claim({ workerId: 'w', now: 1, leaseMs: 60_000, limit: 10 });
    // Of key k only its first delivery is claimable; the unordered ones all are.
    const ids = before.map((d) => d.id);
    expect(claimed.map((c) => c.delivery.id).sort()).toEqual([ids[0], ids[2], ids[3], after[1]].sort());
    const seqs = await admin().query(
      `SELECT id FROM "${schema}".ax_event_deliveries WHERE ordering_key = 'k' ORDER BY seq`,
    );
    expect(seqs.rows.map((r) => r.id)).toEqual([ids[0], ids[1], after[0]]);
    await older.close();
  });

  it('lets overlapping claims of one worker share a statement, and deals its rows out without overlap', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 6 });
    const claims: number[] = [];
    const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
    (pool as unknown as { query: unknown }).query = (config: unknown, ...rest: unknown[]) => {
      const text = (config as { text?: string }).text ?? String(config);
      if (text.includes('SKIP LOCKED')) claims.push((config as { values: number[] }).values[1] as number);
      return query(config, ...rest);
    };
    const store = await AxPostgresEventStore.open({ pool, schema: freshSchema() });
    const ids = await publish(
      store,
      Array.from({ length: 10 }, () => draft()),
    );
    const asks = [1, 1, 2, 3, 1].map((limit) =>
      store.claim({ workerId: 'w', now: 1, leaseMs: 60_000, limit }),
    );
    // Another worker's claim never joins this worker's statement: its rows carry its name.
    const other = store.claim({ workerId: 'other', now: 1, leaseMs: 60_000, limit: 1 });
    const got = await Promise.all(asks);
    expect(got.map((c) => c.length)).toEqual([1, 1, 2, 3, 1]);
    // The first went alone; the four behind it went as one statement asking for their sum.
    expect(claims.sort()).toEqual([1, 1, 7]);
    const mine = got.flat().map((c) => c.delivery.id);
    const theirs = (await other).map((c) => c.delivery.id);
    expect(new Set([...mine, ...theirs]).size).toBe(9);
    expect([...mine, ...theirs].every((id) => ids.includes(id))).toBe(true);
    const owners = await admin().query(
      `SELECT lease_owner, count(*)::integer AS n FROM "${store.schema}".ax_event_deliveries
       WHERE status = 'claimed' GROUP BY lease_owner ORDER BY lease_owner`,
    );
    expect(owners.rows).toEqual([
      { lease_owner: 'other', n: 1 },
      { lease_owner: 'w', n: 8 },
    ]);
    await store.close();
    await pool.end();
  });

  it('lets overlapping transitions share a statement, each one still fenced on its own token', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 6 });
    const updates: number[] = [];
    const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
    (pool as unknown as { query: unknown }).query = (config: unknown, ...rest: unknown[]) => {
      const text = (config as { text?: string }).text ?? '';
      const values = (config as { values?: unknown[] }).values ?? [];
      if (text.includes('lease_owner = CASE')) updates.push(Array.isArray(values[0]) ? values[0].length : 1);
      return query(config, ...rest);
    };
    const store = await AxPostgresEventStore.open({ pool, schema: freshSchema() });
    await publish(store, [...Array.from({ length: 5 }, () => draft()), draft({ orderingKey: 'k' })]);
    const claims = await store.claim({ workerId: 'w', now: 1, leaseMs: 60_000, limit: 10 });
    expect(claims).toHaveLength(6);
    const done = (c: AxEventClaim, fencingToken = c.delivery.fencingToken) =>
      store.transition({
        deliveryId: c.delivery.id,
        fencingToken,
        now: 2,
        status: 'succeeded',
        output: { ok: 1 },
      });
    const ordered = claims.find((c) => c.delivery.orderingKey === 'k') as AxEventClaim;
    const unordered = claims.filter((c) => c !== ordered);
    const [stale, ...fresh] = unordered as [AxEventClaim, ...AxEventClaim[]];
    const results = await Promise.all([
      ...fresh.map((c) => done(c)),
      done(stale, stale.delivery.fencingToken - 1),
      done(ordered),
    ]);
    expect(results).toEqual([true, true, true, true, false, true]);
    // The first went alone; the five behind it (the stale one and the ordered one among them)
    // went as one statement.
    expect(updates.sort()).toEqual([1, 5]);
    for (const c of [...fresh, ordered]) {
      expect(await store.getRun(c.delivery.runId)).toMatchObject({ status: 'succeeded', output: { ok: 1 } });
    }
    expect((await store.getRun(stale.delivery.runId))?.status).toBe('claimed');
    expect(await store.countPending()).toBe(1);
    expect(await realPending(store.schema)).toBe(1);
    await store.close();
    await pool.end();
  });

  it('closes what it opened: its own pool, and only its LISTEN connection of a pool you pass', async () => {
    const application = `ax_close_${randomBytes(4).toString('hex')}`;
    const connections = async () =>
      Number(
        (
          await admin().query('SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1', [
            application,
          ])
        ).rows[0].n,
      );
    const owned = await open({ connectionString: `${url}?application_name=${application}` });
    let woken = 0;
    owned.onWork(() => woken++);
    await waitUntil(() => woken > 0);
    expect(await connections()).toBeGreaterThanOrEqual(1);
    await owned.close();
    await waitUntil(async () => (await connections()) === 0);

    const pool = new pg.Pool({ connectionString: url, max: 3 });
    const shared = await AxPostgresEventStore.open({ pool, schema: freshSchema() });
    let rings = 0;
    shared.onWork(() => rings++);
    await waitUntil(() => rings > 0);
    expect(pool.totalCount - pool.idleCount).toBe(1);
    await shared.close();
    expect(pool.totalCount - pool.idleCount).toBe(0);
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await pool.end();
  });

  it('lets several stores share one pool, on one schema or on several', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const [s1, s2] = [freshSchema(), freshSchema()];
    const stores = [
      new AxPostgresEventStore({ pool, schema: s1 }),
      new AxPostgresEventStore({ pool, schema: s2 }),
      new AxPostgresEventStore({ pool, schema: s1 }),
    ];
    // One connection, so every prepared statement of every store meets on it, in another order.
    expect(await stores[2]?.claim({ workerId: 'w', now: 0, leaseMs: 10, limit: 10 })).toEqual([]);
    for (const [i, store] of stores.entries())
      await publish(store, [draft(), draft({ orderingKey: `k${i}` })]);
    expect(await Promise.all(stores.map((s) => s.countPending()))).toEqual([4, 2, 4]);
    const claims = await stores[2]?.claim({ workerId: 'w', now: 0, leaseMs: 10, limit: 10 });
    expect(claims).toHaveLength(4);
    expect(await stores[1]?.claim({ workerId: 'w', now: 0, leaseMs: 10, limit: 10 })).toHaveLength(2);
    for (const store of stores) await store.close();
    await pool.end();
  });

  it('wakes listeners in other processes with NOTIFY, at most once per interval, and never drops the last', async () => {
    const schema = freshSchema();
    const publisher = await AxPostgresEventStore.open({
      connectionString: url,
      schema,
      poolSize: 2,
      notifyIntervalMs: 200,
    });
    const worker = await AxPostgresEventStore.open({ connectionString: url, schema, poolSize: 2 });
    let rings = 0;
    const unsubscribe = worker.onWork(() => rings++);
    await waitUntil(() => rings === 1);
    await publish(publisher, [draft()]);
    await waitUntil(() => rings === 2, 2000);
    // A burst inside one interval sends one more NOTIFY, at its end.
    for (let i = 0; i < 20; i++) await publish(publisher, [draft()]);
    await waitUntil(() => rings >= 3, 2000);
    await new Promise((r) => setTimeout(r, 400));
    expect(rings).toBeLessThanOrEqual(4);
    // Nothing is sent for an event no route matched.
    const before = rings;
    await publish(publisher, []);
    await new Promise((r) => setTimeout(r, 400));
    expect(rings).toBe(before);
    unsubscribe();
    await publisher.close();
    await worker.close();
  });

  it('sends a NOTIFY at once by default, and one on the wire at a time carries what came meanwhile', async () => {
    const schema = freshSchema();
    const publisher = await AxPostgresEventStore.open({ connectionString: url, schema, poolSize: 2 });
    const worker = await AxPostgresEventStore.open({ connectionString: url, schema, poolSize: 2 });
    const counts: number[] = [];
    let started = false;
    const unsubscribe = worker.onWork((count) => {
      if (count === undefined) started = true;
      else counts.push(count);
    });
    await waitUntil(() => started);
    const t0 = Date.now();
    await publish(publisher, [draft()]);
    await waitUntil(() => counts.length === 1, 2000);
    // No interval to wait out: the wake-up follows the append by a round trip.
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(counts).toEqual([1]);
    // A burst of concurrent appends: every delivery announced once, in fewer NOTIFYs.
    await Promise.all(Array.from({ length: 20 }, () => publish(publisher, [draft()])));
    await waitUntil(() => counts.reduce((a, b) => a + b, 0) === 21, 2000);
    await new Promise((r) => setTimeout(r, 200));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(21);
    expect(counts.length).toBeLessThan(21);
    unsubscribe();
    await publisher.close();
    await worker.close();
  });

  it('takes replayable transitions, alone and sharing a statement, fenced like any other', async () => {
    const store = await open();
    const ids = await publish(store, [
      draft(),
      draft(),
      draft(),
      draft({ orderingKey: 'k' }),
      draft({ orderingKey: 'k' }),
    ]);
    const claims = await store.claim({ workerId: 'w', now: 0, leaseMs: 60_000, limit: 10 });
    expect(claims).toHaveLength(4);
    const done = (c: (typeof claims)[number], fencingToken = c.delivery.fencingToken) =>
      store.transition({
        deliveryId: c.delivery.id,
        fencingToken,
        now: 1,
        status: 'succeeded',
        output: { ok: c.delivery.id },
        replayable: true,
      });
    const [a, b, c, head] = claims as [
      (typeof claims)[number],
      (typeof claims)[number],
      (typeof claims)[number],
      (typeof claims)[number],
    ];
    expect(await done(a, a.delivery.fencingToken + 1)).toBe(false);
    expect(await done(a)).toBe(true);
    // Concurrent ones share one statement; the ordered head's successor becomes claimable.
    expect(await Promise.all([done(b), done(c), done(head)])).toEqual([true, true, true]);
    for (const x of [a, b, c, head]) {
      const run = await store.getRun(x.delivery.id);
      expect([run?.status, run?.output]).toEqual(['succeeded', { ok: x.delivery.id }]);
    }
    const next = await store.claim({ workerId: 'w', now: 2, leaseMs: 60_000, limit: 10 });
    expect(next.map((x) => x.delivery.id)).toEqual([ids[4]]);
    await store.close();
  });

  it('keeps its pending counter equal to the real count through every kind of change', async () => {
    const store = await open();
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
      routes: [eventRoute('r').types('x').instanceKey(eventPath.data('k')).wake(flaky).build()],
      store,
      clock,
      scheduling: 'host',
      maxAttempts: 2,
      retryBaseMs: 10,
    });
    const receipts = [];
    for (let i = 0; i < 30; i++)
      receipts.push(
        await runtime.publish({ event: { id: `${i}`, source: 's', type: 'x', data: { k: `k${i % 4}` } } }),
      );
    expect(await store.countPending()).toBe(await realPending(store.schema));
    expect(await store.countPending()).toBe(30);
    await runtime.cancelRun(receipts[0]?.deliveryIds[0] as string);
    await runtime.runDue({ limit: 10 });
    expect(await store.countPending()).toBe(await realPending(store.schema));
    for (let i = 0; i < 5; i++) {
      clock.advance(100);
      await runtime.runDue();
    }
    for (const letter of await runtime.listDeadLetters()) await runtime.redrive(letter.id);
    expect(await store.countPending()).toBe(await realPending(store.schema));
    await runtime.runDue();
    clock.advance(10 * 24 * 60 * 60 * 1000);
    await store.prune({ now: clock.now() });
    expect(await store.countPending()).toBe(await realPending(store.schema));
    await runtime.close();
    await store.close();
  });

  it('keeps one head per ordering key: several deliveries of one key in one event run in draft order', async () => {
    const store = await open();
    const [a, b, c] = await publish(store, [
      draft({ orderingKey: 'k' }),
      draft({ orderingKey: 'k' }),
      draft({ orderingKey: 'other' }),
    ]);
    const first = await store.claim({ workerId: 'w', now: 0, leaseMs: 1000, limit: 10 });
    expect(first.map((x) => x.delivery.id).sort()).toEqual([a, c].sort());
    const ca = first.find((x) => x.delivery.id === a);
    await store.transition({
      deliveryId: a as string,
      fencingToken: ca?.delivery.fencingToken as number,
      now: 1,
      status: 'succeeded',
    });
    expect(
      (await store.claim({ workerId: 'w', now: 1, leaseMs: 1000, limit: 10 })).map((x) => x.delivery.id),
    ).toEqual([b]);
    await store.close();
  });

  it('a redriven earlier delivery goes back in front of its key, as in the SQLite store', async () => {
    const store = await open();
    const [a] = await publish(store, [draft({ orderingKey: 'k' })]);
    const [b] = await publish(store, [draft({ orderingKey: 'k' })]);
    const [c] = await publish(store, [draft({ orderingKey: 'k' })]);
    const ca = (await store.claim({ workerId: 'w', now: 0, leaseMs: 1000, limit: 5 }))[0];
    expect(ca?.delivery.id).toBe(a);
    await store.transition({
      deliveryId: a as string,
      fencingToken: ca?.delivery.fencingToken as number,
      now: 1,
      status: 'dead_lettered',
      deadLetter: { id: 'dl-a', reason: 'max_attempts' },
    });
    const cb = (await store.claim({ workerId: 'w', now: 2, leaseMs: 10, limit: 5 }))[0];
    expect(cb?.delivery.id).toBe(b);
    expect(await store.redrive({ deadLetterId: 'dl-a', now: 3 })).toBe(a);
    // a is first again; b keeps running; c waits for both.
    const next = await store.claim({ workerId: 'w', now: 100, leaseMs: 1000, limit: 5 });
    expect(next.map((x) => x.delivery.id)).toEqual([a]);
    expect(next.some((x) => x.delivery.id === c)).toBe(false);
    await store.close();
  });

  it('rejects a fenced-out worker: once another worker took the expired lease, the old one cannot commit', async () => {
    const schema = freshSchema();
    const first = await AxPostgresEventStore.open({ connectionString: url, schema, poolSize: 2 });
    const second = await AxPostgresEventStore.open({ connectionString: url, schema, poolSize: 2 });
    const [id] = await publish(first, [draft({ orderingKey: 'k' })]);
    const [behind] = await publish(first, [draft({ orderingKey: 'k' })]);
    const stale = (await first.claim({ workerId: 'w1', now: 0, leaseMs: 100, limit: 1 }))[0];
    expect(stale?.delivery.id).toBe(id);
    const token = stale?.delivery.fencingToken as number;
    expect(
      await first.transition({ deliveryId: id as string, fencingToken: token, now: 10, status: 'running' }),
    ).toBe(true);
    expect(await second.claim({ workerId: 'w2', now: 50, leaseMs: 100, limit: 5 })).toEqual([]);
    const taken = (await second.claim({ workerId: 'w2', now: 100, leaseMs: 1000, limit: 5 }))[0];
    expect([taken?.delivery.id, taken?.recovered, taken?.previousStatus, taken?.delivery.leaseOwner]).toEqual(
      [id, true, 'running', 'w2'],
    );
    const late = { deliveryId: id as string, fencingToken: token, now: 150 };
    expect(await first.transition({ ...late, status: 'succeeded', output: { by: 'w1' } })).toBe(false);
    expect(await first.transition({ ...late, status: 'failed', dueAt: 0 })).toBe(false);
    expect(
      await first.heartbeat({ deliveryId: id as string, fencingToken: token, leaseUntil: 10_000 }),
    ).toEqual({
      held: false,
      cancelRequested: false,
    });
    expect(
      await first.putContinuations({
        ...late,
        continuations: [
          {
            id: 'c1',
            scope: 'anonymous',
            kind: 'k',
            value: 'v',
            targetId: 't',
            instanceKey: 'i',
            runId: 'r',
            deliveryId: id as string,
            expiresAt: null,
            metadata: null,
            createdAt: 0,
          },
        ],
      }),
    ).toBe(false);
    expect(
      await second.transition({
        deliveryId: id as string,
        fencingToken: taken?.delivery.fencingToken as number,
        now: 160,
        status: 'succeeded',
        output: { by: 'w2' },
      }),
    ).toBe(true);
    expect(await first.getRun(id as string)).toMatchObject({
      status: 'succeeded',
      output: { by: 'w2' },
      attempt: 2,
    });
    expect(await first.findContinuation({ scope: 'anonymous', kind: 'k', value: 'v', now: 0 })).toBeNull();
    expect((await first.claim({ workerId: 'w1', now: 200, leaseMs: 10, limit: 5 }))[0]?.delivery.id).toBe(
      behind,
    );
    await first.close();
    await second.close();
  });

  it('never deadlocks shared transitions of ordered deliveries with appends that lock several keys', async () => {
    const schema = freshSchema();
    const stores = await Promise.all(
      Array.from({ length: 3 }, () =>
        AxPostgresEventStore.open({ connectionString: url, schema, poolSize: 4 }),
      ),
    );
    const appends = 80;
    let finished = false;
    // A deadlock would not surface as an error (the store runs the statement again): count them.
    const deadlocks = async () =>
      Number(
        (await admin().query('SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()'))
          .rows[0].deadlocks,
      );
    const deadlocksBefore = await deadlocks();
    // Each append writes deliveries of four keys (it locks them in hash order).
    const appended = Promise.all(
      stores.map(async (store, s) => {
        for (let i = 0; i < appends; i++) {
          const keys = [0, 1, 2, 3].map((j) => `k${(i * 3 + j * 5 + s) % 8}`);
          await publish(
            store,
            [...new Set(keys)].map((key) => draft({ orderingKey: key })),
          );
        }
      }),
    ).then((r) => {
      finished = true;
      return r;
    });
    const ran = new Map<string, string[]>();
    const errors: unknown[] = [];
    await Promise.all(
      stores.map(async (store, w) => {
        for (;;) {
          const claims = await store.claim({ workerId: `w${w}`, now: Date.now(), leaseMs: 60_000, limit: 4 });
          if (claims.length === 0) {
            if (finished && (await store.countPending()) === 0) return;
            await new Promise((r) => setTimeout(r, 2));
            continue;
          }
          // The four finish together: their transitions share a statement.
          await Promise.all(
            claims.map(async (c) => {
              const key = c.delivery.orderingKey as string;
              ran.set(key, [...(ran.get(key) ?? []), c.delivery.id]);
              try {
                await store.transition({
                  deliveryId: c.delivery.id,
                  fencingToken: c.delivery.fencingToken,
                  now: Date.now(),
                  status: 'succeeded',
                });
              } catch (error) {
                errors.push(error);
              }
            }),
          );
        }
      }),
    );
    await appended;
    expect(errors).toEqual([]);
    await admin().query('SELECT pg_stat_clear_snapshot()');
    await new Promise((r) => setTimeout(r, 600)); // statistics are flushed every 500 ms at most
    expect(await deadlocks()).toBe(deadlocksBefore);
    const all = await admin().query(
      `SELECT ordering_key, id, status FROM "${schema}".ax_event_deliveries ORDER BY ordering_key, seq`,
    );
    expect(all.rows.every((r) => r.status === 'succeeded')).toBe(true);
    for (const [key, ids] of ran) {
      expect(ids).toEqual(all.rows.filter((r) => r.ordering_key === key).map((r) => r.id));
    }
    await Promise.all(stores.map((s) => s.close()));
  });

  it('keeps strict order per key and one claim at a time under concurrent appenders and claimers', async () => {
    const schema = freshSchema();
    const stores = await Promise.all(
      Array.from({ length: 4 }, () =>
        AxPostgresEventStore.open({ connectionString: url, schema, poolSize: 3 }),
      ),
    );
    const keys = 6;
    const perAppender = 60;
    // Appenders publish concurrently; each remembers the order it published its deliveries in.
    const published = new Map<string, string[]>();
    const appended = Promise.all(
      stores.map(async (store, s) => {
        for (let i = 0; i < perAppender; i++) {
          const key = `k${(i + s) % keys}`;
          const [id] = await publish(store, [draft({ orderingKey: key, instanceKey: key })]);
          const mine = `${s} ${key}`;
          if (id) published.set(mine, [...(published.get(mine) ?? []), id]);
        }
      }),
    );
    const running = new Set<string>();
    const ran = new Map<string, string[]>();
    let overlap = 0;
    let done = 0;
    let finished = false;
    void appended.then(() => (finished = true));
    await Promise.all(
      stores.map(async (store, w) => {
        for (;;) {
          const claims = await store.claim({ workerId: `w${w}`, now: Date.now(), leaseMs: 60_000, limit: 3 });
          if (claims.length === 0) {
            if (finished && done === stores.length * perAppender) return;
            await new Promise((r) => setTimeout(r, 2));
            continue;
          }
          await Promise.all(
            claims.map(async (c) => {
              const key = c.delivery.orderingKey as string;
              if (running.has(key)) overlap++;
              running.add(key);
              ran.set(key, [...(ran.get(key) ?? []), c.delivery.id]);
              await new Promise((r) => setTimeout(r, 1));
              running.delete(key);
              const ok = await store.transition({
                deliveryId: c.delivery.id,
                fencingToken: c.delivery.fencingToken,
                now: Date.now(),
                status: 'succeeded',
              });
              if (ok) done++;
            }),
          );
        }
      }),
    );
    await appended;
    expect(overlap).toBe(0);
    expect(done).toBe(stores.length * perAppender);
    // Within a key, deliveries ran in sequence order, which is the order they were committed in.
    for (const [key, ids] of ran) {
      const seqs = (
        await admin().query(
          `SELECT id FROM "${schema}".ax_event_deliveries WHERE ordering_key = $1 ORDER BY seq`,
          [key],
        )
      ).rows.map((r) => r.id);
      expect(ids).toEqual(seqs);
      // Each appender's own deliveries of a key keep its publish order.
      for (let s = 0; s < stores.length; s++) {
        const mine = published.get(`${s} ${key}`) ?? [];
        expect(mine.length).toBeGreaterThan(0);
        expect(ids.filter((id) => mine.includes(id))).toEqual(mine);
      }
    }
    await Promise.all(stores.map((s) => s.close()));
  }, 60_000);

  it('coalesces across processes: concurrent appends keep one queued delivery per coalesce key', async () => {
    const schema = freshSchema();
    const stores = await Promise.all(
      Array.from({ length: 3 }, () =>
        AxPostgresEventStore.open({ connectionString: url, schema, poolSize: 3 }),
      ),
    );
    const ids = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        publish(stores[i % 3] as AxPostgresEventStore, [draft({ coalesceKey: 'latest', dueAt: 1000 })]),
      ),
    );
    expect(new Set(ids.flat()).size).toBe(1);
    expect(await stores[0]?.countPending()).toBe(1);
    const events = await admin().query(`SELECT count(*)::int AS n FROM "${schema}".ax_event_events`);
    expect(events.rows[0].n).toBe(1);
    await Promise.all(stores.map((s) => s.close()));
  });

  it('stores strings PostgreSQL text cannot hold (NUL, lone surrogates) exactly', async () => {
    const store = await open();
    const odd = 'a\u0000b\ud800c';
    const { record, bytes } = normalizeIngress({
      event: { id: `id${odd}`, source: `src${odd}`, type: 't', data: { k: odd } },
    });
    const append = () =>
      store.append({
        dedupe: { scope: 'anonymous', source: `src${odd}`, id: `id${odd}` },
        event: { key: `evt${odd}`, scope: 'anonymous', ingress: record, bytes, receivedAt: 0 },
        deliveries: [draft({ id: `dlv${odd}`, instanceKey: odd, orderingKey: odd })],
        now: 0,
      });
    expect(await append()).toEqual({ status: 'appended', deliveryIds: [`dlv${odd}`] });
    expect(await append()).toEqual({ status: 'duplicate', deliveryIds: [`dlv${odd}`] });
    const [claim] = await store.claim({ workerId: `w${odd}`, now: 0, leaseMs: 100, limit: 1 });
    expect([claim?.delivery.id, claim?.delivery.instanceKey, claim?.delivery.leaseOwner]).toEqual([
      `dlv${odd}`,
      odd,
      `w${odd}`,
    ]);
    expect(claim?.event?.ingress.event.id).toBe(`id${odd}`);
    const continuation = {
      id: `c${odd}`,
      scope: 'anonymous',
      kind: odd,
      value: `\u0001${odd}`,
      targetId: 't',
      instanceKey: odd,
      runId: 'r',
      deliveryId: `dlv${odd}`,
      expiresAt: null,
      metadata: { odd },
      createdAt: 0,
    };
    await store.putContinuations({
      deliveryId: `dlv${odd}`,
      fencingToken: claim?.delivery.fencingToken as number,
      now: 0,
      continuations: [continuation],
    });
    expect(
      await store.findContinuation({ scope: 'anonymous', kind: odd, value: `\u0001${odd}`, now: 0 }),
    ).toEqual(continuation);
    expect((await store.getRun(`dlv${odd}`))?.continuationIds).toEqual([`c${odd}`]);
    await store.close();
  });

  it('appends a batch holding strings PostgreSQL text cannot hold, quotes and backslashes, exactly', async () => {
    const store = await open();
    const odd = 'a\u0000b\ud800c"d\\e\u2028f';
    // The second carries the ingress text as the runtime does, the first leaves it to the store.
    const item = (n: number) => {
      const { record, text, bytes } = normalizeIngress({
        event: { id: `id${n}${odd}`, source: `src${odd}`, type: 't', data: { k: odd, n } },
      });
      return {
        dedupe: { scope: 'anonymous', source: `src${odd}`, id: `id${n}${odd}` },
        event: { key: `evt${n}${odd}`, scope: 'anonymous', ingress: record, bytes, receivedAt: n },
        deliveries: [draft({ id: `dlv${n}${odd}`, instanceKey: odd, orderingKey: `${odd}${n}` })],
        ...(n === 2 ? { ingressText: text } : {}),
      };
    };
    const items = [item(1), item(2)];
    const results = await store.appendMany({ items, now: 0 });
    expect(results).toEqual([
      { status: 'appended', deliveryIds: [`dlv1${odd}`] },
      { status: 'appended', deliveryIds: [`dlv2${odd}`] },
    ]);
    expect(await store.appendMany({ items, now: 0 })).toEqual([
      { status: 'duplicate', deliveryIds: [`dlv1${odd}`] },
      { status: 'duplicate', deliveryIds: [`dlv2${odd}`] },
    ]);
    const claims = await store.claim({ workerId: 'w', now: 0, leaseMs: 100, limit: 2 });
    expect(
      claims.map((c) => [c.delivery.id, c.delivery.instanceKey, c.event?.ingress.event.data]).sort(),
    ).toEqual([
      [`dlv1${odd}`, odd, { k: odd, n: 1 }],
      [`dlv2${odd}`, odd, { k: odd, n: 2 }],
    ]);
    await store.close();
  });

  it('prunes a finished run with its sink writes and its event, and keeps a run whose sink is pending', async () => {
    const store = await open({ retentionMs: 1000 });
    const [done, waiting] = await publish(store, [draft(), draft()]);
    const claims = await store.claim({ workerId: 'w', now: 0, leaseMs: 100, limit: 2 });
    for (const c of claims) {
      await store.transition({
        deliveryId: c.delivery.id,
        fencingToken: c.delivery.fencingToken,
        now: 1,
        status: 'succeeded',
        sinks: [{ id: `sink_${c.delivery.id}`, sinkId: 'log' }],
      });
    }
    const sink = (await store.claim({ workerId: 'w', now: 2, leaseMs: 100, limit: 5 })).find(
      (c) => c.delivery.id === `sink_${done}`,
    );
    await store.transition({
      deliveryId: sink?.delivery.id as string,
      fencingToken: sink?.delivery.fencingToken as number,
      now: 3,
      status: 'succeeded',
    });
    // The other sink write was claimed too; it stays pending until its lease is given back.
    expect(await store.prune({ now: 10_000 })).toMatchObject({ deliveries: 2, events: 0 });
    expect(await store.getRun(done as string)).toBeNull();
    expect((await store.getRun(waiting as string))?.sinks.map((x) => x.status)).toEqual(['claimed']);
    const rows = await admin().query(`SELECT count(*)::int AS n FROM "${store.schema}".ax_event_events`);
    expect(rows.rows[0].n).toBe(1);
    await store.close();
  });

  it('reports a full store without changing anything, and an oversized event unless it is a duplicate', async () => {
    const store = await open({ maxPendingDeliveries: 2, maxEventBytes: 200 });
    await publish(store, [draft(), draft()], 'fills');
    const { record, bytes } = normalizeIngress({ event: { id: 'more', source: 'test://pg', type: 't' } });
    const more = {
      dedupe: { scope: 'anonymous', source: 'test://pg', id: 'more' },
      event: { key: 'evt_more', scope: 'anonymous', ingress: record, bytes, receivedAt: 0 },
      deliveries: [draft()],
      now: 0,
    };
    expect(await store.append(more)).toMatchObject({ status: 'full' });
    expect(await store.append({ ...more, deliveries: [] })).toMatchObject({ status: 'appended' });
    expect(await store.append(more)).toMatchObject({ status: 'duplicate', deliveryIds: [] });
    const big = normalizeIngress({
      event: { id: 'big', source: 'test://pg', type: 't', data: 'x'.repeat(500) },
    });
    await expect(
      store.append({
        dedupe: { scope: 'anonymous', source: 'test://pg', id: 'big' },
        event: { key: 'evt_big', scope: 'anonymous', ingress: big.record, bytes: big.bytes, receivedAt: 0 },
        deliveries: [draft()],
        now: 0,
      }),
    ).rejects.toMatchObject({ code: 'event_too_large' });
    expect(await store.countPending()).toBe(2);
    await store.close();
  });
});

describePg('AxPostgresEventWorker', () => {
  /** A worker with a 60 s poll interval, idle; another process publishes: the worker must wake on NOTIFY. */
  const wakesOnNotify = async (
    startWorker: (
      store: AxPostgresEventStore,
      routes: AxEventRouteDefinition[],
    ) => Promise<{ close(): Promise<void> }>,
  ) => {
    const schema = freshSchema();
    const store = await AxPostgresEventStore.open({ connectionString: url, schema, poolSize: 4 });
    const publisherStore = await AxPostgresEventStore.open({ connectionString: url, schema, poolSize: 2 });
    const seen: number[] = [];
    const routes = [
      eventRoute('r')
        .types('ping')
        .wake(
          eventTarget('t')
            .retrySafety('idempotent')
            .invoke(() => {
              seen.push(Date.now());
            })
            .build(),
        )
        .build(),
    ];
    const worker = await startWorker(store, routes);
    const publisher = eventRuntime({
      routes,
      store: publisherStore,
      scheduling: 'host',
      coordination: 'multi-worker',
    });
    await new Promise((r) => setTimeout(r, 300));
    const sent = Date.now();
    await publisher.publish({ event: { id: 'p1', source: 's', type: 'ping' } });
    await waitUntil(() => seen.length === 1, 3000);
    expect((seen[0] as number) - sent).toBeLessThan(1500);
    await worker.close();
    await publisher.close();
    await publisherStore.close();
    await store.close();
  };

  it('sleeps without polling and wakes on NOTIFY when another process publishes', () =>
    wakesOnNotify(async (store, routes) => {
      const worker = new AxPostgresEventWorker({
        store,
        routes,
        workerConcurrency: 2,
        pollIntervalMs: 60_000,
      });
      await worker.start();
      return worker;
    }));

  it('a plain eventRuntime worker loop on the store wakes on NOTIFY too, not at its next poll', () =>
    wakesOnNotify(async (store, routes) => {
      const runtime = eventRuntime({ routes, store, coordination: 'multi-worker', pollIntervalMs: 60_000 });
      await runtime.start();
      return runtime;
    }));

  it('drains on close: stops claiming, lets the running delivery finish, leaves queued work to the fleet', async () => {
    const store = await open({ poolSize: 4 });
    let release: () => void = () => undefined;
    const started = vi.fn();
    const routes = [
      eventRoute('r')
        .types('job')
        .instanceKey(eventPath.data('k'))
        .wake(
          eventTarget('slow')
            .invoke(async (input) => {
              started(input);
              await new Promise<void>((r) => {
                release = r;
              });
              return { finished: true };
            })
            .build(),
        )
        .build(),
    ];
    const worker = new AxPostgresEventWorker({ store, routes, workerConcurrency: 1 });
    const first = await worker.runtime.publish({
      event: { id: '1', source: 's', type: 'job', data: { k: 'a' } },
    });
    const second = await worker.runtime.publish({
      event: { id: '2', source: 's', type: 'job', data: { k: 'b' } },
    });
    await worker.start();
    await waitUntil(() => started.mock.calls.length === 1);
    const closing = worker.close();
    await new Promise((r) => setTimeout(r, 200));
    expect((await store.getRun(first.deliveryIds[0] as string))?.status).toBe('running');
    release();
    await closing;
    expect(started).toHaveBeenCalledTimes(1);
    expect(await store.getRun(first.deliveryIds[0] as string)).toMatchObject({
      status: 'succeeded',
      output: { finished: true },
    });
    expect((await store.getRun(second.deliveryIds[0] as string))?.status).toBe('queued');
    await store.close();
  });

  it('without onError, writes the first failure of each kind to the console, as the runtime does', async () => {
    const store = await open();
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const broken = {
        id: 'broken',
        start() {},
        close() {
          throw new Error('the source would not close');
        },
      };
      const worker = new AxPostgresEventWorker({ store, sources: [broken], workerConcurrency: 1 });
      await worker.start();
      await worker.close();
      // Before, the worker's own wrapper of onError swallowed it: nothing was written anywhere.
      const told = warn.mock.calls
        .map((call) => String(call[0]))
        .filter((line) => line.includes('would not close'));
      expect(told).toEqual([
        expect.stringContaining('ax-mcp: PostgreSQL event worker (phase source, source broken)'),
      ]);
    } finally {
      warn.mockRestore();
      await store.close();
    }
  });

  it('aborts what is still running after drainTimeoutMs: a non-idempotent run ends outcome_unknown, never replayed', async () => {
    const store = await open({ poolSize: 4 });
    let calls = 0;
    const routes = [
      eventRoute('r')
        .types('job')
        .wake(
          eventTarget('stuck')
            .invoke(async (_input, ctx) => {
              calls++;
              await new Promise((r) => ctx.abortSignal.addEventListener('abort', r, { once: true }));
              throw new Error('aborted');
            })
            .build(),
        )
        .build(),
    ];
    const worker = new AxPostgresEventWorker({ store, routes, workerConcurrency: 1 });
    const receipt = await worker.runtime.publish({ event: { id: '1', source: 's', type: 'job' } });
    await worker.start();
    await waitUntil(() => calls === 1);
    // A misspelt deadline waited for the stuck run for ever; it is refused and the worker keeps running.
    await expect(worker.close({ drainTimeoutMS: 100 } as never)).rejects.toMatchObject({
      code: 'invalid_options',
      path: 'drainTimeoutMS',
      suggestion: 'drainTimeoutMs',
    });
    await expect(worker.close({ drainTimeoutMs: Number.POSITIVE_INFINITY })).rejects.toMatchObject({
      code: 'invalid_options',
      path: 'drainTimeoutMs',
    });
    expect(calls).toBe(1);
    await worker.close({ drainTimeoutMs: 100 });
    expect((await store.getRun(receipt.deliveryIds[0] as string))?.status).toBe('outcome_unknown');
    expect(calls).toBe(1);
    await store.close();
  });
});
