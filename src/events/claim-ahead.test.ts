import { describe, expect, it } from 'vitest';
import { AxManualEventClock } from './clock.js';
import { AxMemoryEventStore } from './memory-store.js';
import { eventRoute } from './route-builder.js';
import { eventRuntime, runDueClaimingAhead } from './runtime.js';
import type { AxEventRuntimeOptions } from './runtime-options.js';
import type { AxEventClaim } from './store.js';
import { eventTarget } from './target-builder.js';

/** A memory store that records the limit of every claim statement. */
class CountingStore extends AxMemoryEventStore {
  readonly limits: number[] = [];
  override claim(input: {
    workerId: string;
    now: number;
    leaseMs: number;
    limit: number;
  }): Promise<AxEventClaim[]> {
    this.limits.push(input.limit);
    return super.claim(input);
  }
}

let n = 0;
const event = () => ({ event: { id: `a${++n}`, source: 'app://ahead', type: 'job', data: { n } } });

function setup(extra: AxEventRuntimeOptions = {}) {
  const store = new CountingStore();
  const invoked: string[] = [];
  const fencing = new Map<string, number>();
  const target = eventTarget('t')
    .retrySafety('idempotent')
    .invoke(async (_input, context) => {
      invoked.push(context.deliveryId);
      fencing.set(context.deliveryId, context.fencingToken);
      return { ok: true };
    })
    .build();
  const runtime = eventRuntime({
    // Relaxed: every delivery is claimable at once (strict order claims only each key's head).
    routes: [eventRoute('r').types('job').ordering('relaxed').wake(target).build()],
    store,
    workerConcurrency: 4,
    ...extra,
  });
  return { store, runtime, invoked, fencing };
}

async function publish(runtime: ReturnType<typeof setup>['runtime'], count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(...(await runtime.publish(event())).deliveryIds);
  return ids;
}

describe('claiming ahead of free lanes', () => {
  it('the worker loop drains a backlog of short runs with fewer claim statements than runs, each run once', async () => {
    const { store, runtime, invoked } = setup({ scheduling: 'workers' });
    const ids = await publish(runtime, 200);
    await runtime.start();
    await runtime.waitForIdle({ timeoutMs: 10_000 });
    await runtime.close();
    expect(invoked.sort()).toEqual([...ids].sort());
    // One claim per run without claiming ahead; with it, one statement feeds several runs.
    expect(store.limits.length).toBeLessThan(ids.length / 2);
    expect(Math.max(...store.limits)).toBeGreaterThan(4);
  });

  it('a host calling runDue leaves nothing claimed behind it', async () => {
    const clock = new AxManualEventClock(1_000);
    const { store, runtime } = setup({ scheduling: 'host', clock });
    const ids = await publish(runtime, 10);
    for (let i = 0; i < 3; i++) expect((await runtime.runDue({ limit: 1 })).executed).toBe(1);
    const statuses = await Promise.all(ids.map(async (id) => (await runtime.getRun(id))?.status));
    expect(statuses.filter((s) => s === 'succeeded')).toHaveLength(3);
    expect(statuses.filter((s) => s === 'queued')).toHaveLength(7);
    expect(store.limits.every((limit) => limit === 1)).toBe(true);
  });

  it('claims held ahead go back to the queue on close, their attempt not counted', async () => {
    const clock = new AxManualEventClock(1_000);
    const { runtime, invoked } = setup({ scheduling: 'host', clock });
    const ids = await publish(runtime, 10);
    await runDueClaimingAhead(runtime, { limit: 1 });
    await runDueClaimingAhead(runtime, { limit: 1 });
    const held = (await Promise.all(ids.map((id) => runtime.getRun(id)))).filter(
      (r) => r?.status === 'claimed',
    );
    expect(held.length).toBeGreaterThan(0);
    await runtime.close({ drain: false });
    const after = await Promise.all(ids.map((id) => runtime.getRun(id)));
    expect(after.filter((r) => r?.status === 'claimed')).toEqual([]);
    for (const run of held) {
      expect(after.find((r) => r?.id === run?.id)).toMatchObject({ status: 'queued', attempt: 0 });
    }
    expect(invoked).toHaveLength(2);
  });

  it('a run cancelled while its claim is held ahead ends cancelled without invoking its target', async () => {
    const clock = new AxManualEventClock(1_000);
    const { runtime, invoked } = setup({ scheduling: 'host', clock });
    const ids = await publish(runtime, 10);
    await runDueClaimingAhead(runtime, { limit: 1 });
    await runDueClaimingAhead(runtime, { limit: 1 });
    const held = (await Promise.all(ids.map((id) => runtime.getRun(id)))).find(
      (r) => r?.status === 'claimed',
    );
    expect(held).toBeDefined();
    const cancelled = await runtime.cancelRun(held?.id as string);
    expect(cancelled?.status).toBe('cancelled');
    while ((await runDueClaimingAhead(runtime, { limit: 1 })).executed > 0) {
      // drain the rest
    }
    expect(invoked).not.toContain(held?.deliveryId);
    expect(invoked).toHaveLength(9);
    await runtime.close();
  });

  it('a claim that waited half its lease ahead is handed back instead of started late; every run still runs once', async () => {
    const clock = new AxManualEventClock(1_000);
    const { runtime, invoked, fencing } = setup({ scheduling: 'host', clock, leaseMs: 1_000 });
    const ids = await publish(runtime, 10);
    await runDueClaimingAhead(runtime, { limit: 1 });
    await runDueClaimingAhead(runtime, { limit: 1 });
    const held = (await Promise.all(ids.map((id) => runtime.getRun(id)))).filter(
      (r) => r?.status === 'claimed',
    );
    expect(held.length).toBeGreaterThan(0);
    clock.advance(600);
    while ((await runDueClaimingAhead(runtime, { limit: 1 })).executed > 0) {
      // drain the rest
    }
    expect(invoked.sort()).toEqual([...ids].sort());
    const runs = await Promise.all(held.map((run) => runtime.getRun(run?.id as string)));
    // Handed back (attempt not counted), then claimed again under a new fencing token.
    for (const run of runs) {
      expect(run).toMatchObject({ status: 'succeeded', attempt: 1 });
      expect(fencing.get(run?.deliveryId as string)).toBe(2);
    }
    await runtime.close();
  });
});
