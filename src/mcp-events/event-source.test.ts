/**
 * AxMCPEventSource's queue over a real AxMCPClient and a real runtime, with a scripted server
 * (the client's unit-test transport) so that the session can change at a chosen moment.
 */
import { describe, expect, it } from 'vitest';
import { AxMCPClient } from '../client/client.js';
import { LEGACY_INITIALIZE, scriptedTransport } from '../client/scripted-transport.fixture.js';
import { AxMemoryEventStore } from '../events/memory-store.js';
import { eventRuntime } from '../events/runtime.js';
import type { AxEventAppendInput, AxEventAppendResult } from '../events/store.js';
import { AxMCPEventSource } from './event-source.js';

/** A memory store whose appends wait while `hold()` is in force. */
class HeldStore extends AxMemoryEventStore {
  #gate: Promise<void> = Promise.resolve();

  hold(): () => void {
    let release!: () => void;
    this.#gate = new Promise((resolve) => {
      release = resolve;
    });
    return release;
  }

  override async append(input: AxEventAppendInput): Promise<AxEventAppendResult> {
    await this.#gate;
    return super.append(input);
  }
}

describe('AxMCPEventSource', () => {
  it('names a legacy update by the session it arrived on, not the one current when its turn comes', async () => {
    const server = scriptedTransport({ initialize: () => LEGACY_INITIALIZE({ resources: {} }) });
    const transport = server.transport as typeof server.transport & { sessionId?: string };
    transport.sessionId = 'session-1';
    const client = new AxMCPClient(transport, { namespace: 'inv', era: 'legacy' });
    const store = new HeldStore();
    const source = new AxMCPEventSource({ client });
    const runtime = eventRuntime({ sources: [source], store, allowVolatile: true });
    const published: string[] = [];
    runtime.onPublish(({ ingress }) => published.push(ingress.event.id));
    await runtime.start();
    const release = store.hold();
    const updated = (eventId: string) =>
      server.deliver(
        { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'inv://stock' } },
        { eventId },
      );
    updated('7');
    updated('8');
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The first waits on the store, the second behind it; meanwhile the client moves on (a
    // re-initialized session). Event ids 7 and 8 belong to session-1: named by another
    // session they are other events (no dedupe against a replay, no attribution to the send).
    transport.sessionId = 'session-2';
    release();
    for (let i = 0; i < 100 && published.length < 2; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await runtime.close();
    expect(published).toEqual(['sse:session-1:7', 'sse:session-1:8']);
  });

  it('says how many updates it received but had not published when it closed', async () => {
    const server = scriptedTransport({ initialize: () => LEGACY_INITIALIZE({ resources: {} }) });
    const client = new AxMCPClient(server.transport, { namespace: 'inv', era: 'legacy' });
    const store = new HeldStore();
    const errors: unknown[] = [];
    const runtime = eventRuntime({
      sources: [new AxMCPEventSource({ client })],
      store,
      allowVolatile: true,
      onError: (error) => errors.push(error),
    });
    await runtime.start();
    const release = store.hold();
    for (const eventId of ['1', '2', '3'])
      server.deliver(
        { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'inv://stock' } },
        { eventId },
      );
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The first is on its way to the store; the two behind it were dropped without a word.
    const closing = runtime.close({ drain: false });
    release();
    await closing;
    expect(errors).toEqual([
      expect.objectContaining({
        code: 'closed',
        message: expect.stringContaining('closed with 2 notification(s) received but not yet published'),
      }),
    ]);
  });
});
