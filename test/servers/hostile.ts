/**
 * A raw node:http peer that speaks just enough 2025-11-25 Streamable HTTP to complete `initialize`
 * (with a session id), then misbehaves on later requests as its mode says. Every request is recorded.
 * Notifications and responses from the client always get 202.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { drained, listenLoopback, parseJson, readBody } from './node-http.js';

/** How the server answers requests (other than `initialize`, unless `includeInitialize`). */
export type HostileMode =
  /** Normal JSON answers: `tools/list` → one tool `ok_tool`, `tools/call` → text "ok", `ping` → {}. */
  | 'ok'
  /** The normal answer as an SSE stream (`event: message`, then the stream ends). */
  | 'ok-sse'
  /** 200 application/json with a truncated, unparsable body. */
  | 'invalid-json'
  /** A response with `"jsonrpc": "1.0"`. */
  | 'bad-jsonrpc-version'
  /** A well-formed response whose id matches no request; the real answer never comes. */
  | 'unknown-id'
  /** A valid response larger than `oversizeBytes`, with Content-Length. */
  | 'oversized'
  /** The same, chunked (no Content-Length): the size is only known while reading. */
  | 'oversized-chunked'
  /** Raw text `{"jsonrpc":"2.0","id":<id>,"result":{"tools":[],"__proto__":{"polluted":true}}}`. */
  | 'proto-key'
  /** An SSE stream of keep-alive comments that never ends (until the client disconnects). */
  | 'sse-forever'
  /** 500 with an HTML body. */
  | 'html-500'
  /** 503 + `Retry-After: 1` the first `times` requests, then the normal answer. */
  | 'retry-503'
  /** SSE priming event (`id: eN`, `retry: 200`, empty data), then the stream closes; GET with `Last-Event-ID: eN` gets the answer. */
  | 'sse-resume';

/** One recorded HTTP request. */
export interface HostileRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Headers;
  readonly body: string;
  /** The JSON-RPC method of the body, if any. */
  readonly rpcMethod?: string;
}

/** Options of {@link startHostileServer}. */
export interface HostileOptions {
  /** Minimum body size of the `oversized` modes, bytes. Default 2 MiB. */
  oversizeBytes?: number;
  /** Interval of the `sse-forever` keep-alive comments, ms. Default 100. */
  keepAliveMs?: number;
}

/** A running hostile peer. */
export interface HostileServer {
  /** The endpoint, `http://127.0.0.1:<port>/mcp` (any path is served). */
  readonly url: string;
  readonly port: number;
  /** The session id returned by every `initialize`. */
  readonly sessionId: string;
  /** Every request received, in order (bounded to the last 1000). */
  readonly requests: readonly HostileRequest[];
  /** Open `sse-forever` streams (0 once clients disconnected). */
  openStreams(): number;
  /** Changes the mode. `times`: failures before success in `retry-503` (default 2). */
  setMode(mode: HostileMode, options?: { times?: number; includeInitialize?: boolean }): void;
  /** Stops the server and every stream. */
  close(): Promise<void>;
}

