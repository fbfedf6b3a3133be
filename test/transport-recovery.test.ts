/**
 * Transports recover alike (issue 16). One scenario over the four transports, each against a
 * real peer: Streamable HTTP and HTTP+SSE against the v1 SDK server (test/servers/legacy-v1.ts),
 * WebSocket against an SDK server over `ws` (test/servers/websocket.ts), stdio against the v2
 * SDK server as a child process (test/servers/stdio-v2-server.mjs). A legacy (2025-11-25) client,
 * with or without a resource subscription, has a `tools/call` in flight when the connection is
 * lost (the session lost, the socket or stream cut, the process killed). Then:
 *
 * - a safe request (`tools/list`) made right away succeeds, over a new connection;
 * - the session is initialized again exactly once and the subscription restored exactly once
 *   (counted on the server), also when the listener and requests race to restore it;
 * - the `tools/call` settles at once and is never sent again (counted on the server).
 *
 * Each transport's recovery is the client's one mechanism: the transport reports the lost
 * session (`session_expired`), `LegacyWire.recover()` re-initializes once for every waiter.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import {
  AxMCPClient,
  type AxMCPClientEvent,
  AxMCPHTTPSSETransport,
  AxMCPMemoryEraStore,
  AxMCPStreamableHTTPTransport,
  type AxMCPTransport,
  AxMCPWebSocketTransport,
} from '../src/index.js';
import { AxMCPStdioTransport } from '../src/node.js';
import { eventually, LOOPBACK } from './helpers/clients.js';
import { startLegacyV1Server } from './servers/legacy-v1.js';
import { startWebSocketServer } from './servers/websocket.js';

const STDIO_SERVER = fileURLToPath(new URL('./servers/stdio-v2-server.mjs', import.meta.url));

/** What the scenario needs of a transport and its peer. */
interface Rig {
  transport: AxMCPTransport;
  /** A resource the peer lets the client subscribe to. */
  uri: string;
  /** A tool call that runs for seconds. */
  slow: [name: string, args: Record<string, unknown>];
  /** A tool call that answers at once, and the text it answers. */
  echo: [name: string, args: Record<string, unknown>, text: string];
  /** How many times the server (all its connections and processes together) received `method`. */
  count(method: 'initialize' | 'resources/subscribe' | 'tools/call'): number;
  /** Loses the connection (and with it the session) the way this transport loses it. */
  lose(): Promise<void>;
  /** Emits an update of `uri` to subscribed sessions; undefined where the peer cannot. */
  emit?(uri: string): Promise<number>;
  close(): Promise<void>;
}

type Kind = 'Streamable HTTP' | 'HTTP+SSE' | 'WebSocket' | 'stdio';

const rigs: Record<Kind, () => Promise<Rig>> = {
  async 'Streamable HTTP'() {
    const server = await startLegacyV1Server();
    return {
      transport: new AxMCPStreamableHTTPTransport(server.url, { ssrfProtection: LOOPBACK }),
      uri: 'res://text/hello',
      slow: ['slow', { steps: 100, delayMs: 100 }],
      echo: ['echo', { message: 'again' }, 'again'],
      count: (method) => server.stats.methods.get(method) ?? 0,
      // Streamable HTTP has no connection that is the session: the server forgets the session
      // (and cuts its streams), and answers 404 for it from then on.
      async lose() {
        server.dropStreams();
        await server.restart();
      },
      emit: (uri) => server.emitResourceUpdated(uri),
      close: () => server.close(),
    };
  },
  async 'HTTP+SSE'() {
    const server = await startLegacyV1Server({ transport: 'sse' });
    return {
      transport: new AxMCPHTTPSSETransport(server.url, { ssrfProtection: LOOPBACK }),
      uri: 'res://text/hello',
      slow: ['slow', { steps: 100, delayMs: 100 }],
      echo: ['echo', { message: 'again' }, 'again'],
      count: (method) => server.stats.methods.get(method) ?? 0,
      async lose() {
        expect(server.dropStreams()).toBeGreaterThan(0);
      },
      emit: (uri) => server.emitResourceUpdated(uri),
      close: () => server.close(),
    };
  },
  async WebSocket() {
    const peer = await startWebSocketServer();
    return {
      transport: new AxMCPWebSocketTransport(peer.url, { WebSocket, ssrfProtection: LOOPBACK }),
      uri: 'mem://counter',
      slow: ['slow', { ms: 10_000 }],
      echo: ['echo', { message: 'again' }, 'echo: again'],
      count: (method) =>
        method === 'resources/subscribe'
          ? peer.stats.subscribes.length
          : peer.stats.methods.filter((m) => m === method).length,
      async lose() {
        peer.dropConnections();
      },
      emit: (uri) => peer.emitResourceUpdated(uri),
      close: () => peer.close(),
    };
  },
  async stdio() {
    const stderr: string[] = [];
    const transport = new AxMCPStdioTransport({
      command: process.execPath,
      args: [STDIO_SERVER],
      killGraceMs: 1_000,
      onStderr: (line) => stderr.push(line),
    });
    const lines = (prefix: string) => stderr.filter((line) => line.startsWith(prefix)).length;
    return {
      transport,
      uri: 'mem://counter',
      slow: ['wait', { ms: 10_000 }],
      echo: ['echo', { message: 'again' }, 'echo: again'],
      // The server logs one line per instance (one per process, pinned by `initialize`), per
      // subscribe and per tool call it starts, whichever process it was.
      count: (method) =>
        lines(method === 'initialize' ? 'era legacy' : method === 'tools/call' ? 'call ' : 'subscribe '),
      async lose() {
        process.kill(transport.pid as number, 'SIGKILL');
      },
      close: async () => {},
    };
  },
};

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

