/**
 * Subscriptions survive faults: the client (`era: 'legacy'`) talks to the official v2 server SDK
 * peer (`startLegacyV2Server`) through the fault proxy, which cuts the GET stream mid-event and at
 * byte offsets, stalls, answers 5xx bursts, drops every stream and throttles a slow consumer, while
 * the server restarts and loses sessions. The peer's event store makes GET-stream events
 * replayable with Last-Event-ID, so every update emitted while a session lives must be delivered
 * exactly once, keyed by (session, SSE event id). Also checked: `resources/subscribe` reaches the
 * wire once per URI per session, a lost session is restored exactly once, many owners
 * acquiring and releasing one URI never double-subscribe nor leave a stray subscription, the
 * reconnect backoff stays bounded, and after `close()` no socket, timer or listener is left.
 */
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import type {
  AxMCPClient,
  AxMCPClientOptions,
  AxMCPLifecycleState,
  AxMCPListening,
  AxMCPListenOptions,
  AxMCPStreamableHTTPTransportOptions,
} from '../src/index.js';
import { type FaultProxy, type FaultProxyOptions, startFaultProxy } from './fault/proxy.js';
import { eventually, httpClient } from './helpers/clients.js';
import { startEverythingServer } from './servers/everything.js';
import { startLegacyV1Server } from './servers/legacy-v1.js';
import { type LegacyV2Options, startLegacyV2Server } from './servers/legacy-v2.js';
import type { PeerStats } from './servers/stats.js';

const HELLO = 'res://text/hello';
const ITEMS = ['res://item/0001', 'res://item/0002', 'res://item/0003'];

interface Delivered {
  uri: string;
  eventId: string | undefined;
  session: string | undefined;
}

/** What the tests need of a sessionful peer; both SDK peers provide it. */
interface Peer {
  readonly url: string;
  readonly stats: PeerStats;
  restart(options?: { dropConnections?: boolean }): Promise<void>;
  close(): Promise<void>;
  emitResourceUpdated(uri: string): Promise<number>;
  setResourceText?(uri: string, text: string): void;
}

type PeerName = 'v2' | 'v1';

const PEERS: { peer: PeerName; label: string }[] = [
  { peer: 'v2', label: 'v2 SDK (@modelcontextprotocol/server)' },
  { peer: 'v1', label: 'v1 SDK (@modelcontextprotocol/sdk)' },
];

interface RigOptions {
  /** Which official SDK serves (default v2). */
  peer?: PeerName;
  /** Options of the v2 peer (the v1 peer takes none of these). */
  server?: LegacyV2Options;
  proxy?: FaultProxyOptions;
  client?: Partial<AxMCPClientOptions>;
  transport?: AxMCPStreamableHTTPTransportOptions;
  listen?: AxMCPListenOptions | false;
}

/** A server, a proxy in front of it, and a listening legacy client with everything it saw. */
interface Rig {
  server: Peer;
  proxy: FaultProxy;
  client: AxMCPClient;
  listening: AxMCPListening | undefined;
  delivered: Delivered[];
  lifecycle: { state: AxMCPLifecycleState; at: number; resumed?: boolean }[];
  errors: unknown[];
  /** Updates the server sent, per session and URI. */
  emitted: Map<string, number>;
  /** The session the client holds now. */
  session(): string | undefined;
  /** Emits `count` updates of `uri` (changing its text first when it has one); returns how many sessions got each. */
  emit(uri: string, count?: number): Promise<number>;
  /** Total emitted so far. */
  emittedTotal(): number;
  /** Waits until every emitted update arrived, then a little longer for late duplicates. */
  settle(timeoutMs?: number): Promise<void>;
  /** Asserts every emitted update was delivered exactly once. */
  expectExactlyOnce(): void;
}

const rigs: Rig[] = [];

