import {
  type Attributes,
  type Span,
  type SpanStatus,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AxMemoryEventStore } from './memory-store.js';
import { eventPath } from './path.js';
import { eventRoute } from './route-builder.js';
import { eventRuntime, runDueClaimingAhead } from './runtime.js';
import type { AxEventRuntimeOptions } from './runtime-options.js';
import type { AxEventTransition } from './store.js';
import { type AxEventTargetBuilder, eventTarget } from './target-builder.js';

/** A memory store whose success writes wait until `release()` (or fail, with `fail`). */
class HeldSuccessStore extends AxMemoryEventStore {
  readonly held: AxEventTransition[] = [];
  fail: Error | null = null;
  /** The held writes come back as from a worker fenced out meanwhile. */
  fenced = false;
  #release!: () => void;
  #gate = new Promise<void>((resolve) => {
    this.#release = resolve;
  });
  release(): void {
    this.#release();
  }
  override async transition(input: AxEventTransition): Promise<boolean> {
    if (input.status === 'succeeded') {
      this.held.push(input);
      await this.#gate;
      if (this.fail) throw this.fail;
      if (this.fenced) return false;
    }
    return super.transition(input);
  }
}

function setup(
  build: (target: AxEventTargetBuilder) => AxEventTargetBuilder,
  options: { ordered?: boolean; runtime?: AxEventRuntimeOptions } = {},
) {
  const store = new HeldSuccessStore();
  const target = build(eventTarget('t'))
    .invoke(() => ({ ok: true }))
    .build();
  const route = eventRoute('r').types('job').instanceKey(eventPath.data('k'));
  if (!options.ordered) route.ordering('relaxed');
  const runtime = eventRuntime({
    routes: [route.wake(target).build()],
    store,
    scheduling: 'host',
    ...options.runtime,
  });
  const publish = async (n: number) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const event = { id: `e${i}`, source: 'app://behind', type: 'job', data: { k: `k${i}` } };
      ids.push(...(await runtime.publish({ event })).deliveryIds);
    }
    return ids;
  };
  return { store, runtime, publish };
}

/** Whether `promise` settles within a few turns of the event loop. */
async function settlesSoon(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  for (let i = 0; i < 20 && !settled; i++) await new Promise((resolve) => setTimeout(resolve, 1));
  return settled;
}

describe('successes written behind their runs (a long-lived lane)', () => {
  it("a lane goes on once an idempotent target's success is sent; closing waits until the store has it", async () => {
    const { store, runtime, publish } = setup((t) => t.retrySafety('idempotent'));
    const [id] = await publish(1);
    const lane = runDueClaimingAhead(runtime, { limit: 1 });
    expect(await settlesSoon(lane)).toBe(true);
    expect((await lane).executed).toBe(1);
    expect(store.held).toHaveLength(1);
    expect((await runtime.getRun(id as string))?.status).toBe('claimed');
    const closed = runtime.close();
    expect(await settlesSoon(closed)).toBe(false);
    store.release();
    await closed;
    expect((await runtime.getRun(id as string))?.status).toBe('succeeded');
  });

  it('a success that is not replayable, or whose key orders the next delivery, is waited for', async () => {
    for (const [build, ordered] of [
      [(t: AxEventTargetBuilder) => t, false],
      [(t: AxEventTargetBuilder) => t.retrySafety('idempotent'), true],
    ] as const) {
      const { store, runtime, publish } = setup(build, { ordered });
      await publish(1);
      const lane = runDueClaimingAhead(runtime, { limit: 1 });
      expect(await settlesSoon(lane)).toBe(false);
      expect(store.held).toHaveLength(1);
      store.release();
      expect((await lane).executed).toBe(1);
      await runtime.close();
    }
  });

  it("a host's runDue never writes behind: it returns with the success stored", async () => {
    const { store, runtime, publish } = setup((t) => t.retrySafety('idempotent'));
    await publish(1);
    const due = runtime.runDue({ limit: 1 });
    expect(await settlesSoon(due)).toBe(false);
    store.release();
    expect((await due).executed).toBe(1);
    await runtime.close();
  });

  it('a success write that fails is reported for its delivery; the delivery stays leased to run again', async () => {
    const reports: { error: unknown; phase: string; deliveryId?: string }[] = [];
    const { store, runtime, publish } = setup((t) => t.retrySafety('idempotent'), {
      runtime: { onError: (error, report) => reports.push({ error, ...report }) },
    });
    const [id] = await publish(1);
    await runDueClaimingAhead(runtime, { limit: 1 });
    store.fail = new Error('connection lost');
    store.release();
    await runtime.close();
    expect(reports).toEqual([{ error: store.fail, phase: 'delivery', deliveryId: id }]);
    expect((await store.getRun(id as string))?.status).toBe('claimed');
  });
});