const KINDS = Object.keys(rigs) as Kind[];

function text(result: { content: ReadonlyArray<{ type: string; [key: string]: unknown }> }): string {
  return result.content.map((block) => (block.type === 'text' ? String(block.text) : '')).join('');
}

/** Emits updates of the rig's resource until one arrives (bounded). */
async function deliveredAfterEmit(rig: Rig, updates: () => number): Promise<void> {
  const deadline = Date.now() + 5_000;
  const seen = updates();
  while (updates() === seen) {
    if (Date.now() > deadline) throw new Error('No update arrived');
    await rig.emit?.(rig.uri);
    await eventually(() => updates() > seen, 200, 'an update').catch(() => {});
  }
}

async function setup(kind: Kind) {
  const rig = await rigs[kind]();
  cleanups.push(() => rig.close());
  const errors: unknown[] = [];
  const client = new AxMCPClient(rig.transport, {
    namespace: 'recovery',
    era: 'legacy',
    eraStore: new AxMCPMemoryEraStore(),
    timeoutMs: 20_000,
    onError: (error) => errors.push(error),
  });
  cleanups.push(() => client.close());
  const events: AxMCPClientEvent[] = [];
  client.subscribeEvents((event) => events.push(event));
  const restored = () =>
    events.filter((event) => event.type === 'lifecycle' && event.state === 'session_restored').length;
  const updates = () => events.filter((event) => event.type === 'resource_updated').length;
  return { rig, client, events, errors, restored, updates };
}

describe.each(KINDS)('%s: the connection is lost with a tools/call in flight', (kind) => {
  it.each([
    ['without', false],
    ['with', true],
  ] as const)(
    '%s a subscription: the next safe request succeeds, the session and ownership come back once, the call is not replayed',
    async (_label, subscribed) => {
      const { rig, client, restored, updates } = await setup(kind);
      await client.init();
      if (subscribed) {
        await client.subscribeResource(rig.uri);
        // Updates flow (over HTTP, once the listener's stream is open).
        if (rig.emit) await deliveredAfterEmit(rig, updates);
        // (stdio counts from the server's stderr, which may trail its answer a little)
        await eventually(() => rig.count('resources/subscribe') === 1, 2_000, 'the subscribe counted');
      }
      const before = {
        initialize: rig.count('initialize'),
        subscribe: rig.count('resources/subscribe'),
        call: rig.count('tools/call'),
      };
      expect(before.initialize).toBe(1);
      expect(before.subscribe).toBe(subscribed ? 1 : 0);

      const [tool, args] = rig.slow;
      const started = Date.now();
      const call = client.callTool(tool, args).then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      );
      await eventually(
        () => rig.count('tools/call') === before.call + 1,
        5_000,
        'the call to reach the server',
      );

      await rig.lose();
      // Right away, while the loss is being noticed: a safe request.
      const listed = await client.listTools();
      expect(listed.tools.map((t) => t.name)).toContain(tool);

      // The call in flight settles long before its 10 s run (or the 20 s timeout) would end it.
      const outcome = await call;
      expect(Date.now() - started).toBeLessThan(8_000);
      if ('error' in outcome) {
        expect(['closed', 'session_expired', 'stream_ended']).toContain(
          (outcome.error as { code?: string }).code,
        );
      }

      // Let every path that could restore the session (the request, the listener) run out.
      await eventually(() => restored() >= 1, 10_000, 'the session to be restored');
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(rig.count('initialize')).toBe(before.initialize + 1);
      expect(rig.count('resources/subscribe')).toBe(before.subscribe + (subscribed ? 1 : 0));
      expect(restored()).toBe(1);
      // Never sent again.
      expect(rig.count('tools/call')).toBe(before.call + 1);
      expect(client.subscriptions).toEqual(subscribed ? [{ uri: rig.uri, owners: ['manual'] }] : []);

      // The new session works: calls, and updates of the restored subscription.
      const [echo, echoArgs, echoed] = rig.echo;
      expect(text(await client.callTool(echo, echoArgs))).toBe(echoed);
      // (stdio counts from the server's stderr, which may trail its answer a little)
      await eventually(() => rig.count('tools/call') === before.call + 2, 2_000, 'the second call');
      if (subscribed && rig.emit) await deliveredAfterEmit(rig, updates);
      expect(rig.count('initialize')).toBe(before.initialize + 1);
    },
  );
});

describe.each(KINDS)('%s: requests right after the loss', (kind) => {
  it('concurrent safe requests all succeed, over one re-initialization', async () => {
    const { rig, client, restored } = await setup(kind);
    await client.init();
    await rig.lose();
    // Several at once: one re-initialization serves them all.
    const results = await Promise.all([client.listTools(), client.ping(), client.listTools()]);
    expect(results[0]?.tools.length).toBeGreaterThan(0);
    expect(rig.count('initialize')).toBe(2);
    await eventually(() => restored() === 1, 5_000, 'session_restored');
  });
});
