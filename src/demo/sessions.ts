/**
 * The 2025-11-25 leg: one `McpServer` and one sessionful `WebStandardStreamableHTTPServerTransport`
 * per session, with an in-memory event store (GET + Last-Event-ID replay). Unknown session →
 * 404; a request without a session that is not `initialize` → 400 (what the SDK transport says).
 * The task-augmented `tools/call start_reindex` is answered here, because the SDK has no tasks.
 */
import { randomUUID } from 'node:crypto';
import {
  type McpServer,
  type RegisteredResource,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { SessionEventStore } from './event-store.js';
import { jsonResponse, rpcErrorResponse, type TrackedStream, trackStream } from './http.js';
import type { AxMCPDemoResource } from './inventory.js';
import {
  buildLegacyServer,
  registerCatalogResource,
  START_REINDEX,
  type SurfaceDeps,
} from './mcp-surface.js';
import { asRequest, isRecord, type RpcRequest } from './rpc.js';
import { legacyTaskView, type TaskRecord } from './tasks.js';

/** One legacy session. */
export interface LegacySession {
  id?: string;
  readonly mcp: McpServer;
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly subscriptions: Set<string>;
  readonly resources: Map<string, RegisteredResource>;
  readonly getStreams: Set<TrackedStream>;
  lastSeen: number;
}

/** Options of {@link LegacySessions}. */
export interface LegacySessionsOptions {
  readonly deps: SurfaceDeps;
  readonly retryIntervalMs: number;
  readonly keepAliveMs?: number;
  readonly maxSessions: number;
}

/** Every live legacy session, and the legacy half of the endpoint. */
export class LegacySessions {
  readonly #sessions = new Map<string, LegacySession>();
  readonly #options: LegacySessionsOptions;
  readonly #offTasks: () => void;

  constructor(options: LegacySessionsOptions) {
    this.#options = options;
    this.#offTasks = options.deps.tasks.onChange((task) => this.#taskChanged(task));
  }

  /** Live sessions. */
  all(): LegacySession[] {
    return [...this.#sessions.values()];
  }

  /** Serves one legacy-classified HTTP request. */
  async serve(request: Request, parsed: unknown): Promise<Response> {
    const sessionId = request.headers.get('mcp-session-id') ?? undefined;
    const session = sessionId === undefined ? undefined : this.#sessions.get(sessionId);
    if (sessionId !== undefined && session === undefined) {
      return rpcErrorResponse(404, -32001, 'Session not found');
    }
    if (session !== undefined) {
      session.lastSeen = Date.now();
      const rpc = asRequest(parsed);
      if (request.method === 'POST' && rpc?.method === 'tools/call' && rpc.params.name === START_REINDEX) {
        return this.#startReindex(session, rpc);
      }
      const response = await session.transport.handleRequest(request);
      if (request.method === 'GET' && response.status === 200 && response.body !== null) {
        const tracked: TrackedStream = trackStream(response, () => session.getStreams.delete(tracked));
        session.getStreams.add(tracked);
        return tracked.response;
      }
      return response;
    }
    if (request.method === 'POST' && asRequest(parsed)?.method === 'initialize') {
      const fresh = await this.#open();
      const response = await fresh.transport.handleRequest(request);
      // A failed initialize leaves no session behind.
      if (fresh.id === undefined) await fresh.mcp.close().catch(() => {});
      return response;
    }
    return rpcErrorResponse(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
  }

  /** Sends `notifications/resources/updated` to every session subscribed to `uri`; returns how many. */
  async resourceUpdated(uri: string): Promise<number> {
    const targets = this.all().filter((s) => s.subscriptions.has(uri));
    await Promise.all(targets.map((s) => s.mcp.server.sendResourceUpdated({ uri }).catch(() => {})));
    return targets.length;
  }

  /** Registers a catalog resource on every session (the SDK sends `resources/list_changed`). */
  addResource(resource: AxMCPDemoResource): void {
    for (const session of this.#sessions.values()) {
      if (session.resources.has(resource.uri)) continue;
      session.resources.set(
        resource.uri,
        registerCatalogResource(session.mcp, this.#options.deps.inventory, resource),
      );
    }
  }

  /** Removes a catalog resource from every session (the SDK sends `resources/list_changed`). */
  removeResource(uri: string): void {
    for (const session of this.#sessions.values()) {
      session.resources.get(uri)?.remove();
      session.resources.delete(uri);
    }
  }

  /** Ends every open GET stream (clients reconnect with Last-Event-ID); returns how many. */
  dropStreams(): number {
    let dropped = 0;
    for (const session of this.#sessions.values()) {
      for (const stream of [...session.getStreams]) {
        stream.drop();
        dropped++;
      }
      session.transport.closeStandaloneSSEStream();
    }
    return dropped;
  }

  /** Closes every session. */
  async close(): Promise<void> {
    this.#offTasks();
    const all = this.all();
    this.#sessions.clear();
    await Promise.all(all.map((s) => s.mcp.close().catch(() => {})));
  }

  async #open(): Promise<LegacySession> {
    if (this.#sessions.size >= this.#options.maxSessions) await this.#evictOldest();
    const subscriptions = new Set<string>();
    const resources = new Map<string, RegisteredResource>();
    let id: string | undefined;
    const mcp = buildLegacyServer(this.#options.deps, { subscriptions, resources }, () => id);
    const session: LegacySession = {
      mcp,
      subscriptions,
      resources,
      getStreams: new Set(),
      lastSeen: Date.now(),
      transport: new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: new SessionEventStore(),
        retryInterval: this.#options.retryIntervalMs,
        ...(this.#options.keepAliveMs === undefined ? {} : { keepAliveMs: this.#options.keepAliveMs }),
        onsessioninitialized: (sessionId) => {
          id = sessionId;
          session.id = sessionId;
          this.#sessions.set(sessionId, session);
        },
      }),
    };
    mcp.server.onclose = () => {
      if (session.id !== undefined && this.#sessions.get(session.id) === session) {
        this.#sessions.delete(session.id);
      }
    };
    await mcp.connect(session.transport);
    return session;
  }

  async #evictOldest(): Promise<void> {
    let oldest: LegacySession | undefined;
    for (const session of this.#sessions.values()) {
      if (oldest === undefined || session.lastSeen < oldest.lastSeen) oldest = session;
    }
    if (oldest?.id === undefined) return;
    this.#sessions.delete(oldest.id);
    await oldest.mcp.close().catch(() => {});
  }

  /** The draft's task-augmented call (`params.task` required: `execution.taskSupport` is `required`). */
  #startReindex(session: LegacySession, rpc: RpcRequest): Response {
    const reply = (result: unknown) => jsonResponse(200, { jsonrpc: '2.0', id: rpc.id, result });
    const fail = (code: number, message: string) =>
      jsonResponse(200, { jsonrpc: '2.0', id: rpc.id, error: { code, message } });
    const task = rpc.params.task;
    if (!isRecord(task)) {
      return fail(
        -32601,
        `Tool ${START_REINDEX} requires task augmentation (execution.taskSupport: required)`,
      );
    }
    const args = isRecord(rpc.params.arguments) ? rpc.params.arguments : {};
    const scope = args.scope;
    if (typeof scope !== 'string' || scope.length === 0 || scope.length > 200) {
      return fail(
        -32602,
        'Invalid arguments for tool start_reindex: scope must be a string of 1-200 characters',
      );
    }
    const ttl =
      typeof task.ttl === 'number' && Number.isSafeInteger(task.ttl) && task.ttl > 0 ? task.ttl : undefined;
    const created = this.#options.deps.tasks.create({
      era: 'legacy',
      scope,
      ...(session.id === undefined ? {} : { sessionId: session.id }),
      ...(ttl === undefined ? {} : { ttlMs: ttl }),
    });
    return reply({ task: legacyTaskView(created) });
  }

  #taskChanged(task: TaskRecord): void {
    if (task.era !== 'legacy' || task.sessionId === undefined) return;
    const session = this.#sessions.get(task.sessionId);
    session?.mcp.server
      .notification({ method: 'notifications/tasks/status', params: legacyTaskView(task) })
      .catch(() => {});
  }
}
