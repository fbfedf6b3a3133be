// @ts-check
/**
 * The chaos campaign's MCP server: the official v1 SDK (`@modelcontextprotocol/sdk`, sessionful
 * 2025-11-25 Streamable HTTP) in a process of its own, so the campaign can SIGKILL it and start
 * it again on the same port. Resources `chaos://r/0` … `chaos://r/<n-1>`; `resources/subscribe`
 * is recorded per session and updates go only to sessions subscribed to the URI.
 *
 * While emitting is on, it picks a URI every `CHAOS_EMIT_MS` and sends
 * `notifications/resources/updated` to every subscribed session, with a per-URI sequence number
 * that continues across restarts (read back from the log). Each session has an event store, so
 * the GET stream resumes with `Last-Event-ID`; the SDK stores an event before it writes it, and
 * even when no GET stream is open (the client will resume from its last id).
 *
 * It also runs tasks (the 2025-11-25 draft, the SDK's experimental task support): the tool
 * `chaos_job` is `taskSupport: 'required'`; each call creates a task in the SDK's
 * `InMemoryTaskStore` (per process: a restart loses the tasks in flight, never acknowledged), which
 * moves to `working` with a status message after a while and then ends `completed` or `failed`.
 * Each change is the SDK's own `notifications/tasks/status` to the calling session, sent by
 * `updateTaskStatus` / `storeTaskResult`, on the GET stream (stored like the updates).
 *
 * The log (`CHAOS_LOG`, JSON lines, appended synchronously so a SIGKILL loses nothing written):
 * - `{ t: 'start', pid }` once per process;
 * - `{ t: 'sub', s, uri }` when a session subscribes;
 * - `{ t: 'ack', s, uri, seq, eid, pid, at }` once the SDK's send of one update to one session
 *   resolved ("acknowledged sending"); `eid` is the SSE event id the update was stored under;
 * - `{ t: 'nack', s, uri, seq, pid, error }` when a send rejected;
 * - `{ t: 'task', s, task, pid, at }` when a task is created (`task` is its id);
 * - `{ t: 'ack', kind: 'task', s, task, status, updated, eid, pid, at }` once the SDK's
 *   `notifications/tasks/status` of one change resolved (`updated` is the task's `lastUpdatedAt`:
 *   with the id and status it names the event, `task:<id>:<status>:<updated>`); `nack` likewise.
 *
 * Control (straight to the server's port, not through the proxy):
 * `POST /control/emit?on=0|1`, `POST /control/probe` (one update of every URI now; answers when
 * sent), `GET /control/state` (sessions, their subscriptions, whether their GET stream is open).
 */
import { createServer } from 'node:http';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { chaosServerBasics } from './server-log.mjs';

const { port, emitMs, random, now, log, URIS, seqs } = chaosServerBasics('chaos://r/');
/** One task store for every session of this process (it scopes tasks by session id). */
const taskStore = new InMemoryTaskStore();

/**
 * @typedef {{ jsonrpc: '2.0' } & Record<string, unknown>} Message
 * @typedef {{ id?: string, mcp: McpServer, transport: StreamableHTTPServerTransport,
 *   subscriptions: Set<string>, events: { eid: string, stream: string, message: Message }[],
 *   lastUpdate: string | undefined, getOpen: number,
 *   taskEvents: Map<string, { eid: string, updated: string }> }} Session
 */

/** @type {Map<string, Session>} */
const sessions = new Map();

