import { describe, expect, it } from 'vitest';
import type { JSONRPCNotification } from '../protocol/jsonrpc.js';
import { META } from '../protocol/meta.js';
import type { SendRequest } from './in-flight.js';
import { type ListenFilter, ListenStream } from './listen-stream.js';

/** A ListenStream over a fake wire: every listen request gets the next id and stays open until aborted. */
function rig() {
  let filter: ListenFilter = { resourceSubscriptions: ['res://a'] };
  let nextId = 1;
  const opened: number[] = [];
  const stream = new ListenStream(
    {
      send: (request: SendRequest) => {
        const id = nextId++;
        opened.push(id);
        request.onId?.(id);
        return new Promise((_resolve, reject) => {
          request.signal?.addEventListener('abort', () => reject(request.signal?.reason), { once: true });
        });
      },
      filter: () => filter,
      lifecycle: () => {},
    },
    { retryDelayMs: 10 },
  );
  const on = (subscriptionId: number, method: string, params: Record<string, unknown> = {}) =>
    stream.accept({
      jsonrpc: '2.0',
      method,
      params: { ...params, _meta: { [META.subscriptionId]: subscriptionId } },
    } as JSONRPCNotification);
  const ack = (id: number) => on(id, 'notifications/subscriptions/acknowledged', { notifications: filter });
  const updated = (id: number, uri: string) => on(id, 'notifications/resources/updated', { uri });
  return {
    stream,
    opened,
    ack,
    updated,
    want: (next: ListenFilter) => {
      filter = next;
    },
  };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('ListenStream swap', () => {
  it("passes an event on once when the old stream's copy is read before the new stream's acknowledgement", async () => {
    const r = rig();
    await tick();
    expect(r.opened).toEqual([1]);
    expect(r.ack(1)).toBe(false);
    await r.stream.ready;

    r.want({ resourceSubscriptions: ['res://a', 'res://b'] });
    const swapping = r.stream.update();
    await tick();
    expect(r.opened).toEqual([1, 2]);
    // The server registered stream 2 and emitted: the old stream's copy is read first.
    expect(r.updated(1, 'res://a')).toBe(true);
    expect(r.ack(2)).toBe(false);
    expect(r.updated(2, 'res://a')).toBe(false);
    await swapping;
    // A later event on both, the new stream first this time: still once.
    expect(r.updated(2, 'res://a')).toBe(true);
    expect(r.updated(1, 'res://a')).toBe(false);
    // An event only the new stream carries.
    expect(r.updated(2, 'res://b')).toBe(true);
    r.stream.close();
  });

  it('after the overlap, the retired stream is dropped and every event of the new one passes', async () => {
    const r = rig();
    await tick();
    r.ack(1);
    r.want({ resourceSubscriptions: ['res://b'] });
    const swapping = r.stream.update();
    await tick();
    r.ack(2);
    await swapping;
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(r.updated(1, 'res://a')).toBe(false);
    expect(r.updated(2, 'res://b')).toBe(true);
    expect(r.updated(2, 'res://b')).toBe(true);
    r.stream.close();
  });
});

describe('ListenStream torn down by the server', () => {
  it('notifications/cancelled naming the listen request ends that stream; it is reopened with the current filter', async () => {
    const r = rig();
    await tick();
    r.ack(1);
    await r.stream.ready;
    r.want({ resourceSubscriptions: ['res://a', 'res://c'] });
    const cancelled = {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 1 },
    } as JSONRPCNotification;
    expect(r.stream.accept(cancelled)).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(r.opened).toEqual([1, 2]);
    // A cancellation of some other request is not the stream's: it passes on.
    const other = {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 99 },
    } as JSONRPCNotification;
    expect(r.stream.accept(other)).toBe(true);
    r.stream.close();
  });

  it('changes made together are one change of stream', async () => {
    const r = rig();
    await tick();
    r.ack(1);
    await r.stream.ready;
    r.want({ resourceSubscriptions: ['res://a', 'res://b', 'res://c'] });
    const changes = [r.stream.update(), r.stream.update(), r.stream.update()];
    await tick();
    expect(r.opened).toEqual([1, 2]);
    r.ack(2);
    await Promise.all(changes);
    r.stream.close();
  });
});
