/**
 * `startStudio()`: a local web app over live objects — clients, a runtime, a store. One
 * node:http server on 127.0.0.1 serves the built page (`dist/studio`, read once), a JSON API
 * and one SSE stream. A random per-run token guards every request: the page is opened with
 * `?token=…`, which is traded for an HttpOnly, SameSite=Strict cookie; anything without a
 * valid token gets a bare 401.
 */

import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AxEventRuntime, AxEventStore, AxMCPClient } from '../../index.js';
import { array, func, instance, number, object, string } from '../../options/check.js';
import { assertMCPOptions } from '../../protocol/errors.js';
import { StudioAPI } from './api.js';
import type { AxStudioElicitation } from './elicitation.js';
import { StudioObserver } from './observe.js';
import { StudioStream } from './stream.js';

/** Options of {@link startStudio}. */
export interface AxStudioOptions {
  /** The clients whose servers, catalogs and subscriptions the studio shows (namespaces unique). */
  clients?: readonly AxMCPClient[];
  /** The runtime whose events, decisions, runs and dead letters it shows. */
  runtime?: AxEventRuntime;
  /** The store runs and dead letters are read from (default: the runtime's). */
  store?: AxEventStore;
  /**
   * The interface to listen on. Default `127.0.0.1`. Anything but a loopback address exposes
   * the studio (behind its token) to the network, with a warning.
   */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** The directory of the built page (default: the one shipped in the package, `dist/studio`). */
  assets?: string;
  /** Where warnings go. Default `console.warn`. */
  onWarning?: (message: string) => void;
  /**
   * The elicitation bridge your clients were given (`axStudioElicitation()`): form elicitations
   * their servers send are then answered from the page. The studio does not close it.
   */
  elicitation?: AxStudioElicitation;
}

/** A running studio. */
export interface AxStudio {
  /** The page's address, with the token: open it in a browser. */
  readonly url: string;
  /** The address without the token. */
  readonly origin: string;
  /** Stop serving; the clients, runtime and store stay yours. */
  close(): Promise<void>;
}

/** What {@link startStudio} accepts: a misspelled key is refused, never ignored. */
const STUDIO_OPTIONS = object(
  {
    clients: array(
      instance(
        'an AxMCPClient',
        (v) =>
          typeof v === 'object' &&
          v !== null &&
          typeof (v as { inspectCatalog?: unknown }).inspectCatalog === 'function',
      ),
    ),
    runtime: instance(
      'an AxEventRuntime',
      (v) =>
        typeof v === 'object' && v !== null && typeof (v as { publish?: unknown }).publish === 'function',
    ),
    store: instance(
      'an AxEventStore',
      (v) => typeof v === 'object' && v !== null && typeof (v as { claim?: unknown }).claim === 'function',
    ),
    host: string({ nonEmpty: true }),
    port: number({ integer: true, min: 0, max: 65535 }),
    assets: string({ nonEmpty: true }),
    onWarning: func('a function (message) => void'),
    elicitation: instance(
      'an elicitation bridge from axStudioElicitation()',
      (v) =>
        typeof v === 'object' &&
        v !== null &&
        typeof (v as { listen?: unknown }).listen === 'function' &&
        typeof (v as { answer?: unknown }).answer === 'function',
    ),
  },
  { expected: 'options { clients?, runtime?, store?, host?, port?, assets?, onWarning?, elicitation? }' },
);

const COOKIE = 'ax_studio_token';
const HEADER = 'x-ax-studio-token';
const MAX_BODY = 1024 * 1024;
const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "media-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The built page: every file of the directory, read once (nothing else is ever served). */
function loadAssets(dir: string | undefined): Map<string, { type: string; body: Buffer }> {
  const files = new Map<string, { type: string; body: Buffer }>();
  const candidates = dir
    ? [dir]
    : [
        // dist/node/studio/server.js → dist/studio
        fileURLToPath(new URL('../../studio/', import.meta.url)),
        // src/node/studio/server.ts (tests, tsx) → dist/studio
        fileURLToPath(new URL('../../../dist/studio/', import.meta.url)),
      ];
  const root = candidates.find((candidate) => existsSync(join(candidate, 'index.html')));
  if (!root) return files;
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) walk(path);
      else {
        const type = TYPES[extname(name)];
        if (type)
          files.set(`/${relative(root, path).split(sep).join('/')}`, { type, body: readFileSync(path) });
      }
    }
  };
  walk(root);
  return files;
}

function tokenOf(req: IncomingMessage, url: URL): string | undefined {
  const header = req.headers[HEADER];
  if (typeof header === 'string') return header;
  const fromQuery = url.searchParams.get('token');
  if (fromQuery !== null) return fromQuery;
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === COOKIE) return value.join('=');
  }
  return undefined;
}

