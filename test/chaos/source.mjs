// @ts-check
/**
 * One source process of the chaos campaign: an `AxMCPClient` (through the fault proxy) under an
 * `AxMCPEventSource` that subscribes to every resource, in an event runtime that only publishes
 * (`scheduling: 'host'`) into the shared `AxPostgresEventStore`. `AX_CHAOS_ERA` is `legacy`
 * (2025-11-25 sessions, the v1 SDK server; default) or `modern` (2026-07-28 listen streams, the v2
 * SDK server; namespace `chaosm`).
 *
 * A legacy source also starts tasks while the file `AX_CHAOS_TASKS` exists: one `chaos_job`
 * called as a 2025-11-25 draft task every 150–450 ms, not awaited: their status changes reach it
 * only as `notifications/tasks/status` (published as `mcp.task.status`). It logs each call as
 * `{ t: 'call', task?, error? }`.
 *
 * On 2026-07-28 a notification has no event id (the source would give its event a random id), so
 * a modern source's transport gives each `resources/updated` it receives the id
 * `<uri>|<seq>|<listen id>` from the server's `_meta` (one per copy written to one listen stream):
 * its events then name the send they carry, for the invariants; no two copies share an id, so the
 * store's dedupe merges nothing it would not have merged anyway.
 *
 * It loads the library compiled by the campaign (`AX_CHAOS_BUILD`) and logs, as JSON lines to
 * `AX_CHAOS_LOG`, what its client saw: `{ t: 'rx', s, eid, uri }` for every
 * `resources/updated` (with the session it arrived on), `{ t: 'life', state, resumed, s }` for
 * lifecycle events, `{ t: 'err', where, error }` for failures reported to it. Every 200 ms it
 * writes `{ session, subscriptions }` to `AX_CHAOS_STATE`. SIGTERM closes everything, exit 0.
 */
import { appendFileSync, existsSync, renameSync, writeFileSync } from 'node:fs';
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
const modern = process.env.AX_CHAOS_ERA === 'modern';
const tasksFlag = process.env.AX_CHAOS_TASKS;
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
/** A modern update's copy id, from the `_meta` the campaign's server puts on it (see above). */
class CopyIdTransport extends ax.AxMCPWrappingTransport {
  /** @param {any} handlers */
  setHandlers(handlers) {
    super.setHandlers({
      ...handlers,
      onMessage: (/** @type {any} */ message, /** @type {any} */ context) => {
        const meta = message.params?._meta;
        const seq = meta?.['chaos/seq'];
        const sid = meta?.['io.modelcontextprotocol/subscriptionId'];
        if (message.method === 'notifications/resources/updated' && seq !== undefined)
          handlers.onMessage(message, { ...context, eventId: `${message.params.uri}|${seq}|${sid}` });
        else handlers.onMessage(message, context);
      },
    });
  }
}
const http = new ax.AxMCPStreamableHTTPTransport(env('AX_CHAOS_MCP_URL'), {
  ssrfProtection: { allowHTTP: true, allowLoopback: true },
  timeoutMs: 5_000,
});
const client = new ax.AxMCPClient(modern ? new CopyIdTransport(http) : http, {
  namespace: modern ? 'chaosm' : 'chaos',
  era: modern ? 'modern' : 'legacy',
  eraStore: new ax.AxMCPMemoryEraStore(),
  timeoutMs: 5_000,
  onError: (/** @type {unknown} */ error) => log({ t: 'err', where: 'client', error: text(error) }),
});
client.subscribeEvents((/** @type {any} */ event) => {
  const s = client.transport.sessionId ?? 'stream';
  if (event.type === 'resource_updated') log({ t: 'rx', s, eid: event.eventId, uri: event.uri });
  else if (event.type === 'lifecycle') log({ t: 'life', state: event.state, resumed: event.resumed, s });
  else if (event.type === 'task_status')
    log({ t: 'rxtask', s, task: event.task.taskId, status: event.task.status, eid: event.eventId });
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

/** Starts one task now and then while the campaign wants tasks (never awaited: notifications tell). */
let jobs = /** @type {ReturnType<typeof setTimeout> | undefined} */ (undefined);
const startJob = () => {
  if (tasksFlag && existsSync(tasksFlag)) {
    client
      .callToolTask('chaos_job', { ms: 100 + Math.floor(Math.random() * 900) }, { timeoutMs: 5_000 })
      .then(
        (/** @type {any} */ task) => log({ t: 'call', s: client.transport.sessionId, task: task.taskId }),
        (/** @type {unknown} */ error) =>
          log({ t: 'call', s: client.transport.sessionId, error: text(error) }),
      );
  }
  jobs = setTimeout(startJob, 150 + Math.random() * 300);
};
if (!modern) startJob();

process.once('SIGTERM', () => {
  void (async () => {
    clearInterval(timer);
    clearTimeout(jobs);
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
