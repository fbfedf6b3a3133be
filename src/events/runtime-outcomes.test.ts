import { describe, expect, it, vi } from 'vitest';
import { backoffDelayMs } from '../backoff/backoff.js';
import { AxManualEventClock } from './clock.js';
import type { AxEventIngress } from './envelope.js';
import { AxEventBackpressureError, AxEventOutcomeUnknownError } from './errors.js';
import { AxMemoryEventStore } from './memory-store.js';
import { eventPath } from './path.js';
import type { AxEventRouteDefinition } from './route.js';
import { eventRoute } from './route-builder.js';
import { eventRuntime } from './runtime.js';
import type { AxEventRuntimeOptions } from './runtime-options.js';
import { eventTarget } from './target-builder.js';

let n = 0;
function ingress(type: string, data: unknown = {}): AxEventIngress {
  return { event: { id: `o${++n}`, source: 'app://test', type, data } };
}

function setup(routes: AxEventRouteDefinition[], extra: AxEventRuntimeOptions = {}) {
  const clock = new AxManualEventClock(10_000);
  const store = new AxMemoryEventStore();
  const runtime = eventRuntime({
    routes,
    clock,
    store,
    scheduling: 'host',
    random: () => 0,
    retry: { baseMs: 100, maxMs: 1000, maxAttempts: 3 },
    ...extra,
  });
  return { clock, store, runtime };
}

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('retries and outcomes', () => {
  it('computes capped exponential backoff with jitter', () => {
    const policy = { maxAttempts: 5, baseMs: 100, maxMs: 1000, jitter: 0.5 };
    expect([1, 2, 3, 4, 5, 10].map((a) => backoffDelayMs(a, policy, () => 0))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
    expect(backoffDelayMs(3, policy, () => 1)).toBe(200);
    expect(backoffDelayMs(3, { ...policy, jitter: 0 }, () => 1)).toBe(400);
  });

  it('retries an idempotent target with backoff, then dead-letters it after maxAttempts', async () => {
    const invoke = vi.fn(async () => {
      throw new Error('flaky');
    });
    const target = eventTarget('t').retrySafety('idempotent').invoke(invoke).build();
    const { runtime, clock } = setup([eventRoute('r').types('x').wake(target).build()]);
    const receipt = await runtime.publish(ingress('x'));
    const id = receipt.deliveryIds[0] as string;
    await runtime.runDue();
    expect(await runtime.getRun(id)).toMatchObject({ status: 'failed', attempt: 1, dueAt: 10_100 });
    expect(await runtime.nextDueAt()).toBe(10_100);
    clock.advance(99);
    expect((await runtime.runDue()).executed).toBe(0);
    clock.advance(1);
    await runtime.runDue();
    expect(await runtime.getRun(id)).toMatchObject({ status: 'failed', attempt: 2, dueAt: 10_300 });
    clock.advance(200);
    await runtime.runDue();
    expect(await runtime.getRun(id)).toMatchObject({
      status: 'dead_lettered',
      attempt: 3,
      error: { message: 'flaky' },
    });
    expect(invoke).toHaveBeenCalledTimes(3);
    const [letter] = await runtime.listDeadLetters();
    expect(letter).toMatchObject({ kind: 'delivery', deliveryId: id, reason: 'max_attempts' });
    invoke.mockImplementation(async () => {
      throw new Error('still');
    });
    invoke.mockImplementationOnce(async () => undefined as never);
    expect(await runtime.redrive(letter?.id as string)).toBe(id);
    expect(await runtime.listDeadLetters()).toEqual([]);
    await runtime.runDue();
    expect(await runtime.getRun(id)).toMatchObject({ status: 'succeeded', attempt: 1 });
  });

  it('takes the deprecated flat retry names as the retry policy they stand for', async () => {
    const schedule = async (options: AxEventRuntimeOptions) => {
      const target = eventTarget('t')
        .retrySafety('idempotent')
        .invoke(async () => {
          throw new Error('flaky');
        })
        .build();
      const { runtime, clock } = setup([eventRoute('r').types('x').wake(target).build()], options);
      const id = (await runtime.publish(ingress('x'))).deliveryIds[0] as string;
      const seen: unknown[] = [];
      for (let i = 0; i < 4; i++) {
        await runtime.runDue();
        const run = await runtime.getRun(id);
        seen.push([run?.status, run?.attempt, run?.dueAt === null ? null : (run?.dueAt ?? 0) - clock.now()]);
        clock.advance(10_000);
      }
      await runtime.close();
      return seen;
    };
    const nested = await schedule({ retry: { maxAttempts: 3, baseMs: 250, maxMs: 400, jitter: 0 } });
    expect(nested).toEqual([
      ['failed', 1, 250],
      ['failed', 2, 400],
      ['dead_lettered', 3, null],
      ['dead_lettered', 3, null],
    ]);
    const flat = { maxAttempts: 3, retryBaseMs: 250, retryMaxMs: 400, retryJitter: 0 };
    expect(await schedule({ retry: {}, ...flat })).toEqual(nested);
    // Both forms with the same values are one policy, not a conflict.
    expect(await schedule({ ...flat, retry: { maxAttempts: 3, baseMs: 250 } })).toEqual(nested);
  });

  it('never replays a target that is not idempotent: a failure after invocation is outcome_unknown', async () => {
    const invoke = vi.fn(async () => {
      throw new Error('network dropped after the charge');
    });
    const target = eventTarget('charge').invoke(invoke).build();
    const { runtime, clock } = setup([eventRoute('r').types('pay').wake(target).build()]);
    const receipt = await runtime.publish(ingress('pay'));
    await runtime.runDue();
    clock.advance(100_000);
    await runtime.runDue();
    expect(invoke).toHaveBeenCalledTimes(1);
    const run = await runtime.getRun(receipt.deliveryIds[0] as string);
    expect(run).toMatchObject({ status: 'outcome_unknown', error: { code: 'outcome_unknown' } });
    expect((await runtime.listDeadLetters())[0]?.reason).toBe('outcome_unknown');
    expect(await runtime.nextDueAt()).toBeNull();
  });

  it('treats AxEventOutcomeUnknownError as unknown even on an idempotent target', async () => {
    const invoke = vi.fn(async () => {
      throw new AxEventOutcomeUnknownError('provider timed out mid-write');
    });
    const target = eventTarget('t').retrySafety('idempotent').invoke(invoke).build();
    const { runtime } = setup([eventRoute('r').types('x').wake(target).build()]);
    const receipt = await runtime.publish(ingress('x'));
    await runtime.runDue();
    expect((await runtime.getRun(receipt.deliveryIds[0] as string))?.status).toBe('outcome_unknown');
    expect(invoke).toHaveBeenCalledTimes(1);
  });

  it('saves the output before sinks run, and retries sinks on their own', async () => {
    const order: string[] = [];
    let sinkFailures = 2;
    const invoke = vi.fn(async () => ({ summary: 'done' }));
    const target = eventTarget('t')
      .invoke(invoke)
      .sink({
        id: 'mailer',
        write: async (output, ctx) => {
          order.push(
            `sink:${ctx.run.status}:${JSON.stringify(output)}:${ctx.idempotencyKey === `${ctx.run.id}:mailer`}`,
          );
          if (sinkFailures-- > 0) throw new Error('smtp down');
        },
      })
      .sink({ id: 'broken', write: () => Promise.reject(new Error('always')) })
      .build();
    const { runtime, clock } = setup([eventRoute('r').types('x').wake(target).build()]);
    const receipt = await runtime.publish(ingress('x'));
    await runtime.runDue();
    const run = await runtime.getRun(receipt.deliveryIds[0] as string);
    expect(run).toMatchObject({ status: 'succeeded', output: { summary: 'done' } });
    expect(order).toEqual(['sink:succeeded:{"summary":"done"}:true']);
    clock.advance(100);
    await runtime.runDue();
    clock.advance(200);
    await runtime.runDue();
    expect(order).toHaveLength(3);
    expect(invoke).toHaveBeenCalledTimes(1);
    const after = await runtime.getRun(receipt.deliveryIds[0] as string);
    expect(after?.sinks.map((s) => [s.sinkId, s.status, s.attempt])).toEqual([
      ['mailer', 'succeeded', 3],
      ['broken', 'dead_lettered', 3],
    ]);
    const letters = await runtime.listDeadLetters();
    expect(letters.map((l) => [l.kind, l.sinkId, l.reason])).toEqual([['sink', 'broken', 'sink_failed']]);
  });

  it('records an output it cannot persist as outcome_unknown', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const target = eventTarget('t')
      .retrySafety('idempotent')
      .invoke(() => cyclic)
      .build();
    const { runtime } = setup([eventRoute('r').types('x').wake(target).build()]);
    const receipt = await runtime.publish(ingress('x'));
    await runtime.runDue();
    expect((await runtime.getRun(receipt.deliveryIds[0] as string))?.status).toBe('outcome_unknown');
  });
});

