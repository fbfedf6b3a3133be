/**
 * Listings, for stores that have them (`listRuns`, `listContinuations` are optional; a store
 * without them passes these cases): order, filters, cursor paging while runs are added,
 * limits, and bad input refused with a typed error.
 */
import type { AxEventRun, AxEventRunQuery, AxEventStore } from '../../events/store.js';
import { type Case, check, claimOne, continuation, draft, publish, same, uid } from './kit.js';

type Lister = NonNullable<AxEventStore['listRuns']>;

/** The store's `listRuns`, bound, or `null` when it has none. */
function listerOf(store: AxEventStore): Lister | null {
  return store.listRuns ? store.listRuns.bind(store) : null;
}

/** Every page from the first, each checked to be at most `limit` long. */
async function allPages(list: Lister, query: AxEventRunQuery, limit: number): Promise<AxEventRun[][]> {
  const pages: AxEventRun[][] = [];
  let before: string | undefined;
  for (let i = 0; i < 100; i++) {
    const page = await list({ ...query, limit, ...(before === undefined ? {} : { before }) });
    check(page.runs.length <= limit, `a page holds at most ${limit} runs, got ${page.runs.length}`);
    pages.push(page.runs);
    if (page.next === undefined) return pages;
    check(typeof page.next === 'string' && page.next !== '', 'next is a non-empty string');
    before = page.next;
  }
  throw new Error('paging did not end');
}

async function refusal(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  return undefined;
}

function refused(error: unknown, what: string): void {
  const e = error as { code?: unknown; name?: unknown } | undefined;
  check(e !== undefined, `${what} must be refused, not ignored`);
  same(e.code, 'invalid_input', `${what} is refused with code invalid_input`);
}

/** Run ids of several runs published with the same time, in listing order (greater id first). */
const byIdDescending = (ids: string[]) => [...ids].sort().reverse();

