// @ts-check
/**
 * One source process of the chaos campaign: an `AxMCPClient` (2025-11-25 sessions, through the
 * fault proxy) under an `AxMCPEventSource` that subscribes to every resource, in an event runtime
 * that only publishes (`scheduling: 'host'`) into the shared `AxPostgresEventStore`.
 *
 * It loads the library compiled by the campaign (`AX_CHAOS_BUILD`) and logs, as JSON lines to
 * `AX_CHAOS_LOG`, what its client saw: `{ t: 'rx', s, eid, uri }` for every
 * `resources/updated` (with the session it arrived on), `{ t: 'life', state, resumed, s }` for
 * lifecycle events, `{ t: 'err', where, error }` for failures reported to it. Every 200 ms it
 * writes `{ session, subscriptions }` to `AX_CHAOS_STATE`. SIGTERM closes everything, exit 0.
 */
import { appendFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';

const env = (/** @type {string} */ name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const build = env('AX_CHAOS_BUILD');
const name = env('AX_CHAOS_NAME');
const logFile = env('AX_CHAOS_LOG');
const stateFile = env('AX_CHAOS_STATE');
const schema = env('AX_CHAOS_SCHEMA');
const now = () => Number(process.hrtime.bigint()) / 1e6;
const log = (/** @type {Record<string, unknown>} */ entry) =>
  appendFileSync(logFile, `${JSON.stringify({ ...entry, at: now() })}\n`);
const text = (/** @type {unknown} */ error) =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);

// A rejection nobody handles would end this process (Node's default): log it instead, so the
// campaign goes on and fails on it with everything else it found.
process.on('unhandledRejection', (error) =>
  log({
    t: 'unhandled',
    error: text(error),
    stack: String(/** @type {any} */ (error)?.stack ?? '').slice(0, 1500),
  }),
);

const ax = await import(pathToFileURL(join(build, 'index.js')).href);
const node = await import(pathToFileURL(join(build, 'node.js')).href);
/** The fleet's own module: the same routes and targets (its targets never run here). */
const workerModule = await import(pathToFileURL(env('AX_CHAOS_MODULE')).href);

const pool = new pg.Pool({ connectionString: env('AX_CHAOS_PG'), max: 4 });
pool.on('error', (error) => log({ t: 'err', where: 'pool', error: text(error) }));
const store = await node.AxPostgresEventStore.open({
  pool,
  schema,
  onError: (/** @type {unknown} */ error) => log({ t: 'err', where: 'store', error: text(error) }),
});
const client = new ax.AxMCPClient(
  new ax.AxMCPStreamableHTTPTransport(env('AX_CHAOS_MCP_URL'), {
    ssrfProtection: { allowHTTP: true, allowLoopback: true },
    timeoutMs: 5_000,
  }),
  {
    namespace: 'chaos',
    era: 'legacy',
    eraStore: new ax.AxMCPMemoryEraStore(),
    timeoutMs: 5_000,
    onError: (/** @type {unknown} */ error) => log({ t: 'err', where: 'client', error: text(error) }),
  },
);
client.subscribeEvents((/** @type {any} */ event) => {
  const s = client.transport.sessionId;
  if (event.type === 'resource_updated') log({ t: 'rx', s, eid: event.eventId, uri: event.uri });
  else if (event.type === 'lifecycle') log({ t: 'life', state: event.state, resumed: event.resumed, s });
});
const source = new ax.AxMCPEventSource({
  client,
  id: `mcp:chaos:${name}`,
  resourceSubscriptions: 'all',
  identity: { tenantId: 'chaos' },
  trust: 'authenticated',
  requiresDurable: true,
});
const runtime = ax.eventRuntime({
  routes: workerModule.routes,
  store,
  scheduling: 'host',
  coordination: 'multi-worker',
  sources: [source],
  onError: (/** @type {unknown} */ error, /** @type {{ phase?: string }} */ report) =>
    log({ t: 'err', where: `runtime:${report?.phase}`, error: text(error) }),
});

const writeState = () => {
  const tmp = `${stateFile}.tmp`;
  writeFileSync(
    tmp,
    JSON.stringify({
      pid: process.pid,
      session: client.transport.sessionId,
      subscriptions: source.subscriptions,
    }),
  );
  renameSync(tmp, stateFile);
};
const timer = setInterval(writeState, 200);
for (let attempt = 1; ; attempt++) {
  try {
    await runtime.start();
    break;
  } catch (error) {
    log({ t: 'err', where: 'start', error: text(error) });
    if (attempt >= 20) throw error;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
log({ t: 'started', pid: process.pid, s: client.transport.sessionId });
writeState();
console.log(`source ${name} started`);

process.once('SIGTERM', () => {
  void (async () => {
    clearInterval(timer);
    await runtime
      .close()
      .catch((/** @type {unknown} */ error) => log({ t: 'err', where: 'close', error: text(error) }));
    await client.close().catch(() => {});
    await store.close().catch(() => {});
    await pool.end().catch(() => {});
    await workerModule.close().catch(() => {});
    process.exit(0);
  })();
});