describe('cancellation', () => {
  it('cancels a queued run before it is invoked', async () => {
    const invoke = vi.fn();
    const target = eventTarget('t').invoke(invoke).build();
    const { runtime } = setup([eventRoute('r').types('x').wake(target).build()]);
    const receipt = await runtime.publish(ingress('x'));
    expect((await runtime.cancelRun(receipt.deliveryIds[0] as string))?.status).toBe('cancelled');
    await runtime.runDue();
    expect(invoke).not.toHaveBeenCalled();
    expect(await runtime.cancelRun('run_unknown')).toBeNull();
  });

  it('aborts a running run through its abort signal', async () => {
    const started = deferred();
    const target = eventTarget('t')
      .invoke(
        (_input, ctx) =>
          new Promise((_resolve, reject) => {
            started.resolve();
            ctx.abortSignal.addEventListener('abort', () => reject(ctx.abortSignal.reason));
          }),
      )
      .build();
    const { runtime } = setup([eventRoute('r').types('x').wake(target).build()]);
    const receipt = await runtime.publish(ingress('x'));
    const running = runtime.runDue();
    await started.promise;
    const run = await runtime.cancelRun(receipt.deliveryIds[0] as string);
    await running;
    expect(run?.status).toBe('cancelled');
  });
});

describe('ordering, debounce and backpressure', () => {
  it('runs one delivery at a time per instance, in order, and instances side by side', async () => {
    const log: string[] = [];
    const gates = new Map<string, ReturnType<typeof deferred<void>>>();
    const target = eventTarget('t')
      .invoke(async (input) => {
        const key = `${input.k}${input.i}`;
        log.push(`start ${key}`);
        const gate = deferred<void>();
        gates.set(key, gate);
        await gate.promise;
        log.push(`end ${key}`);
      })
      .build();
    const route = eventRoute('r').types('x').instanceKey(eventPath.data('k')).wake(target).build();
    const { runtime } = setup([route], { workerConcurrency: 4 });
    for (const [k, i] of [
      ['a', 1],
      ['a', 2],
      ['b', 1],
    ] as const) {
      await runtime.publish(ingress('x', { k, i }));
    }
    const first = runtime.runDue();
    await vi.waitFor(() => expect(gates.size).toBe(2));
    expect([...log].sort()).toEqual(['start a1', 'start b1']);
    gates.get('a1')?.resolve();
    gates.get('b1')?.resolve();
    await vi.waitFor(() => expect(gates.has('a2')).toBe(true));
    gates.get('a2')?.resolve();
    await first;
    expect(log.filter((l) => / a\d$/.test(l))).toEqual(['start a1', 'end a1', 'start a2', 'end a2']);
  });

  it('bounds concurrency across instances and lets relaxed routes overlap', async () => {
    let active = 0;
    let peak = 0;
    const target = eventTarget('t')
      .invoke(async () => {
        active++;
        peak = Math.max(peak, active);
        await new Promise((r) => setTimeout(r, 5));
        active--;
      })
      .build();
    const route = eventRoute('r').types('x').ordering('relaxed').wake(target).build();
    const { runtime } = setup([route], { workerConcurrency: 3 });
    for (let i = 0; i < 9; i++) await runtime.publish(ingress('x', { i }));
    expect((await runtime.runDue()).executed).toBe(9);
    expect(peak).toBe(3);
  });

  it('debounces and coalesces to the latest event on the manual clock', async () => {
    const invoke = vi.fn();
    const target = eventTarget('t').invoke(invoke).build();
    const route = eventRoute('r').types('edit').debounce(500, { coalesce: 'latest' }).wake(target).build();
    const { runtime, clock } = setup([route]);
    const a = await runtime.publish({ ...ingress('edit', { v: 1 }), partitionKey: 'doc1' });
    clock.advance(300);
    const b = await runtime.publish({ ...ingress('edit', { v: 2 }), partitionKey: 'doc1' });
    const other = await runtime.publish({ ...ingress('edit', { v: 9 }), partitionKey: 'doc2' });
    expect(b.deliveryIds).toEqual(a.deliveryIds);
    expect(other.deliveryIds).not.toEqual(a.deliveryIds);
    clock.advance(300);
    await runtime.runDue();
    expect(invoke).toHaveBeenCalledTimes(0);
    clock.advance(200);
    await runtime.runDue();
    expect(invoke.mock.calls.map((c) => c[0])).toEqual([{ v: 2 }, { v: 9 }]);
  });

  it('makes publish wait while the store is full, then throw AxEventBackpressureError', async () => {
    const target = eventTarget('t').invoke(vi.fn()).build();
    const store = new AxMemoryEventStore({ maxPendingDeliveries: 1 });
    const { runtime, clock } = setup([eventRoute('r').types('x').wake(target).build()], {
      store,
      publishTimeoutMs: 1000,
    });
    await runtime.publish(ingress('x'));
    const waiting = runtime.publish(ingress('x'));
    await vi.waitFor(() => expect(clock.pendingTimers).toBe(1));
    await runtime.runDue({ limit: 1 });
    await expect(waiting).resolves.toMatchObject({ accepted: true });
    expect(await store.countPending()).toBe(1);
    const blocked = runtime.publish(ingress('x'));
    let settled = false;
    const outcome = blocked
      .catch((e: unknown) => e)
      .finally(() => {
        settled = true;
      });
    let ticks = 0;
    while (!settled) {
      await vi.waitFor(() => expect(settled || clock.pendingTimers === 1).toBe(true), { interval: 1 });
      if (settled) break;
      clock.advance(50);
      ticks++;
    }
    const error = await outcome;
    expect(error).toMatchObject({ code: 'backpressure' });
    expect(ticks).toBe(20);
    expect(error).toBeInstanceOf(AxEventBackpressureError);
    expect(error).toMatchObject({ code: 'backpressure', waitedMs: 1000 });
  });
});