async function startRig(options: RigOptions = {}): Promise<Rig> {
  const server: Peer =
    options.peer === 'v1'
      ? await startLegacyV1Server()
      : await startLegacyV2Server({ keepAliveMs: 0, ...options.server });
  const proxy = await startFaultProxy(server.url, options.proxy);
  const delivered: Delivered[] = [];
  const lifecycle: Rig['lifecycle'] = [];
  const errors: unknown[] = [];
  const emitted = new Map<string, number>();
  const client = httpClient(
    proxy.url,
    { era: 'legacy', timeoutMs: 10_000, onError: (error) => errors.push(error), ...options.client },
    { retry: { attempts: 3, baseDelayMs: 10, maxDelayMs: 50 }, timeoutMs: 10_000, ...options.transport },
  );
  const session = () => client.transport.sessionId;
  client.subscribeEvents((event) => {
    if (event.type === 'resource_updated') {
      delivered.push({ uri: event.uri, eventId: event.eventId, session: session() });
    } else if (event.type === 'lifecycle') {
      lifecycle.push({ state: event.state, at: Date.now(), resumed: event.resumed });
    }
  });
  let counter = 0;
  const rig: Rig = {
    server,
    proxy,
    client,
    listening: undefined,
    delivered,
    lifecycle,
    errors,
    emitted,
    session,
    async emit(uri, count = 1) {
      let sessions = 0;
      for (let i = 0; i < count; i++) {
        if (uri === HELLO || uri.startsWith('res://item/')) server.setResourceText?.(uri, `v${++counter}`);
        sessions = await server.emitResourceUpdated(uri);
        for (const id of server.stats.sessions) {
          if (server.stats.subscriptions.get(id)?.has(uri)) {
            const key = `${id} ${uri}`;
            emitted.set(key, (emitted.get(key) ?? 0) + 1);
          }
        }
      }
      return sessions;
    },
    emittedTotal: () => [...emitted.values()].reduce((a, b) => a + b, 0),
    async settle(timeoutMs = 10_000) {
      await eventually(
        () => delivered.length >= rig.emittedTotal(),
        timeoutMs,
        `delivery of ${rig.emittedTotal()} updates (have ${delivered.length})`,
      );
      await new Promise((resolve) => setTimeout(resolve, 150));
    },
    expectExactlyOnce() {
      const seen = new Map<string, number>();
      const perSessionUri = new Map<string, number>();
      for (const update of delivered) {
        const key = `${update.session} ${update.eventId}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
        const tally = `${update.session} ${update.uri}`;
        perSessionUri.set(tally, (perSessionUri.get(tally) ?? 0) + 1);
      }
      expect(delivered.filter((update) => update.eventId === undefined)).toEqual([]);
      expect([...seen].filter(([, n]) => n > 1).map(([key]) => key)).toEqual([]);
      expect(Object.fromEntries(perSessionUri)).toEqual(Object.fromEntries(emitted));
      expect(delivered.length).toBe(rig.emittedTotal());
    },
  };
  if (options.listen !== false) {
    rig.listening = client.startListening({
      retryDelayMs: 20,
      maxRetryDelayMs: 200,
      onError: (error) => errors.push(error),
      ...options.listen,
    });
  }
  rigs.push(rig);
  return rig;
}

/** Subscribes and sees one update through, so the stream has an event id to resume from. */
async function primed(rig: Rig, uris: string[] = [HELLO]): Promise<void> {
  await rig.listening?.ready;
  for (const uri of uris) await rig.client.subscribeResource(uri);
  await eventually(() => rig.server.stats.getStreams.size === 1, 5000, 'GET stream');
  for (const uri of uris) await rig.emit(uri);
  await rig.settle();
}

function subscribesOnWire(rig: Rig): number {
  return rig.server.stats.methods.get('resources/subscribe') ?? 0;
}

/** Delays between consecutive GETs the proxy saw since `since`. */
function getDelays(proxy: FaultProxy, since: number): number[] {
  const times = proxy.stats.log.filter((e) => e.method === 'GET' && e.at >= since).map((e) => e.at);
  return times.slice(1).map((t, i) => t - (times[i] as number));
}

afterEach(async () => {
  for (const rig of rigs.splice(0)) {
    await rig.client.close().catch(() => {});
    await rig.proxy.close();
    await rig.server.close();
  }
});

describe.each(PEERS)(
  'on the $label peer: every replayable update exactly once, every URI restored once',
  ({ peer }) => {
    it('delivers through the proxy without faults, subscribing once per URI', async () => {
      const rig = await startRig({ peer });
      await primed(rig, [HELLO, ...ITEMS]);
      await rig.client.acquireResourceSubscription(HELLO, 'second-owner');
      for (const uri of [HELLO, ...ITEMS]) await rig.emit(uri, 5);
      await rig.settle();
      rig.expectExactlyOnce();
      expect(rig.delivered).toHaveLength(24);
      expect(subscribesOnWire(rig)).toBe(4);
      expect(rig.proxy.stats.rpcMethods.get('resources/subscribe')).toBe(4);
    });

    it('an event cut in the middle is replayed once, after its id line got through', async () => {
      const rig = await startRig({ peer });
      await primed(rig);
      for (let round = 0; round < 5; round++) {
        const resumeFrom = rig.delivered.at(-1)?.eventId;
        const cut = rig.proxy.faults.cutNextStream({ midEvent: true, method: 'GET' });
        await rig.emit(HELLO, 3);
        const report = await cut;
        const cutId = /id: (\S+)\n/.exec(report.partialEvent)?.[1];
        expect(cutId, report.partialEvent).toBeDefined();
        expect(report.partialEvent).not.toContain('\n\n');
        await rig.settle();
        // The reconnect resumed from the last complete event, not from the interrupted one.
        const resumed = rig.proxy.stats.log.filter((e) => e.method === 'GET' && e.lastEventId !== undefined);
        expect(resumed.at(-1)?.lastEventId).toBe(resumeFrom);
        expect(rig.delivered.filter((u) => u.eventId === cutId)).toHaveLength(1);
      }
      rig.expectExactlyOnce();
      expect(rig.proxy.stats.cuts).toBe(5);
      expect(subscribesOnWire(rig)).toBe(1);
    });

    it('cuts at every byte offset of an event lose and duplicate nothing', async () => {
      const rig = await startRig({ peer });
      await primed(rig);
      const offsets = [
        0, 1, 2, 6, 14, 15, 16, 20, 30, 45, 60, 75, 90, 100, 110, 115, 118, 119, 120, 121, 130,
      ];
      for (const afterBytes of offsets) {
        const cut = rig.proxy.faults.cutNextStream({ afterBytes, method: 'GET' });
        await rig.emit(HELLO, 2);
        await cut;
        await rig.settle();
      }
      rig.expectExactlyOnce();
      expect(rig.proxy.stats.cuts).toBe(offsets.length);
      expect(subscribesOnWire(rig)).toBe(1);
    });

    it('a 5xx burst on reconnect: backoff grows, stays under its ceiling, and nothing is lost', async () => {
      const retryDelayMs = 40;
      const maxRetryDelayMs = 320;
      const rig = await startRig({ peer, listen: { retryDelayMs, maxRetryDelayMs } });
      await primed(rig);
      const failures = 7;
      rig.proxy.faults.failNext(failures, 503, { method: 'GET' });
      const dropped = Date.now();
      expect(rig.proxy.faults.dropAllStreams()).toBe(1);
      await rig.emit(HELLO, 5);
      await rig.settle(15_000);
      rig.expectExactlyOnce();
      const gets = rig.proxy.stats.log.filter((e) => e.method === 'GET' && e.at >= dropped);
      expect(gets.map((e) => e.status)).toEqual([...Array(failures).fill(503), 200]);
      const delays = [(gets[0] as { at: number }).at - dropped, ...getDelays(rig.proxy, dropped)];
      console.info(
        `reconnect delays after a drop and ${failures}× 503 (base ${retryDelayMs}, ceiling ${maxRetryDelayMs}): ${delays.join(', ')} ms`,
      );
      delays.forEach((delay, attempt) => {
        const backoff = Math.min(maxRetryDelayMs, retryDelayMs * 2 ** attempt);
        // Full jitter in [backoff/2, backoff], plus the time an attempt takes.
        expect(delay).toBeGreaterThanOrEqual(backoff / 2 - 5);
        expect(delay).toBeLessThanOrEqual(backoff + 250);
      });
      expect(Math.max(...delays)).toBeLessThanOrEqual(maxRetryDelayMs + 250);
      expect(subscribesOnWire(rig)).toBe(1);
      // A successful reconnect resets the backoff.
      const again = Date.now();
      rig.proxy.faults.dropAllStreams();
      const reopened = () =>
        rig.proxy.stats.log.find((e) => e.method === 'GET' && e.at >= again && e.status === 200);
      await eventually(() => reopened() !== undefined, 3000, 'reconnect');
      expect((reopened() as { at: number }).at - again).toBeLessThanOrEqual(retryDelayMs + 250);
    });

    it('repeated drops of every stream while updates flow lose and duplicate nothing', async () => {
      const rig = await startRig({ peer });
      await primed(rig, [HELLO, ITEMS[0] as string]);
      const reconnects = () => rig.lifecycle.filter((e) => e.state === 'reconnected').length;
      for (let round = 0; round < 20; round++) {
        const opened = reconnects();
        await rig.emit(HELLO, 3);
        expect(rig.proxy.faults.dropAllStreams()).toBeGreaterThanOrEqual(1);
        await rig.emit(ITEMS[0] as string, 2);
        await eventually(() => reconnects() > opened, 5000, `reconnect ${round}`);
      }
      await rig.settle();
      rig.expectExactlyOnce();
      expect(rig.delivered).toHaveLength(2 + 20 * 5);
      // Every reconnect picked up from the server's replay, and says so.
      const reopened = rig.lifecycle.filter((e) => e.state === 'reconnected');
      expect(reopened.length).toBeGreaterThanOrEqual(20);
      expect(reopened.every((e) => e.resumed === true)).toBe(true);
      expect(rig.proxy.stats.dropped).toBeGreaterThanOrEqual(20);
      expect(subscribesOnWire(rig)).toBe(2);
      // One look at the lists after the run of reconnects, not one per reconnect (it was 5–6).
      const listed = () => rig.proxy.stats.rpcMethods.get('tools/list') ?? 0;
      await eventually(() => listed() >= 1, 3000, 'the look after the reconnects');
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(listed()).toBe(1);
    });

    for (const dropConnections of peer === 'v2' ? [false, true] : [false]) {
      it(`restart${dropConnections ? ' with dropped connections' : ''}: one initialize, one subscribe per URI, updates flow again`, async () => {
        const rig = await startRig({ peer });
        const uris = [HELLO, ...ITEMS];
        await primed(rig, uris);
        await rig.client.acquireResourceSubscription(HELLO, 'other-owner');
        const before = rig.session();
        const initializes = rig.server.stats.initializeCount;
        const subscribes = subscribesOnWire(rig);
        await rig.server.restart({ dropConnections });
        await eventually(() => rig.server.stats.sessions.size === 1, 5000, 'new session');
        const after = [...rig.server.stats.sessions][0] as string;
        await eventually(
          () => (rig.server.stats.subscriptions.get(after)?.size ?? 0) === uris.length,
          5000,
          'restore',
        );
        await eventually(
          () => rig.server.stats.getStreams.get(after) === 1,
          5000,
          'GET stream on the new session',
        );
        expect(rig.session()).toBe(after);
        expect(after).not.toBe(before);
        for (const uri of uris) await rig.emit(uri, 4);
        await rig.settle();
        rig.expectExactlyOnce();
        expect(rig.server.stats.initializeCount - initializes).toBe(1);
        expect(subscribesOnWire(rig) - subscribes).toBe(uris.length);
        expect([...(rig.server.stats.subscriptions.get(after) ?? [])].sort()).toEqual([...uris].sort());
        expect(rig.client.subscriptions.find((s) => s.uri === HELLO)?.owners).toEqual([
          'manual',
          'other-owner',
        ]);
      });
    }
  },
);

describe('more faults (v2 SDK peer): every replayable update exactly once', () => {
  it('a stall holds the stream and requests, then everything arrives once, without a reconnect', async () => {
    const rig = await startRig();
    await primed(rig);
    const gets = rig.proxy.stats.httpMethods.get('GET');
    const stalled = rig.proxy.faults.stall(1200);
    const started = Date.now();
    await rig.emit(HELLO, 10);
    const acquiring = rig.client.subscribeResource(ITEMS[0] as string);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(rig.delivered).toHaveLength(1);
    await acquiring;
    expect(Date.now() - started).toBeGreaterThanOrEqual(1100);
    await stalled;
    await rig.emit(ITEMS[0] as string, 3);
    await rig.settle();
    rig.expectExactlyOnce();
    expect(rig.proxy.stats.httpMethods.get('GET')).toBe(gets);
    expect(subscribesOnWire(rig)).toBe(2);
  });

  it('a 5xx burst on subscribe is retried; a longer one fails and leaves ownership unchanged', async () => {
    const rig = await startRig();
    await primed(rig);
    rig.proxy.faults.failNext(2, 503, { method: 'POST' });
    await rig.client.subscribeResource(ITEMS[0] as string);
    expect(subscribesOnWire(rig)).toBe(2);
    expect(rig.proxy.stats.rpcMethods.get('resources/subscribe')).toBe(2);
    rig.proxy.faults.failNext(10, 503, { method: 'POST' });
    await expect(rig.client.subscribeResource(ITEMS[1] as string)).rejects.toMatchObject({ status: 503 });
    rig.proxy.faults.reset();
    expect(rig.client.subscriptions.map((s) => s.uri)).toEqual([ITEMS[0], HELLO].sort());
    expect(subscribesOnWire(rig)).toBe(2);
    await rig.emit(ITEMS[0] as string, 3);
    await rig.emit(ITEMS[1] as string, 3);
    await rig.settle();
    rig.expectExactlyOnce();
  });

  it('a slow consumer gets everything once, also when its stream is cut', async () => {
    const rig = await startRig();
    await primed(rig);
    rig.proxy.faults.slowConsumer(6000);
    await rig.emit(HELLO, 30);
    const cut = rig.proxy.faults.cutNextStream({ midEvent: true, method: 'GET' });
    await rig.emit(HELLO, 20);
    await cut;
    await rig.settle(20_000);
    rig.expectExactlyOnce();
    expect(subscribesOnWire(rig)).toBe(1);
  });

  it('a long-lived stream carries far more bytes than the message size limit', async () => {
    const rig = await startRig({ transport: { maxResponseBytes: 1024 } });
    await primed(rig, [HELLO, ...ITEMS]);
    for (let i = 0; i < 100; i++) for (const uri of [HELLO, ...ITEMS]) await rig.emit(uri);
    await rig.settle();
    rig.expectExactlyOnce();
    expect(rig.proxy.stats.bytesToClient).toBeGreaterThan(30 * 1024);
    expect(rig.lifecycle.filter((e) => e.state === 'disconnected')).toEqual([]);
  });

  it('keep-alive comments on an idle stream never hit the message size limit', async () => {
    const rig = await startRig({ server: { keepAliveMs: 5 }, transport: { maxResponseBytes: 1024 } });
    await primed(rig);
    // ~14 bytes of `: keepalive` every 5 ms: well past 1 KiB in two seconds, though no message is large.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await rig.emit(HELLO, 3);
    await rig.settle();
    rig.expectExactlyOnce();
    expect(rig.errors.filter((e) => (e as { code?: string }).code === 'message_too_large')).toEqual([]);
    expect(rig.lifecycle.filter((e) => e.state === 'disconnected')).toEqual([]);
  });

  it('an oversized event does not swallow the replayable update behind it', async () => {
    const long = `res://long/${'x'.repeat(2000)}`;
    const rig = await startRig({ transport: { maxResponseBytes: 1024 } });
    await primed(rig);
    await rig.client.subscribeResource(long);
    // Held by a stall, the oversized event and the next one reach the client in one burst.
    const stalled = rig.proxy.faults.stall(300);
    await rig.server.emitResourceUpdated(long);
    await rig.emit(HELLO);
    await stalled;
    await eventually(
      () => rig.delivered.some((u) => u.uri === HELLO && u !== rig.delivered[0]),
      5000,
      'update',
    );
    expect(rig.delivered.filter((u) => u.uri === long)).toEqual([]);
    await rig.settle();
    expect(rig.delivered.filter((u) => u.uri === HELLO)).toHaveLength(2);
  });
});

