import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { AxManualEventClock } from '../../events/clock.js';
import type { AxEventIngress } from '../../events/envelope.js';
import { AxEventBackpressureError, AxEventInputError } from '../../events/errors.js';
import { eventPath } from '../../events/path.js';
import { eventRoute } from '../../events/route-builder.js';
import { eventRuntime } from '../../events/runtime.js';
import { eventTarget } from '../../events/target-builder.js';
import { AxPostgresEventStore, type AxPostgresEventStoreOptions } from './event-store.js';
import { AxPostgresEventWorker } from './event-store-worker.js';
import { testDatabase } from './test-database.fixture.js';

const { url, freshSchema } = testDatabase('postgres/event-store-batch.test', 'the PostgreSQL batch tests');
const describePg = describe.skipIf(!url);
const open = (options: Partial<AxPostgresEventStoreOptions> = {}) => {
  return AxPostgresEventStore.open({ connectionString: url, schema: freshSchema(), poolSize: 3, ...options });
};

let n = 0;
const job = (k: string): AxEventIngress => ({
  event: { id: `j${++n}`, source: 'app://jobs', type: 'job', data: { k } },
});

function runtimeOn(store: AxPostgresEventStore, seen: string[] = [], debounce = false) {
  const target = eventTarget('t')
    .invoke((_input, context) => {
      seen.push(context.event.id);
    })
    .build();
  let route = eventRoute('r').types('job').instanceKey(eventPath.data('k'));
  if (debounce) route = route.debounce(0, { coalesce: 'latest' });
  return eventRuntime({
    routes: [route.wake(target).build()],
    store,
    clock: new AxManualEventClock(1_000),
    scheduling: 'host',
    coordination: 'multi-worker',
    publishTimeoutMs: 0,
  });
}

/** Counts the NOTIFYs on a store's channel, from a client of its own. */
async function listen(store: AxPostgresEventStore) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const counter = { n: 0, announced: 0, end: () => client.end() };
  client.on('notification', (message) => {
    if (message.channel !== `ax_event_work_${store.schema}`) return;
    counter.n++;
    counter.announced += Number(message.payload);
  });
  await client.query(`LISTEN "ax_event_work_${store.schema}"`);
  return counter;
}

const settle = () => new Promise((r) => setTimeout(r, 300));

describePg('AxPostgresEventStore: publishMany', () => {
  it('sends one NOTIFY per batch, where publishing one by one sends one per event', async () => {
    const store = await open();
    const runtime = runtimeOn(store);
    const notes = await listen(store);
    for (let i = 1; i <= 5; i++) {
      expect((await runtime.publish(job('a'))).duplicate).toBe(false);
      await settle();
      expect(notes.n).toBe(i);
    }
    expect(notes.announced).toBe(5);
    notes.n = 0;
    notes.announced = 0;
    const receipts = await runtime.publishMany(Array.from({ length: 100 }, (_, i) => job(`k${i % 7}`)));
    await settle();
    expect(receipts).toHaveLength(100);
    expect(notes.n).toBe(1);
    expect(notes.announced).toBe(100);
    notes.n = 0;
    // A batch of duplicates only, and an empty batch, make nothing claimable: no NOTIFY.
    await runtime.publishMany(
      receipts.slice(0, 3).map((r) => ({ ...job('x'), event: { ...job('x').event, id: r.eventId } })),
    );
    await runtime.publishMany([]);
    await settle();
    expect(notes.n).toBe(0);
    await notes.end();
    await runtime.close();
    await store.close();
  });

  it('runs the batch in batch order per key, and dedupes against the batch and earlier events', async () => {
    const store = await open();
    const seen: string[] = [];
    const runtime = runtimeOn(store, seen);
    const earlier = await runtime.publish(job('a'));
    const batch = [job('a'), job('b'), job('a'), job('b'), job('a')];
    const dup = { event: { id: earlier.eventId, source: 'app://jobs', type: 'job', data: { k: 'a' } } };
    const receipts = await runtime.publishMany([...batch, dup, batch[1] as AxEventIngress]);
    expect(receipts.map((r) => r.duplicate)).toEqual([false, false, false, false, false, true, true]);
    expect(receipts[5]?.deliveryIds).toEqual(earlier.deliveryIds);
    expect(receipts[6]?.deliveryIds).toEqual(receipts[1]?.deliveryIds);
    await runtime.runDue();
    const ids = batch.map((x) => x.event.id);
    expect(seen.filter((id) => [earlier.eventId, ids[0], ids[2], ids[4]].includes(id))).toEqual([
      earlier.eventId,
      ids[0],
      ids[2],
      ids[4],
    ]);
    expect(seen.filter((id) => id === ids[1] || id === ids[3])).toEqual([ids[1], ids[3]]);
    expect(seen).toHaveLength(6);
    await runtime.close();
    await store.close();
  });

  it('refuses a batch with a bad event before writing, and a batch with no room as a whole', async () => {
    const store = await open({ maxPendingDeliveries: 3 });
    const runtime = runtimeOn(store);
    const bad = { event: { id: '', source: 'app://jobs', type: 'job' } } as AxEventIngress;
    await expect(runtime.publishMany([job('a'), bad])).rejects.toBeInstanceOf(AxEventInputError);
    expect(await store.countPending()).toBe(0);
    await runtime.publishMany([job('a'), job('b')]);
    await expect(runtime.publishMany([job('c'), job('d')])).rejects.toBeInstanceOf(AxEventBackpressureError);
    expect(await store.countPending()).toBe(2);
    // Duplicates need no room.
    const [again] = await runtime.publishMany([
      { event: { id: `j${n - 3}`, source: 'app://jobs', type: 'job', data: { k: 'a' } } },
    ]);
    expect(again?.duplicate).toBe(true);
    await runtime.close();
    await store.close();
  });

  it('appends a batch with coalescing deliveries item by item, coalescing within the batch', async () => {
    const store = await open();
    const seen: string[] = [];
    const runtime = runtimeOn(store, seen, true);
    const receipts = await runtime.publishMany([job('a'), job('a'), job('b')]);
    expect(receipts[1]?.deliveryIds).toEqual(receipts[0]?.deliveryIds);
    expect(receipts[1]?.duplicate).toBe(false);
    expect(await store.countPending()).toBe(2);
    await runtime.runDue();
    expect(seen.sort()).toEqual([receipts[1]?.eventId, receipts[2]?.eventId].sort());
    await runtime.close();
    await store.close();
  });
});

