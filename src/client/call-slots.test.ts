import { describe, expect, it } from 'vitest';
import { CallSlots } from './call-slots.js';

describe('CallSlots', () => {
  it('grants slots first-in first-out within the limit', async () => {
    const slots = new CallSlots(2);
    const order: number[] = [];
    const releases: (() => void)[] = [];
    const waiting = [1, 2, 3, 4, 5].map((n) =>
      slots.acquire().then((release) => {
        order.push(n);
        releases.push(release);
      }),
    );
    await Promise.resolve();
    await Promise.resolve();
    expect(order).toEqual([1, 2]);
    expect(slots.waiting).toBe(3);
    releases[1]?.();
    releases[0]?.();
    await Promise.all(waiting.slice(0, 4));
    expect(order).toEqual([1, 2, 3, 4]);
    releases[2]?.();
    await waiting[4];
    expect(order).toEqual([1, 2, 3, 4, 5]);
    expect(slots.active).toBe(2);
  });

  it('drops aborted waiters without taking a slot, and ignores double release', async () => {
    const slots = new CallSlots(1);
    const first = await slots.acquire();
    const controller = new AbortController();
    const aborted = slots.acquire(controller.signal);
    const next = slots.acquire();
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(aborted).rejects.toMatchObject({ code: 'aborted', cause: reason });
    await expect(slots.acquire(controller.signal)).rejects.toMatchObject({ code: 'aborted', cause: reason });
    first();
    first();
    const release = await next;
    expect(slots.active).toBe(1);
    release();
    expect(slots.active).toBe(0);
  });
});
