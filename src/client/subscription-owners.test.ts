import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SubscriptionOwners } from './subscription-owners.js';

function fakeWire(failOn?: (op: string, uri: string) => boolean) {
  const log: string[] = [];
  const live = new Set<string>();
  return {
    log,
    live,
    wire: {
      async subscribe(uri: string) {
        await new Promise((r) => setTimeout(r, Math.random() * 3));
        if (failOn?.('subscribe', uri)) throw new Error('wire failure');
        if (live.has(uri)) log.push(`double subscribe ${uri}`);
        live.add(uri);
        log.push(`subscribe ${uri}`);
      },
      async unsubscribe(uri: string) {
        await new Promise((r) => setTimeout(r, Math.random() * 3));
        if (failOn?.('unsubscribe', uri)) throw new Error('wire failure');
        live.delete(uri);
        log.push(`unsubscribe ${uri}`);
      },
    },
  };
}

describe('SubscriptionOwners', () => {
  it('touches the wire only on the first acquire and the last release', async () => {
    const { wire, log } = fakeWire();
    const owners = new SubscriptionOwners(wire);
    await owners.acquire('r://a', 'x');
    await owners.acquire('r://a', 'y');
    await owners.acquire('r://a', 'y');
    await owners.release('r://a', 'x');
    expect(log).toEqual(['subscribe r://a']);
    await owners.release('r://a', 'y');
    expect(log).toEqual(['subscribe r://a', 'unsubscribe r://a']);
    expect(owners.uris()).toEqual([]);
  });

  it('refuses a URI template, which no resource has: nothing reaches the wire', () => {
    const { wire, log } = fakeWire();
    const owners = new SubscriptionOwners(wire);
    expect(() => owners.acquire('inventory://warehouse/{warehouseId}', 'a')).toThrow(
      expect.objectContaining({
        code: 'invalid_argument',
        message: expect.stringContaining('is a URI template'),
      }),
    );
    expect(log).toEqual([]);
    expect(owners.uris()).toEqual([]);
  });

  it('keeps ownership unchanged when the wire call fails', async () => {
    let fail = true;
    const { wire } = fakeWire(() => fail);
    const owners = new SubscriptionOwners(wire);
    await expect(owners.acquire('r://a', 'x')).rejects.toThrow('wire failure');
    expect(owners.uris()).toEqual([]);
    fail = false;
    await owners.acquire('r://a', 'x');
    fail = true;
    await expect(owners.release('r://a', 'x')).rejects.toThrow('wire failure');
    expect(owners.owners('r://a')).toEqual(['x']);
  });

  it('never double-subscribes or leaves a stray subscription under concurrent changes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            op: fc.constantFrom('acquire', 'release'),
            owner: fc.constantFrom('a', 'b', 'c', 'd'),
          }),
          {
            maxLength: 40,
          },
        ),
        async (ops) => {
          const { wire, log, live } = fakeWire();
          const owners = new SubscriptionOwners(wire);
          await Promise.all(ops.map(({ op, owner }) => owners[op]('r://x', owner)));
          expect(log.filter((line) => line.startsWith('double'))).toEqual([]);
          // The wire state matches the logical state exactly.
          expect(live.has('r://x')).toBe(owners.owners('r://x').length > 0);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('leaves to a restore only what a first owner did not already put on the new session', async () => {
    const { wire, log, live } = fakeWire();
    const owners = new SubscriptionOwners(wire);
    await owners.acquire('r://a', 'x');
    live.clear(); // the server lost its session
    owners.sessionReplaced();
    await owners.acquire('r://b', 'y'); // on the new session, before the restore runs
    await owners.acquire('r://a', 'z'); // joins: touches nothing
    log.length = 0;
    expect(await owners.restore()).toEqual([]);
    expect(log).toEqual(['subscribe r://a']);
  });

  it('restores each owned URI once and releases everything', async () => {
    const { wire, log, live } = fakeWire();
    const owners = new SubscriptionOwners(wire);
    await owners.acquire('r://a', 'x');
    await owners.acquire('r://a', 'y');
    await owners.acquire('r://b', 'x');
    log.length = 0;
    live.clear(); // the server lost its session
    expect(await owners.restore()).toEqual([]);
    expect(log.sort()).toEqual(['subscribe r://a', 'subscribe r://b']);
    log.length = 0;
    await owners.releaseAll();
    expect(log.sort()).toEqual(['unsubscribe r://a', 'unsubscribe r://b']);
    expect(owners.uris()).toEqual([]);
  });
});
