import { describe, expect, it } from 'vitest';
import { AxMCPError } from '../protocol/errors.js';
import { collectPages } from './pagination.js';

const page = (items: number[], nextCursor?: string, extra: Record<string, unknown> = {}) => ({
  items,
  ...(nextCursor ? { nextCursor } : {}),
  result: extra,
});

describe('collectPages', () => {
  it('follows cursors to the end', async () => {
    const pages: Record<string, ReturnType<typeof page>> = {
      start: page([1, 2], 'a'),
      a: page([3], 'b'),
      b: page([4]),
    };
    const cursors: (string | undefined)[] = [];
    const list = await collectPages('tools/list', 10, async (cursor) => {
      cursors.push(cursor);
      return pages[cursor ?? 'start'] as ReturnType<typeof page>;
    });
    expect(list.items).toEqual([1, 2, 3, 4]);
    expect(cursors).toEqual([undefined, 'a', 'b']);
    expect(list.cache.ttlMs).toBeUndefined();
  });

  it('refuses a repeated cursor and too many pages', async () => {
    await expect(collectPages('tools/list', 10, async () => page([1], 'same'))).rejects.toMatchObject({
      code: 'pagination',
    });
    let n = 0;
    const endless = collectPages('tools/list', 5, async () => page([n], `c${n++}`));
    await expect(endless).rejects.toBeInstanceOf(AxMCPError);
    expect(n).toBe(5);
  });

  it('combines cache hints: smallest TTL, private wins, stale if any page lacks a TTL', async () => {
    const hinted = await collectPages(
      'tools/list',
      10,
      async (cursor) =>
        cursor
          ? page([2], undefined, { ttlMs: 500, cacheScope: 'private' })
          : page([1], 'n', { ttlMs: 1000, cacheScope: 'public' }),
      () => 10_000,
    );
    expect(hinted.cache).toEqual({ ttlMs: 500, cacheScope: 'private', fetchedAt: 10_000, expiresAt: 10_500 });
    const partly = await collectPages('tools/list', 10, async (cursor) =>
      cursor ? page([2]) : page([1], 'n', { ttlMs: 1000, cacheScope: 'public' }),
    );
    expect(partly.cache.expiresAt).toBeUndefined();
  });
});
