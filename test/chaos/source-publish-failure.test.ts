/**
 * A regression test of what the chaos campaign found (a `pg_terminate_backend` of a source's
 * connection): when the store refuses one publish — a connection cut, a failover, a full store —
 * `AxMCPEventSource` reports the error and drops the notification. The client has already taken
 * it off the stream (its `Last-Event-ID` moved past it), so it is never redelivered, and no
 * `resumed: false` tells the application to re-read: an update the server acknowledged, and the
 * client received, is lost while the session stays up.
 *
 * Fixed; this test keeps it fixed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AxEventAppendInput,
  type AxEventAppendResult,
  AxMCPEventSource,
  AxMemoryEventStore,
  eventRoute,
  eventRuntime,
  MCP_EVENT_TYPES,
} from '../../src/index.js';
import { eventually, httpClient } from '../helpers/clients.js';
import { type LegacyV1Server, startLegacyV1Server } from '../servers/legacy-v1.js';

/** A memory store whose next `failures` appends of a resource update fail, as a cut connection would. */
class FlakyStore extends AxMemoryEventStore {
  failures = 0;
  override async append(input: AxEventAppendInput): Promise<AxEventAppendResult> {
    if (this.failures > 0 && input.event.ingress.event.type === MCP_EVENT_TYPES.resourceUpdated) {
      this.failures--;
      throw new Error('terminating connection due to administrator command');
    }
    return super.append(input);
  }
}

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
});

describe('AxMCPEventSource when one publish fails', () => {
  let server: LegacyV1Server;

  it('still delivers the update: the publish is retried, the error reported', async () => {
    server = await startLegacyV1Server();
    closers.push(() => server.close());
    const client = httpClient(server.url, { era: 'legacy' });
    closers.push(() => client.close());
    const store = new FlakyStore();
    const seen: string[] = [];
    const errors: unknown[] = [];
    const lifecycle: string[] = [];
    client.subscribeEvents((e) => {
      if (e.type === 'lifecycle')
        lifecycle.push(`${e.state}${e.resumed === false ? ' (resumed: false)' : ''}`);
    });
    const runtime = eventRuntime({
      store,
      sources: [
        new AxMCPEventSource({
          client,
          resourceSubscriptions: ['res://text/hello'],
          identity: { tenantId: 't' },
          trust: 'authenticated',
        }),
      ],
      onError: (error) => errors.push(error),
      routes: [
        eventRoute('updates')
          .types(MCP_EVENT_TYPES.resourceUpdated)
          .authenticated()
          .observe(({ event }) => void seen.push(String(event.id)))
          .build(),
      ],
    });
    closers.push(() => runtime.close());
    await runtime.start();
    await eventually(() => server.stats.getStreams.size > 0, 5000, 'GET stream');

    store.failures = 1; // the next publish meets a cut connection
    expect(await server.emitResourceUpdated('res://text/hello')).toBe(1);
    await eventually(() => errors.length > 0, 5000, 'the publish error');
    expect(await server.emitResourceUpdated('res://text/hello')).toBe(1);
    await eventually(() => seen.length >= 1, 5000, 'the second update');
    await runtime.waitForIdle({ timeoutMs: 5000 });
    await new Promise((r) => setTimeout(r, 300));

    // Today: one error reported, the first update gone, the session never said to re-read.
    console.log(
      `[regression] delivered ${seen.length} of 2 updates; errors: ${errors.map((e) => String(e)).join('; ')}; lifecycle: ${lifecycle.join(', ')}`,
    );
    expect(seen).toHaveLength(2);
  });
});