function sameToken(given: string | undefined, expected: Buffer): boolean {
  if (given === undefined) return false;
  const buffer = Buffer.from(given);
  return buffer.length === expected.length && timingSafeEqual(buffer, expected);
}

function send(res: ServerResponse, status: number, type: string, body: string | Buffer, extra = {}): void {
  res.writeHead(status, {
    'content-type': type,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    ...extra,
  });
  res.end(body);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new RangeError('body too large');
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return undefined;
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/**
 * Start the studio on live objects. Resolves once it listens; print or open `url`.
 *
 * ```ts
 * const studio = await startStudio({ clients: [inventory], runtime });
 * console.log(studio.url);
 * ```
 */
export async function startStudio(options: AxStudioOptions = {}): Promise<AxStudio> {
  assertMCPOptions(STUDIO_OPTIONS, options, 'startStudio options');
  const host = options.host ?? '127.0.0.1';
  const warn = options.onWarning ?? ((message: string) => console.warn(message));
  if (!LOOPBACK.has(host))
    warn(
      `ax-mcp studio listens on ${host}, not only on this machine: anyone who can reach it and learns the token can call tools and redrive runs`,
    );
  const token = randomBytes(32).toString('base64url');
  const expected = Buffer.from(token);
  const assets = loadAssets(options.assets);
  const observer = new StudioObserver(options.clients ?? [], options.runtime);
  const api = new StudioAPI({
    clients: options.clients ?? [],
    runtime: options.runtime,
    store: options.store,
    observer,
    elicitation: options.elicitation,
  });
  const stream = new StudioStream(observer);
  const sockets = new Set<Socket>();
  let port = 0;

  const allowedHosts = () =>
    new Set([
      `${host}:${port}`,
      `[${host}]:${port}`,
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `[::1]:${port}`,
    ]);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://studio.invalid');
    // A page on another site that rebinds its name to this address has another Host header.
    const hostOk = allowedHosts().has(req.headers.host ?? '');
    if (!hostOk || !sameToken(tokenOf(req, url), expected)) {
      send(res, 401, 'text/plain; charset=utf-8', 'unauthorized');
      return;
    }
    const method = req.method ?? 'GET';
    if (url.searchParams.has('token') && method === 'GET' && !url.pathname.startsWith('/api/')) {
      // Trade the token in the address for a cookie, then drop it from the address.
      send(res, 303, 'text/plain; charset=utf-8', '', {
        // The page is one document: always back to its root (never a path that reads as another host).
        location: '/',
        'set-cookie': `${COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`,
      });
      return;
    }
    if (url.pathname === '/api/events' && method === 'GET') {
      stream.open(res);
      return;
    }
    if (url.pathname.startsWith('/api/')) {
      // A custom header forces a CORS preflight, which this server never answers.
      if (method !== 'GET' && req.headers['x-ax-studio'] !== '1') {
        send(res, 403, 'application/json', JSON.stringify({ error: { message: 'missing x-ax-studio' } }));
        return;
      }
      let body: unknown;
      try {
        body = method === 'POST' ? await readJson(req) : undefined;
      } catch {
        send(res, 400, 'application/json', JSON.stringify({ error: { message: 'invalid JSON body' } }));
        return;
      }
      const path = url.pathname.slice('/api/'.length).split('/').map(decodeURIComponent);
      try {
        const reply = await api.handle(method, path, url.searchParams, body);
        send(res, reply.status, 'application/json', JSON.stringify(reply.body), reply.headers);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        send(res, 500, 'application/json', JSON.stringify({ error: { message } }));
      }
      return;
    }
    if (method !== 'GET') {
      send(res, 405, 'text/plain; charset=utf-8', 'method not allowed');
      return;
    }
    const file = assets.get(url.pathname === '/' ? '/index.html' : url.pathname);
    if (!file) {
      if (url.pathname === '/' || url.pathname === '/index.html')
        send(res, 503, 'text/plain; charset=utf-8', 'The studio page is not built: run npm run build.');
      else send(res, 404, 'text/plain; charset=utf-8', 'not found');
      return;
    }
    send(res, 200, file.type, file.body, { 'content-security-policy': CSP, 'x-frame-options': 'DENY' });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'error');
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let closing: Promise<void> | undefined;
  return {
    url: `${origin}/?token=${token}`,
    origin,
    close: () => {
      closing ??= (async () => {
        stream.close();
        observer.close();
        api.close();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const socket of sockets) socket.destroy();
        await closed;
      })();
      return closing;
    },
  };
}
