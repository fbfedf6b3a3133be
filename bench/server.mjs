// The benchmark's MCP server, in its own process: the official v2 server SDK
// (`@modelcontextprotocol/server` 2.4.0) on 127.0.0.1, the same for every client.
//
//   node bench/server.mjs --era modern|legacy [--tools 2] [--page 100]
//
// --era modern   2026-07-28, stateless: `createMcpHandler(factory, { legacy: 'reject' })`.
// --era legacy   2025-11-25, sessionful: one McpServer and one
//                `WebStandardStreamableHTTPServerTransport` per session (SSE answers, as the
//                SDK does by default), no event store.
//
// Tools: `echo` ({ message }) and, with --tools N > 2, generated `bulk_NNNNN` tools; `tools/list`
// is paginated by hand (--page items a page). One subscribable resource, `bench://r/0`.
// Control endpoints (plain HTTP, outside MCP; the harness uses them, never a client library):
//   GET  /control/status          → { sessions, getStreams, listenStreams }
//   POST /control/flood?uri=&n=   → sends n `notifications/resources/updated` for uri to every
//                                   subscriber (legacy: sessions that subscribed, on their GET
//                                   stream; modern: listen streams whose filter names uri), then
//                                   answers { sent }.
// Prints one JSON line { url, port } on stdout once listening. Ends on SIGTERM or stdin close.

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import {
  createMcpHandler,
  McpServer,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import * as z from 'zod';
import { benchArgs } from './args.mjs';

const { values } = benchArgs({
  usage: `Usage: node bench/server.mjs [--era modern|legacy] [--tools 2] [--page 100]
  --era modern|legacy   2026-07-28 stateless, or 2025-11-25 with sessions (default modern)
  --tools N             tools listed: echo, then generated bulk_NNNNN ones (default 2)
  --page N              tools per tools/list page (default 100)`,
  options: {
    era: { type: 'string', choices: ['modern', 'legacy'], default: 'modern' },
    tools: { type: 'integer', min: 1, default: 2 },
    page: { type: 'integer', min: 1, default: 100 },
  },
});
const era = values.era;
const pageSize = values.page;
const RESOURCE = 'bench://r/0';

const text = (value) => ({ content: [{ type: 'text', text: value }] });
const echoInput = z.object({ message: z.string() });
const bulkSchema = { type: 'object', properties: { note: { type: 'string' } } };
const listed = [
  {
    name: 'echo',
    description: 'Echoes `message`.',
    inputSchema: {
      type: 'object',
      properties: { message: { type: 'string' } },
      required: ['message'],
    },
  },
];
for (let i = 0; listed.length < values.tools; i++) {
  listed.push({
    name: `bulk_${String(i).padStart(5, '0')}`,
    description: `Bulk tool ${i}: a generated tool with a short description and a small input schema.`,
    inputSchema: bulkSchema,
  });
}

function page(cursor) {
  const start = cursor === undefined ? 0 : Number.parseInt(String(cursor).slice(1), 10);
  if (!Number.isInteger(start) || start < 0 || start > listed.length) throw new Error('Invalid cursor');
  const end = start + pageSize;
  return { tools: listed.slice(start, end), ...(end < listed.length ? { nextCursor: `c${end}` } : {}) };
}

function build(onSubscribe, onUnsubscribe) {
  const mcp = new McpServer(
    { name: 'ax-mcp-bench-server', version: '1.0.0' },
    { capabilities: { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true } } },
  );
  mcp.registerTool('echo', { description: 'Echoes `message`.', inputSchema: echoInput }, ({ message }) =>
    text(message),
  );
  mcp.server.setRequestHandler('tools/list', (request) => page(request.params?.cursor));
  mcp.registerResource('r0', RESOURCE, { mimeType: 'text/plain' }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'zero' }],
  }));
  if (onSubscribe) {
    mcp.server.setRequestHandler('resources/subscribe', (request) => {
      onSubscribe(request.params.uri);
      return {};
    });
    mcp.server.setRequestHandler('resources/unsubscribe', (request) => {
      onUnsubscribe(request.params.uri);
      return {};
    });
  }
  return mcp;
}

// ---- node:http ⇄ web Request/Response -------------------------------------------------------

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function toWebRequest(req, res, body, port) {
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2)
    headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
  const controller = new AbortController();
  // Per response, not per socket: keep-alive sockets must not collect a listener per request.
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return new Request(`http://127.0.0.1:${port}${req.url}`, {
    method: req.method,
    headers,
    body: req.method === 'POST' ? body : undefined,
    signal: controller.signal,
  });
}