describe('session loss, more cases (v2 SDK peer)', () => {
  it('one restore is announced once', async () => {
    const rig = await startRig();
    await primed(rig);
    await rig.server.restart();
    await eventually(() => rig.lifecycle.some((e) => e.state === 'session_restored'), 5000, 'restore');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(rig.lifecycle.filter((e) => e.state === 'session_restored')).toHaveLength(1);
  });

  it('a session recovered by a request first: the stream follows the new session', async () => {
    const rig = await startRig({ listen: { retryDelayMs: 400, maxRetryDelayMs: 400 } });
    await primed(rig, [HELLO]);
    await rig.emit(HELLO, 10);
    await rig.settle();
    await rig.server.restart();
    // The stream waits its retry delay; a call meets the lost session first and recovers it.
    await rig.client.ping();
    const after = rig.session() as string;
    expect(rig.server.stats.subscriptions.get(after)?.has(HELLO)).toBe(true);
    await eventually(
      () => rig.server.stats.getStreams.get(after) === 1,
      5000,
      'GET stream on the new session',
    );
    // Listen first: the subscription went back only once the stream was open on the new session,
    // so no update the server sent right after it could go to a stream nobody held.
    const onSession = rig.proxy.stats.log.filter((e) => e.session === after);
    const stream = onSession.findIndex((e) => e.method === 'GET' && e.status === 200);
    const subscribe = onSession.findIndex((e) => e.rpc.some((m) => m.method === 'resources/subscribe'));
    expect(stream).toBeGreaterThanOrEqual(0);
    expect(subscribe).toBeGreaterThan(stream);
    await rig.emit(HELLO, 5);
    await rig.settle();
    rig.expectExactlyOnce();
  });

  it('a subscribe issued while the lost session is being re-initialized waits for the new session', async () => {
    const rig = await startRig({ listen: { retryDelayMs: 2000, maxRetryDelayMs: 2000 } });
    await primed(rig);
    await rig.server.restart();
    // Hold the answer to the new `initialize`, and subscribe while it is pending.
    let handshake!: () => void;
    const handshaking = new Promise<void>((resolve) => {
      handshake = resolve;
    });
    rig.proxy.onRequest = (entry) => {
      if (!entry.rpc.some((m) => m.method === 'initialize')) return;
      void rig.proxy.faults.stall(300);
      handshake();
    };
    const pinging = rig.client.ping();
    await handshaking;
    await rig.client.subscribeResource(ITEMS[0] as string);
    await pinging;
    const session = rig.session() as string;
    expect([...(rig.server.stats.subscriptions.get(session) ?? [])].sort()).toEqual([HELLO, ITEMS[0]].sort());
  });

  it('the last owner releases while the session is lost: the release ends and nothing is restored for it', async () => {
    const rig = await startRig({ listen: { retryDelayMs: 2000, maxRetryDelayMs: 2000 } });
    await primed(rig, [HELLO, ITEMS[0] as string]);
    await rig.server.restart();
    const released = await Promise.race([
      rig.client.unsubscribeResource(HELLO).then(() => 'released'),
      new Promise((resolve) => setTimeout(() => resolve('stuck'), 5000)),
    ]);
    expect(released).toBe('released');
    const after = rig.session() as string;
    expect([...(rig.server.stats.subscriptions.get(after) ?? [])]).toEqual([ITEMS[0]]);
    expect(rig.client.subscriptions.map((s) => s.uri)).toEqual([ITEMS[0]]);
  });

  it('a resume point the server evicted: the stream reopens fresh and later updates arrive', async () => {
    const rig = await startRig();
    await primed(rig);
    const resumePoint = rig.delivered.at(-1)?.eventId as string;
    const since = Date.now();
    const reconnects = () => rig.lifecycle.filter((e) => e.state === 'reconnected').length;
    const reconnectsBefore = reconnects();
    rig.proxy.faults.failNext(1_000_000, 503, { method: 'GET' });
    rig.proxy.faults.dropAllStreams();
    // The peer's event store keeps 5 000 events: these push the client's resume point out.
    for (let i = 0; i < 5200; i += 200) {
      await Promise.all(Array.from({ length: 200 }, () => rig.server.emitResourceUpdated(HELLO)));
    }
    rig.proxy.faults.reset();
    const session = rig.session() as string;
    // Wait for the client's own fresh stream. The emits above never yield to I/O, so the server has not
    // yet seen the dropped stream close: `getStreams` still counts it, and an update sent now would go
    // into that dead stream, before the client even tried to resume — lost in the gap, not after it.
    await eventually(() => reconnects() > reconnectsBefore, 5000, 'the stream reopened');
    await eventually(() => rig.server.stats.getStreams.get(session) === 1, 5000, 'a fresh GET stream');
    const gets = rig.proxy.stats.log
      .filter((e) => e.method === 'GET' && e.at >= since && !e.injected)
      .map((e) => ({ lastEventId: e.lastEventId, status: e.status }));
    // One resume with the evicted id (refused), then one fresh stream without it.
    expect(gets).toEqual([
      { lastEventId: resumePoint, status: 400 },
      { lastEventId: undefined, status: 200 },
    ]);
    // The fresh stream says updates in between may be lost.
    expect(rig.lifecycle.filter((e) => e.state === 'reconnected').at(-1)?.resumed).toBe(false);
    const before = rig.delivered.length;
    await rig.server.emitResourceUpdated(HELLO);
    await eventually(() => rig.delivered.length > before, 5000, 'an update after the gap');
    await new Promise((resolve) => setTimeout(resolve, 150));
    const after = rig.delivered.slice(before);
    expect(after).toHaveLength(1);
    expect(after[0]?.uri).toBe(HELLO);
    expect(after[0]?.eventId).toBeDefined();
    expect(after[0]?.session).toBe(session);
  });
});