/** The spans the runtime starts, as a tracer provider registered for this file records them. */
class RecordedSpan {
  readonly attributes: Attributes;
  status: SpanStatus | undefined;
  ended = false;
  constructor(
    readonly name: string,
    attributes: Attributes = {},
  ) {
    this.attributes = { ...attributes };
  }
  spanContext() {
    return { traceId: '1'.repeat(32), spanId: '1'.repeat(16), traceFlags: 1 };
  }
  setAttribute(key: string, value: unknown) {
    this.attributes[key] = value as Attributes[string];
    return this;
  }
  setAttributes(attributes: Attributes) {
    Object.assign(this.attributes, attributes);
    return this;
  }
  setStatus(status: SpanStatus) {
    this.status = status;
    return this;
  }
  addEvent() {
    return this;
  }
  addLink() {
    return this;
  }
  addLinks() {
    return this;
  }
  updateName() {
    return this;
  }
  recordException() {}
  isRecording() {
    return true;
  }
  end() {
    this.ended = true;
  }
}

const spans: RecordedSpan[] = [];
const recordingTracer = {
  startSpan(name: string, options?: { attributes?: Attributes }): Span {
    const span = new RecordedSpan(name, options?.attributes);
    spans.push(span);
    return span as unknown as Span;
  },
  startActiveSpan(name: string, ...rest: unknown[]): unknown {
    const run = rest[rest.length - 1] as (span: Span) => unknown;
    const options = rest.length > 1 ? (rest[0] as { attributes?: Attributes }) : undefined;
    return run(recordingTracer.startSpan(name, options));
  },
};

describe("a success written behind: the delivery's span", () => {
  beforeAll(() => {
    expect(trace.setGlobalTracerProvider({ getTracer: () => recordingTracer as unknown as Tracer })).toBe(
      true,
    );
  });
  afterAll(() => trace.disable());

  const deliverySpan = (id: string | undefined) =>
    spans.find((s) => s.name === 'ax.event.delivery' && s.attributes['ax.event.delivery_id'] === id);

  it('ends with the write, not with the run, and says succeeded once the store took it', async () => {
    const { store, runtime, publish } = setup((t) => t.retrySafety('idempotent'));
    const [id] = await publish(1);
    await runDueClaimingAhead(runtime, { limit: 1 });
    const span = deliverySpan(id);
    expect(span?.ended).toBe(false);
    expect(span?.attributes['ax.event.status']).toBeUndefined();
    store.release();
    await runtime.close();
    expect(span?.ended).toBe(true);
    expect(span?.attributes['ax.event.status']).toBe('succeeded');
  });

  it('says lease_lost when this worker was fenced out before the write landed', async () => {
    const { store, runtime, publish } = setup((t) => t.retrySafety('idempotent'));
    const [id] = await publish(1);
    await runDueClaimingAhead(runtime, { limit: 1 });
    store.fenced = true;
    store.release();
    await runtime.close();
    expect(deliverySpan(id)?.attributes['ax.event.status']).toBe('lease_lost');
    expect(deliverySpan(id)?.ended).toBe(true);
  });

  it('records a failed write as an error on the span', async () => {
    const { store, runtime, publish } = setup((t) => t.retrySafety('idempotent'), {
      runtime: { onError: () => {} },
    });
    const [id] = await publish(1);
    await runDueClaimingAhead(runtime, { limit: 1 });
    store.fail = new Error('connection lost');
    store.release();
    await runtime.close();
    expect(deliverySpan(id)?.status?.code).toBe(SpanStatusCode.ERROR);
    expect(deliverySpan(id)?.ended).toBe(true);
  });
});
