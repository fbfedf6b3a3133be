/**
 * `AxMCPDemoServer`: the dual-era inventory MCP server of `ax-mcp/demo`, built on the official
 * server SDK. One endpoint (`/mcp`) serves 2026-07-28 requests through `createMcpHandler` and
 * 2025-11-25 sessions through the SDK's sessionful transport (routed with the SDK's own
 * `isLegacyRequest`), plus control endpoints (`/control/*`) on the same port, and a small UCP
 * shop at the same origin (`/.well-known/ucp`, `/ucp/v1/*`, `/control/shop/*`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  hostHeaderValidationResponse,
  isLegacyRequest,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
} from '@modelcontextprotocol/server';
import { boolean, number, object, oneOf, record, string } from '../options/check.js';
import { AxMCPError, assertMCPOptions } from '../protocol/errors.js';
import { type AxMCPDemoControls, AxMCPDemoError, handleControl } from './control.js';
import type { AxMCPDemoHeaderViolation } from './headers.js';
import {
  type BoundServer,
  disconnectSignal,
  isLoopbackHost,
  jsonResponse,
  listen,
  parseJson,
  readBody,
  rpcErrorResponse,
  toWebRequest,
  writeWebResponse,
} from './http.js';
import { type AxMCPDemoResource, Inventory } from './inventory.js';
import { DEFAULT_CACHE_HINTS, type DemoCacheHints, type SurfaceDeps } from './mcp-surface.js';
import { type AxMCPDemoListenStream, ModernLeg } from './modern-leg.js';
import { methodsOf } from './rpc.js';
import { LegacySessions } from './sessions.js';
import { type AxMCPDemoShopState, DemoShop } from './shop.js';
import { type AxMCPDemoTask, type TaskRecord, TaskStore, taskSnapshot } from './tasks.js';

/** Which protocol eras the endpoint serves. */
export type AxMCPDemoEra = 'dual' | 'modern' | 'legacy';

/** Options of {@link AxMCPDemoServer}. */
export interface AxMCPDemoServerOptions {
  /** `dual` (default): both eras on one endpoint; `modern`: 2026-07-28 only; `legacy`: 2025-11-25 only. */
  era?: AxMCPDemoEra;
  /** Port; 0 (default) picks a free one. */
  port?: number;
  /** Interface to bind; default `127.0.0.1`. Host and Origin are checked while it is a loopback address. */
  host?: string;
  /** Check modern requests' `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-Scope` (400 `-32020`). Default true. */
  checkHeaders?: boolean;
  /** Complete a working task on its N-th `tasks/get` (default: only through the task controls). */
  taskCompletesAfterPolls?: number;
  /** Task time-to-live, ms. Default 1 hour. */
  taskTtlMs?: number;
  /** Suggested task poll interval, ms. Default 500. */
  taskPollIntervalMs?: number;
  /** SSE `retry:` sent to legacy clients, ms. Default 1000. */
  retryIntervalMs?: number;
  /** SSE keep-alive comment interval, ms (0 = off). Default 15000. */
  keepAliveMs?: number;
  /** 2026-07-28 cache hints (`ttlMs`, `cacheScope`) per cacheable operation. */
  cacheHints?: DemoCacheHints;
  /** Serve `/control/*`. Default true. */
  controlEndpoints?: boolean;
  /** Legacy sessions kept at once; the least recently used is closed beyond it. Default 256. */
  maxSessions?: number;
  /** Modern listen streams open at once. Default 256. */
  maxStreams?: number;
  /** Serve the UCP demo shop (`/.well-known/ucp`, `/ucp/v1/*`, `/control/shop/*`). Default true. */
  shop?: boolean;
}

/** A legacy session as {@link AxMCPDemoState} reports it. */
export interface AxMCPDemoSessionState {
  readonly sessionId: string;
  readonly subscriptions: readonly string[];
  /** Open GET (SSE) streams of the session. */
  readonly getStreams: number;
}

