import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { countAbortControllers } from '../../test/helpers/abort-controllers.js';
import { abortSourceOf, delay, linkAbort, linkedSignalOptions, whenAborted } from './abort.js';

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

  it('makes its signal only when it is read, in step with the link either way', async () => {
    let link = linkAbort(undefined);
    const made = await countAbortControllers(() => {
      link = linkAbort(undefined);
      link.abort(new Error('early'));
    });
    expect(made).toBe(0);
    expect(link.aborted).toBe(true);
    expect(link.signal.aborted).toBe(true);
    expect((link.signal.reason as Error).message).toBe('early');
    const later = linkAbort(undefined);
    const signal = later.signal;
    let heard: unknown;
    signal.addEventListener('abort', () => {
      heard = signal.reason;
    });
    later.abort('late');
    expect(heard).toBe('late');
  });

  it('follows another link without an event listener, and stops following once disposed', () => {
    const parent = linkAbort(undefined);
    const child = linkAbort(parent);
    const grandchild = linkAbort(child);
    const disposed = linkAbort(parent);
    disposed.dispose();
    parent.abort('stop');
    expect([child.reason, grandchild.reason]).toEqual(['stop', 'stop']);
    expect(disposed.aborted).toBe(false);
    expect(linkAbort(parent).reason).toBe('stop');
  });

  it("gives the runtime's AbortError when aborted without a reason", () => {
    const link = linkAbort(undefined);
    link.abort();
    const reference = new AbortController();
    reference.abort();
    expect(link.reason).toBeInstanceOf(DOMException);
    expect((link.reason as DOMException).name).toBe((reference.signal.reason as DOMException).name);
    expect(link.signal.reason).toBe(link.reason);
  });

  it('tells listeners once, at once when already aborted, and not after they stopped listening', () => {
    const link = linkAbort(undefined);
    const heard: string[] = [];
    const stop = link.onAbort(() => heard.push('stopped'));
    link.onAbort((reason) => heard.push(`first ${String(reason)}`));
    stop();
    link.abort('x');
    link.abort('y');
    link.onAbort((reason) => heard.push(`late ${String(reason)}`));
    expect(heard).toEqual(['first x', 'late x']);
    const signal = new AbortController();
    const unlisten = whenAborted(signal.signal, () => heard.push('signal'));
    unlisten();
    signal.abort();
    expect(heard).toHaveLength(2);
  });

  it('carries the link behind options.signal, made only when read, through a spread', async () => {
    const link = linkAbort(undefined);
    const options = { ...linkedSignalOptions(link), headers: { a: 'b' } };
    expect(abortSourceOf(options)).toBe(link);
    expect(abortSourceOf({ ...options })).toBe(link);
    const plain = new AbortController().signal;
    expect(abortSourceOf({ signal: plain })).toBe(plain);
    expect(options.signal).toBe(link.signal);
    const waiting = delay(10_000, link);
    link.abort(new Error('no wait'));
    await expect(waiting).rejects.toThrow('no wait');
  });
});
