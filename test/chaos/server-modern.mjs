// @ts-check
/**
 * The chaos campaign's 2026-07-28 MCP server: the official v2 server SDK
 * (`@modelcontextprotocol/server`, `createMcpHandler` with `legacy: 'reject'`: modern only, no
 * sessions) in a process of its own, so the campaign can SIGKILL it and start it again on the
 * same port. Resources `chaos://m/0` … `chaos://m/<n-1>`; clients subscribe with a
 * `subscriptions/listen` filter (`resourceSubscriptions`), served by the SDK's listen router.
 *
 * While emitting is on, it picks a URI every `CHAOS_EMIT_MS` and publishes one
 * `resource_updated` on the SDK's event bus, which writes `notifications/resources/updated` to
 * every listen stream whose filter names the URI. The per-URI sequence number (continued across
 * restarts, from the log) travels in the notification's `_meta` (`chaos/seq`): the 2026-07-28
 * wire has no event ids, so this is how a receipt is told apart from another.
 *
 * Acknowledged sending, on this era, is the bytes of the notification handed to the socket of
 * its listen stream (`res.write` called back): the node:http bridge below reads the SDK's SSE
 * response and logs each `notifications/resources/updated` frame once written. There is no resume:
 * a stream cut after that loses what it carried, and the client must say so (a `reconnected` with
 * `resumed: false`).
 *
 * The log (`CHAOS_LOG`, JSON lines, appended synchronously):
 * - `{ t: 'start', pid }` once per process;
 * - `{ t: 'listen', sid, uris, pid, at }` when a listen stream opens (`sid` is the request's id,
 *   the subscription id the SDK stamps on its notifications); `{ t: 'unlisten', sid, pid, at }`
 *   when it closes;
 * - `{ t: 'send', uri, seq, pid, at }` once per publish;
 * - `{ t: 'ack', kind: 'listen', s: 'stream', sid, uri, seq, eid, pid, at }` once the frame of
 *   one update was written to one listen stream (`eid` = `<uri>|<seq>|<sid>`, the id the source's
 *   transport gives that copy).
 *
 * Control (straight to the server's port, not through the proxy): `POST /control/emit?on=0|1`,
 * `POST /control/probe` (one update of every URI now), `GET /control/state` (open listen streams
 * and the URIs of their filters).
 */
import { createServer } from 'node:http';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { chaosServerBasics } from './server-log.mjs';

const { port, emitMs, random, now, log, URIS, seqs } = chaosServerBasics('chaos://m/');
const SEQ_KEY = 'chaos/seq';
const SUBSCRIPTION_ID_KEY = 'io.modelcontextprotocol/subscriptionId';

const handler = createMcpHandler(
  () => {
    const mcp = new McpServer(
      { name: 'ax-mcp-chaos-modern', version: '1.0.0' },
      { capabilities: { resources: { subscribe: true, listChanged: false } } },
    );
    for (const uri of URIS) {
      mcp.registerResource(uri.slice('chaos://'.length), uri, { mimeType: 'text/plain' }, () => ({
        contents: [{ uri, mimeType: 'text/plain', text: `seq ${seqs.get(uri)}` }],
      }));
    }
    return mcp;
  },
  { legacy: 'reject', keepAliveMs: 5_000 },
);

/** Open listen streams: subscription id → the URIs of its filter. */
const listens = new Map();

function emit(/** @type {string} */ uri) {
  const seq = (seqs.get(uri) ?? 0) + 1;
  seqs.set(uri, seq);
  log({ t: 'send', uri, seq, pid: process.pid, at: now() });
  handler.bus.publish({ kind: 'resource_updated', uri, params: { _meta: { [SEQ_KEY]: seq } } });
  return seq;
}

let emitting = process.env.CHAOS_EMIT === '1';
const tick = () => {
  if (emitting) emit(/** @type {string} */ (URIS[Math.floor(random() * URIS.length)]));
  setTimeout(tick, emitMs * (0.5 + random()));
};
setTimeout(tick, emitMs);

