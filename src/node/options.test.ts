/**
 * The options of `ax-mcp/node` (the Node HTTP transport and fetch, the stdio transport, the era
 * and token stores) are checked at construction, before any request, spawn or database
 * connection: `invalid_options`, thrown synchronously (or, for `open()`, as its rejection),
 * with the path as the user writes it. Loopback servers count what reaches them; control cases
 * show that they would see it.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countingServer, expectRefusal, type OptionsRefusal, refusalOf } from '../../test/helpers/options.js';
import { AxMCPMemoryEraStore } from '../client/era-store.js';
import { AxMCPInvalidOptionsError } from '../protocol/errors.js';
import { AxMCPNodeHTTPTransport } from './fast-transport.js';
import { AxMCPFileEraStore } from './file-era-store.js';
import { createNodeFetch } from './node-fetch.js';
import { AxMCPPostgresEraStore } from './postgres/era-store.js';
import { AxMCPPostgresTokenStore } from './postgres/token-store.js';
import { AxMCPStdioTransport } from './stdio/transport.js';
import { AxMCPFileTokenStore } from './token-store.js';

// biome-ignore lint/suspicious/noExplicitAny: wrong on purpose
type Any = any;

const LOOPBACK = { allowHTTP: true, allowLoopback: true } as const;
let counting: Awaited<ReturnType<typeof countingServer>>;
let url: string;
/** A TCP server standing in for PostgreSQL: it counts connections and hangs up. */
let database: net.Server;
let databaseURL: string;
let connections = 0;
let directory: string;
let marker: string;

beforeAll(async () => {
  counting = await countingServer();
  url = counting.url;
  database = net.createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => database.listen(0, '127.0.0.1', resolve));
  databaseURL = `postgres://ax@127.0.0.1:${(database.address() as AddressInfo).port}/ax`;
  directory = mkdtempSync(join(tmpdir(), 'ax-mcp-options-'));
  marker = join(directory, 'spawned');
});

afterAll(async () => {
  await counting.close();
  await new Promise<void>((resolve) => database.close(() => resolve()));
  rmSync(directory, { recursive: true, force: true });
});

/** A server command that leaves a file behind: proof that it was spawned. */
const spawnMarker = () => ({
  command: process.execPath,
  args: ['-e', `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'x')`],
});

const KEY = { id: 'k1', key: new Uint8Array(32) };

interface Case {
  name: string;
  build: () => unknown;
  path: string;
  suggestion?: string;
  message?: RegExp;
}