/**
 * A worker of 4 lanes on the route, and a publisher on another store of its schema that sends
 * 30 jobs 30 ms apart once the worker has settled; resolves when all ran, with the claim
 * statements counted from the first job on.
 */
async function trickle(route: ReturnType<typeof eventRoute>) {
  const publisherStore = await open();
  const store = await AxPostgresEventStore.open({
    connectionString: url,
    schema: publisherStore.schema,
    poolSize: 6,
  });
  let count = 0;
  let dueQueries = 0;
  const claim = store.claim.bind(store);
  store.claim = (input) => {
    count++;
    return claim(input);
  };
  const nextDueAt = store.nextDueAt.bind(store);
  store.nextDueAt = () => {
    dueQueries++;
    return nextDueAt();
  };
  const seen: string[] = [];
  const target = eventTarget('t')
    .invoke((_input, context) => {
      seen.push(context.event.id);
    })
    .build();
  const routes = [route.wake(target).build()];
  const worker = new AxPostgresEventWorker({ store, routes, workerConcurrency: 4, pollIntervalMs: 60_000 });
  await worker.start();
  const publisher = eventRuntime({ routes, store: publisherStore, scheduling: 'host' });
  // Listening started with the queue unknown: the lanes look until a claim comes back empty.
  await new Promise((r) => setTimeout(r, 300));
  count = 0;
  dueQueries = 0;
  for (let i = 0; i < 30; i++) {
    await publisher.publish(job(`k${i}`));
    await new Promise((r) => setTimeout(r, 30));
  }
  const deadline = Date.now() + 10_000;
  while (seen.length < 30 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 100));
  expect(seen).toHaveLength(30);
  return {
    publisherStore,
    store,
    worker,
    publisher,
    seen,
    routes,
    claims: () => count,
    dueQueries: () => dueQueries,
  };
}