describe('many owners of one URI', () => {
  /** Wire calls for `uri` that reached the server, in order. */
  function wireCalls(proxy: FaultProxy, uri: string): string[] {
    return proxy.stats.log
      .filter((e) => !e.injected)
      .flatMap((e) => e.rpc)
      .filter((m) => m.uri === uri && m.method.startsWith('resources/'))
      .map((m) => m.method);
  }

  function alternates(calls: string[]): boolean {
    return calls.every((call, i) => call === (i % 2 === 0 ? 'resources/subscribe' : 'resources/unsubscribe'));
  }

  /** A small deterministic generator (mulberry32), so a failure replays. */
  function random(seed: number): () => number {
    let state = seed >>> 0;
    return () => {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = Math.imul(state ^ (state >>> 15), 1 | state);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
    };
  }

  it('concurrent acquire/release never double-subscribes nor leaves a stray', async () => {
    const rig = await startRig();
    await rig.listening?.ready;
    const next = random(42);
    const owners = Array.from({ length: 4 }, (_, i) => `owner-${i}`);
    const expected = new Set<string>();
    let transitions = 0;
    for (let round = 0; round < 25; round++) {
      const ops = Array.from({ length: 30 }, () => ({
        owner: owners[Math.floor(next() * owners.length)] as string,
        acquire: next() < 0.45,
      }));
      // Changes to one URI are applied in call order, so the outcome is known in advance.
      for (const op of ops) {
        const had = expected.size > 0;
        if (op.acquire) expected.add(op.owner);
        else expected.delete(op.owner);
        if (had !== expected.size > 0) transitions++;
      }
      await Promise.all(
        ops.map((op) =>
          op.acquire
            ? rig.client.acquireResourceSubscription(HELLO, op.owner)
            : rig.client.releaseResourceSubscription(HELLO, op.owner),
        ),
      );
      const session = rig.session() as string;
      expect(rig.client.subscriptions.find((s) => s.uri === HELLO)?.owners ?? []).toEqual(
        [...expected].sort(),
      );
      expect(rig.server.stats.subscriptions.get(session)?.has(HELLO) ?? false).toBe(expected.size > 0);
    }
    const calls = wireCalls(rig.proxy, HELLO);
    expect(alternates(calls)).toBe(true);
    expect(calls).toHaveLength(transitions);
    expect(transitions).toBeGreaterThan(20);
    // Updates reach the URI exactly once while owned.
    await rig.client.acquireResourceSubscription(HELLO, 'final-owner');
    await rig.emit(HELLO, 5);
    await rig.settle();
    rig.expectExactlyOnce();
    for (const owner of [...expected, 'final-owner'])
      await rig.client.releaseResourceSubscription(HELLO, owner);
    const session = rig.session() as string;
    expect(rig.server.stats.subscriptions.get(session)?.size ?? 0).toBe(0);
    expect(rig.client.subscriptions).toEqual([]);
  });

  it('with 5xx failures mixed in: failed changes leave ownership and the server in agreement', async () => {
    const rig = await startRig({ transport: { retry: false } });
    await rig.listening?.ready;
    const next = random(7);
    const owners = Array.from({ length: 3 }, (_, i) => `owner-${i}`);
    let rejected = 0;
    for (let round = 0; round < 20; round++) {
      if (round % 2 === 1) rig.proxy.faults.failNext(1 + Math.floor(next() * 2), 503, { method: 'POST' });
      const ops = Array.from({ length: 16 }, () => ({
        owner: owners[Math.floor(next() * owners.length)] as string,
        acquire: next() < 0.45,
      }));
      const results = await Promise.allSettled(
        ops.map((op) =>
          op.acquire
            ? rig.client.acquireResourceSubscription(HELLO, op.owner)
            : rig.client.releaseResourceSubscription(HELLO, op.owner),
        ),
      );
      rig.proxy.faults.reset();
      for (const result of results) {
        if (result.status === 'rejected') {
          rejected++;
          expect(result.reason).toMatchObject({ status: 503 });
        }
      }
      const owned = rig.client.subscriptions.find((s) => s.uri === HELLO)?.owners ?? [];
      const session = rig.session() as string;
      expect(rig.server.stats.subscriptions.get(session)?.has(HELLO) ?? false).toBe(owned.length > 0);
    }
    const calls = wireCalls(rig.proxy, HELLO);
    expect(alternates(calls)).toBe(true);
    expect(subscribesOnWire(rig)).toBe(calls.filter((c) => c === 'resources/subscribe').length);
    expect(rig.proxy.stats.injectedFailures).toBeGreaterThan(0);
    expect(rejected).toBe(rig.proxy.stats.injectedFailures);
  });

  it('owners acquiring other URIs during a restart: each URI restored once, none twice', async () => {
    const rig = await startRig();
    await primed(rig, [HELLO]);
    const initializes = rig.server.stats.initializeCount;
    const before = rig.session();
    const restartedAt = Date.now();
    await rig.server.restart();
    // Once the stream has met the lost session (so it resumes nothing stale) and the new session's
    // handshake is done (requests sent during it carry no session; see the skipped tests below),
    // owners acquire new URIs and join the owned one while the owned URIs are being restored.
    await eventually(
      () => rig.proxy.stats.log.some((e) => e.method === 'GET' && e.at >= restartedAt && e.status === 404),
      5000,
      'the stream meeting the lost session',
    );
    await eventually(
      () => rig.session() !== undefined && rig.session() !== before,
      5000,
      'the new session handshake',
    );
    await Promise.all([
      ...ITEMS.flatMap((uri) =>
        ['a', 'b', 'c'].map((owner) => rig.client.acquireResourceSubscription(uri, `${owner}-${uri}`)),
      ),
      ...['a', 'b'].map((owner) => rig.client.acquireResourceSubscription(HELLO, owner)),
    ]);
    await eventually(() => rig.server.stats.sessions.size === 1, 5000, 'new session');
    const session = rig.session() as string;
    await eventually(
      () => rig.server.stats.getStreams.get(session) === 1,
      5000,
      'GET stream on the new session',
    );
    expect(rig.server.stats.initializeCount - initializes).toBe(1);
    // The owned URI goes back once the stream is open on the new session (listen first).
    await eventually(
      () => rig.server.stats.subscriptions.get(session)?.size === ITEMS.length + 1,
      5000,
      'the owned URI restored',
    );
    expect([...(rig.server.stats.subscriptions.get(session) ?? [])].sort()).toEqual([HELLO, ...ITEMS].sort());
    // On the new session each URI went on the wire exactly once: HELLO by the restore, the others
    // by their first owner; joining owners touched nothing. The proxy logs a status when the
    // answer's headers pass it, which can be after the server recorded the subscription.
    const onNewSession = () =>
      rig.proxy.stats.log
        .filter((e) => e.session === session && e.status === 200)
        .flatMap((e) => e.rpc)
        .filter((m) => m.method === 'resources/subscribe')
        .map((m) => m.uri);
    await eventually(() => onNewSession().length >= ITEMS.length + 1, 5000, 'the answers through the proxy');
    expect(onNewSession().sort()).toEqual([HELLO, ...ITEMS].sort());
    for (const uri of [HELLO, ...ITEMS]) await rig.emit(uri, 2);
    await rig.settle();
    rig.expectExactlyOnce();
  });
});