/** What `GET /control/state` returns. */
export interface AxMCPDemoState {
  readonly era: AxMCPDemoEra;
  readonly url: string | undefined;
  /** Concrete resources in `resources/list` order. */
  readonly resources: readonly AxMCPDemoResource[];
  readonly sessions: readonly AxMCPDemoSessionState[];
  /** Subscribed URIs per legacy session id. */
  readonly subscriptions: Readonly<Record<string, readonly string[]>>;
  readonly listenStreams: readonly AxMCPDemoListenStream[];
  readonly tasks: readonly AxMCPDemoTask[];
  /** JSON-RPC messages received, by era and method. */
  readonly methodCounts: { readonly modern: Record<string, number>; readonly legacy: Record<string, number> };
  /** The latest header violations (at most 100). */
  readonly headerViolations: readonly AxMCPDemoHeaderViolation[];
}

const MAX_COUNTED_METHODS = 200;
const MAX_VIOLATIONS = 100;

/** What {@link AxMCPDemoServer} accepts. */
const DEMO_SERVER_OPTIONS = object(
  {
    era: oneOf('dual', 'modern', 'legacy'),
    port: number({ integer: true, min: 0, max: 65535 }),
    host: string({ nonEmpty: true }),
    checkHeaders: boolean(),
    taskCompletesAfterPolls: number({ integer: true, min: 0 }),
    taskTtlMs: number({ min: 1 }),
    taskPollIntervalMs: number({ min: 0 }),
    retryIntervalMs: number({ min: 0 }),
    keepAliveMs: number({ min: 0 }),
    cacheHints: record(object({}, { open: true })),
    controlEndpoints: boolean(),
    maxSessions: number({ integer: true, min: 1 }),
    maxStreams: number({ integer: true, min: 1 }),
    shop: boolean(),
  },
  { expected: 'AxMCPDemoServer options { era?, port?, host?, … }' },
);

/**
 * The demo inventory MCP server. `start()` binds and returns the endpoint URL; `close()` ends
 * every session, stream and socket. The methods mirror the HTTP control endpoints.
 */
export class AxMCPDemoServer implements AxMCPDemoControls {
  /** The eras served. */
  readonly era: AxMCPDemoEra;
  readonly #options: AxMCPDemoServerOptions;
  readonly #host: string;
  readonly #inventory = new Inventory();
  readonly #tasks: TaskStore;
  readonly #modern: ModernLeg | undefined;
  readonly #legacy: LegacySessions | undefined;
  readonly #counts = { modern: new Map<string, number>(), legacy: new Map<string, number>() };
  readonly #violations: AxMCPDemoHeaderViolation[] = [];
  readonly #shop: DemoShop | undefined;
  #http: BoundServer | undefined;
  #url: string | undefined;
  #closed = false;