const cases: Case[] = [
  {
    name: 'fetch on the Node transport (it brings its own)',
    build: () => new AxMCPNodeHTTPTransport(url, { ssrfProtection: LOOPBACK, fetch } as Any),
    path: 'fetch',
  },
  {
    name: 'keepalive in the wrong case',
    build: () => new AxMCPNodeHTTPTransport(url, { ssrfProtection: LOOPBACK, keepalive: false } as Any),
    path: 'keepalive',
    suggestion: 'keepAlive',
  },
  {
    name: 'no sockets at all',
    build: () => new AxMCPNodeHTTPTransport(url, { ssrfProtection: LOOPBACK, maxSockets: 0 }),
    path: 'maxSockets',
  },
  {
    name: 'allowLocalhost on the Node transport',
    build: () =>
      new AxMCPNodeHTTPTransport(url, { ssrfProtection: { allowHTTP: true, allowLocalhost: true } as Any }),
    path: 'ssrfProtection.allowLocalhost',
    suggestion: 'allowLoopback',
    message: /did you mean allowLoopback/,
  },
  {
    name: 'a misspelled OAuth option on the Node transport',
    build: () =>
      new AxMCPNodeHTTPTransport(url, { ssrfProtection: LOOPBACK, oauth: { redirectUrl: 'x' } as Any }),
    path: 'oauth.redirectUrl',
    suggestion: 'redirectUri',
  },
  {
    name: 'a DNS lookup that is not a function',
    build: () => createNodeFetch({ ssrfProtection: LOOPBACK, lookup: 'dns' as Any }),
    path: 'lookup',
  },
  {
    name: 'cmd instead of command',
    build: () => new AxMCPStdioTransport({ cmd: process.execPath } as Any),
    path: 'cmd',
    suggestion: 'command',
  },
  {
    name: 'arguments as one string',
    build: () => new AxMCPStdioTransport({ ...spawnMarker(), args: 'server.js' } as Any),
    path: 'args',
  },
  {
    name: 'an environment value that is a number',
    build: () => new AxMCPStdioTransport({ ...spawnMarker(), env: { PORT: 8080 } } as Any),
    path: 'env.PORT',
  },
  {
    name: 'environment instead of env',
    build: () => new AxMCPStdioTransport({ ...spawnMarker(), environment: { A: 'b' } } as Any),
    path: 'environment',
    suggestion: 'env',
  },
  {
    name: 'an empty command',
    build: () => new AxMCPStdioTransport({ command: ' ' }),
    path: 'command',
  },
  {
    name: 'no options at all',
    build: () => new AxMCPStdioTransport(undefined as Any),
    path: '(options)',
  },
  {
    name: 'a stderr handler that is not a function',
    build: () => new AxMCPStdioTransport({ ...spawnMarker(), onStderr: true } as Any),
    path: 'onStderr',
  },
  {
    name: 'a negative kill grace period',
    build: () => new AxMCPStdioTransport({ ...spawnMarker(), killGraceMs: -5 }),
    path: 'killGraceMs',
  },
  {
    name: 'a file era store given options instead of a path',
    build: () => new AxMCPFileEraStore({ path: join(directory, 'eras.json') } as Any),
    path: '(options)',
  },
  {
    name: 'a file token store without a path',
    build: () => new AxMCPFileTokenStore(undefined as Any),
    path: '(options)',
  },
  {
    name: 'a memory era store that keeps nothing',
    build: () => new AxMCPMemoryEraStore({ maxEntries: 0 }),
    path: 'maxEntries',
  },
  {
    name: 'poolsize in the wrong case',
    build: () => new AxMCPPostgresEraStore({ connectionString: databaseURL, poolsize: 2 } as Any),
    path: 'poolsize',
    suggestion: 'poolSize',
  },
  {
    name: 'a PostgreSQL store with neither pool nor connectionString (a rule across options)',
    build: () => new AxMCPPostgresEraStore({ schema: 'ax_mcp' }),
    path: 'connectionString',
    message: /exactly one of pool and connectionString/,
  },
  {
    name: 'an unsafe schema name',
    build: () =>
      new AxMCPPostgresEraStore({ connectionString: databaseURL, schema: 'Robert"; DROP TABLE x;--' }),
    path: 'schema',
  },
  {
    name: 'a url for connectionString',
    build: () => new AxMCPPostgresEraStore({ url: databaseURL } as Any),
    path: 'url',
    suggestion: 'connectionString',
  },
  {
    name: 'an encryption key of the wrong length',
    build: () =>
      new AxMCPPostgresTokenStore({
        connectionString: databaseURL,
        key: { id: 'k', key: new Uint8Array(20) },
      }),
    path: 'key.key',
  },
  {
    name: 'two encryption keys with one id (a rule across options)',
    build: () =>
      new AxMCPPostgresTokenStore({ connectionString: databaseURL, key: KEY, previousKeys: [KEY] }),
    path: 'previousKeys[0].id',
  },
  {
    name: 'the encryption key under another name',
    build: () => new AxMCPPostgresTokenStore({ connectionString: databaseURL, encryptionKey: KEY } as Any),
    path: 'encryptionKey',
    suggestion: 'key',
  },
];

const expectInvalid = (thrown: unknown, entry: OptionsRefusal) =>
  expectRefusal(thrown, AxMCPInvalidOptionsError, entry);