describe('close', () => {
  it('without drain, hands an idempotent run back and marks a non-idempotent one outcome_unknown', async () => {
    const store = new AxMemoryEventStore();
    const started = deferred();
    let count = 0;
    const hang = (_input: unknown, ctx: { abortSignal: AbortSignal }) =>
      new Promise((_resolve, reject) => {
        if (++count === 2) started.resolve();
        ctx.abortSignal.addEventListener('abort', () => reject(ctx.abortSignal.reason));
      });
    const safe = eventTarget('safe').retrySafety('idempotent').invoke(hang).build();
    const unsafe = eventTarget('unsafe').invoke(hang).build();
    const { runtime } = setup(
      [eventRoute('a').types('x').wake(safe).build(), eventRoute('b').types('x').wake(unsafe).build()],
      { store },
    );
    const receipt = await runtime.publish(ingress('x'));
    const running = runtime.runDue();
    await started.promise;
    await runtime.close({ drain: false });
    await running;
    const [a, b] = await Promise.all(receipt.deliveryIds.map((id) => store.getRun(id)));
    expect(a).toMatchObject({ status: 'queued', attempt: 0 });
    expect(b).toMatchObject({ status: 'outcome_unknown' });
  });

  it('with drain, finishes what is due before closing', async () => {
    const invoke = vi.fn();
    const target = eventTarget('t').invoke(invoke).build();
    const { runtime } = setup([eventRoute('r').types('x').wake(target).build()]);
    await runtime.publish(ingress('x'));
    await runtime.publish(ingress('x'));
    await runtime.close();
    expect(invoke).toHaveBeenCalledTimes(2);
  });
});

