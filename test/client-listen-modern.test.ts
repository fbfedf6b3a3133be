/**
 * The 2026-07-28 `subscriptions/listen` stream of AxMCPClient against the demo server, on its
 * modern-only and dual-era endpoints: resource subscriptions carried in the listen filter (checked
 * in the demo's `state().listenStreams`), updates as `resource_updated` events, a filter change
 * that reopens the stream without losing an update, notifications of a foreign subscription id
 * ignored, reconnection after the server drops every stream, task notifications that wake a task
 * waiter long before its poll interval, and `close()` leaving nothing open.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AX_MCP_DEMO_CURRENT_URI,
  type AxMCPDemoEra,
  type AxMCPDemoListenStream,
  AxMCPDemoServer,
} from '../src/demo/index.js';
import type {
  AxMCPClient,
  AxMCPClientEvent,
  AxMCPLifecycleState,
  AxMCPListening,
  AxMCPTaskStatus,
} from '../src/index.js';
import { eventually, httpClient } from './helpers/clients.js';

const CURRENT = AX_MCP_DEMO_CURRENT_URI;
const BERLIN = 'inventory://warehouse/berlin';
const LISBON = 'inventory://warehouse/lisbon';
const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

interface Filter {
  toolsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
  taskIds?: string[];
}

function filterOf(stream: AxMCPDemoListenStream): Filter {
  return (stream.requested ?? {}) as Filter;
}

function streamsWith(server: AxMCPDemoServer, uri: string): AxMCPDemoListenStream[] {
  return server.state().listenStreams.filter((s) => filterOf(s).resourceSubscriptions?.includes(uri));
}

/** Everything a client emitted, with a helper to count updates of one URI. */
function record(client: AxMCPClient) {
  const events: AxMCPClientEvent[] = [];
  client.subscribeEvents((event) => events.push(event));
  return {
    events,
    updates: (uri: string) => events.filter((e) => e.type === 'resource_updated' && e.uri === uri).length,
    lifecycle: (): AxMCPLifecycleState[] => events.flatMap((e) => (e.type === 'lifecycle' ? [e.state] : [])),
    taskStatuses: (taskId: string): AxMCPTaskStatus[] =>
      events.flatMap((e) => (e.type === 'task_status' && e.task.taskId === taskId ? [e.task.status] : [])),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A fetch that slips `frames(listenId)` into every listen stream right after its acknowledgement. */
function injectingFetch(frames: (listenId: unknown) => string): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const method = new Headers(init?.headers).get('mcp-method');
    if (method !== 'subscriptions/listen' || response.body === null) return response;
    const listenId = (JSON.parse(String(init?.body)) as { id: unknown }).id;
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    let seen = '';
    let injected = false;
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          controller.enqueue(chunk);
          if (injected) return;
          seen += decoder.decode(chunk, { stream: true });
          if (seen.includes('notifications/subscriptions/acknowledged') && /\n\n$/.test(seen)) {
            injected = true;
            controller.enqueue(encoder.encode(frames(listenId)));
          }
        },
      }),
    );
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

