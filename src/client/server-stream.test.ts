import { describe, expect, it } from 'vitest';
import { LEGACY_INITIALIZE, scriptedConnection } from './scripted-transport.fixture.js';
import { ServerStream } from './server-stream.js';

function rigWith(capabilities: Record<string, unknown>) {
  const rig = scriptedConnection({
    initialize: () => LEGACY_INITIALIZE(capabilities),
    'resources/subscribe': () => ({}),
    'resources/unsubscribe': () => ({}),
  });
  const dispatched: string[] = [];
  const stream = new ServerStream({
    connection: rig.connection,
    taskWakers: rig.taskWakers,
    dispatch: (message) => dispatched.push(message.method),
    lookAfterReconnect: () => {},
  });
  return { ...rig, stream, dispatched };
}

describe('ServerStream', () => {
  it('subscribes on the wire for the first owner and unsubscribes after the last', async () => {
    const rig = rigWith({ resources: { subscribe: true } });
    await rig.connection.init();
    await rig.stream.acquire('res://a', 'one');
    await rig.stream.acquire('res://a', 'two');
    expect(rig.stream.subscriptions()).toEqual([{ uri: 'res://a', owners: ['one', 'two'] }]);
    await rig.stream.release('res://a', 'one');
    expect(rig.methods().filter((m) => m.startsWith('resources/'))).toEqual(['resources/subscribe']);
    await rig.stream.release('res://a', 'two');
    expect(rig.methods().filter((m) => m.startsWith('resources/'))).toEqual([
      'resources/subscribe',
      'resources/unsubscribe',
    ]);
    expect(rig.stream.uris()).toEqual([]);
  });

  it('refuses an owner, typed and before anything is sent, when the server offers no subscriptions', async () => {
    const rig = rigWith({ resources: {} });
    await rig.connection.init();
    expect(() => rig.stream.acquire('res://a', 'one')).toThrow(
      expect.objectContaining({ code: 'unsupported' }),
    );
    expect(rig.methods()).toEqual(['initialize']);
    expect(rig.stream.subscriptions()).toEqual([]);
  });

  it('a listening handle is ready once connected, and done once closed', async () => {
    const rig = rigWith({});
    const listening = rig.stream.listen();
    await listening.ready;
    listening.close();
    await listening.done;
  });

  it('a handle refuses to open once the client is closing', async () => {
    const rig = rigWith({});
    rig.connection.beginClose();
    expect(() => rig.stream.listen()).toThrow(expect.objectContaining({ code: 'closed' }));
  });

  it('closing releases every owned URI on the wire', async () => {
    const rig = rigWith({ resources: { subscribe: true } });
    await rig.connection.init();
    await rig.stream.acquire('res://a', 'one');
    await rig.stream.acquire('res://b', 'one');
    await rig.stream.close(1_000);
    expect(rig.methods().filter((m) => m === 'resources/unsubscribe')).toHaveLength(2);
    expect(rig.stream.subscriptions()).toEqual([]);
  });
});