export const listingCases: Case[] = [
  [
    'lists runs newest first by last update, then by run id, as getRun shows them',
    async (store) => {
      const list = listerOf(store);
      if (!list) return;
      same(await list(), { runs: [] }, 'an empty store lists nothing');
      const a = draft();
      await publish(store, [a], 10);
      const b = draft();
      await publish(store, [b], 20);
      const tied = [draft(), draft(), draft()];
      await publish(store, tied, 30);
      // a is claimed first (the oldest due), runs and succeeds later than everything else.
      const c = await claimOne(store, 40);
      check(c?.delivery.id === a.id, 'the oldest delivery is claimed first');
      const token = c.delivery.fencingToken;
      await store.transition({
        deliveryId: a.id,
        fencingToken: token,
        now: 41,
        status: 'running',
        startedAt: 41,
      });
      await store.transition({
        deliveryId: a.id,
        fencingToken: token,
        now: 50,
        status: 'succeeded',
        output: { ok: true },
        sinks: [{ id: uid('dlv'), sinkId: 'log' }],
      });
      const page = await list();
      same(
        page.runs.map((r) => r.id),
        [a.runId, ...byIdDescending(tied.map((d) => d.runId)), b.runId],
        'order: last update first, ties by greater run id',
      );
      check(page.next === undefined, 'one page: no next');
      for (const run of page.runs)
        same(run, await store.getRun(run.id), `run ${run.id} as getRun returns it`);
      same(page.runs[0]?.sinks.length, 1, 'a sink write is part of its run, not a run');
    },
  ],
  [
    'filters runs by status, route and target',
    async (store) => {
      const list = listerOf(store);
      if (!list) return;
      const one = draft({ routeId: 'r1', targetId: 't1' });
      const two = draft({ routeId: 'r1', targetId: 't2' });
      const three = draft({ routeId: 'r2', targetId: 't2' });
      const four = draft({ routeId: 'r2', action: 'observe', targetId: null });
      await publish(store, [one, two, three, four], 1);
      const claimed = await claimOne(store, 2);
      check(claimed?.delivery.id === one.id, 'claim the first');
      await store.cancel({ id: two.runId, now: 3 });
      const ids = async (query: AxEventRunQuery) => (await list(query)).runs.map((r) => r.id).sort();
      same(await ids({ status: ['cancelled'] }), [two.runId], 'one status');
      same(await ids({ status: ['claimed', 'cancelled'] }), [one.runId, two.runId].sort(), 'any of two');
      same(await ids({ status: ['dead_lettered'] }), [], 'no run in that status');
      same(await ids({ status: [] }), [one, two, three, four].map((d) => d.runId).sort(), 'empty: no filter');
      same(await ids({ routeId: 'r2' }), [three.runId, four.runId].sort(), 'route');
      same(await ids({ targetId: 't2' }), [two.runId, three.runId].sort(), 'target');
      same(await ids({ routeId: 'r2', targetId: 't2', status: ['queued'] }), [three.runId], 'all three');
      same(await ids({ routeId: 'r2', status: ['claimed'] }), [], 'filters combine with AND');
      same(await ids({ routeId: 'nope' }), [], 'unknown route');
    },
  ],
  [
    'pages runs by cursor without gaps or repeats while runs are added',
    async (store) => {
      const list = listerOf(store);
      if (!list) return;
      const drafts = Array.from({ length: 8 }, () => draft({ routeId: 'paged' }));
      // Ties fall across page boundaries, and one tie is longer than a page.
      const times = [1, 2, 2, 2, 2, 2, 4, 5];
      for (const [i, d] of drafts.entries()) await publish(store, [d], times[i]);
      const expected = drafts
        .map((d, i) => ({ id: d.runId, at: times[i] as number }))
        .sort((x, y) => (x.at !== y.at ? y.at - x.at : x.id < y.id ? 1 : -1))
        .map((x) => x.id);
      const seen: string[] = [];
      const first = await list({ limit: 3 });
      seen.push(...first.runs.map((r) => r.id));
      check(first.next, 'more pages follow');
      // Runs added between pages are newer than the cursor: never on a later page.
      const added = [draft({ routeId: 'paged' }), draft({ routeId: 'paged' })];
      await publish(store, added, 100);
      let before: string | undefined = first.next;
      while (before !== undefined) {
        const page = await list({ limit: 3, before });
        check(page.runs.length > 0, 'a page that a next pointed to is not empty');
        seen.push(...page.runs.map((r) => r.id));
        before = page.next;
      }
      same(seen, expected, 'every run once, in order, none of those added meanwhile');
      same(
        (await list({ limit: 2 })).runs.map((r) => r.id),
        byIdDescending(added.map((d) => d.runId)),
        'a fresh first page shows the added runs',
      );
      const exact = await allPages(list, { routeId: 'paged' }, 5);
      same(
        exact.map((p) => p.length),
        [5, 5],
        'ten runs in pages of five: two pages, the last without next',
      );
      const filtered = await allPages(list, { status: ['queued'], routeId: 'paged' }, 4);
      same(filtered.flat().length, 10, 'paging with filters');
    },
  ],
  [
    'lists 50 runs a page by default and 500 at most',
    async (store) => {
      const list = listerOf(store);
      if (!list) return;
      await publish(
        store,
        Array.from({ length: 60 }, () => draft()),
        1,
      );
      const page = await list();
      same(page.runs.length, 50, 'default limit');
      check(page.next, 'a next page');
      same((await list({ before: page.next })).runs.length, 10, 'the rest');
      same((await list({ limit: 500 })).runs.length, 60, 'limit 500 is allowed');
      same((await list({ limit: 1 })).runs.length, 1, 'limit 1 is allowed');
      for (const limit of [0, -1, 501, 1.5, Number.NaN])
        refused(await refusal(() => list({ limit })), `limit ${limit}`);
    },
  ],
  [
    'refuses a bad cursor or status with a typed error',
    async (store) => {
      const list = listerOf(store);
      if (!list) return;
      await publish(store, [draft(), draft()], 1);
      const { next } = await list({ limit: 1 });
      check(next, 'a cursor');
      for (const before of ['', 'not a cursor!', 'e30', `${next}x`, 'WzEsMl0', btoa('[1,"a","b"]')])
        refused(await refusal(() => list({ before })), `cursor ${JSON.stringify(before)}`);
      refused(await refusal(() => list({ status: ['finished' as never] })), 'an unknown status');
      refused(await refusal(() => list({ status: 'queued' as never })), 'a status that is not a list');
      refused(await refusal(() => list({ routeId: 5 as never })), 'a route id that is not a string');
      // A misspelt filter would filter nothing and list every run.
      refused(await refusal(() => list({ staus: ['queued'] } as never)), 'a misspelt filter');
      same((await list({ before: next })).runs.length, 1, 'the good cursor still works');
    },
  ],
  [
    'lists continuations, live and expired until pruned, newest first',
    async (store) => {
      if (!store.listContinuations) return;
      const listContinuations = store.listContinuations.bind(store);
      same(await listContinuations({ now: 0 }), [], 'none yet');
      const ids = await publish(store, [draft()]);
      const c = await claimOne(store);
      check(c && ids[0], 'claim');
      const live = continuation({
        deliveryId: c.delivery.id,
        runId: c.delivery.runId,
        value: 'a',
        createdAt: 3,
      });
      const later = continuation({
        deliveryId: c.delivery.id,
        runId: c.delivery.runId,
        value: 'b',
        expiresAt: 100,
        createdAt: 2,
      });
      const gone = continuation({
        deliveryId: c.delivery.id,
        runId: c.delivery.runId,
        value: 'c',
        expiresAt: 10,
        createdAt: 1,
      });
      const put = { deliveryId: c.delivery.id, fencingToken: c.delivery.fencingToken, now: 0 };
      check(await store.putContinuations({ ...put, continuations: [gone, later, live] }), 'put');
      const listed = await listContinuations({ now: 50 });
      same(
        listed.map((l) => [l.id, l.value, l.expired]),
        [
          [live.id, 'a', false],
          [later.id, 'b', false],
          [gone.id, 'c', true],
        ],
        'newest first, the expired one marked',
      );
      same(listed[1], { ...later, expired: false }, 'every field of the continuation');
      same((await listContinuations({ now: 100 }))[1]?.expired, true, 'expired at its expiresAt');
      same((await listContinuations({ now: 50, limit: 1 })).length, 1, 'limit');
      await store.prune({ now: 50 });
      same(
        (await listContinuations({ now: 50 })).map((l) => l.id),
        [live.id, later.id],
        'pruned ones are gone',
      );
      for (const limit of [0, 501, 2.5])
        refused(await refusal(() => listContinuations({ now: 50, limit })), `limit ${limit}`);
    },
  ],
];