describe('server-everything (child process) through the proxy', () => {
  it('one subscribe on the wire, updates flow, a dropped stream resumes from the last event id', async () => {
    const server = await startEverythingServer({ mode: 'streamableHttp' });
    const proxy = await startFaultProxy(server.url);
    const client = httpClient(proxy.url, { era: 'legacy' });
    const ids: string[] = [];
    client.subscribeEvents((event) => {
      if (event.type === 'resource_updated' && event.eventId !== undefined) ids.push(event.eventId);
    });
    try {
      const listening = client.startListening({ retryDelayMs: 20, maxRetryDelayMs: 200 });
      await listening.ready;
      const uri = 'demo://resource/static/document/architecture.md';
      await client.subscribeResource(uri);
      await client.acquireResourceSubscription(uri, 'second-owner');
      // The server then sends an update at once and every 5 s for subscribed URIs.
      await client.callTool('toggle-subscriber-updates');
      await eventually(() => ids.length === 1, 5000, 'the first update');
      const dropped = Date.now();
      expect(proxy.faults.dropAllStreams()).toBe(1);
      const resumed = () => proxy.stats.log.find((e) => e.method === 'GET' && e.at >= dropped);
      await eventually(() => resumed()?.status === 200, 5000, 'the resumed stream');
      expect(resumed()?.lastEventId).toBe(ids[0]);
      expect(new Set(ids).size).toBe(ids.length);
      expect(proxy.stats.rpcMethods.get('resources/subscribe')).toBe(1);
      // Live updates after the resume are not checked: server-everything's event store returns an
      // event id where the SDK expects a stream id, so a resumed GET stream never gets live events.
    } finally {
      await client.close();
      await proxy.close();
      await server.close();
    }
  });
});

