import { describe, expect, it } from 'vitest';
import type { AxMCPReadResourceResult } from '../protocol/messages.js';
import { ReadCache } from './read-cache.js';

const result = (ttlMs?: number): AxMCPReadResourceResult =>
  ({
    contents: [{ uri: 'res://a', text: 'one' }],
    ...(ttlMs === undefined ? {} : { ttlMs }),
  }) as AxMCPReadResourceResult;

describe('ReadCache', () => {
  it('keeps a result for its TTL, as copies in and out', () => {
    let now = 1_000;
    const cache = new ReadCache(() => now);
    const kept = result(50);
    cache.keep('res://a', kept);
    (kept.contents[0] as { text: string }).text = 'changed by the caller';
    const first = cache.get('res://a') as AxMCPReadResourceResult;
    expect((first.contents[0] as { text: string }).text).toBe('one');
    (first.contents[0] as { text: string }).text = 'changed by a reader';
    expect(cache.get('res://a')).toMatchObject({ contents: [{ text: 'one' }] });
    now += 50;
    expect(cache.get('res://a')).toBeUndefined();
  });

  it('keeps nothing without a positive whole TTL, and forgets on request', () => {
    const cache = new ReadCache(() => 0);
    for (const ttl of [undefined, 0, -5, 1.5, Number.NaN]) {
      cache.keep('res://a', result(ttl));
      expect(cache.get('res://a')).toBeUndefined();
    }
    cache.keep('res://b', result(10));
    cache.forget('res://b');
    expect(cache.get('res://b')).toBeUndefined();
  });
});
