import { describe, expect, it } from 'vitest';
import { runEventStoreConformance } from '../testing/event-store-conformance.js';
import { normalizeIngress } from './envelope.js';
import { AxMemoryEventStore } from './memory-store.js';
import type { AxEventDeliveryDraft } from './store.js';

runEventStoreConformance({
  name: 'AxMemoryEventStore conformance',
  describe,
  it,
  create: () => new AxMemoryEventStore(),
});

describe('runEventStoreConformance options', () => {
  it('refuses a misspelt option instead of running the suite without it', () => {
    // A misspelt dispose closed every store the kit's way, never calling the caller's.
    const dispos = () => {};
    const create = () => new AxMemoryEventStore();
    expect(() => runEventStoreConformance({ describe, it, create, dispos } as never)).toThrow(
      expect.objectContaining({ code: 'invalid_options', path: 'dispos', suggestion: 'dispose' }),
    );
    expect(() => runEventStoreConformance({ describe, it, creat: create } as never)).toThrow(
      expect.objectContaining({ code: 'invalid_options' }),
    );
  });
});

function draft(i: number): AxEventDeliveryDraft {
  return {
    id: `d${i}`,
    runId: `r${i}`,
    routeId: 'r',
    action: 'wake',
    targetId: 't',
    instanceKey: 'i',
    orderingKey: null,
    dueAt: 0,
    coalesceKey: null,
    correlation: null,
    planError: null,
  };
}

function event(id: string, data: unknown = {}) {
  const { record, bytes } = normalizeIngress({ event: { id, source: 's', type: 't', data } });
  return { key: `k-${id}`, scope: 'anonymous', ingress: record, bytes, receivedAt: 0 };
}

describe('AxMemoryEventStore limits', () => {
  it('reports full when pending deliveries reach the cap, and has room again after one finishes', async () => {
    const store = new AxMemoryEventStore({ maxPendingDeliveries: 2 });
    const dedupe = (id: string) => ({ scope: 'anonymous', source: 's', id });
    expect(
      (
        await store.append({
          dedupe: dedupe('a'),
          event: event('a'),
          deliveries: [draft(1), draft(2)],
          now: 0,
        })
      ).status,
    ).toBe('appended');
    const full = await store.append({
      dedupe: dedupe('b'),
      event: event('b'),
      deliveries: [draft(3)],
      now: 0,
    });
    expect(full.status).toBe('full');
    const unmatched = await store.append({ dedupe: dedupe('c'), event: event('c'), deliveries: [], now: 0 });
    expect(unmatched.status).toBe('appended');
    const [claim] = await store.claim({ workerId: 'w', now: 0, leaseMs: 100, limit: 1 });
    await store.transition({
      deliveryId: claim!.delivery.id,
      fencingToken: claim!.delivery.fencingToken,
      now: 1,
      status: 'succeeded',
    });
    expect(
      (await store.append({ dedupe: dedupe('b'), event: event('b'), deliveries: [draft(3)], now: 1 })).status,
    ).toBe('appended');
  });

  it('caps pending bytes and single events', async () => {
    const big = event('big', { text: 'x'.repeat(2000) });
    const store = new AxMemoryEventStore({ maxPendingBytes: 3000, maxEventBytes: 2500 });
    const dedupe = (id: string) => ({ scope: 'anonymous', source: 's', id });
    expect(
      (await store.append({ dedupe: dedupe('1'), event: big, deliveries: [draft(1)], now: 0 })).status,
    ).toBe('appended');
    const second = { ...event('big2', { text: 'x'.repeat(2000) }) };
    expect(
      (await store.append({ dedupe: dedupe('2'), event: second, deliveries: [draft(2)], now: 0 })).status,
    ).toBe('full');
    const huge = event('huge', { text: 'x'.repeat(3000) });
    await expect(
      store.append({ dedupe: dedupe('3'), event: huge, deliveries: [draft(3)], now: 0 }),
    ).rejects.toMatchObject({
      code: 'event_too_large',
    });
  });

  it('evicts the oldest finished runs beyond maxRetainedRuns', async () => {
    const store = new AxMemoryEventStore({ maxRetainedRuns: 2 });
    for (let i = 0; i < 4; i++) {
      await store.append({
        dedupe: { scope: 'anonymous', source: 's', id: `e${i}` },
        event: event(`e${i}`),
        deliveries: [draft(i)],
        now: 0,
      });
      const [c] = await store.claim({ workerId: 'w', now: 0, leaseMs: 100, limit: 1 });
      await store.transition({
        deliveryId: c!.delivery.id,
        fencingToken: c!.delivery.fencingToken,
        now: i,
        status: 'succeeded',
      });
    }
    expect(await store.getRun('r0')).toBeNull();
    expect(await store.getRun('r1')).toBeNull();
    expect((await store.getRun('r3'))?.status).toBe('succeeded');
  });

  it('refuses use after close', async () => {
    const store = new AxMemoryEventStore();
    await store.close();
    await expect(store.countPending()).rejects.toMatchObject({ code: 'closed' });
  });
});
