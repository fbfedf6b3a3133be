import { describe, expect, it, vi } from 'vitest';
import { AxManualEventClock } from './clock.js';
import type { AxEventIngress } from './envelope.js';
import { AxMemoryEventStore } from './memory-store.js';
import { eventPath } from './path.js';
import { eventRoute } from './route-builder.js';
import { eventRuntime } from './runtime.js';
import { eventTarget } from './target-builder.js';

let n = 0;
const ingress = (k: string): AxEventIngress => ({
  event: { id: `e${++n}`, source: 'app://test', type: 'job', data: { k } },
});

/** A host runtime on a manual clock whose target waits for `open()`; heartbeats counted per delivery. */
function gatedRuntime(leaseMs: number) {
  const clock = new AxManualEventClock(1_000);
  const store = new AxMemoryEventStore();
  const beats = new Map<string, number[]>();
  const heartbeat = store.heartbeat.bind(store);
  const answers: { held?: boolean; fail?: Error }[] = [];
  store.heartbeat = async (input) => {
    beats.set(input.deliveryId, [...(beats.get(input.deliveryId) ?? []), clock.now()]);
    const answer = answers.shift();
    if (answer?.fail) throw answer.fail;
    const beat = await heartbeat(input);
    return answer?.held === false ? { ...beat, held: false } : beat;
  };
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const signals: AbortSignal[] = [];
  const target = eventTarget('t')
    .retrySafety('idempotent')
    .invoke(async (_input, context) => {
      signals.push(context.abortSignal);
      await gate;
    })
    .build();
  const onError = vi.fn();
  const runtime = eventRuntime({
    routes: [eventRoute('r').types('job').instanceKey(eventPath.data('k')).wake(target).build()],
    clock,
    store,
    leaseMs,
    workerConcurrency: 8,
    scheduling: 'host',
    onError,
  });
  return { clock, store, runtime, beats, answers, open, signals, onError };
}

/** Lets the runs (and their heartbeats) reach their next await. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('the leases of running deliveries', () => {
  it('are kept by one heartbeat loop: one timer for eight runs, each beating every third of its lease', async () => {
    const { clock, runtime, beats, open } = gatedRuntime(300);
    await runtime.start();
    for (let i = 0; i < 8; i++) await runtime.publish(ingress(`k${i}`));
    const ran = runtime.runDue();
    await vi.waitFor(() => expect(clock.pendingTimers).toBeGreaterThan(0));
    await settle();
    // A loop, a timer and an AbortController per lease was what a backlog of short runs paid most for.
    expect(clock.pendingTimers).toBe(1);
    clock.advance(100);
    await settle();
    clock.advance(100);
    await settle();
    expect(beats.size).toBe(8);
    for (const times of beats.values()) expect(times).toEqual([1_100, 1_200]);
    open();
    await ran;
    await settle();
    // The last run gone, nothing waits on the clock.
    expect(clock.pendingTimers).toBe(0);
    await runtime.close();
  });

  it('abort the run whose heartbeat finds its lease lost, and go on beating the others', async () => {
    const { clock, runtime, beats, answers, open, signals, onError } = gatedRuntime(300);
    await runtime.start();
    await runtime.publish(ingress('a'));
    await runtime.publish(ingress('b'));
    const ran = runtime.runDue();
    await vi.waitFor(() => expect(signals).toHaveLength(2));
    answers.push({ held: false }, { fail: new Error('database down') });
    clock.advance(100);
    await settle();
    const lost = signals.filter((s) => s.aborted);
    expect(lost).toHaveLength(1);
    expect(lost[0]?.reason).toMatchObject({ code: 'lease_lost' });
    // The failed heartbeat is reported, and that lease beats again a third of a lease later.
    expect(onError).toHaveBeenCalledWith(
      expect.objectContaining({ message: 'database down' }),
      expect.anything(),
    );
    clock.advance(100);
    await settle();
    const counts = [...beats.values()].map((times) => times.length).sort();
    expect(counts).toEqual([1, 2]);
    open();
    await ran;
    await runtime.close();
  });

  it('on the system clock, leave no timer keeping the process alive once the runs are over', async () => {
    const timeouts = () =>
      (process as unknown as { getActiveResourcesInfo(): string[] })
        .getActiveResourcesInfo()
        .filter((h) => h === 'Timeout').length;
    const target = eventTarget('t')
      .retrySafety('idempotent')
      .invoke(async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
      })
      .build();
    const runtime = eventRuntime({
      routes: [eventRoute('r').types('job').instanceKey(eventPath.data('k')).wake(target).build()],
      store: new AxMemoryEventStore(),
      scheduling: 'host',
    });
    await runtime.start();
    const before = timeouts();
    await runtime.publish(ingress('a'));
    expect((await runtime.runDue()).executed).toBe(1);
    expect(timeouts()).toBe(before);
    await runtime.close();
  });
});

describe("a run's abort signal", () => {
  it('read after the run was cancelled, is already aborted with the reason; a spread context keeps it', async () => {
    const seen: { late?: AbortSignal; spread?: AbortSignal } = {};
    let cancelled!: () => void;
    const wasCancelled = new Promise<void>((resolve) => {
      cancelled = resolve;
    });
    const target = eventTarget('t')
      .invoke(async (_input, context) => {
        await wasCancelled;
        seen.late = context.abortSignal;
        seen.spread = { ...context }.abortSignal;
      })
      .build();
    const store = new AxMemoryEventStore();
    // The runtime aborts the run right after the store has recorded the cancel: the target
    // reads its signal only after that.
    const cancel = store.cancel.bind(store);
    store.cancel = async (input) => {
      const run = await cancel(input);
      setTimeout(cancelled, 0);
      return run;
    };
    const runtime = eventRuntime({
      routes: [eventRoute('r').types('job').instanceKey(eventPath.data('k')).wake(target).build()],
      store,
      scheduling: 'host',
    });
    await runtime.start();
    const id = (await runtime.publish(ingress('a'))).deliveryIds[0] as string;
    const ran = runtime.runDue();
    await vi.waitFor(async () => expect((await runtime.getRun(id))?.status).toBe('running'));
    await Promise.all([ran, runtime.cancelRun(id)]);
    expect(seen.late?.aborted).toBe(true);
    expect(seen.late?.reason).toMatchObject({ code: 'aborted' });
    expect(seen.spread).toBe(seen.late);
    await runtime.close();
  });
});