function sseFrame(method: string, params: Record<string, unknown>, subscriptionId: unknown): string {
  const message = {
    jsonrpc: '2.0',
    method,
    params: { ...params, _meta: { [SUBSCRIPTION_ID]: subscriptionId } },
  };
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

describe.each<AxMCPDemoEra>(['modern', 'dual'])('subscriptions/listen on the %s demo', (era) => {
  let server: AxMCPDemoServer;
  let client: AxMCPClient;
  let seen: ReturnType<typeof record>;
  const errors: unknown[] = [];

  beforeAll(async () => {
    // Task polls every 30 s: only a task notification can finish a task wait quickly.
    server = new AxMCPDemoServer({ era, keepAliveMs: 0, taskPollIntervalMs: 30_000 });
    await server.start();
    client = httpClient(server.url, {
      era: 'auto',
      timeoutMs: 10_000,
      onError: (error) => errors.push(error),
      elicitation: { form: () => ({ action: 'accept', content: { confirm: true } }) },
    });
    seen = record(client);
    await client.init();
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it('subscribeResource opens a listen stream whose filter carries the URI', async () => {
    expect(client.getEra()).toBe('modern');
    expect(server.state().listenStreams).toHaveLength(0);
    await client.subscribeResource(CURRENT);
    const streams = server.state().listenStreams;
    expect(streams).toHaveLength(1);
    expect(filterOf(streams[0] as AxMCPDemoListenStream).resourceSubscriptions).toEqual([CURRENT]);
    expect(client.subscriptions).toEqual([{ uri: CURRENT, owners: ['manual'] }]);
    expect((await client.inspectCatalog()).subscriptions).toEqual([CURRENT]);
    expect(seen.lifecycle()).toContain('connected');
    // Modern endpoints have no resources/subscribe: nothing but listen carried it.
    expect(server.state().methodCounts.modern['resources/subscribe']).toBeUndefined();
  });

  it('updates arrive as resource_updated events, only for subscribed URIs', async () => {
    const before = seen.updates(CURRENT);
    await server.emitResourceUpdated(CURRENT);
    await eventually(() => seen.updates(CURRENT) > before, 5_000, 'the update of the current stock');
    // adjust_stock changes berlin and current; only current is subscribed.
    await client.callTool('adjust_stock', { warehouseId: 'berlin', sku: 'widget-a', delta: 1 });
    await eventually(() => seen.updates(CURRENT) >= before + 2, 5_000, 'the update after adjust_stock');
    await sleep(150);
    expect(seen.updates(CURRENT)).toBe(before + 2);
    expect(seen.updates(BERLIN)).toBe(0);
    const update = seen.events.find((e) => e.type === 'resource_updated');
    expect(update).toMatchObject({ type: 'resource_updated', namespace: 'test', uri: CURRENT });
  });

  it('a second URI reopens the stream with the new filter without losing an update emitted during the swap', async () => {
    const before = seen.updates(CURRENT);
    const oldIds = server.state().listenStreams.map((s) => s.id);
    const subscribing = client.subscribeResource(BERLIN);
    let overlapped = false;
    await eventually(
      () => {
        const streams = server.state().listenStreams;
        overlapped = streams.length >= 2;
        return overlapped || streamsWith(server, BERLIN).length > 0;
      },
      5_000,
      'the new listen stream',
    );
    // Both streams are open now (or the swap is already over): emit for the URI both carry.
    await server.emitResourceUpdated(CURRENT);
    await subscribing;
    await eventually(() => seen.updates(CURRENT) > before, 5_000, 'the update emitted during the swap');
    await sleep(600);
    expect(overlapped).toBe(true);
    expect(seen.updates(CURRENT)).toBe(before + 1);
    // The old stream is gone; the new one asks for both URIs.
    const streams = server.state().listenStreams;
    expect(streams).toHaveLength(1);
    expect(oldIds).not.toContain(streams[0]?.id);
    expect([...(filterOf(streams[0] as AxMCPDemoListenStream).resourceSubscriptions ?? [])].sort()).toEqual(
      [BERLIN, CURRENT].sort(),
    );
    await server.emitResourceUpdated(BERLIN);
    await eventually(() => seen.updates(BERLIN) === 1, 5_000, 'the berlin update');
  });

  it('unsubscribeResource narrows the filter; updates of the released URI stop', async () => {
    await client.unsubscribeResource(BERLIN);
    await eventually(
      () =>
        server.state().listenStreams.length === 1 &&
        streamsWith(server, BERLIN).length === 0 &&
        streamsWith(server, CURRENT).length === 1,
      5_000,
      'the narrowed stream',
    );
    const berlin = seen.updates(BERLIN);
    const current = seen.updates(CURRENT);
    await server.emitResourceUpdated(BERLIN);
    await server.emitResourceUpdated(CURRENT);
    await eventually(() => seen.updates(CURRENT) > current, 5_000, 'the current update');
    await sleep(150);
    expect(seen.updates(BERLIN)).toBe(berlin);
  });

  it('after /control/drop the client reconnects and keeps receiving', async () => {
    const lifecycle = seen.lifecycle().length;
    const before = server.state().listenStreams.map((s) => s.id);
    expect(before).toHaveLength(1);
    const origin = new URL(server.url).origin;
    const dropped = await fetch(`${origin}/control/drop`, { method: 'POST' });
    expect(dropped.status).toBe(200);
    expect(((await dropped.json()) as { dropped: { modern: number } }).dropped.modern).toBe(1);
    await eventually(
      () => seen.lifecycle().slice(lifecycle).includes('reconnected'),
      8_000,
      'the listen stream to reconnect',
    );
    expect(seen.lifecycle().slice(lifecycle)).toEqual(['disconnected', 'reconnected']);
    // A 2026-07-28 listen stream keeps no state: the reconnect says updates in between may be lost.
    const reconnected = seen.events.filter((e) => e.type === 'lifecycle' && e.state === 'reconnected');
    expect(reconnected.at(-1)).toMatchObject({ resumed: false });
    const streams = server.state().listenStreams;
    expect(streams).toHaveLength(1);
    expect(before).not.toContain(streams[0]?.id);
    expect(filterOf(streams[0] as AxMCPDemoListenStream).resourceSubscriptions).toEqual([CURRENT]);
    const current = seen.updates(CURRENT);
    await server.emitResourceUpdated(CURRENT);
    await eventually(() => seen.updates(CURRENT) === current + 1, 5_000, 'an update after the reconnect');
    // dropStreams() does the same programmatically.
    const again = seen.lifecycle().length;
    expect(server.dropStreams().modern).toBe(1);
    await eventually(
      () => seen.lifecycle().slice(again).includes('reconnected'),
      8_000,
      'a second reconnect',
    );
    await server.emitResourceUpdated(CURRENT);
    await eventually(
      () => seen.updates(CURRENT) === current + 2,
      5_000,
      'an update after the second reconnect',
    );
  });

  it('task notifications on the listen stream wake the task waiter (polls every 30 s)', async () => {
    const known = server.state().tasks.length;
    const started = Date.now();
    const statuses: AxMCPTaskStatus[] = [];
    const call = client.callTool(
      'start_reindex',
      { scope: 'notified' },
      { onStatus: (task) => statuses.push(task.status) },
    );
    await eventually(() => server.state().tasks.length > known, 5_000, 'the task');
    const taskId = server.state().tasks.at(-1)?.taskId as string;
    await eventually(
      () =>
        server
          .state()
          .listenStreams.some(
            (s) => s.servedBy === 'tasks' && filterOf(s).taskIds?.includes(taskId) === true,
          ),
      5_000,
      'a listen stream with the task id',
    );
    const withTask = server.state().listenStreams.find((s) => filterOf(s).taskIds?.includes(taskId));
    // The subscription is kept in the new filter.
    expect(filterOf(withTask as AxMCPDemoListenStream).resourceSubscriptions).toEqual([CURRENT]);
    server.requestTaskInput(taskId);
    await eventually(
      () => server.state().tasks.find((t) => t.taskId === taskId)?.inputResponses['confirm-1'] !== undefined,
      8_000,
      'the input answer, woken by notifications/tasks',
    );
    server.completeTask(taskId);
    const result = await call;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.structuredContent).toMatchObject({ scope: 'notified' });
    expect(seen.taskStatuses(taskId)).toEqual(expect.arrayContaining(['input_required', 'completed']));
    expect(statuses.at(-1)).toBe('completed');
    // Polling alone would have taken 30 s per step: the demo saw only a handful of tasks/get.
    expect(server.state().tasks.find((t) => t.taskId === taskId)?.polls).toBeLessThanOrEqual(4);
    // Once nobody waits for the task, its id leaves the filter.
    await eventually(
      () =>
        server.state().listenStreams.length === 1 &&
        server.state().listenStreams.every((s) => filterOf(s).taskIds === undefined),
      5_000,
      'the task id to leave the filter',
    );
  });

  it('resources/list_changed on the listen stream refreshes the catalog', async () => {
    const uri = `inventory://warehouse/extra-${era}`;
    const catalog = await client.inspectCatalog();
    expect(catalog.resources.map((r) => r.uri)).not.toContain(uri);
    const revision = catalog.revision;
    server.addResource({ uri, name: `extra-${era}` });
    await eventually(
      () => seen.events.some((e) => e.type === 'catalog_changed' && e.revision > revision),
      5_000,
      'catalog_changed',
    );
    const changed = seen.events.find((e) => e.type === 'catalog_changed' && e.revision > revision);
    expect(changed).toMatchObject({ kinds: expect.arrayContaining(['resources']) });
    expect((await client.inspectCatalog()).resources.map((r) => r.uri)).toContain(uri);
  });

  it('no listen error was reported along the way', () => {
    expect(errors).toEqual([]);
  });
});

describe('notifications of a foreign subscription id', () => {
  let server: AxMCPDemoServer;

  beforeAll(async () => {
    server = new AxMCPDemoServer({ era: 'modern', keepAliveMs: 0 });
    await server.start();
  });

  afterAll(async () => {
    await server?.close();
  });

  it('are ignored; the stream own notifications still arrive', async () => {
    const listDriven = server.state().methodCounts.modern['tools/list'] ?? 0;
    const client = httpClient(
      server.url,
      { era: 'auto', timeoutMs: 10_000 },
      {
        fetch: injectingFetch(
          (listenId) =>
            // Another listen's events, and one whose id only looks like ours (a string, not the number).
            sseFrame('notifications/resources/updated', { uri: CURRENT }, 987_654) +
            sseFrame('notifications/resources/updated', { uri: LISBON }, String(listenId)) +
            sseFrame('notifications/tools/list_changed', {}, 987_654) +
            sseFrame('notifications/subscriptions/acknowledged', { notifications: {} }, 987_654),
        ),
      },
    );
    const seen = record(client);
    try {
      await client.subscribeResource(CURRENT);
      await client.subscribeResource(LISBON);
      await server.emitResourceUpdated(CURRENT);
      await server.emitResourceUpdated(LISBON);
      await eventually(
        () => seen.updates(CURRENT) >= 1 && seen.updates(LISBON) >= 1,
        5_000,
        'the real updates',
      );
      await sleep(300);
      expect(seen.updates(CURRENT)).toBe(1);
      expect(seen.updates(LISBON)).toBe(1);
      expect(seen.events.some((e) => e.type === 'catalog_changed')).toBe(false);
      expect(server.state().methodCounts.modern['tools/list'] ?? 0).toBe(listDriven);
    } finally {
      await client.close();
    }
  });
});

describe('updates emitted while the filter changes', () => {
  let server: AxMCPDemoServer;

  beforeAll(async () => {
    server = new AxMCPDemoServer({ era: 'modern', keepAliveMs: 0 });
    await server.start();
  });

  afterAll(async () => {
    await server?.close();
  });

  /** A fetch that holds the listen requests after the first until `release()`. */
  function gatedListens() {
    let listens = 0;
    let held: (() => void) | undefined;
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const fetchFn: typeof fetch = async (input, init) => {
      if (new Headers(init?.headers).get('mcp-method') === 'subscriptions/listen' && ++listens > 1) {
        held?.();
        await released;
      }
      return fetch(input, init);
    };
    const holding = new Promise<void>((resolve) => {
      held = resolve;
    });
    return { fetchFn, holding, release };
  }

  it('an update delivered by the old stream while the new listen request is in flight is not lost', async () => {
    const gate = gatedListens();
    const client = httpClient(server.url, { era: 'auto', timeoutMs: 10_000 }, { fetch: gate.fetchFn });
    const seen = record(client);
    try {
      await client.subscribeResource(CURRENT);
      const subscribing = client.subscribeResource(BERLIN);
      await gate.holding;
      // The new listen request has not reached the server: only the old stream can carry this.
      expect(server.state().listenStreams).toHaveLength(1);
      await server.emitResourceUpdated(CURRENT);
      await sleep(300);
      gate.release();
      await subscribing;
      await eventually(() => seen.updates(CURRENT) >= 1, 3_000, 'the update carried by the old stream').catch(
        () => {},
      );
      expect(seen.updates(CURRENT)).toBe(1);
    } finally {
      gate.release();
      await client.close();
    }
  });

  it('two distinct updates of one URI during the overlap are two events', async () => {
    const client = httpClient(server.url, { era: 'auto', timeoutMs: 10_000 });
    const seen = record(client);
    try {
      await client.subscribeResource(CURRENT);
      await client.subscribeResource(LISBON);
      // Acknowledged: the old stream is retiring now and stays open for the overlap.
      await server.emitResourceUpdated(CURRENT);
      await eventually(() => seen.updates(CURRENT) === 1, 3_000, 'the first update');
      const overlapping = server.state().listenStreams.length;
      await server.emitResourceUpdated(CURRENT);
      await eventually(() => seen.updates(CURRENT) === 2, 3_000, 'the second update').catch(() => {});
      await sleep(300);
      expect(overlapping).toBe(2);
      expect(seen.updates(CURRENT)).toBe(2);
    } finally {
      await client.close();
    }
  });
});

describe('close() leaves nothing open', () => {
  const kinds = ['TCPSocketWrap', 'Timeout', 'Immediate'];
  function handles(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const kind of process.getActiveResourcesInfo()) {
      if (kinds.includes(kind)) counts.set(kind, (counts.get(kind) ?? 0) + 1);
    }
    return counts;
  }

  it('ends the listen stream, its timers and sockets, and nothing reconnects', async () => {
    const server = new AxMCPDemoServer({ era: 'dual', keepAliveMs: 0, taskPollIntervalMs: 30_000 });
    await server.start();
    try {
      await sleep(200);
      const baseline = handles();
      const client = httpClient(server.url, { era: 'auto', timeoutMs: 10_000 });
      const listening: AxMCPListening = client.startListening({ retryDelayMs: 50, maxRetryDelayMs: 200 });
      await listening.ready;
      await client.subscribeResource(CURRENT);
      await eventually(() => server.state().listenStreams.length === 1, 5_000, 'the overlap to end');
      // A drop right before close: the reconnect under way must not outlive close().
      server.dropStreams();
      await client.close();
      await eventually(
        () => server.state().listenStreams.length === 0,
        5_000,
        'the server to see the stream end',
      );
      let now = handles();
      await eventually(
        () => {
          now = handles();
          return kinds.every((kind) => (now.get(kind) ?? 0) <= (baseline.get(kind) ?? 0));
        },
        8_000,
        'handles back to baseline',
      ).catch(() => {});
      expect(Object.fromEntries(now)).toEqual(Object.fromEntries(baseline));
      const counts = JSON.stringify(server.state().methodCounts);
      await sleep(500);
      expect(JSON.stringify(server.state().methodCounts)).toBe(counts);
      expect(server.state().listenStreams).toHaveLength(0);
      listening.close();
    } finally {
      await server.close();
    }
  });

  it('close() rejects a pending task wait at once and leaves no timer', async () => {
    const server = new AxMCPDemoServer({ era: 'modern', keepAliveMs: 0, taskPollIntervalMs: 30_000 });
    await server.start();
    try {
      await sleep(200);
      const baseline = handles();
      const client = httpClient(server.url, { era: 'auto', timeoutMs: 10_000 });
      const listening = client.startListening({ retryDelayMs: 50 });
      await listening.ready;
      const outcome = await client.callToolOutcome('start_reindex', { scope: 'closing' });
      if (outcome.kind !== 'task') throw new Error('expected a task');
      const waiting = client.waitForTask(outcome.task).then(
        () => 'resolved',
        (error: unknown) => error,
      );
      await eventually(
        () => server.state().listenStreams.some((s) => filterOf(s).taskIds !== undefined),
        5_000,
        'the task stream',
      );
      await client.close();
      const outcomeAfterClose = await Promise.race([waiting, sleep(2_000).then(() => 'pending')]);
      expect(outcomeAfterClose).toMatchObject({ code: 'closed' });
      await eventually(() => server.state().listenStreams.length === 0, 5_000, 'the stream to end');
      let now = handles();
      await eventually(
        () => {
          now = handles();
          return kinds.every((kind) => (now.get(kind) ?? 0) <= (baseline.get(kind) ?? 0));
        },
        8_000,
        'handles back to baseline',
      ).catch(() => {});
      expect(Object.fromEntries(now)).toEqual(Object.fromEntries(baseline));
    } finally {
      await server.close();
    }
  });

  it('close() ends every startListening handle', async () => {
    const server = new AxMCPDemoServer({ era: 'modern', keepAliveMs: 0 });
    await server.start();
    try {
      const client = httpClient(server.url, { era: 'auto', timeoutMs: 10_000 });
      const listening = client.startListening({ retryDelayMs: 50 });
      await listening.ready;
      expect(server.state().listenStreams).toHaveLength(1);
      await client.close();
      const ended = await Promise.race([
        listening.done.then(() => 'done'),
        sleep(2_000).then(() => 'pending'),
      ]);
      expect(ended).toBe('done');
    } finally {
      await server.close();
    }
  });
});