  /** Checks the options first: a misspelled key is `invalid_options` with the nearest name. */
  constructor(options: AxMCPDemoServerOptions = {}) {
    assertMCPOptions(DEMO_SERVER_OPTIONS, options, 'AxMCPDemoServer options');
    this.era = options.era ?? 'dual';
    this.#options = options;
    this.#host = options.host ?? '127.0.0.1';
    this.#tasks = new TaskStore({
      ttlMs: options.taskTtlMs ?? 3_600_000,
      pollIntervalMs: options.taskPollIntervalMs ?? 500,
      ...(options.taskCompletesAfterPolls === undefined
        ? {}
        : { completeAfterPolls: options.taskCompletesAfterPolls }),
    });
    const deps: SurfaceDeps = {
      inventory: this.#inventory,
      tasks: this.#tasks,
      cacheHints: options.cacheHints ?? DEFAULT_CACHE_HINTS,
      resourcesUpdated: (uris) => {
        for (const uri of uris) void this.emitResourceUpdated(uri);
      },
    };
    if (options.shop !== false) this.#shop = new DemoShop({ loopbackOnly: isLoopbackHost(this.#host) });
    const keepAliveMs = options.keepAliveMs ?? 15_000;
    if (this.era !== 'legacy') {
      this.#modern = new ModernLeg({
        deps,
        checkHeaders: options.checkHeaders ?? true,
        keepAliveMs,
        maxStreams: options.maxStreams ?? 256,
        onViolation: (violation) => {
          if (this.#violations.length >= MAX_VIOLATIONS) this.#violations.shift();
          this.#violations.push(violation);
        },
      });
    }
    if (this.era !== 'modern') {
      this.#legacy = new LegacySessions({
        deps,
        retryIntervalMs: options.retryIntervalMs ?? 1_000,
        keepAliveMs,
        maxSessions: options.maxSessions ?? 256,
      });
    }
  }

  /** The endpoint, `http://<host>:<port>/mcp`; throws before {@link AxMCPDemoServer.start}. */
  get url(): string {
    if (this.#url === undefined) throw new AxMCPError('invalid_argument', 'The demo server has not started');
    return this.#url;
  }

  /** Binds the server; resolves with the MCP endpoint URL. */
  async start(): Promise<string> {
    if (this.#closed) throw new AxMCPError('closed', 'The demo server was closed');
    if (this.#url !== undefined) return this.#url;
    this.#http = await listen(
      (req, res) => {
        this.#route(req, res).catch(() => {
          if (!res.headersSent) {
            res.writeHead(500, { 'content-type': 'application/json' });
            res.end(
              JSON.stringify({
                jsonrpc: '2.0',
                id: null,
                error: { code: -32603, message: 'Internal error' },
              }),
            );
          } else {
            res.destroy();
          }
        });
      },
      this.#host,
      this.#options.port ?? 0,
    );
    const shown = this.#host === '0.0.0.0' || this.#host === '::' ? '127.0.0.1' : this.#host;
    const hostPart = shown.includes(':') ? `[${shown}]` : shown;
    await this.#shop?.start(`http://${hostPart}:${this.#http.port}`);
    this.#url = `http://${hostPart}:${this.#http.port}/mcp`;
    return this.#url;
  }

  /** Ends every stream, session and connection; afterwards nothing keeps the process alive. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#tasks.close();
    await this.#modern?.close();
    await this.#legacy?.close();
    await this.#shop?.close();
    await this.#http?.close();
  }

  /** Sends `notifications/resources/updated` for `uri` to modern listeners and subscribed legacy sessions. */
  async emitResourceUpdated(uri: string): Promise<{ uri: string; legacySessions: number }> {
    this.#modern?.handler.notify.resourceUpdated(uri);
    const legacySessions = (await this.#legacy?.resourceUpdated(uri)) ?? 0;
    return { uri, legacySessions };
  }

  /** Adds a concrete resource and announces `resources/list_changed` in both eras. */
  addResource(input: {
    uri: string;
    name: string;
    mimeType?: string;
    description?: string;
  }): AxMCPDemoResource {
    if (this.#inventory.resource(input.uri) !== undefined) {
      throw new AxMCPDemoError(409, `Resource ${input.uri} already exists`);
    }
    const resource = this.#inventory.addResource(input);
    this.#legacy?.addResource(resource);
    this.#modern?.handler.notify.resourcesChanged();
    return resource;
  }

  /** Removes a concrete resource (false when unknown) and announces `resources/list_changed`. */
  removeResource(uri: string): boolean {
    if (!this.#inventory.removeResource(uri)) return false;
    this.#legacy?.removeResource(uri);
    this.#modern?.handler.notify.resourcesChanged();
    return true;
  }

  /** Completes a task (default: the latest). */
  completeTask(taskId?: string): AxMCPDemoTask {
    const task = this.#taskFor(taskId);
    this.#tasks.complete(task);
    return taskSnapshot(task);
  }

  /** Fails a task (default: the latest) with a `-32603` error. */
  failTask(taskId?: string, message?: string): AxMCPDemoTask {
    const task = this.#taskFor(taskId);
    this.#tasks.fail(task, message?.slice(0, 500));
    return taskSnapshot(task);
  }

  /** Moves a task (default: the latest) to `input_required` with a form elicitation. */
  requestTaskInput(taskId?: string): AxMCPDemoTask {
    const task = this.#taskFor(taskId);
    this.#tasks.requestInput(task);
    return taskSnapshot(task);
  }

  /** Drops every modern listen stream and legacy GET stream; clients must reconnect. */
  dropStreams(): { modern: number; legacy: number } {
    return { modern: this.#modern?.dropStreams() ?? 0, legacy: this.#legacy?.dropStreams() ?? 0 };
  }

  /** Ships (or delivers) a shop order and sends its signed webhook (`POST /control/shop/orders/:id/ship`). */
  async shipOrder(
    orderId: string,
    action: 'ship' | 'deliver' = 'ship',
  ): Promise<{ order: string; webhook: number }> {
    if (!this.#shop) throw new AxMCPDemoError(404, 'The shop is off (shop: false)');
    return this.#shop.advance(orderId, action);
  }

  /** What the shop holds: orders, charges, webhooks sent (`GET /control/shop/state`). */
  shopState(): AxMCPDemoShopState | undefined {
    return this.#shop?.state();
  }

  /** A snapshot of what the server holds and saw. */
  state(): AxMCPDemoState {
    const sessions = (this.#legacy?.all() ?? []).flatMap((s) =>
      s.id === undefined
        ? []
        : [{ sessionId: s.id, subscriptions: [...s.subscriptions], getStreams: s.getStreams.size }],
    );
    return {
      era: this.era,
      url: this.#url,
      resources: this.#inventory.resources(),
      sessions,
      subscriptions: Object.fromEntries(sessions.map((s) => [s.sessionId, s.subscriptions])),
      listenStreams: this.#modern?.streams() ?? [],
      tasks: this.#tasks.all().map(taskSnapshot),
      methodCounts: {
        modern: Object.fromEntries(this.#counts.modern),
        legacy: Object.fromEntries(this.#counts.legacy),
      },
      headerViolations: [...this.#violations],
    };
  }

  #taskFor(taskId: string | undefined): TaskRecord {
    const task = taskId === undefined ? this.#tasks.latest() : this.#tasks.find(taskId);
    if (task === undefined) {
      throw taskId === undefined
        ? new AxMCPDemoError(409, 'There is no task')
        : new AxMCPDemoError(404, `Unknown task ${taskId.slice(0, 100)}`);
    }
    if (task.status === 'completed' || task.status === 'failed' || task.status === 'cancelled') {
      throw new AxMCPDemoError(409, `Task ${task.taskId} is already ${task.status}`);
    }
    return task;
  }

  #count(era: 'modern' | 'legacy', parsed: unknown): void {
    const counts = this.#counts[era];
    for (const method of methodsOf(parsed)) {
      const key = counts.has(method) || counts.size < MAX_COUNTED_METHODS ? method : '(other)';
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }

  async #route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://demo.invalid');
    const controls = this.#options.controlEndpoints !== false;
    if (this.#shop?.serves(url.pathname, controls)) return this.#serveShop(this.#shop, req, res);
    const isControl = url.pathname.startsWith('/control/') && controls;
    if (!isControl && url.pathname !== '/mcp') {
      return writeWebResponse(res, jsonResponse(404, { error: 'Not found: the MCP endpoint is /mcp' }));
    }
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    if (req.method === 'POST' && body === undefined) {
      return writeWebResponse(res, rpcErrorResponse(413, -32000, 'Request body too large'));
    }
    const request = toWebRequest(req, body, disconnectSignal(res));
    if (isLoopbackHost(this.#host)) {
      const rejected =
        hostHeaderValidationResponse(request, localhostAllowedHostnames()) ??
        originValidationResponse(request, localhostAllowedOrigins());
      if (rejected !== undefined) return writeWebResponse(res, rejected);
    }
    if (isControl) return writeWebResponse(res, await handleControl(this, req.method ?? 'GET', url));
    const parsed = parseJson(body);
    let response: Response;
    if (this.#modern !== undefined && this.#legacy !== undefined) {
      const legacy = await isLegacyRequest(request, parsed);
      this.#count(legacy ? 'legacy' : 'modern', parsed);
      response = legacy
        ? await this.#legacy.serve(request, parsed)
        : await this.#modern.serve(request, parsed);
    } else if (this.#modern !== undefined) {
      this.#count('modern', parsed);
      response = await this.#modern.serve(request, parsed);
    } else {
      this.#count('legacy', parsed);
      response = await this.#legacy!.serve(request, parsed);
    }
    await writeWebResponse(res, response);
  }

  async #serveShop(shop: DemoShop, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = req.method === 'POST' || req.method === 'PUT' ? await readBody(req, 1024 * 1024) : undefined;
    if ((req.method === 'POST' || req.method === 'PUT') && body === undefined) {
      return writeWebResponse(res, jsonResponse(413, { error: 'Request body too large' }));
    }
    const request = toWebRequest(req, body, disconnectSignal(res));
    if (isLoopbackHost(this.#host)) {
      const rejected =
        hostHeaderValidationResponse(request, localhostAllowedHostnames()) ??
        originValidationResponse(request, localhostAllowedOrigins());
      if (rejected !== undefined) return writeWebResponse(res, rejected);
    }
    await writeWebResponse(res, await shop.handle(request, body));
  }
}
