import { describe, expect, it } from 'vitest';
import { backoffDelayMs } from './backoff.js';

const policy = { baseMs: 100, maxMs: 1_000, jitter: 0.5 };

describe('backoffDelayMs', () => {
  it('doubles from the base to the ceiling', () => {
    const none = () => 0;
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelayMs(n, policy, none))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
    expect(backoffDelayMs(10_000, policy, none)).toBe(1000);
  });

  it('takes a random share of jitter off: half jitter keeps at least half, full jitter may reach 0', () => {
    expect(backoffDelayMs(3, policy, () => 1)).toBe(200);
    expect(backoffDelayMs(3, { ...policy, jitter: 1 }, () => 1)).toBe(0);
    expect(backoffDelayMs(3, { ...policy, jitter: 0 }, () => 0.7)).toBe(400);
    for (let i = 0; i < 200; i++) {
      const delay = backoffDelayMs(3, policy);
      expect(delay).toBeGreaterThanOrEqual(200);
      expect(delay).toBeLessThanOrEqual(400);
    }
  });
});