async function writeWebResponse(res, response, onClose) {
  const headers = {};
  response.headers.forEach((value, key) => {
    headers[key] = value;
  });
  res.writeHead(response.status, headers);
  if (response.body === null) {
    res.end();
    onClose?.();
    return;
  }
  res.flushHeaders();
  const reader = response.body.getReader();
  const cancel = () => reader.cancel().catch(() => {});
  res.once('close', cancel);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      if (!res.write(value)) {
        await new Promise((resolve) => {
          const go = () => {
            res.off('drain', go);
            res.off('close', go);
            resolve();
          };
          res.once('drain', go);
          res.once('close', go);
        });
      }
    }
  } catch {
    // The client went away.
  } finally {
    res.off('close', cancel);
    if (res.destroyed) cancel();
    if (!res.writableEnded) res.end();
    onClose?.();
  }
}

const json = (res, status, value) => {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

// ---- the two eras ----------------------------------------------------------------------------

const stats = { getStreams: 0, listenStreams: 0, connections: 0 };
const sessions = new Map();
let mcpHandler;

async function legacyRoute(req, res, body, port) {
  const sessionId = req.headers['mcp-session-id'];
  let session = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
  if (sessionId !== undefined && !session)
    return json(res, 404, {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32001, message: 'Session not found' },
    });
  if (!session) {
    if (req.method !== 'POST' || !body.includes('"initialize"')) {
      return json(res, 400, {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: 'Mcp-Session-Id required' },
      });
    }
    const subscriptions = new Set();
    const fresh = {
      subscriptions,
      mcp: build(
        (uri) => subscriptions.add(uri),
        (uri) => subscriptions.delete(uri),
      ),
    };
    fresh.transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        fresh.id = id;
        sessions.set(id, fresh);
      },
    });
    fresh.transport.onclose = () => sessions.delete(fresh.id);
    await fresh.mcp.connect(fresh.transport);
    session = fresh;
  }
  const response = await session.transport.handleRequest(toWebRequest(req, res, body, port));
  const isGet = req.method === 'GET' && response.status === 200;
  if (isGet) stats.getStreams++;
  await writeWebResponse(res, response, isGet ? () => stats.getStreams-- : undefined);
}

async function modernRoute(req, res, body, port) {
  const isListen = req.method === 'POST' && body.includes('"subscriptions/listen"');
  const response = await mcpHandler.fetch(toWebRequest(req, res, body, port));
  if (isListen) stats.listenStreams++;
  await writeWebResponse(res, response, isListen ? () => stats.listenStreams-- : undefined);
}

if (era === 'modern') mcpHandler = createMcpHandler(() => build(), { legacy: 'reject' });

async function flood(uri, n) {
  let sent = 0;
  const BATCH = 500;
  if (era === 'modern') {
    for (let i = 0; i < n; i++) {
      mcpHandler.notify.resourceUpdated(uri);
      sent++;
      if (sent % BATCH === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    return sent;
  }
  const targets = [...sessions.values()].filter((s) => s.subscriptions.has(uri));
  for (let i = 0; i < n; i++) {
    for (const s of targets) {
      await s.mcp.server.sendResourceUpdated({ uri });
      sent++;
    }
    if (i % BATCH === BATCH - 1) await new Promise((resolve) => setImmediate(resolve));
  }
  return sent;
}

const server = createServer((req, res) => {
  const port = server.address().port;
  (async () => {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (url.pathname === '/control/status') {
      const cpu = process.cpuUsage();
      return json(res, 200, { sessions: sessions.size, ...stats, cpuUs: cpu.user + cpu.system });
    }
    if (url.pathname === '/control/flood') {
      const sent = await flood(
        url.searchParams.get('uri') ?? RESOURCE,
        Number(url.searchParams.get('n') ?? 1),
      );
      return json(res, 200, { sent });
    }
    if (url.pathname !== '/mcp') return json(res, 404, { error: 'not found' });
    const body = req.method === 'POST' ? await readBody(req) : '';
    if (era === 'modern') await modernRoute(req, res, body, port);
    else await legacyRoute(req, res, body, port);
  })().catch((error) => {
    if (!res.headersSent) json(res, 500, { error: String(error?.message ?? error) });
    else res.destroy();
  });
});
server.on('connection', () => stats.connections++);
server.keepAliveTimeout = 60_000;
server.headersTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/mcp`, port, era })}\n`);
});

const stop = () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1000).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.resume();
