import { describe, expect, it } from 'vitest';
import type { AxEventClaim } from '../../events/store.js';
import { type ClaimRequest, sharedClaims } from './shared-statements.js';

/** A claim statement under test control: each call waits until released. */
function statements() {
  const calls: { request: ClaimRequest; release: (rows: number | Error) => void }[] = [];
  const claim = (request: ClaimRequest) =>
    new Promise<AxEventClaim[]>((resolve, reject) => {
      calls.push({
        request,
        release: (rows) =>
          rows instanceof Error
            ? reject(rows)
            : resolve(Array.from({ length: rows }, (_, i) => ({ n: i }) as unknown as AxEventClaim)),
      });
    });
  return { calls, shared: sharedClaims(claim) };
}

const ask = (limit: number, now = 1, workerId = 'w'): ClaimRequest => ({
  workerId,
  now,
  leaseMs: 1000,
  limit,
});
const tick = () => new Promise((r) => setTimeout(r, 0));

describe('shared claims', () => {
  it('sends a lone claim at once, and the claims behind it as one statement for their sum', async () => {
    const { calls, shared } = statements();
    const first = shared.send(ask(1));
    expect(calls.map((c) => c.request.limit)).toEqual([1]);
    const behind = [shared.send(ask(2, 5)), shared.send(ask(1, 3))];
    calls[0]?.release(1);
    expect(await first).toHaveLength(1);
    await tick();
    expect(calls.map((c) => c.request)).toEqual([ask(1), ask(3, 5)]);
    // Fewer rows than asked: dealt out in arrival order.
    calls[1]?.release(2);
    expect((await Promise.all(behind)).map((rows) => rows.length)).toEqual([2, 0]);
    // The group is done: the next claim goes at once again.
    void shared.send(ask(1));
    expect(calls).toHaveLength(3);
  });

  it('keeps workers apart, and fails every claim of a failed statement but not the next', async () => {
    const { calls, shared } = statements();
    const a = shared.send(ask(1));
    const b = shared.send(ask(1, 1, 'other'));
    expect(calls.map((c) => c.request.workerId)).toEqual(['w', 'other']);
    const behind = [shared.send(ask(1)), shared.send(ask(1))];
    calls[0]?.release(new Error('connection lost'));
    await expect(a).rejects.toThrow('connection lost');
    await tick();
    calls[2]?.release(new Error('still down'));
    for (const p of behind) await expect(p).rejects.toThrow('still down');
    calls[1]?.release(1);
    expect(await b).toHaveLength(1);
    const after = shared.send(ask(1));
    calls[3]?.release(1);
    expect(await after).toHaveLength(1);
  });
});