describe('close() leaves nothing behind', () => {
  const kinds = ['TCPSocketWrap', 'Timeout', 'Immediate'];
  function count(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const kind of process.getActiveResourcesInfo()) {
      if (kinds.includes(kind)) counts.set(kind, (counts.get(kind) ?? 0) + 1);
    }
    return counts;
  }

  it('no socket or timer is left after close, even mid-fault', async () => {
    const rig = await startRig({ listen: false });
    await new Promise((resolve) => setTimeout(resolve, 700));
    const baseline = count();
    rig.listening = rig.client.startListening({ retryDelayMs: 20, maxRetryDelayMs: 200 });
    await primed(rig, [HELLO, ITEMS[0] as string]);
    await rig.emit(HELLO, 5);
    const dropped = Date.now();
    rig.proxy.faults.failNext(3, 503, { method: 'GET' });
    rig.proxy.faults.dropAllStreams();
    await eventually(
      () => rig.proxy.stats.log.some((e) => e.method === 'GET' && e.at >= dropped && e.status === 200),
      5000,
      'the stream back after failing reconnects',
    );
    expect(count().get('TCPSocketWrap') ?? 0).toBeGreaterThan(baseline.get('TCPSocketWrap') ?? 0);
    // Close while a request is held by a stall and a slow consumer is in force.
    const stalled = rig.proxy.faults.stall(300);
    rig.proxy.faults.slowConsumer(2000);
    const reading = rig.client.readResource(HELLO).then(
      () => 'read',
      () => 'failed',
    );
    const unsubscribes = rig.server.stats.methods.get('resources/unsubscribe') ?? 0;
    await rig.client.close();
    await stalled;
    expect(['read', 'failed']).toContain(await reading);
    expect((rig.server.stats.methods.get('resources/unsubscribe') ?? 0) - unsubscribes).toBe(2);
    expect(rig.proxy.stats.httpMethods.get('DELETE')).toBe(1);
    await eventually(() => rig.proxy.stats.openConnections === 0, 5000, 'client connections closed');
    expect(rig.server.stats.sessions.size).toBe(0);
    expect(rig.server.stats.getStreams.size).toBe(0);
    let now = count();
    const settled = () => {
      now = count();
      return kinds.every((kind) => (now.get(kind) ?? 0) <= (baseline.get(kind) ?? 0));
    };
    await eventually(settled, 5000, 'handles back to baseline').catch(() => {});
    // At most the baseline: a timer an earlier test left may end meanwhile, none may be added.
    for (const kind of kinds) expect(now.get(kind) ?? 0, kind).toBeLessThanOrEqual(baseline.get(kind) ?? 0);
    // Nothing reconnects later either.
    const requests = rig.proxy.stats.log.length;
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(rig.proxy.stats.log.length).toBe(requests);
  });

  // (Also reported in 9d3ea09; an uncommitted fix in src/client/client.ts — `#lifetime` — makes this pass: un-skip when it lands.)
  it('close() ends every listening handle and leaves no listener on its signal', async () => {
    const rig = await startRig({ listen: false });
    const controller = new AbortController();
    rig.listening = rig.client.startListening({ signal: controller.signal, retryDelayMs: 20 });
    await primed(rig);
    await rig.client.close();
    const ended = await Promise.race([
      rig.listening.done.then(() => 'done'),
      new Promise((resolve) => setTimeout(() => resolve('pending'), 2000)),
    ]);
    expect(ended).toBe('done');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
