import { describe, expect, it } from 'vitest';
import { AxManualEventClock } from './clock.js';
import type { AxEventIngress } from './envelope.js';
import { AxEventClosedError, AxEventConfigError, AxEventInputError } from './errors.js';
import { eventRoute } from './route-builder.js';
import { type AxEventPublished, eventRuntime } from './runtime.js';
import { AxPushEventSource } from './source.js';
import { eventTarget } from './target-builder.js';

let n = 0;
const job = (extra: Partial<AxEventIngress> = {}): AxEventIngress => ({
  event: { id: `hook${++n}`, source: 'app://jobs', type: 'job', data: { n } },
  ...extra,
});

function setup() {
  const target = eventTarget('t')
    .invoke(() => undefined)
    .build();
  const source = new AxPushEventSource({ id: 'push' });
  const runtime = eventRuntime({
    routes: [eventRoute('r').types('job').wake(target).build()],
    sources: [source],
    clock: new AxManualEventClock(1_000),
    scheduling: 'host',
  });
  const seen: AxEventPublished[] = [];
  const stop = runtime.onPublish((published) => seen.push(published));
  return { runtime, source, seen, stop };
}

describe('AxEventRuntime.onPublish', () => {
  it('tells a listener of each publish with the event and the receipt the publisher gets', async () => {
    const { runtime, seen } = setup();
    const ingress = job();
    const receipt = await runtime.publish(ingress);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.ingress).toBe(ingress);
    expect(await seen[0]?.receipt).toEqual(receipt);
    expect(receipt.deliveryIds).toHaveLength(1);
    await runtime.close();
  });

  it('tells of every event of publishMany once, in order, each with its own receipt', async () => {
    const { runtime, seen } = setup();
    const [a, b] = [job(), job()];
    const receipts = await runtime.publishMany([a, b, a] as AxEventIngress[]);
    expect(seen.map((p) => p.ingress)).toEqual([a, b, a]);
    const told = await Promise.all(seen.map((p) => p.receipt));
    expect(told).toEqual(receipts);
    expect(told.map((r) => r.duplicate)).toEqual([false, false, true]);
    expect(await runtime.publishMany([])).toEqual([]);
    expect(seen).toHaveLength(3);
    await runtime.close();
  });

  it('tells of events a source publishes through the runtime', async () => {
    const { runtime, source, seen } = setup();
    await runtime.start();
    const ingress = job();
    const receipt = await source.push(ingress);
    expect(seen.map((p) => p.ingress)).toEqual([ingress]);
    expect(await seen[0]?.receipt).toEqual(receipt);
    await runtime.close();
  });

  it('hands over failed publishes as rejected receipts, without unhandled rejections', async () => {
    const { runtime, seen } = setup();
    const bad = { event: { id: '', source: 'app://jobs', type: 'job' } } as AxEventIngress;
    await expect(runtime.publish(bad)).rejects.toBeInstanceOf(AxEventInputError);
    await expect(seen[0]?.receipt).rejects.toBeInstanceOf(AxEventInputError);
    // A refused batch: every event of it is told, every receipt rejects (nobody awaits the second).
    await expect(runtime.publishMany([job(), bad])).rejects.toBeInstanceOf(AxEventInputError);
    expect(seen).toHaveLength(3);
    await expect(seen[1]?.receipt).rejects.toBeInstanceOf(AxEventInputError);
    await runtime.close();
  });

  it('keeps publishing when a listener throws, and still tells the others', async () => {
    const { runtime, seen } = setup();
    runtime.onPublish(() => {
      throw new Error('broken listener');
    });
    const after: string[] = [];
    runtime.onPublish(({ ingress }) => after.push(ingress.event.id));
    const receipt = await runtime.publish(job());
    expect(receipt.accepted).toBe(true);
    await runtime.publishMany([job()]);
    expect(seen).toHaveLength(2);
    expect(after).toHaveLength(2);
    await runtime.close();
  });

  it('stops telling once removed; the same function added twice is told twice', async () => {
    const { runtime, seen, stop } = setup();
    stop();
    await runtime.publish(job());
    expect(seen).toHaveLength(0);
    const calls: string[] = [];
    const listener = ({ ingress }: AxEventPublished) => calls.push(ingress.event.id);
    const first = runtime.onPublish(listener);
    runtime.onPublish(listener);
    await runtime.publish(job());
    expect(calls).toHaveLength(2);
    first();
    first();
    await runtime.publish(job());
    expect(calls).toHaveLength(3);
    await runtime.close();
  });

  it('tells nothing about publishes refused because the runtime is closed', async () => {
    const { runtime, seen } = setup();
    await runtime.close();
    await expect(runtime.publish(job())).rejects.toBeInstanceOf(AxEventClosedError);
    expect(seen).toHaveLength(0);
  });

  it('refuses a listener that is not a function', () => {
    const { runtime } = setup();
    expect(() => runtime.onPublish('nope' as never)).toThrow(AxEventConfigError);
  });
});