describe('leases', () => {
  it('fences out a worker whose lease expired: its late result is discarded', async () => {
    const store = new AxMemoryEventStore();
    const clock = new AxManualEventClock(0);
    const release = deferred<string>();
    let calls = 0;
    const target = {
      id: 't',
      retrySafety: 'idempotent' as const,
      invoke: async () => {
        calls++;
        return calls === 1 ? release.promise : 'second';
      },
    };
    const routes = [eventRoute('r').types('x').wake('t').build()];
    const common = { clock, store, scheduling: 'host' as const, targets: [target], leaseMs: 100 };
    const w1 = eventRuntime({ routes, ...common, workerId: 'w1' });
    const w2 = eventRuntime({ routes, ...common, workerId: 'w2', coordination: 'single' });
    const receipt = await w1.publish(ingress('x'));
    const slow = w1.runDue();
    await vi.waitFor(() => expect(calls).toBe(1));
    // w2 cannot heartbeat-steal: the manual clock has not fired w1's heartbeat; the lease simply runs out.
    await store.recoverLeases({ now: clock.now() });
    await w2.runDue();
    expect(calls).toBe(2);
    release.resolve('first');
    await slow;
    const run = await store.getRun(receipt.deliveryIds[0] as string);
    expect(run).toMatchObject({ status: 'succeeded', output: 'second', attempt: 2 });
  });
});