/** An event store per session: ids are a per-session counter; replay is in order, per stream. */
function sessionEventStore(/** @type {Session} */ session) {
  let counter = 0;
  return {
    /** @param {string} stream @param {Message} message */
    async storeEvent(stream, message) {
      const eid = `${++counter}`;
      session.events.push({ eid, stream, message });
      if (session.events.length > 20_000) session.events.splice(0, 10_000);
      if (message.method === 'notifications/resources/updated') session.lastUpdate = eid;
      if (message.method === 'notifications/tasks/status') {
        const task = /** @type {{ taskId: string, status: string, lastUpdatedAt: string }} */ (
          message.params
        );
        session.taskEvents.set(`${task.taskId}:${task.status}`, { eid, updated: task.lastUpdatedAt });
      }
      return eid;
    },
    /** @param {string} eid */
    async getStreamIdForEventId(eid) {
      return session.events.find((e) => e.eid === eid)?.stream;
    },
    /** @param {string} lastEventId @param {{ send: (eid: string, message: Message) => Promise<void> }} sink */
    async replayEventsAfter(lastEventId, { send }) {
      const index = session.events.findIndex((e) => e.eid === lastEventId);
      if (index < 0) return '';
      const stream = /** @type {{ stream: string }} */ (session.events[index]).stream;
      for (const event of session.events.slice(index + 1)) {
        if (event.stream === stream && Object.keys(event.message).length > 0)
          await send(event.eid, event.message);
      }
      return stream;
    },
  };
}

async function openSession() {
  const mcp = new McpServer(
    { name: 'ax-mcp-chaos', version: '1.0.0' },
    {
      capabilities: {
        resources: { subscribe: true, listChanged: false },
        tasks: { requests: { tools: { call: {} } } },
      },
      taskStore,
    },
  );
  /** @type {Session} */
  const session = /** @type {Session} */ ({
    mcp,
    subscriptions: new Set(),
    events: [],
    lastUpdate: undefined,
    getOpen: 0,
    taskEvents: new Map(),
  });
  for (const uri of URIS) {
    mcp.registerResource(uri.slice('chaos://'.length), uri, { mimeType: 'text/plain' }, () => ({
      contents: [{ uri, mimeType: 'text/plain', text: `seq ${seqs.get(uri)}` }],
    }));
  }
  mcp.experimental.tasks.registerToolTask(
    'chaos_job',
    {
      description: 'A job run as a task: working after a while, then completed or failed.',
      inputSchema: { ms: z.number().int().min(0).max(5_000) },
      execution: { taskSupport: 'required' },
    },
    {
      createTask: async ({ ms }, extra) => {
        const task = await extra.taskStore.createTask({ ttl: 600_000, pollInterval: 5_000 });
        log({ t: 'task', s: session.id, task: task.taskId, pid: process.pid, at: now() });
        void runJob(session, extra.taskStore, task.taskId, ms);
        return { task };
      },
      getTask: (_args, extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: async (_args, extra) =>
        /** @type {import('@modelcontextprotocol/sdk/types.js').CallToolResult} */ (
          await extra.taskStore.getTaskResult(extra.taskId)
        ),
    },
  );
  mcp.server.setRequestHandler(SubscribeRequestSchema, (request) => {
    session.subscriptions.add(request.params.uri);
    log({ t: 'sub', s: session.id, uri: request.params.uri, at: now() });
    return {};
  });
  mcp.server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    session.subscriptions.delete(request.params.uri);
    return {};
  });
  session.transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => crypto.randomUUID(),
    eventStore: sessionEventStore(session),
    retryInterval: 200,
    onsessioninitialized: (id) => {
      session.id = id;
      sessions.set(id, session);
    },
  });
  mcp.server.onclose = () => {
    if (session.id !== undefined && sessions.get(session.id) === session) sessions.delete(session.id);
  };
  await mcp.connect(session.transport);
  return session;
}

/** Sends one update of `uri` to every subscribed session, one after another, logging each ack. */
async function emit(/** @type {string} */ uri) {
  const seq = (seqs.get(uri) ?? 0) + 1;
  seqs.set(uri, seq);
  for (const session of [...sessions.values()]) {
    if (!session.subscriptions.has(uri) || session.id === undefined) continue;
    session.lastUpdate = undefined;
    try {
      await session.mcp.server.sendResourceUpdated({ uri });
      const eid = session.lastUpdate;
      log({ t: 'ack', s: session.id, uri, seq, eid, pid: process.pid, at: now() });
    } catch (error) {
      log({ t: 'nack', s: session.id, uri, seq, pid: process.pid, error: String(error) });
    }
  }
  return seq;
}

