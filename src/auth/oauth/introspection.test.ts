import { afterEach, describe, expect, it, vi } from 'vitest';
import { IntrospectionCache } from './introspection.js';

const active = (checkedAt: number, expiresAt?: number) => ({
  active: true,
  checkedAt,
  ...(expiresAt === undefined ? {} : { expiresAt }),
});

describe('IntrospectionCache', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('keeps an answer until the earliest of the cap, its exp and the token expiry', async () => {
    // The clock is set by hand: a loaded machine must not make a 20 ms window pass between lines.
    vi.useFakeTimers({ toFake: ['Date'] });
    const now = Date.now();
    const cache = new IntrospectionCache(60_000);
    await cache.set('a', active(now), undefined);
    await cache.set('b', active(now, now + 20), undefined);
    await cache.set('c', active(now), now + 20);
    await cache.set('d', active(now, now - 1), undefined);
    expect(await cache.get('a')).toMatchObject({ active: true });
    expect(await cache.get('b')).toMatchObject({ active: true });
    expect(await cache.get('d')).toBeUndefined();
    vi.setSystemTime(now + 40);
    expect(await cache.get('a')).toMatchObject({ active: true });
    expect(await cache.get('b')).toBeUndefined();
    expect(await cache.get('c')).toBeUndefined();
  });

  it('holds a bounded number of tokens, returns copies, and caches nothing with a cap of 0', async () => {
    const cache = new IntrospectionCache(60_000, 2);
    for (const token of ['a', 'b', 'c']) await cache.set(token, active(Date.now()), undefined);
    expect(await cache.get('a')).toBeUndefined();
    const b = await cache.get('b');
    b!.active = false;
    expect(await cache.get('b')).toMatchObject({ active: true });
    await cache.delete('b');
    expect(await cache.get('b')).toBeUndefined();
    const off = new IntrospectionCache(0);
    await off.set('a', active(Date.now()), undefined);
    expect(await off.get('a')).toBeUndefined();
  });
});