type RpcId = string | number;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The normal answer to a request. */
function normalAnswer(method: string, id: RpcId, params: Record<string, unknown>): Record<string, unknown> {
  const result = (value: unknown) => ({ jsonrpc: '2.0', id, result: value });
  switch (method) {
    case 'initialize': {
      const requested = params.protocolVersion;
      const known = ['2025-11-25', '2025-06-18', '2025-03-26'];
      return result({
        protocolVersion:
          typeof requested === 'string' && known.includes(requested) ? requested : '2025-11-25',
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: 'hostile-peer', version: '1.0.0' },
      });
    }
    case 'tools/list':
      return result({
        tools: [
          { name: 'ok_tool', description: 'Answers ok', inputSchema: { type: 'object', properties: {} } },
        ],
      });
    case 'tools/call':
      return result({ content: [{ type: 'text', text: 'ok' }] });
    case 'ping':
      return result({});
    default:
      return { jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${method}` } };
  }
}

/** Starts the hostile peer on 127.0.0.1 (port 0), in mode `ok`. */
export async function startHostileServer(options: HostileOptions = {}): Promise<HostileServer> {
  const oversizeBytes = options.oversizeBytes ?? 2 * 1024 * 1024;
  const keepAliveMs = options.keepAliveMs ?? 100;
  const sessionId = `hostile-${Math.random().toString(36).slice(2, 10)}`;
  const requests: HostileRequest[] = [];
  const streams = new Set<ServerResponse>();
  const timers = new Set<NodeJS.Timeout>();
  const resumable = new Map<string, Record<string, unknown>>();
  let mode: HostileMode = 'ok';
  let includeInitialize = false;
  let failuresLeft = 0;
  let primingSeq = 0;

  function json(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) {
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      ...headers,
    });
    res.end(body);
  }

  function sseHead(res: ServerResponse) {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    res.flushHeaders();
  }

  async function writeOversized(res: ServerResponse, id: RpcId, chunked: boolean) {
    const head = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"tools":[],"padding":"`;
    const tail = '"}}';
    const chunk = 'x'.repeat(64 * 1024);
    const chunks = Math.ceil(oversizeBytes / chunk.length);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (!chunked) headers['content-length'] = String(head.length + chunks * chunk.length + tail.length);
    res.writeHead(200, headers);
    res.write(head);
    for (let i = 0; i < chunks && !res.destroyed; i++) {
      if (!res.write(chunk)) await drained(res);
    }
    res.end(tail);
  }

  function sseForever(res: ServerResponse) {
    sseHead(res);
    streams.add(res);
    const timer = setInterval(() => res.write(': keep-alive\n\n'), keepAliveMs);
    timers.add(timer);
    res.once('close', () => {
      clearInterval(timer);
      timers.delete(timer);
      streams.delete(res);
    });
  }

  async function answerRequest(
    res: ServerResponse,
    method: string,
    id: RpcId,
    params: Record<string, unknown>,
  ) {
    const isInit = method === 'initialize';
    const sessionHeader: Record<string, string> = isInit ? { 'mcp-session-id': sessionId } : {};
    const normal = normalAnswer(method, id, params);
    const effective: HostileMode = isInit && !includeInitialize ? 'ok' : mode;
    switch (effective) {
      case 'ok':
        return json(res, 200, JSON.stringify(normal), sessionHeader);
      case 'ok-sse':
        sseHead(res);
        return res.end(`event: message\ndata: ${JSON.stringify(normal)}\n\n`);
      case 'invalid-json':
        return json(
          res,
          200,
          `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"tools":[`,
          sessionHeader,
        );
      case 'bad-jsonrpc-version':
        return json(res, 200, JSON.stringify({ ...normal, jsonrpc: '1.0' }), sessionHeader);
      case 'unknown-id': {
        const other = typeof id === 'number' ? id + 1_000_000 : `${id}-unknown`;
        return json(res, 200, JSON.stringify({ ...normal, id: other }), sessionHeader);
      }
      case 'oversized':
      case 'oversized-chunked':
        return writeOversized(res, id, effective === 'oversized-chunked');
      case 'proto-key':
        return json(
          res,
          200,
          `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"tools":[],"__proto__":{"polluted":true}}}`,
          sessionHeader,
        );
      case 'sse-forever':
        return sseForever(res);
      case 'html-500': {
        const html = '<!DOCTYPE html><html><body><h1>500 Internal Server Error</h1></body></html>';
        res.writeHead(500, {
          'content-type': 'text/html; charset=utf-8',
          'content-length': Buffer.byteLength(html),
        });
        return res.end(html);
      }
      case 'retry-503':
        if (failuresLeft > 0) {
          failuresLeft--;
          res.writeHead(503, { 'retry-after': '1', 'content-type': 'text/plain' });
          return res.end('Service Unavailable');
        }
        return json(res, 200, JSON.stringify(normal), sessionHeader);
      case 'sse-resume': {
        primingSeq++;
        const eventId = `e${primingSeq}`;
        resumable.set(eventId, normal);
        sseHead(res);
        return res.end(`id: ${eventId}\nretry: 200\ndata: \n\n`);
      }
    }
  }

  async function route(req: IncomingMessage, res: ServerResponse) {
    const body = (await readBody(req)) ?? '';
    const headers = new Headers();
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2)
      headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
    const parsed = parseJson(body);
    const rpcMethod = isRecord(parsed) && typeof parsed.method === 'string' ? parsed.method : undefined;
    if (requests.length >= 1000) requests.shift();
    requests.push({
      method: req.method ?? '',
      url: req.url ?? '',
      headers,
      body,
      ...(rpcMethod ? { rpcMethod } : {}),
    });

    if (req.method === 'GET') {
      const lastEventId = headers.get('last-event-id');
      if (lastEventId === null) {
        res.writeHead(405, { allow: 'POST, DELETE' });
        return res.end();
      }
      const message = resumable.get(lastEventId);
      if (message === undefined)
        return json(
          res,
          400,
          '{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Unknown event id"}}',
        );
      resumable.delete(lastEventId);
      sseHead(res);
      return res.end(`event: message\nid: ${lastEventId}-response\ndata: ${JSON.stringify(message)}\n\n`);
    }
    if (req.method === 'DELETE') {
      res.writeHead(200);
      return res.end();
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'GET, POST, DELETE' });
      return res.end();
    }
    if (!isRecord(parsed)) {
      return json(res, 400, '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}');
    }
    const id = parsed.id;
    if (rpcMethod === undefined || (typeof id !== 'string' && typeof id !== 'number')) {
      res.writeHead(202);
      return res.end();
    }
    return answerRequest(res, rpcMethod, id, isRecord(parsed.params) ? parsed.params : {});
  }

  const http = await listenLoopback((req, res) => {
    route(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });

  return {
    url: http.url('/mcp'),
    port: http.port,
    sessionId,
    requests,
    openStreams: () => streams.size,
    setMode(next, modeOptions = {}) {
      mode = next;
      includeInitialize = modeOptions.includeInitialize ?? false;
      failuresLeft = next === 'retry-503' ? (modeOptions.times ?? 2) : 0;
    },
    async close() {
      for (const timer of timers) clearInterval(timer);
      timers.clear();
      for (const res of streams) res.destroy();
      streams.clear();
      await http.close();
    },
  };
}
