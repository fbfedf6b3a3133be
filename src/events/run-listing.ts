/**
 * What every store's `listRuns` and `listContinuations` share: the checks of their input, the
 * order (newest last update first, then run id), and the cursor, so that memory, SQLite and
 * PostgreSQL page the same way. Internal.
 */

import { nearest } from '../options/check.js';
import { AxEventInputError } from './errors.js';
import type { AxEventContinuation, AxEventDelivery, AxEventRunQuery, AxEventRunStatus } from './store.js';

/** Every run status, in the order of {@link AxEventRunStatus}. */
export const RUN_STATUSES: readonly AxEventRunStatus[] = [
  'queued',
  'claimed',
  'running',
  'waiting_event',
  'succeeded',
  'failed',
  'cancelled',
  'dead_lettered',
  'outcome_unknown',
];

/** Runs (or continuations) per page unless the caller says otherwise. */
export const DEFAULT_LIST_LIMIT = 50;
/** The most a page holds. */
export const MAX_LIST_LIMIT = 500;

/** Where a run stands in the listing order: its last update, then its run id. */
export interface RunPosition {
  at: number;
  id: string;
}

/** A run query after its checks. */
export interface CheckedRunQuery {
  /** `null`: any status. */
  statuses: AxEventRunStatus[] | null;
  routeId: string | null;
  targetId: string | null;
  limit: number;
  /** List only runs after this position (`null`: from the newest). */
  before: RunPosition | null;
}

const refuse = (what: string, message: string) =>
  new AxEventInputError('invalid_input', `${what}: ${message}`);

function checkLimit(limit: unknown, what: string): number {
  if (limit === undefined) return DEFAULT_LIST_LIMIT;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT)
    throw refuse(what, `limit must be an integer from 1 to ${MAX_LIST_LIMIT}`);
  return limit;
}

function optionalString(value: unknown, name: string, what: string): string | null {
  if (value === undefined) return null;
  if (typeof value !== 'string') throw refuse(what, `${name} must be a string`);
  return value;
}

const RUN_QUERY_KEYS = ['status', 'routeId', 'targetId', 'limit', 'before'];

/** The query checked, or {@link AxEventInputError} (`invalid_input`) naming the first problem. */
export function checkRunQuery(input: AxEventRunQuery | undefined): CheckedRunQuery {
  const what = 'listRuns()';
  if (input !== undefined && (typeof input !== 'object' || input === null || Array.isArray(input)))
    throw refuse(what, 'takes an object { status?, routeId?, targetId?, limit?, before? }');
  const query = input ?? {};
  for (const key of Object.keys(query)) {
    // A misspelt filter filtered nothing: `{ staus: ['failed'] }` listed every run.
    if (RUN_QUERY_KEYS.includes(key) || (query as Record<string, unknown>)[key] === undefined) continue;
    const suggestion = nearest(key, RUN_QUERY_KEYS);
    const meant = suggestion === undefined ? '' : ` (did you mean ${suggestion}?)`;
    throw refuse(what, `${key} is not a filter${meant}; the filters are ${RUN_QUERY_KEYS.join(', ')}`);
  }
  let statuses: AxEventRunStatus[] | null = null;
  if (query.status !== undefined) {
    if (!Array.isArray(query.status)) throw refuse(what, 'status must be an array of run statuses');
    for (const status of query.status as unknown[]) {
      if (!(RUN_STATUSES as readonly unknown[]).includes(status))
        throw refuse(what, `unknown status ${JSON.stringify(status)} (known: ${RUN_STATUSES.join(', ')})`);
    }
    statuses = query.status.length === 0 ? null : [...new Set(query.status)];
  }
  return {
    statuses,
    routeId: optionalString(query.routeId, 'routeId', what),
    targetId: optionalString(query.targetId, 'targetId', what),
    limit: checkLimit(query.limit, what),
    before: query.before === undefined ? null : decodeCursor(query.before, what),
  };
}

/** The input of `listContinuations` checked: its time and its limit. */
export function checkContinuationQuery(input: { now: number; limit?: number }): {
  now: number;
  limit: number;
} {
  const what = 'listContinuations()';
  if (typeof input !== 'object' || input === null) throw refuse(what, 'takes an object { now, limit? }');
  if (typeof input.now !== 'number' || !Number.isFinite(input.now))
    throw refuse(what, 'now must be a finite number');
  return { now: input.now, limit: checkLimit(input.limit, what) };
}

/** A delivery's last update: the latest of its creation, start and finish. */
export function lastUpdateOf(d: Pick<AxEventDelivery, 'createdAt' | 'startedAt' | 'finishedAt'>): number {
  return Math.max(d.createdAt, d.startedAt ?? d.createdAt, d.finishedAt ?? d.createdAt);
}

/** Listing order: newest first, then the greater run id first. Negative when `a` comes first. */
export function compareRunPositions(a: RunPosition, b: RunPosition): number {
  if (a.at !== b.at) return b.at - a.at;
  return a.id === b.id ? 0 : a.id < b.id ? 1 : -1;
}

/** Continuations in listing order: newest first by creation, then the greater id first. */
export function compareContinuations(a: AxEventContinuation, b: AxEventContinuation): number {
  return compareRunPositions({ at: a.createdAt, id: a.id }, { at: b.createdAt, id: b.id });
}

/** Whether a continuation is past its expiry at `now` (as `findContinuation` decides it). */
export function isExpired(c: Pick<AxEventContinuation, 'expiresAt'>, now: number): boolean {
  return c.expiresAt !== null && c.expiresAt <= now;
}

const utf8 = new TextEncoder();
const CURSOR = /^[A-Za-z0-9_-]+$/;

/** The opaque cursor of a position: base64url of `[at, id]` (URL-safe as it is). */
export function encodeCursor(position: RunPosition): string {
  let binary = '';
  for (const byte of utf8.encode(JSON.stringify([position.at, position.id])))
    binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The position a cursor names, or {@link AxEventInputError} for anything this module did not make. */
export function decodeCursor(cursor: unknown, what: string): RunPosition {
  const bad = () => refuse(what, 'before is not a cursor this store returned as next');
  if (typeof cursor !== 'string' || cursor.length > 4096 || !CURSOR.test(cursor)) throw bad();
  let parsed: unknown;
  try {
    const binary = atob(cursor.replace(/-/g, '+').replace(/_/g, '/'));
    const bytes = Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw bad();
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    typeof parsed[0] !== 'number' ||
    !Number.isFinite(parsed[0]) ||
    typeof parsed[1] !== 'string' ||
    parsed[1] === ''
  )
    throw bad();
  return { at: parsed[0], id: parsed[1] };
}

/**
 * One page of items already filtered: sorted into listing order, those after the cursor,
 * `limit` of them, and the cursor of the last one when more follow.
 */
export function pageOf<T>(
  items: Iterable<T>,
  positionOf: (item: T) => RunPosition,
  query: Pick<CheckedRunQuery, 'limit' | 'before'>,
): { page: T[]; next?: string } {
  const before = query.before;
  const placed: { item: T; position: RunPosition }[] = [];
  for (const item of items) {
    const position = positionOf(item);
    if (before === null || compareRunPositions(before, position) < 0) placed.push({ item, position });
  }
  placed.sort((a, b) => compareRunPositions(a.position, b.position));
  const page = placed.slice(0, query.limit);
  const last = page[page.length - 1];
  return {
    page: page.map((p) => p.item),
    ...(placed.length > query.limit && last ? { next: encodeCursor(last.position) } : {}),
  };
}
