import { describe, expect, it } from 'vitest';
import { AxMemoryEventStore } from './memory-store.js';
import { eventPath } from './path.js';
import { eventRoute } from './route-builder.js';
import { eventRuntime } from './runtime.js';
import type { AxEventTransition } from './store.js';
import { type AxEventTargetBuilder, eventTarget } from './target-builder.js';

/** A memory store that keeps every transition it is asked for. */
class RecordingStore extends AxMemoryEventStore {
  readonly transitions: AxEventTransition[] = [];
  override transition(input: AxEventTransition): Promise<boolean> {
    this.transitions.push(input);
    return super.transition(input);
  }
}

/** The transitions of one delivery of a target built by `build`, as { status, replayable }. */
async function transitionsOf(build: (target: AxEventTargetBuilder) => AxEventTargetBuilder) {
  const store = new RecordingStore();
  const target = build(eventTarget('t')).build();
  const runtime = eventRuntime({
    routes: [eventRoute('r').types('job').instanceKey(eventPath.data('k')).wake(target).build()],
    store,
    scheduling: 'host',
    maxAttempts: 1,
  });
  await runtime.publish({ event: { id: 'e1', source: 'app://replay', type: 'job', data: { k: 'a' } } });
  await runtime.runDue();
  await runtime.close({ drain: false });
  return store.transitions.map((x) => ({ status: x.status, replayable: x.replayable === true }));
}

describe('which transitions a store may commit without waiting for durability', () => {
  it("an idempotent target's plain success is replayable", async () => {
    const seen = await transitionsOf((t) => t.retrySafety('idempotent').invoke(() => ({ ok: true })));
    expect(seen).toEqual([{ status: 'succeeded', replayable: true }]);
  });

  it('a target that is not idempotent never is: its running mark and its success are durable', async () => {
    const seen = await transitionsOf((t) => t.invoke(() => ({ ok: true })));
    expect(seen.map((x) => x.status)).toEqual(['running', 'succeeded']);
    expect(seen.every((x) => !x.replayable)).toBe(true);
  });

  it('nor a success that schedules sink writes, nor a failure, nor a run that waits for an event', async () => {
    const sink = { id: 'log', write: () => undefined };
    const withSink = await transitionsOf((t) =>
      t
        .retrySafety('idempotent')
        .sink(sink)
        .invoke(() => 1),
    );
    expect(withSink[0]).toEqual({ status: 'succeeded', replayable: false });
    const failing = await transitionsOf((t) =>
      t.retrySafety('idempotent').invoke(() => {
        throw new Error('no');
      }),
    );
    expect(failing.length).toBeGreaterThan(0);
    expect(failing.every((x) => !x.replayable)).toBe(true);
    const waiting = await transitionsOf((t) =>
      t
        .retrySafety('idempotent')
        .waitFor('order', eventPath.data('k'))
        .invoke(() => 1),
    );
    expect(waiting.at(-1)).toEqual({ status: 'waiting_event', replayable: false });
  });

  it('a hand-back on close is replayable: lost, the delivery only stays leased until its lease ends', async () => {
    const store = new RecordingStore();
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const target = eventTarget('t')
      .retrySafety('idempotent')
      .invoke(async (_input, context) => {
        started();
        await new Promise((resolve) =>
          context.abortSignal.addEventListener('abort', resolve, { once: true }),
        );
        throw context.abortSignal.reason;
      })
      .build();
    const runtime = eventRuntime({ routes: [eventRoute('r').types('job').wake(target).build()], store });
    await runtime.start();
    await runtime.publish({ event: { id: 'e1', source: 'app://replay', type: 'job', data: {} } });
    await running;
    await runtime.close({ drain: false });
    expect(store.transitions.map((x) => [x.status, x.replayable === true])).toEqual([['queued', true]]);
  });
});
