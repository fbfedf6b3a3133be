/**
 * A regression test of what the chaos campaign found (a worker SIGSTOPped for longer than its
 * lease): a worker that is paused after it marked a delivery `running` and before it invokes the
 * target still invokes it when it wakes up — after its lease ran out, after another worker ended
 * the delivery `outcome_unknown` and went on to the next delivery of the same instance. The only
 * guard before `invoke` is the lease's abort signal, which only a heartbeat can trip, and a
 * paused process runs no heartbeat before that line. The strict order per instance breaks (the
 * earlier delivery's target starts after the later one's), and a target that is not idempotent
 * runs for a delivery the store already closed as `outcome_unknown`.
 *
 * Here the pause is simulated in one process: worker A's store answers its `running` mark only
 * when the test lets it, and holds A's heartbeats meanwhile (a stopped process sends none);
 * worker B has its own store on the same SQLite file (`coordination: 'multi-worker'`).
 *
 * Fixed; this test keeps it fixed.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type AxEventStore, eventPath, eventRoute, eventRuntime, eventTarget } from '../../src/index.js';
import { AxSQLiteEventStore } from '../../src/node.js';
import { eventually } from '../helpers/clients.js';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
});

describe('a worker paused between its running mark and invoke', () => {
  it('does not start the target once its lease is gone, so the order per instance holds', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ax-lease-'));
    closers.push(async () => rmSync(dir, { recursive: true, force: true }));
    // Two stores on one SQLite file: one per worker, as two processes would have.
    const inner = await AxSQLiteEventStore.open({ filename: join(dir, 'events.db') });
    const other = await AxSQLiteEventStore.open({ filename: join(dir, 'events.db') });
    closers.push(
      () => inner.close(),
      () => other.close(),
    );
    let release!: () => void;
    const thawed = new Promise<void>((r) => {
      release = r;
    });
    let frozen = false;
    // Worker A's view of the store: the `running` mark commits, then A "pauses" until released.
    const paused = new Proxy(inner, {
      get(target, prop) {
        if (prop === 'transition') {
          return async (input: Parameters<AxEventStore['transition']>[0]) => {
            const ok = await target.transition(input);
            if (input.status === 'running' && !frozen) {
              frozen = true;
              await thawed;
            }
            return ok;
          };
        }
        if (prop === 'heartbeat') {
          return async (input: Parameters<AxEventStore['heartbeat']>[0]) => {
            if (frozen) await thawed;
            return target.heartbeat(input);
          };
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as AxEventStore;

    const started: string[] = [];
    const routes = () => [
      eventRoute('charges')
        .types('charge')
        .instanceKey(eventPath.data('account'))
        .wake(
          eventTarget('charge') // not idempotent
            .invoke((_input, ctx) => {
              started.push(`${ctx.event.id}@${ctx.attempt}`);
              return {};
            })
            .build(),
        )
        .build(),
    ];
    const options = { coordination: 'multi-worker' as const, leaseMs: 200, pollIntervalMs: 20 };
    const a = eventRuntime({
      ...options,
      routes: routes(),
      store: paused,
      workerId: 'A',
      allowVolatile: true,
    });
    closers.push(() => a.close({ drain: false }));
    await a.start();
    const first = await a.publish({
      event: { id: 'c1', source: 'app://bank', type: 'charge', data: { account: 'x' } },
    });
    await a.publish({ event: { id: 'c2', source: 'app://bank', type: 'charge', data: { account: 'x' } } });
    await eventually(() => frozen, 5000, 'A to mark c1 running');

    // A is "stopped" past its lease; B takes over, closes c1 as outcome_unknown, runs c2.
    const b = eventRuntime({
      ...options,
      routes: routes(),
      store: inner,
      workerId: 'B',
      allowVolatile: true,
    });
    closers.push(() => b.close({ drain: false }));
    await b.start();
    await eventually(() => started.includes('c2@1'), 5000, 'B to run c2');
    const c1 = await inner.getRun(first.deliveryIds[0] as string);
    expect(c1?.status).toBe('outcome_unknown');

    // A wakes up.
    release();
    await new Promise((r) => setTimeout(r, 300));
    console.log(`[regression] target starts in order: ${started.join(', ')}; c1 ended ${c1?.status}`);
    expect(started).toEqual(['c2@1']);
  });
});