/**
 * A task's life: `working` with a message half-way, then `completed` or `failed` (seeded). Each
 * change is one SDK send of `notifications/tasks/status`, logged as acknowledged once it resolved.
 * @param {Session} session
 * @param {import('@modelcontextprotocol/sdk/shared/protocol.js').RequestTaskStore} store
 * @param {string} taskId
 * @param {number} ms
 */
async function runJob(session, store, taskId, ms) {
  const failed = random() < 0.25;
  /** @param {string} status @param {() => Promise<void>} send */
  const change = async (status, send) => {
    try {
      await send();
      const sent = session.taskEvents.get(`${taskId}:${status}`);
      session.taskEvents.delete(`${taskId}:${status}`);
      log({
        t: 'ack',
        kind: 'task',
        s: session.id,
        task: taskId,
        status,
        updated: sent?.updated,
        eid: sent?.eid,
        pid: process.pid,
        at: now(),
      });
    } catch (error) {
      log({
        t: 'nack',
        kind: 'task',
        s: session.id,
        task: taskId,
        status,
        pid: process.pid,
        error: String(error),
      });
      throw error;
    }
  };
  try {
    await new Promise((resolve) => setTimeout(resolve, ms / 2));
    await change('working', () => store.updateTaskStatus(taskId, 'working', 'half-way'));
    await new Promise((resolve) => setTimeout(resolve, ms / 2));
    const status = failed ? 'failed' : 'completed';
    await change(status, () =>
      store.storeTaskResult(taskId, status, {
        content: [{ type: 'text', text: failed ? 'the job failed' : 'done' }],
        ...(failed ? { isError: true } : {}),
      }),
    );
  } catch {
    // the session ended (its server instance closed): the task is gone with it
  }
}

let emitting = process.env.CHAOS_EMIT === '1';
/** One emission at a time: the control endpoints wait for the one in progress. */
let busy = Promise.resolve();
const serial = (/** @type {() => Promise<unknown>} */ work) => {
  const next = busy.then(work);
  busy = next.then(
    () => {},
    () => {},
  );
  return next;
};
const tick = () => {
  if (emitting) {
    const uri = /** @type {string} */ (URIS[Math.floor(random() * URIS.length)]);
    void serial(() => emit(uri));
  }
  setTimeout(tick, emitMs * (0.5 + random()));
};
setTimeout(tick, emitMs);

/** @param {import('node:http').IncomingMessage} req */
async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  return text.length > 0 ? JSON.parse(text) : undefined;
}

/** @param {import('node:http').ServerResponse} res @param {number} status @param {unknown} body */
function json(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const http = createServer((req, res) => {
  void (async () => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/control/emit') {
      emitting = url.searchParams.get('on') === '1';
      await serial(async () => {});
      return json(res, 200, { emitting, seqs: Object.fromEntries(seqs) });
    }
    if (url.pathname === '/control/probe') {
      const sent = await serial(async () => {
        const out = [];
        for (const uri of URIS) out.push([uri, await emit(uri)]);
        return out;
      });
      return json(res, 200, { sent });
    }
    if (url.pathname === '/control/state') {
      return json(res, 200, {
        pid: process.pid,
        sessions: [...sessions.values()].map((s) => ({
          id: s.id,
          subscriptions: [...s.subscriptions].sort(),
          getOpen: s.getOpen > 0,
        })),
      });
    }
    if (url.pathname !== '/mcp') return json(res, 404, { error: 'not found' });
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    const header = req.headers['mcp-session-id'];
    const id = typeof header === 'string' ? header : undefined;
    let session = id === undefined ? undefined : sessions.get(id);
    if (id !== undefined && session === undefined) {
      return json(res, 404, {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32001, message: 'Session not found' },
      });
    }
    if (session === undefined) {
      if (req.method !== 'POST' || body?.method !== 'initialize') {
        return json(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'No session' } });
      }
      session = await openSession();
    }
    if (req.method === 'GET') {
      const s = session;
      s.getOpen++;
      res.once('close', () => s.getOpen--);
    }
    await session.transport.handleRequest(req, res, body);
  })().catch((error) => {
    if (!res.headersSent) json(res, 500, { error: String(error) });
    else res.destroy();
  });
});
http.listen(port, '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
