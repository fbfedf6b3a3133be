/**
 * The studio's Runs API over HTTP against an event runtime on SQLite: `GET runs` lists every
 * run of the store (runs published before the studio started too), newest first, filtered by
 * status, route, target and text, paged by cursor without gaps or repeats; a store without
 * `listRuns` falls back to the runs the studio saw (`complete: false`); `GET continuations`
 * lists the live and the expired continuations; bad parameters are 400s; and the studio sees
 * published events through the runtime's `onPublish` hook (`GET recent-events`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AxEventIngress,
  type AxEventRun,
  type AxEventRuntime,
  type AxEventStore,
  AxManualEventClock,
  eventPath,
  eventRoute,
  eventRuntime,
  eventTarget,
} from '../src/index.js';
import { AxSQLiteEventStore, type AxStudio, startStudio } from '../src/node.js';

let dir: string;
let store: AxSQLiteEventStore;
let runtime: AxEventRuntime;
let clock: AxManualEventClock;
let studio: AxStudio;
/** Run ids in the order the store must list them: newest last update first. */
const before: string[] = [];

let n = 0;
const ingress = (type: string, data: Record<string, unknown>): AxEventIngress => ({
  event: { id: `sr${++n}`, source: 'app://studio-runs', type, data },
});

interface RunsBody {
  runs: AxEventRun[];
  available: boolean;
  complete: boolean;
  next?: string;
}

async function api(target: AxStudio, path: string): Promise<{ status: number; body: unknown }> {
  const url = new URL(target.url);
  const response = await fetch(`${target.origin}/api/${path}`, {
    headers: { 'x-ax-studio-token': url.searchParams.get('token') ?? '' },
  });
  return { status: response.status, body: await response.json() };
}

async function runs(path: string, target = studio): Promise<RunsBody> {
  const { status, body } = await api(target, path);
  expect(status, JSON.stringify(body)).toBe(200);
  return body as RunsBody;
}

/** Every page from the first, following `next`. */
async function allPages(query: string): Promise<AxEventRun[][]> {
  const pages: AxEventRun[][] = [];
  let next: string | undefined;
  do {
    const page = await runs(`runs?${query}${next === undefined ? '' : `&before=${next}`}`);
    pages.push(page.runs);
    next = page.next;
  } while (next !== undefined && pages.length < 50);
  return pages;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ax-mcp-studio-runs-'));
  store = await AxSQLiteEventStore.open({ filename: join(dir, 'events.db') });
  clock = new AxManualEventClock(1_000);
  const worker = eventTarget('worker')
    .invoke(() => ({ done: true }))
    .build();
  const owner = eventTarget('owner')
    .waitFor('app.task', eventPath.data('taskId'), { expiresInMs: 1_000 })
    .invoke(() => ({ started: true }))
    .build();
  runtime = eventRuntime({
    routes: [
      eventRoute('jobs').types('job').wake(worker).build(),
      eventRoute('tasks').types('task.started').wake(owner).build(),
      eventRoute('audit')
        .types('job')
        .observe(() => undefined)
        .build(),
    ],
    store,
    clock,
    scheduling: 'host',
  });
  await runtime.start();
  // Runs from before the studio: it never saw them published, the store still lists them.
  for (let i = 0; i < 3; i++) {
    const receipt = await runtime.publish(ingress('job', { i }));
    clock.advance(10);
    await runtime.runDue();
    clock.advance(10);
    before.push(...receipt.deliveryIds);
  }
  studio = await startStudio({ runtime, onWarning: () => undefined });
});

