import { describe, expect, it, vi } from 'vitest';
import { AxManualEventClock } from './clock.js';
import type { AxEventIngress } from './envelope.js';
import { AxEventBackpressureError, AxEventInputError } from './errors.js';
import { AxMemoryEventStore } from './memory-store.js';
import { eventPath } from './path.js';
import { eventRoute } from './route-builder.js';
import { eventRuntime } from './runtime.js';
import type { AxEventSource } from './source.js';
import type { AxEventStore } from './store.js';
import { eventTarget } from './target-builder.js';

const user = { tenantId: 't1', userId: 'u1' };
let n = 0;
const job = (k: string, extra: Partial<AxEventIngress> = {}): AxEventIngress => ({
  event: { id: `j${++n}`, source: 'app://jobs', type: 'job', data: { k } },
  ...extra,
});

function setup(store: AxEventStore = new AxMemoryEventStore(), extra = {}) {
  const seen: string[] = [];
  const target = eventTarget('t')
    .invoke((_input, context) => {
      seen.push(context.event.id);
    })
    .build();
  const route = eventRoute('r').types('job').instanceKey(eventPath.data('k')).wake(target).build();
  const clock = new AxManualEventClock(1_000);
  const runtime = eventRuntime({ routes: [route], clock, store, scheduling: 'host', ...extra });
  return { runtime, store, seen, clock };
}

/** The memory store without `appendMany`: the runtime must append one by one. */
function withoutAppendMany(store: AxMemoryEventStore): AxEventStore {
  return new Proxy(store, {
    get(target, key) {
      if (key === 'appendMany') return undefined;
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('publishMany', () => {
  for (const [name, make] of [
    ['a store with appendMany', () => new AxMemoryEventStore()],
    ['a store without it', () => withoutAppendMany(new AxMemoryEventStore())],
  ] as const) {
    it(`returns one receipt per event, in order, deduped like publish (${name})`, async () => {
      const { runtime, seen } = setup(make());
      const earlier = await runtime.publish(job('a'));
      const batch = [job('a'), job('b'), earlier.eventId, job('a')].map((x) =>
        typeof x === 'string' ? { event: { id: x, source: 'app://jobs', type: 'job', data: { k: 'a' } } } : x,
      );
      const again = batch[1] as AxEventIngress;
      const receipts = await runtime.publishMany([...batch, again, { ...again, identity: user }]);
      expect(receipts.map((r) => [r.eventId, r.duplicate])).toEqual([
        [batch[0]?.event.id, false],
        [batch[1]?.event.id, false],
        [earlier.eventId, true],
        [batch[3]?.event.id, false],
        [again.event.id, true],
        [again.event.id, false],
      ]);
      expect(receipts[2]?.deliveryIds).toEqual(earlier.deliveryIds);
      expect(receipts[4]?.deliveryIds).toEqual(receipts[1]?.deliveryIds);
      expect(receipts.every((r) => r.accepted && r.deliveryIds.length === 1)).toBe(true);
      await runtime.runDue();
      // Key `a` in publish-then-batch order; each event once.
      expect(seen.filter((id) => id !== again.event.id)).toEqual([
        earlier.eventId,
        batch[0]?.event.id,
        batch[3]?.event.id,
      ]);
      expect(seen.filter((id) => id === again.event.id)).toHaveLength(2);
    });
  }

  it('refuses the whole batch, before writing anything, when one event is malformed', async () => {
    const { runtime, store } = setup(new AxMemoryEventStore(), { maxEventBytes: 400 });
    const good = job('a');
    const bad = { event: { id: 'x', source: 'app://jobs', type: 'job', data: { k: 'x'.repeat(1000) } } };
    const malformed = { event: { id: '', source: 'app://jobs', type: 'job' } } as AxEventIngress;
    await expect(runtime.publishMany([good, bad])).rejects.toMatchObject({ code: 'event_too_large' });
    await expect(runtime.publishMany([good, malformed])).rejects.toBeInstanceOf(AxEventInputError);
    // The refusal names the event: its position, in the message and as `index`.
    await expect(runtime.publishMany([good, good, bad])).rejects.toMatchObject({
      index: 2,
      message: expect.stringMatching(/^publishMany\(\) event 2: /),
    });
    await expect(runtime.publishMany('nope' as never)).rejects.toBeInstanceOf(AxEventInputError);
    expect(await store.countPending()).toBe(0);
    const [receipt] = await runtime.publishMany([good]);
    expect(receipt?.duplicate).toBe(false);
  });

  it('is offered to sources: a source publishes a burst as one store write', async () => {
    const store = new AxMemoryEventStore();
    const appendMany = vi.spyOn(store, 'appendMany');
    const source: AxEventSource = {
      id: 'burst',
      start: async (publisher) => {
        await publisher.publishMany([job('a'), job('b'), job('a')]);
      },
      close: async () => {},
    };
    const { runtime, seen } = setup(store, { sources: [source] });
    await runtime.start();
    expect(appendMany).toHaveBeenCalledTimes(1);
    await runtime.runDue();
    expect(seen).toHaveLength(3);
    await runtime.close();
  });

  it('takes an empty batch without touching the store', async () => {
    const store = new AxMemoryEventStore();
    const appendMany = vi.spyOn(store, 'appendMany');
    const { runtime } = setup(store);
    expect(await runtime.publishMany([])).toEqual([]);
    expect(appendMany).not.toHaveBeenCalled();
  });

  it('appends the batch in one store call', async () => {
    const store = new AxMemoryEventStore();
    const appendMany = vi.spyOn(store, 'appendMany');
    const append = vi.spyOn(store, 'append');
    const { runtime } = setup(store);
    await runtime.publishMany([job('a'), job('b'), job('c')]);
    expect(appendMany).toHaveBeenCalledTimes(1);
    expect(append).not.toHaveBeenCalled();
  });

  it('waits for room for the whole batch, and stores none of it when it times out', async () => {
    const store = new AxMemoryEventStore({ maxPendingDeliveries: 3 });
    const { runtime } = setup(store, { publishTimeoutMs: 0 });
    await runtime.publishMany([job('a'), job('b')]);
    await expect(runtime.publishMany([job('c'), job('d')])).rejects.toBeInstanceOf(AxEventBackpressureError);
    expect(await store.countPending()).toBe(2);
  });
});
