/**
 * The studio's Runs view: `GET runs` lists every run of a store that can list them
 * (`AxEventStore.listRuns`), filtered and paged by cursor, or else the runs the studio saw
 * published (`complete: false`); `GET continuations` lists the continuations a store holds.
 *
 * The text filter `q` is the studio's own: it scans the store's pages (bounded per request)
 * until it has a page of matches, and its cursor remembers where inside a store page it
 * stopped, so paging with `q` neither skips nor repeats a run either.
 */

import {
  DEFAULT_LIST_LIMIT as DEFAULT_LIMIT,
  MAX_LIST_LIMIT as MAX_LIMIT,
  RUN_STATUSES as STATUSES,
} from '../../events/run-listing.js';
import type {
  AxEventContinuationListing,
  AxEventRun,
  AxEventRunStatus,
  AxEventRuntime,
  AxEventStore,
} from '../../index.js';
import { AxEventInputError } from '../../index.js';
import type { StudioReply } from './api.js';
import type { StudioObserver } from './observe.js';

/** Store pages one request may read while `q` finds few matches; then `next` says where to go on. */
const MAX_SCANNED_PAGES = 10;
/** Runs the studio saw that the fallback (a store without `listRuns`) looks at. */
const MAX_RECENT = 1000;

const ok = (body: unknown): StudioReply => ({ status: 200, body });
const fail = (status: number, message: string): StudioReply => ({ status, body: { error: { message } } });

/** A refused query parameter: answered 400 with its message. */
class BadQuery extends Error {}

/** Where a studio page stopped: the store's cursor of a store page and how many of its runs were looked at. */
interface StudioCursor {
  before: string | null;
  skip: number;
}

function encodeCursor(cursor: StudioCursor): string {
  return Buffer.from(JSON.stringify([cursor.before, cursor.skip])).toString('base64url');
}

function decodeCursor(text: string): StudioCursor {
  const bad = new BadQuery('before is not a cursor this studio returned as next');
  if (!/^[A-Za-z0-9_-]{1,8192}$/.test(text)) throw bad;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw bad;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    !(parsed[0] === null || (typeof parsed[0] === 'string' && parsed[0] !== '')) ||
    !Number.isInteger(parsed[1]) ||
    (parsed[1] as number) < 0 ||
    (parsed[1] as number) >= MAX_LIMIT
  )
    throw bad;
  return { before: parsed[0] as string | null, skip: parsed[1] as number };
}

function limitOf(query: URLSearchParams): number {
  const text = query.get('limit');
  if (text === null || text === '') return DEFAULT_LIMIT;
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_LIMIT)
    throw new BadQuery(`limit must be an integer from 1 to ${MAX_LIMIT}`);
  return n;
}

function statusesOf(query: URLSearchParams): AxEventRunStatus[] | undefined {
  const text = query.get('status');
  if (text === null) return undefined;
  const statuses = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const status of statuses) {
    if (!(STATUSES as readonly string[]).includes(status))
      throw new BadQuery(`unknown status "${status}" (known: ${STATUSES.join(', ')})`);
  }
  return statuses.length === 0 ? undefined : (statuses as AxEventRunStatus[]);
}

/** The run's text a `q` filter looks in: ids, route, target, instance, status, error. */
function matchesText(run: AxEventRun, q: string): boolean {
  const fields = [
    run.id,
    run.deliveryId,
    run.routeId,
    run.targetId ?? '',
    run.instanceKey,
    run.status,
    run.error?.code ?? '',
    run.error?.message ?? '',
  ];
  return fields.some((field) => field.toLowerCase().includes(q));
}

/** A checked `GET runs` query. */
interface RunsQuery {
  statuses: AxEventRunStatus[] | undefined;
  routeId: string | undefined;
  targetId: string | undefined;
  q: string;
  limit: number;
  before: StudioCursor | null;
}

function runsQueryOf(query: URLSearchParams): RunsQuery {
  const text = (name: string) => {
    const value = query.get(name);
    return value === null || value === '' ? undefined : value;
  };
  const before = text('before');
  return {
    statuses: statusesOf(query),
    routeId: text('route'),
    targetId: text('target'),
    q: (query.get('q') ?? '').trim().toLowerCase(),
    limit: limitOf(query),
    before: before === undefined ? null : decodeCursor(before),
  };
}

