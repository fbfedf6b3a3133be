import { AxMCPError } from '../protocol/errors.js';
import type { AxMCPPage } from '../protocol/messages.js';

/** Cache hints of one list, combined over its pages. */
export interface AxMCPCacheInfo {
  /** Smallest `ttlMs` over the pages; absent when any page had none (the list is then stale). */
  ttlMs?: number;
  /** `private` when any page was private. */
  cacheScope?: 'public' | 'private';
  fetchedAt: number;
  /** When the list goes stale; absent when it already is. */
  expiresAt?: number;
}

export interface CollectedList<T> {
  items: T[];
  cache: AxMCPCacheInfo;
}

/**
 * Follows `nextCursor` until the last page. Bounded: more than `maxPages` pages, or
 * a cursor seen before, is an error rather than an endless loop.
 */
export async function collectPages<T>(
  what: string,
  maxPages: number,
  fetchPage: (cursor: string | undefined) => Promise<AxMCPPage<T>>,
  now: () => number = Date.now,
): Promise<CollectedList<T>> {
  const items: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  let ttlMs: number | undefined;
  let everyPageHasTTL = true;
  let scope: 'public' | 'private' | undefined;
  for (let pages = 0; ; pages++) {
    if (pages >= maxPages) {
      throw new AxMCPError('pagination', `${what} has more than ${maxPages} pages (maxPaginationPages)`);
    }
    const page = await fetchPage(cursor);
    for (const item of page.items) items.push(item);
    const pageTTL = page.result.ttlMs;
    if (typeof pageTTL === 'number' && Number.isInteger(pageTTL) && pageTTL >= 0) {
      ttlMs = ttlMs === undefined ? pageTTL : Math.min(ttlMs, pageTTL);
    } else {
      everyPageHasTTL = false;
    }
    const pageScope = page.result.cacheScope;
    if (pageScope === 'private' || (pageScope !== 'public' && 'ttlMs' in page.result)) scope = 'private';
    else if (pageScope === 'public' && scope === undefined) scope = 'public';
    if (page.nextCursor === undefined || page.nextCursor === '') break;
    if (seen.has(page.nextCursor)) {
      throw new AxMCPError('pagination', `${what} repeated the cursor "${page.nextCursor.slice(0, 80)}"`);
    }
    seen.add(page.nextCursor);
    cursor = page.nextCursor;
  }
  const fetchedAt = now();
  const cache: AxMCPCacheInfo = { fetchedAt };
  if (everyPageHasTTL && ttlMs !== undefined) {
    cache.ttlMs = ttlMs;
    cache.expiresAt = fetchedAt + ttlMs;
  }
  if (scope !== undefined) cache.cacheScope = scope;
  return { items, cache };
}