describePg('AxPostgresEventWorker: wake-ups', () => {
  it('wakes one lane per NOTIFY: a trickle costs about two claims per delivery, not one per lane', async () => {
    const { publisherStore, store, worker, publisher, seen, claims } = await trickle(
      eventRoute('r').types('job').instanceKey(eventPath.data('k')),
    );
    const count = 30;
    // Every lane woken by every NOTIFY made over 3 per delivery; one lane per NOTIFY makes 2.
    expect(claims() / count).toBeLessThan(2.6);
    // A batch still spreads over the lanes: all of it runs, without waiting for a poll.
    const t0 = Date.now();
    await publisher.publishMany(Array.from({ length: 40 }, (_, i) => job(`b${i}`)));
    while (seen.length < count + 40 && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 10));
    expect(seen).toHaveLength(count + 40);
    await worker.close();
    await publisher.close({ drain: false });
    await store.close();
    await publisherStore.close();
  });

  it('on a trickle of unordered work, a lane that ran a delivery sleeps instead of claiming again', async () => {
    const { publisherStore, store, worker, publisher, seen, claims, routes, dueQueries } = await trickle(
      eventRoute('r').types('job').instanceKey(eventPath.data('k')).ordering('relaxed'),
    );
    const count = 30;
    // One claim per delivery; claiming again after every run made two.
    expect(claims() / count).toBeLessThan(1.5);
    // A lane going idle keeps the next due time while notifications announce only work due
    // now: about one query a second (30 jobs over ~1 s), where asking at every idle made one
    // per delivery.
    expect(dueQueries()).toBeLessThan(count / 3);
    // Work nobody announced (a producer that does not notify) is still found long before the
    // 60 s poll: a lane that ran one of it and goes idle asks for the next due time, which is
    // now, looks again shortly, and work found that way keeps the lanes looking until a claim
    // comes back empty.
    const quiet = await AxPostgresEventStore.open({
      connectionString: url,
      schema: publisherStore.schema,
      poolSize: 2,
      notify: false,
    });
    const silent = eventRuntime({ routes, store: quiet, scheduling: 'host' });
    await silent.publishMany(Array.from({ length: 20 }, (_, i) => job(`q${i}`)));
    await publisher.publish(job('loud'));
    const t0 = Date.now();
    while (seen.length < count + 21 && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 10));
    expect(seen).toHaveLength(count + 21);
    await worker.close();
    await publisher.close({ drain: false });
    await silent.close({ drain: false });
    await quiet.close();
    await store.close();
    await publisherStore.close();
  });

  it('a retry coming due is run on time: a notification of later work drops the kept next due time', async () => {
    const publisherStore = await open();
    const store = await AxPostgresEventStore.open({
      connectionString: url,
      schema: publisherStore.schema,
      poolSize: 6,
    });
    const payloads: string[] = [];
    const watcher = new pg.Client({ connectionString: url });
    await watcher.connect();
    watcher.on('notification', (message) => payloads.push(message.payload ?? ''));
    await watcher.query(`LISTEN "ax_event_work_${store.schema}"`);
    const attempts: number[] = [];
    let warm = 0;
    const first = job('warm');
    const warmId = first.event.id;
    const target = eventTarget('flaky')
      .retrySafety('idempotent')
      .invoke((_input, context) => {
        if (context.event.id === warmId) {
          warm++;
          return;
        }
        attempts.push(Date.now());
        if (attempts.length === 1) throw new Error('once');
      })
      .build();
    const routes = [eventRoute('r').types('job').ordering('relaxed').wake(target).build()];
    const worker = new AxPostgresEventWorker({
      store,
      routes,
      workerConcurrency: 2,
      pollIntervalMs: 60_000,
      retry: { baseMs: 100, jitter: 0 },
    });
    await worker.start();
    const publisher = eventRuntime({ routes, store: publisherStore, scheduling: 'host' });
    await new Promise((r) => setTimeout(r, 300));
    // Work due now first: the lanes that go idle after it ask for the next due time (none)
    // and keep it; the next job, announced as due now, leaves it kept.
    await publisher.publish(first);
    while (warm === 0) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 20));
    await publisher.publish(job('f'));
    const deadline = Date.now() + 5000;
    while (attempts.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(attempts).toHaveLength(2);
    // Due 100 ms after the failure. Kept, the next due time (none, asked when the worker
    // started 300 ms before the jobs) would have held the lanes until it was a second old.
    expect((attempts[1] as number) - (attempts[0] as number)).toBeLessThan(450);
    // The retry's notification said when it comes due; the publish's said nothing of later work.
    expect(payloads.filter((p) => /^1~\d+$/.test(p))).toHaveLength(1);
    expect(payloads).toContain('1');
    await watcher.end();
    await worker.close();
    await publisher.close({ drain: false });
    await store.close();
    await publisherStore.close();
  });

  it('a batch wakes as many lanes as it has deliveries, at once, not one lane after each run', async () => {
    const publisherStore = await open();
    const store = await AxPostgresEventStore.open({
      connectionString: url,
      schema: publisherStore.schema,
      poolSize: 6,
    });
    let running = 0;
    let most = 0;
    const target = eventTarget('slow')
      .invoke(async () => {
        most = Math.max(most, ++running);
        await new Promise((r) => setTimeout(r, 400));
        running--;
      })
      .build();
    const routes = [eventRoute('r').types('job').instanceKey(eventPath.data('k')).wake(target).build()];
    const worker = new AxPostgresEventWorker({ store, routes, workerConcurrency: 4, pollIntervalMs: 60_000 });
    await worker.start();
    const publisher = eventRuntime({ routes, store: publisherStore, scheduling: 'host' });
    await new Promise((r) => setTimeout(r, 300));
    await publisher.publishMany([job('s1'), job('s2'), job('s3'), job('s4')]);
    const deadline = Date.now() + 5000;
    while (most < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(most).toBe(4);
    await worker.close();
    await publisher.close({ drain: false });
    await store.close();
    await publisherStore.close();
  });
});
