import { describe, expect, it, vi } from 'vitest';
import { AxManualEventClock } from './clock.js';
import type { AxEventIdentity, AxEventIngress } from './envelope.js';
import { eventInput } from './input.js';
import { AxMemoryEventStore } from './memory-store.js';
import { eventPath } from './path.js';
import type { AxEventRouteDefinition } from './route.js';
import { eventRoute } from './route-builder.js';
import { eventRuntime } from './runtime.js';
import type { AxEventContext } from './target.js';
import { eventTarget } from './target-builder.js';

const alice: AxEventIdentity = { tenantId: 't1', userId: 'alice' };
const bob: AxEventIdentity = { tenantId: 't1', userId: 'bob' };
let n = 0;
function ingress(
  type: string,
  data: unknown,
  identity?: AxEventIdentity,
  extra: Partial<AxEventIngress> = {},
) {
  return {
    event: { id: `c${++n}`, source: 'app://tasks', type, data },
    identity,
    trust: 'authenticated',
    ...extra,
  } as const;
}

function setup(routes: AxEventRouteDefinition[]) {
  const clock = new AxManualEventClock(0);
  const store = new AxMemoryEventStore();
  const runtime = eventRuntime({ routes, clock, store, scheduling: 'host', random: () => 0 });
  return { clock, store, runtime };
}