/** @param {import('node:http').IncomingMessage} req */
async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** @param {import('node:http').ServerResponse} res @param {number} status @param {unknown} body */
function json(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** The updates in complete SSE frames of `text` (one frame per `\n\n`). */
function updatesIn(/** @type {string} */ text) {
  const found = [];
  for (const frame of text.split('\n\n')) {
    const data = frame
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trimStart())
      .join('\n');
    if (!data.includes('notifications/resources/updated')) continue;
    try {
      const message = JSON.parse(data);
      const meta = message.params?._meta ?? {};
      found.push({ uri: message.params.uri, seq: meta[SEQ_KEY], sid: meta[SUBSCRIPTION_ID_KEY] });
    } catch {
      // not ours
    }
  }
  return found;
}

/**
 * Writes the SDK's web `Response` to node:http. For a listen stream, each update frame is
 * logged once `res.write` called back; a closed socket cancels the body (or the SDK would keep
 * the listen open).
 * @param {Response} response @param {import('node:http').ServerResponse} res @param {unknown} sid
 */
async function writeResponse(response, res, sid) {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) return void res.end();
  const reader = response.body.getReader();
  res.once('close', () => void reader.cancel().catch(() => {}));
  const decoder = new TextDecoder();
  let pending = '';
  for (;;) {
    const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
    if (done || res.destroyed) break;
    if (sid === undefined) {
      res.write(value);
      continue;
    }
    pending += decoder.decode(value, { stream: true });
    const end = pending.lastIndexOf('\n\n');
    const complete = end < 0 ? '' : pending.slice(0, end + 2);
    pending = end < 0 ? pending : pending.slice(end + 2);
    const updates = updatesIn(complete);
    res.write(value, (error) => {
      if (error) return;
      const at = now();
      for (const u of updates)
        log({
          t: 'ack',
          kind: 'listen',
          s: 'stream',
          sid: u.sid,
          uri: u.uri,
          seq: u.seq,
          eid: `${u.uri}|${u.seq}|${u.sid}`,
          pid: process.pid,
          at,
        });
    });
  }
  if (!res.destroyed) res.end();
}

const http = createServer((req, res) => {
  void (async () => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/control/emit') {
      emitting = url.searchParams.get('on') === '1';
      return json(res, 200, { emitting, seqs: Object.fromEntries(seqs) });
    }
    if (url.pathname === '/control/probe') {
      return json(res, 200, { sent: URIS.map((uri) => [uri, emit(uri)]) });
    }
    if (url.pathname === '/control/state') {
      return json(res, 200, {
        pid: process.pid,
        listens: [...listens].map(([sid, uris]) => ({ sid, uris: [...uris].sort() })),
      });
    }
    if (url.pathname !== '/mcp') return json(res, 404, { error: 'not found' });
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    /** @type {{ id?: unknown, method?: unknown, params?: { notifications?: { resourceSubscriptions?: string[] } } } | undefined} */
    let message;
    try {
      message = body && body.length > 0 ? JSON.parse(body.toString('utf8')) : undefined;
    } catch {
      message = undefined;
    }
    const listen = message?.method === 'subscriptions/listen' ? message.id : undefined;
    const abort = new AbortController();
    res.once('close', () => abort.abort());
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === 'string') headers.set(name, value);
    const response = await handler.fetch(
      new Request(`http://127.0.0.1:${port}${req.url}`, {
        method: req.method,
        headers,
        ...(body && body.length > 0 ? { body } : {}),
        signal: abort.signal,
      }),
    );
    if (listen !== undefined && response.headers.get('content-type')?.includes('text/event-stream')) {
      listens.set(listen, message?.params?.notifications?.resourceSubscriptions ?? []);
      log({ t: 'listen', sid: listen, uris: listens.get(listen), pid: process.pid, at: now() });
      res.once('close', () => {
        listens.delete(listen);
        log({ t: 'unlisten', sid: listen, pid: process.pid, at: now() });
      });
    }
    await writeResponse(response, res, listen);
  })().catch((error) => {
    if (!res.headersSent) json(res, 500, { error: String(error) });
    else res.destroy();
  });
});
http.listen(port, '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