afterAll(async () => {
  await studio?.close();
  await runtime?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('studio GET runs', () => {
  it('lists every run of the store, newest first, as GET runs/:id shows it', async () => {
    const page = await runs('runs');
    expect(page).toMatchObject({ available: true, complete: true });
    expect(page.next).toBeUndefined();
    // 3 jobs × (jobs, audit) routes.
    expect(page.runs).toHaveLength(6);
    const times = page.runs.map((r) => r.finishedAt ?? 0);
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    const known = new Set(page.runs.flatMap((r) => [r.id, r.deliveryId]));
    for (const id of before) expect(known.has(id)).toBe(true);
    const one = page.runs[0] as AxEventRun;
    expect((await api(studio, `runs/${one.id}`)).body).toEqual({ run: one });
  });

  it('filters by status, route, target and text, and pages by cursor without repeats', async () => {
    const task = await runtime.publish(ingress('task.started', { taskId: 'T-77' }));
    await runtime.runDue();
    const queued = await runtime.publish(ingress('job', { i: 'later' }));
    const waiting = await runs('runs?status=waiting_event');
    expect(waiting.runs.map((r) => r.deliveryId)).toEqual(task.deliveryIds);
    const some = await runs('runs?status=queued,waiting_event');
    expect(some.runs.map((r) => r.status).sort()).toEqual(['queued', 'queued', 'waiting_event']);
    expect((await runs('runs?route=audit')).runs.every((r) => r.routeId === 'audit')).toBe(true);
    expect((await runs('runs?route=audit')).runs).toHaveLength(4);
    expect((await runs('runs?target=owner')).runs.map((r) => r.routeId)).toEqual(['tasks']);
    // The jobs route comes first, so its delivery is the receipt's first.
    expect((await runs('runs?target=worker&status=queued')).runs.map((r) => r.deliveryId)).toEqual([
      queued.deliveryIds[0],
    ]);
    expect((await runs('runs?route=nope')).runs).toEqual([]);

    const full = (await runs('runs?limit=500')).runs;
    const all = full.map((r) => r.id);
    expect(all).toHaveLength(9);
    const pages = await allPages('limit=2');
    expect(pages.map((p) => p.length)).toEqual([2, 2, 2, 2, 1]);
    expect(pages.flat().map((r) => r.id)).toEqual(all);

    // Text: matched in ids, route, target, status; pages of matches keep their place in a store page.
    const workerRuns = full.filter((r) => r.targetId === 'worker').map((r) => r.id);
    expect(workerRuns).toHaveLength(4);
    const byText = await allPages('q=WORKER&limit=1');
    expect(byText.map((p) => p.length)).toEqual([1, 1, 1, 1]);
    expect(byText.flat().map((r) => r.id)).toEqual(workerRuns);
    const byId = await runs(`runs?q=${encodeURIComponent(task.deliveryIds[0] as string)}`);
    expect(byId.runs.map((r) => r.routeId)).toEqual(['tasks']);
  });

  it('answers 400 for a bad status, limit or cursor', async () => {
    for (const query of [
      'status=nope',
      'status=queued,finished',
      'limit=0',
      'limit=501',
      'limit=ten',
      'limit=1.5',
      'before=not-a-cursor!',
      'before=bm9wZQ',
      // A well-formed studio cursor around a store cursor the store never made.
      `before=${Buffer.from(JSON.stringify(['garbage', 0])).toString('base64url')}`,
    ]) {
      const { status, body } = await api(studio, `runs?${query}`);
      expect(status, query).toBe(400);
      expect(body, query).toMatchObject({ error: { message: expect.any(String) } });
    }
    expect((await api(studio, 'continuations?limit=0')).status).toBe(400);
  });

  it('falls back to the runs it saw when the store cannot list runs', async () => {
    const withoutListing = new Proxy(store as AxEventStore, {
      get(target, key) {
        if (key === 'listRuns' || key === 'listContinuations') return undefined;
        const value = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const partial = await startStudio({ runtime, store: withoutListing, onWarning: () => undefined });
    try {
      expect(await runs('runs', partial)).toEqual({ runs: [], available: true, complete: false });
      const seen = await runtime.publish(ingress('job', { i: 'seen' }));
      const page = await runs('runs', partial);
      expect(page.complete).toBe(false);
      expect(page.runs.map((r) => r.deliveryId).sort()).toEqual([...seen.deliveryIds].sort());
      expect((await runs('runs?route=audit', partial)).runs).toHaveLength(1);
      expect((await api(partial, 'runs?before=abc')).status).toBe(400);
      expect((await api(partial, 'continuations')).body).toEqual({ continuations: [], available: false });
    } finally {
      await partial.close();
    }
  });

  it('sees published events through the runtime hook', async () => {
    const receipt = await runtime.publish(ingress('job', { i: 'hooked' }));
    const { body } = await api(studio, 'recent-events');
    const events = (body as { events: { event: { id: string }; receipt?: { deliveryIds: string[] } }[] })
      .events;
    const record = events.find((e) => e.receipt?.deliveryIds.includes(receipt.deliveryIds[0] as string));
    expect(record?.event.id).toBe(`sr${n}`);
    expect(record?.receipt?.deliveryIds).toEqual(receipt.deliveryIds);
  });
});

describe('studio GET continuations', () => {
  it('lists live continuations and expired ones until pruned', async () => {
    const live = await api(studio, 'continuations');
    expect(live.status).toBe(200);
    const body = live.body as { continuations: Record<string, unknown>[]; available: boolean };
    expect(body.available).toBe(true);
    expect(body.continuations).toHaveLength(1);
    const [c] = body.continuations;
    expect(c).toMatchObject({ kind: 'app.task', value: 'T-77', expired: false, targetId: 'owner' });
    for (const key of ['id', 'deliveryId', 'runId', 'scope', 'kind', 'value', 'expiresAt', 'expired'])
      expect(c).toHaveProperty(key);
    clock.advance(5_000);
    const later = (await api(studio, 'continuations?limit=1')).body as typeof body;
    expect(later.continuations.map((x) => [x.id, x.expired])).toEqual([[c?.id, true]]);
    await store.prune({ now: clock.now() });
    expect(((await api(studio, 'continuations')).body as typeof body).continuations).toEqual([]);
  });
});
