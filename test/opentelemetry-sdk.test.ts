/**
 * ax-mcp's spans and trace context under the official OpenTelemetry SDK, registered the way an
 * application registers it (`NodeTracerProvider.register()`: tracer provider, async context
 * manager, W3C propagator). The library records through `@opentelemetry/api`; these tests
 * prove that what it records reaches the SDK and that a routed run's MCP requests carry the
 * run's trace to the server (official v2 server SDK).
 */
import { createRequire } from 'node:module';
import { trace } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  NodeTracerProvider,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AxMemoryEventStore } from '../src/events/memory-store.js';
import { type AxEventTargetDefinition, eventRoute, eventRuntime, eventTarget } from '../src/index.js';
import { httpClient } from './helpers/clients.js';
import { type ModernPeer, startModernServer } from './servers/modern.js';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

/** The `ax.event.delivery` span of one delivery. */
const deliverySpan = (deliveryId: string | undefined): ReadableSpan | undefined =>
  exporter
    .getFinishedSpans()
    .find((s) => s.name === 'ax.event.delivery' && s.attributes['ax.event.delivery_id'] === deliveryId);

/** Publishes one event to a route that wakes `target`, runs it, and returns its delivery id. */
async function deliverOnce(target: AxEventTargetDefinition): Promise<string | undefined> {
  const runtime = eventRuntime({
    store: new AxMemoryEventStore(),
    routes: [eventRoute(target.id).types('app.test').wake(target).build()],
  });
  await runtime.start();
  try {
    const receipt = await runtime.publish({
      event: { id: `${target.id}-1`, source: 'app://test', type: 'app.test', data: {} },
    });
    await runtime.waitForIdle();
    const [deliveryId] = receipt.deliveryIds;
    expect((await runtime.getRun(deliveryId as string))?.status).toBe('succeeded');
    return deliveryId;
  } finally {
    await runtime.close();
  }
}

describe('under the official OpenTelemetry SDK', () => {
  let peer: ModernPeer;

  beforeAll(async () => {
    provider.register();
    peer = await startModernServer();
  });

  afterAll(async () => {
    await peer?.close();
    await provider.shutdown();
    trace.disable();
  });

  it('ax-mcp and the SDK resolve one @opentelemetry/api (two copies would not see each other)', () => {
    const fromLibrary = createRequire(new URL('../src/events/executor.ts', import.meta.url));
    const sdk = createRequire(fromLibrary.resolve('@opentelemetry/sdk-trace-base'));
    expect(fromLibrary.resolve('@opentelemetry/api')).toBe(sdk.resolve('@opentelemetry/api'));
  });

  it('a delivery is recorded as an ax.event.delivery span with its run and what became of it', async () => {
    const deliveryId = await deliverOnce(
      eventTarget('noted')
        .invoke(async () => ({ ok: true }))
        .build(),
    );
    expect(deliverySpan(deliveryId)?.attributes).toMatchObject({
      'ax.event.route_id': 'noted',
      'ax.event.action': 'wake',
      'ax.event.attempt': 1,
      'ax.event.status': 'succeeded',
    });
  });

  it("a routed run's tool call carries the run's trace to the server in _meta.traceparent", async () => {
    const client = httpClient(peer.url, { era: 'modern' });
    const target = eventTarget('echoes')
      .invoke(async () => {
        await client.callTool('echo', { message: 'from a routed run' });
        return { ok: true };
      })
      .build();
    try {
      const { traceId, spanId } = deliverySpan(await deliverOnce(target))?.spanContext() ?? {};
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      const call = peer.stats.requests.filter((r) => r.method === 'tools/call').at(-1);
      expect(call?.meta).toMatchObject({ traceparent: `00-${traceId}-${spanId}-01` });
    } finally {
      await client.close();
    }
  });

  it('a tool call outside any span carries no trace context', async () => {
    const client = httpClient(peer.url, { era: 'modern' });
    try {
      await client.callTool('echo', { message: 'untraced' });
      const call = peer.stats.requests.filter((r) => r.method === 'tools/call').at(-1);
      expect(call?.meta).not.toHaveProperty('traceparent');
    } finally {
      await client.close();
    }
  });
});
