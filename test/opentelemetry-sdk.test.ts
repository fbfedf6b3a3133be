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
import { eventRoute, eventRuntime, eventTarget } from '../src/index.js';
import { httpClient } from './helpers/clients.js';
import { type ModernPeer, startModernServer } from './servers/modern.js';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

const finished = (name: string): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.name === name);

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
    const target = eventTarget('noted')
      .invoke(async () => ({ ok: true }))
      .build();
    const runtime = eventRuntime({
      store: new AxMemoryEventStore(),
      routes: [eventRoute('noted').types('app.noted').wake(target).build()],
    });
    await runtime.start();
    try {
      const receipt = await runtime.publish({
        event: { id: 'n-1', source: 'app://test', type: 'app.noted', data: {} },
      });
      await runtime.waitForIdle();
      const [deliveryId] = receipt.deliveryIds;
      const span = finished('ax.event.delivery').find(
        (s) => s.attributes['ax.event.delivery_id'] === deliveryId,
      );
      expect(span?.attributes).toMatchObject({
        'ax.event.route_id': 'noted',
        'ax.event.action': 'wake',
        'ax.event.attempt': 1,
        'ax.event.status': 'succeeded',
      });
    } finally {
      await runtime.close();
    }
  });

  it("a routed run's tool call carries the run's trace to the server in _meta.traceparent", async () => {
    const client = httpClient(peer.url, { era: 'modern' });
    const target = eventTarget('echoes')
      .invoke(async () => {
        await client.callTool('echo', { message: 'from a routed run' });
        return { ok: true };
      })
      .build();
    const runtime = eventRuntime({
      store: new AxMemoryEventStore(),
      routes: [eventRoute('echoes').types('app.echo').wake(target).build()],
    });
    await runtime.start();
    try {
      const receipt = await runtime.publish({
        event: { id: 'e-1', source: 'app://test', type: 'app.echo', data: {} },
      });
      await runtime.waitForIdle();
      expect((await runtime.getRun(receipt.deliveryIds[0] as string))?.status).toBe('succeeded');
      const span = finished('ax.event.delivery').find(
        (s) => s.attributes['ax.event.delivery_id'] === receipt.deliveryIds[0],
      );
      const { traceId, spanId } = span?.spanContext() ?? {};
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      const call = peer.stats.requests.filter((r) => r.method === 'tools/call').at(-1);
      expect(call?.meta).toMatchObject({ traceparent: `00-${traceId}-${spanId}-01` });
    } finally {
      await runtime.close();
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
