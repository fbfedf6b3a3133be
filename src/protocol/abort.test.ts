import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { linkAbort } from './abort.js';

describe('linkAbort', () => {
  it('aborts children with the parent reason and forgets disposed ones', () => {
    const parent = new AbortController();
    const kept = linkAbort(parent.signal);
    const disposed = linkAbort(parent.signal);
    disposed.dispose();
    parent.abort(new Error('stop'));
    expect(kept.signal.aborted).toBe(true);
    expect((kept.signal.reason as Error).message).toBe('stop');
    expect(disposed.signal.aborted).toBe(false);
  });

  it('puts one listener on a parent however many operations follow it', () => {
    const parent = new AbortController();
    let added = 0;
    const original = parent.signal.addEventListener.bind(parent.signal);
    parent.signal.addEventListener = ((...args: Parameters<AbortSignal['addEventListener']>) => {
      added++;
      original(...args);
    }) as AbortSignal['addEventListener'];
    const links = Array.from({ length: 50 }, () => linkAbort(parent.signal));
    expect(added).toBe(1);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
    for (const link of links) link.dispose();
    // The last follower gone, the parent carries no listener at all.
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
    const again = linkAbort(parent.signal);
    parent.abort();
    expect(again.signal.aborted).toBe(true);
  });

  it('is aborted at once by an already aborted parent', () => {
    const parent = new AbortController();
    parent.abort('gone');
    expect(linkAbort(undefined, parent.signal).signal.reason).toBe('gone');
  });
});