describe('ax-mcp/node options', () => {
  it('has a table worth the name', () => {
    expect(cases.length).toBeGreaterThanOrEqual(20);
  });

  it.each(cases)(
    'refuses $name at construction, before anything is sent, spawned or connected',
    async (entry) => {
      const before = { requests: counting.requests(), connections };
      expectInvalid(await refusalOf(entry.build), entry);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect({ requests: counting.requests(), connections }).toEqual(before);
      expect(existsSync(marker)).toBe(false);
      expect(existsSync(join(directory, 'eras.json'))).toBe(false);
    },
  );

  it('refuses PostgreSQL options in open() before connecting', async () => {
    const before = connections;
    const era = await AxMCPPostgresEraStore.open({ connectionString: databaseURL, poolsize: 2 } as Any).catch(
      (error: unknown) => error,
    );
    expectInvalid(era, { path: 'poolsize', suggestion: 'poolSize' });
    const tokens = await AxMCPPostgresTokenStore.open({
      connectionString: databaseURL,
      key: { id: '', key: KEY.key },
    }).catch((error: unknown) => error);
    expectInvalid(tokens, { path: 'key.id' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(connections).toBe(before);
  });

  it('sees a request, a spawn and a connection when they happen (the controls for the cases above)', async () => {
    const before = { requests: counting.requests(), connections };
    const transport = new AxMCPNodeHTTPTransport(url, {
      ssrfProtection: LOOPBACK,
      keepAlive: false,
      maxSockets: 2,
    });
    await transport.request({ jsonrpc: '2.0', id: 1, method: 'ping' });
    await transport.close();
    expect(counting.requests()).toBe(before.requests + 1);

    const stdio = new AxMCPStdioTransport({ ...spawnMarker(), killGraceMs: 100 });
    await stdio.start();
    const deadline = Date.now() + 5000;
    while (!existsSync(marker) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await stdio.close();
    expect(existsSync(marker)).toBe(true);
    rmSync(marker);

    const store = new AxMCPPostgresEraStore({ connectionString: databaseURL, schema: 'ax_mcp', poolSize: 1 });
    await expect(store.get('x')).rejects.toMatchObject({ code: 'transport_error' });
    await store.close();
    expect(connections).toBeGreaterThan(before.connections);
  });

  it('constructs every documented configuration', async () => {
    const fetch = createNodeFetch({ ssrfProtection: { allowLoopback: true } });
    fetch.close();
    const transports = [
      new AxMCPNodeHTTPTransport('https://mcp.example.com/mcp'),
      new AxMCPNodeHTTPTransport(url, { ssrfProtection: LOOPBACK, retry: false, timeoutMs: 1000 }),
      new AxMCPNodeHTTPTransport('https://mcp.example.com/mcp', {
        oauth: { redirectUri: 'http://127.0.0.1:8765/callback', onAuthCode: async () => ({}) },
      }),
    ];
    await Promise.all(transports.map((transport) => transport.close()));
    const stdio = new AxMCPStdioTransport({
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-everything'],
      env: { TOKEN: undefined as unknown as string, MODE: 'test' },
      cwd: directory,
      onStderr: () => {},
      onProtocolError: () => {},
      killGraceMs: 0,
      maxMessageBytes: 1024,
    });
    await stdio.close();
    const stores = [
      new AxMCPPostgresEraStore({ connectionString: databaseURL }),
      new AxMCPPostgresTokenStore({
        connectionString: databaseURL,
        schema: 'ax_mcp',
        key: { id: '2026-01', key: new Uint8Array(32) },
        previousKeys: [{ id: '2025-07', key: new Uint8Array(16) }],
      }),
    ];
    await Promise.all(stores.map((store) => store.close()));
    expect(new AxMCPFileEraStore(join(directory, 'eras.json'))).toBeInstanceOf(AxMCPFileEraStore);
    expect(new AxMCPFileTokenStore(join(directory, 'tokens.json'))).toBeInstanceOf(AxMCPFileTokenStore);
    expect(new AxMCPMemoryEraStore({ maxEntries: 10 }).get('x')).toBeUndefined();
  });
});