describe('the durable running mark', () => {
  it('is written only where a replay would be wrong: once per attempt of a target that is not idempotent', async () => {
    const gates = { safe: deferred(), unsafe: deferred() };
    const seen: Record<string, string | undefined> = {};
    const safe = eventTarget('safe')
      .retrySafety('idempotent')
      .invoke(() => gates.safe.promise)
      .build();
    const unsafe = eventTarget('unsafe')
      .invoke(() => gates.unsafe.promise)
      .build();
    const { runtime, store, clock } = setup([
      eventRoute('a').types('x').wake(safe).build(),
      eventRoute('b').types('x').wake(unsafe).build(),
    ]);
    const transition = vi.spyOn(store, 'transition');
    const receipt = await runtime.publish(ingress('x'));
    const [safeId, unsafeId] = receipt.deliveryIds as [string, string];
    const running = runtime.runDue();
    await vi.waitFor(async () => {
      seen.safe = (await store.getRun(safeId))?.status;
      seen.unsafe = (await store.getRun(unsafeId))?.status;
      expect(seen).toEqual({ safe: 'claimed', unsafe: 'running' });
    });
    const startedAt = clock.now();
    clock.advance(50);
    gates.safe.resolve();
    gates.unsafe.resolve();
    await running;
    const statuses = (id: string) =>
      transition.mock.calls.filter(([x]) => x.deliveryId === id).map(([x]) => x.status);
    expect(statuses(safeId)).toEqual(['succeeded']);
    expect(statuses(unsafeId)).toEqual(['running', 'succeeded']);
    // The start the idempotent attempt did not write went with its end.
    expect(await store.getRun(safeId)).toMatchObject({ status: 'succeeded', startedAt, targetId: 'safe' });
    expect(await store.getRun(unsafeId)).toMatchObject({
      status: 'succeeded',
      startedAt,
      targetId: 'unsafe',
    });
  });
});