export interface StudioRunsOptions {
  store: AxEventStore | undefined;
  runtime: AxEventRuntime | undefined;
  observer: StudioObserver;
}

/** `GET runs` and `GET continuations`. */
export class StudioRuns {
  readonly #store: AxEventStore | undefined;
  readonly #runtime: AxEventRuntime | undefined;
  readonly #observer: StudioObserver;

  constructor(options: StudioRunsOptions) {
    this.#store = options.store;
    this.#runtime = options.runtime;
    this.#observer = options.observer;
  }

  /** `{ runs, available, complete, next? }`; a refused parameter is a 400. */
  async runs(params: URLSearchParams): Promise<StudioReply> {
    try {
      const query = runsQueryOf(params);
      const store = this.#store;
      if (!store) return ok({ runs: [], available: false, complete: false });
      if (!store.listRuns) return ok(await this.#recentRuns(store, query));
      return ok(await this.#allRuns(store, query));
    } catch (error) {
      if (error instanceof BadQuery || error instanceof AxEventInputError) return fail(400, error.message);
      throw error;
    }
  }

  /** `{ continuations, available }`; a refused `limit` is a 400. */
  async continuations(params: URLSearchParams): Promise<StudioReply> {
    try {
      const limit = limitOf(params);
      const store = this.#store;
      if (!store?.listContinuations) return ok({ continuations: [], available: false });
      const now = this.#runtime?.clock.now() ?? Date.now();
      const continuations: AxEventContinuationListing[] = await store.listContinuations({ now, limit });
      return ok({ continuations, available: true });
    } catch (error) {
      if (error instanceof BadQuery || error instanceof AxEventInputError) return fail(400, error.message);
      throw error;
    }
  }

  /** Store pages from the cursor on, `q` applied, until a page of matches (or the scan bound). */
  async #allRuns(store: AxEventStore, query: RunsQuery) {
    const list = (store.listRuns as NonNullable<AxEventStore['listRuns']>).bind(store);
    const runs: AxEventRun[] = [];
    let before = query.before?.before ?? null;
    let skip = query.before?.skip ?? 0;
    for (let pages = 0; pages < MAX_SCANNED_PAGES; pages++) {
      const page = await list({
        ...(query.statuses ? { status: query.statuses } : {}),
        ...(query.routeId === undefined ? {} : { routeId: query.routeId }),
        ...(query.targetId === undefined ? {} : { targetId: query.targetId }),
        // Without `q` a store page is the studio page; with it, read wide.
        limit: query.q === '' ? Math.min(MAX_LIMIT, query.limit + skip) : MAX_LIMIT,
        ...(before === null ? {} : { before }),
      });
      for (let i = skip; i < page.runs.length; i++) {
        const run = page.runs[i] as AxEventRun;
        if (query.q !== '' && !matchesText(run, query.q)) continue;
        runs.push(run);
        if (runs.length < query.limit) continue;
        // A full page: go on after this run, inside this store page if more of it match, else at the next one.
        const more = page.runs.slice(i + 1).some((r) => query.q === '' || matchesText(r, query.q));
        const rest = more
          ? { before, skip: i + 1 }
          : page.next === undefined
            ? null
            : { before: page.next, skip: 0 };
        return { runs, available: true, complete: true, ...(rest ? { next: encodeCursor(rest) } : {}) };
      }
      if (page.next === undefined) return { runs, available: true, complete: true };
      before = page.next;
      skip = 0;
    }
    return { runs, available: true, complete: true, next: encodeCursor({ before, skip: 0 }) };
  }

  /** A store without `listRuns`: the runs the studio saw published, newest first, filtered. */
  async #recentRuns(store: AxEventStore, query: RunsQuery) {
    if (query.before !== null) throw new BadQuery('this store cannot page through runs (it has no listRuns)');
    const statuses = query.statuses && new Set(query.statuses);
    const runs: AxEventRun[] = [];
    for (const id of this.#observer.recentRunIds(MAX_RECENT)) {
      const run = await store.getRun(id);
      if (!run || (statuses && !statuses.has(run.status))) continue;
      if (query.routeId !== undefined && run.routeId !== query.routeId) continue;
      if (query.targetId !== undefined && run.targetId !== query.targetId) continue;
      if (query.q !== '' && !matchesText(run, query.q)) continue;
      runs.push(run);
      if (runs.length >= query.limit) break;
    }
    return { runs, available: true, complete: false };
  }
}