describe('continuations', () => {
  function taskFlow() {
    const started = vi.fn(async () => ({ status: 'started' }));
    const finished = vi.fn(async (input: Record<string, unknown>, ctx: AxEventContext) => ({
      input,
      continuation: ctx.continuation?.kind,
      instance: ctx.instanceKey,
    }));
    const owner = eventTarget('owner')
      .waitFor('app.task', eventPath.data('taskId'), { expiresInMs: 1000, metadata: { step: 'report' } })
      .resumeInput(
        eventInput().field('result', eventPath.data('result')).field('step', eventPath.continuation('step')),
      )
      .invoke(async (input, ctx) => (ctx.action === 'wake' ? started() : finished(input, ctx)))
      .build();
    const decoy = eventTarget('decoy').invoke(vi.fn()).build();
    const routes = [
      eventRoute('start').types('app.task.started').instanceKey(eventPath.data('chat')).wake(owner).build(),
      eventRoute('done')
        .types('app.task.done')
        .correlate('app.task', eventPath.data('taskId'))
        .resume(owner)
        .build(),
      eventRoute('decoy').types('never').wake(decoy).build(),
    ];
    return { routes, started, finished };
  }

  it('resumes the continuation owner within the same identity scope and deletes it', async () => {
    const { routes, started, finished } = taskFlow();
    const { runtime } = setup(routes);
    const wake = await runtime.publish(ingress('app.task.started', { taskId: 'T1', chat: 'chat-9' }, alice));
    await runtime.runDue();
    expect(started).toHaveBeenCalledTimes(1);
    const waiting = await runtime.getRun(wake.deliveryIds[0] as string);
    expect(waiting).toMatchObject({ status: 'waiting_event', output: { status: 'started' } });
    expect(waiting?.continuationIds).toHaveLength(1);
    const resume = await runtime.publish(ingress('app.task.done', { taskId: 'T1', result: 42 }, alice));
    await runtime.runDue();
    expect(finished).toHaveBeenCalledTimes(1);
    const resumed = await runtime.getRun(resume.deliveryIds[0] as string);
    expect(resumed).toMatchObject({
      status: 'succeeded',
      targetId: 'owner',
      instanceKey: 'chat-9',
      output: { input: { result: 42, step: 'report' }, continuation: 'app.task', instance: 'chat-9' },
    });
    expect((await runtime.getRun(wake.deliveryIds[0] as string))?.status).toBe('succeeded');
    const again = await runtime.publish(ingress('app.task.done', { taskId: 'T1', result: 43 }, alice));
    await runtime.runDue();
    expect(await runtime.getRun(again.deliveryIds[0] as string)).toMatchObject({
      status: 'dead_lettered',
      error: { code: 'continuation_not_found' },
    });
  });

  it('never resumes across identity scopes; a miss dead-letters without retry', async () => {
    const { routes, finished } = taskFlow();
    const { runtime } = setup(routes);
    await runtime.publish(ingress('app.task.started', { taskId: 'T1', chat: 'c' }, alice));
    await runtime.runDue();
    const intruder = await runtime.publish(ingress('app.task.done', { taskId: 'T1', result: 'x' }, bob));
    const session = await runtime.publish(
      ingress('app.task.done', { taskId: 'T1', result: 'x' }, { ...alice, sessionId: 's2' }),
    );
    await runtime.runDue();
    expect(finished).not.toHaveBeenCalled();
    for (const r of [intruder, session]) {
      expect(await runtime.getRun(r.deliveryIds[0] as string)).toMatchObject({
        status: 'dead_lettered',
        attempt: 1,
      });
    }
    expect((await runtime.listDeadLetters()).map((l) => l.reason)).toEqual([
      'continuation_not_found',
      'continuation_not_found',
    ]);
    const owner = await runtime.publish(ingress('app.task.done', { taskId: 'T1', result: 'ok' }, alice));
    await runtime.runDue();
    expect((await runtime.getRun(owner.deliveryIds[0] as string))?.status).toBe('succeeded');
  });

  it('treats an expired continuation as missing', async () => {
    const { routes, finished } = taskFlow();
    const { runtime, clock } = setup(routes);
    await runtime.publish(ingress('app.task.started', { taskId: 'T1', chat: 'c' }, alice));
    await runtime.runDue();
    clock.advance(1000);
    const late = await runtime.publish(ingress('app.task.done', { taskId: 'T1', result: 1 }, alice));
    await runtime.runDue();
    clock.advance(100_000);
    await runtime.runDue();
    expect(finished).not.toHaveBeenCalled();
    expect(await runtime.getRun(late.deliveryIds[0] as string)).toMatchObject({
      status: 'dead_lettered',
      attempt: 1,
    });
  });

  it('only resumes continuations owned by the resume route target', async () => {
    const { routes } = taskFlow();
    const other = eventRoute('other-done')
      .types('app.task.done')
      .correlate('app.task', eventPath.data('taskId'))
      .resume('decoy');
    const { runtime } = setup([...routes, other.build()]);
    await runtime.publish(ingress('app.task.started', { taskId: 'T1', chat: 'c' }, alice));
    await runtime.runDue();
    const r = await runtime.publish(ingress('app.task.done', { taskId: 'T1', result: 1 }, alice));
    await runtime.runDue();
    const runs = await Promise.all(r.deliveryIds.map((id) => runtime.getRun(id)));
    expect(runs.map((x) => [x?.routeId, x?.status])).toEqual([
      ['done', 'succeeded'],
      ['other-done', 'dead_lettered'],
    ]);
  });

  it('registers continuations from the target context and falls back to the ingress correlation', async () => {
    const invoke = vi.fn(async (_input: Record<string, unknown>, ctx: AxEventContext) => {
      if (ctx.action === 'wake') {
        const [c] = await ctx.registerContinuation({ correlation: { kind: 'mcp.task', value: 'ns:42' } });
        return { registered: c?.value };
      }
      return { resumedBy: ctx.event.id };
    });
    const target = eventTarget('agent').invoke(invoke).build();
    const { runtime } = setup([
      eventRoute('wake').types('ask').wake(target).build(),
      eventRoute('resume').types('task.status').resume().build(),
    ]);
    const w = await runtime.publish(ingress('ask', {}, alice));
    await runtime.runDue();
    expect(await runtime.getRun(w.deliveryIds[0] as string)).toMatchObject({ status: 'waiting_event' });
    const conflict = await runtime.publish(ingress('ask', {}, alice));
    await runtime.runDue();
    expect(await runtime.getRun(conflict.deliveryIds[0] as string)).toMatchObject({
      status: 'outcome_unknown',
    });
    const r = await runtime.publish(
      ingress('task.status', {}, alice, { correlation: [{ kind: 'mcp.task', value: 'ns:42' }] }),
    );
    await runtime.runDue();
    expect(await runtime.getRun(r.deliveryIds[0] as string)).toMatchObject({
      status: 'succeeded',
      output: { resumedBy: r.eventId },
    });
    const none = await runtime.publish(ingress('task.status', {}, alice));
    await runtime.runDue();
    expect(await runtime.getRun(none.deliveryIds[0] as string)).toMatchObject({
      status: 'dead_lettered',
      error: { code: 'continuation_not_found' },
    });
  });

  it('refuses a continuation request it would misread, and registers nothing', async () => {
    const correlation = { kind: 'mcp.task', value: 'ns:1' };
    const requests: [unknown, string][] = [
      // Misspelt: the continuation would have waited for ever.
      [{ correlation, expiresInMS: 60_000 }, 'expiresInMS is not an option (did you mean expiresInMs?)'],
      [{ correlation, expiresInMs: Number.NaN }, 'expiresInMs: expected a number ≥ 0, got NaN'],
      [{ correlation, expiresAt: '2030-01-01' }, 'expiresAt: expected a number, got a string'],
      [{ corelation: correlation }, 'corelation is not an option (did you mean correlation?)'],
      [
        { correlation: [] },
        'correlation: expected a correlation { kind, value } or a non-empty list of them, got an array',
      ],
      [{ correlation: { kind: 'mcp.task', vale: 'ns:1' } }, 'correlation.vale is not an option'],
    ];
    const seen: unknown[] = [];
    const target = eventTarget('agent')
      .retrySafety('idempotent')
      .invoke(async (input, ctx) => {
        try {
          await ctx.registerContinuation(requests[input.n as number]![0] as never);
        } catch (error) {
          seen.push(error);
          throw error;
        }
      })
      .build();
    const { runtime, store } = setup([eventRoute('wake').types('ask').wake(target).build()]);
    const receipts = [];
    for (let n = 0; n < requests.length; n++)
      receipts.push(await runtime.publish(ingress('ask', { n }, alice)));
    await runtime.runDue();
    for (const [i, receipt] of receipts.entries()) {
      // Not retried: the same request would be refused again.
      expect(await runtime.getRun(receipt.deliveryIds[0] as string)).toMatchObject({
        status: 'dead_lettered',
        attempt: 1,
        error: { code: 'invalid_input', message: expect.stringContaining(requests[i]![1]) },
      });
    }
    expect(seen).toHaveLength(requests.length);
    expect(await store.listContinuations({ now: 0 })).toEqual([]);
  });
});
