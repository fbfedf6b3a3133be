import { func, instance, object, required, type Shape } from '../options/check.js';
import {
  type AxMCPAuthorizationDeniedError,
  AxMCPUnsupportedError,
  assertMCPOptions,
} from '../protocol/errors.js';
import type {
  AxMCPCallToolResult,
  AxMCPCompleteResult,
  AxMCPGetPromptResult,
  AxMCPImplementation,
  AxMCPLoggingLevel,
  AxMCPReadResourceResult,
  AxMCPResourceContents,
  AxMCPServerCapabilities,
} from '../protocol/messages.js';
import type { AxMCPEra } from '../protocol/versions.js';
import type { AxMCPTransport } from '../transport/types.js';
import {
  CALL_OPTIONS,
  CATALOG_OPTIONS,
  DRAFT_TASK_OPTIONS,
  LISTEN_OPTIONS,
  REFRESH_OPTIONS,
  refusedOptions,
  SIGNAL_OPTIONS,
  TASK_WAIT_OPTIONS,
  TOOL_CALL_OPTIONS,
} from './call-options.js';
import type { AxMCPCatalogSnapshot, Catalog } from './catalog.js';
import type { Connection } from './connection.js';
import type { DraftTaskMethods } from './draft-tasks.js';
import type { AxMCPClientEvent, AxMCPClientEventListener } from './events.js';
import { type AxMCPCallOptions, callOptions } from './in-flight.js';
import type { Inbound } from './inbound.js';
import type { AxMCPListening, AxMCPListenOptions } from './listening.js';
import { sanitizeNamespace } from './namespace.js';
import { type AxMCPClientOptions, CLIENT_OPTIONS } from './options.js';
import type { AxMCPToolOutputError } from './output-schema.js';
import type { AxMCPCompletionReference, AxMCPListPage, Reads } from './reads.js';
import { clientRooms } from './rooms.js';
import { MANUAL_OWNER, type ServerStream } from './server-stream.js';
import { SkillReader } from './skill-reader.js';
import type { AxMCPLoadedSkill, AxMCPSkill, AxMCPSkillVerificationError } from './skills.js';
import { type AxMCPTaskStatusFilter, subscribeTaskStatus } from './task-status.js';
import type { AxMCPTaskWaitOptions } from './tasks/protocol.js';
import type { AxMCPTask, AxMCPToolCallOutcome, TaskWakers } from './tasks/task.js';
import type { AxMCPToolCallOptions, ToolCalls } from './tool-calls.js';
import type { ServerIdentity, Wire } from './wire.js';

export { AX_MCP_CLIENT_INFO } from './connection.js';
export type { AxMCPCompletionReference } from './reads.js';
export { MANUAL_OWNER } from './server-stream.js';
export type { AxMCPTaskStatusFilter } from './task-status.js';
export type { AxMCPToolCallOptions } from './tool-calls.js';

const LOG_LEVEL_ARGUMENT = object({ level: required(CLIENT_OPTIONS.keys.logLevel!) });

const EVENT_LISTENER = func('a listener (event) => void');
/** What the client needs of a transport (a custom one included). */
const TRANSPORT = instance(
  'a transport (AxMCPStreamableHTTPTransport, AxMCPStdioTransport, … or an object with request, notify, respond, setHandlers and close)',
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    ['request', 'notify', 'respond', 'setHandlers', 'close'].every(
      (method) => typeof (value as Record<string, unknown>)[method] === 'function',
    ),
);

/**
 * A native MCP client for one server. Initialization is lazy and shared: the first
 * call of any method connects, and concurrent first calls share one handshake.
 *
 * The client is a facade over its rooms: the connection (`connection.ts`), inbound messages
 * (`inbound.ts`), tool calls and tasks (`tool-calls.ts`), subscriptions and listening
 * (`server-stream.ts`), the safe reads and their cache (`reads.ts`), the Skills extension
 * (`skill-reader.ts`). It never asks which protocol era it speaks: the era's `Wire` does.
 *
 * @example
 * ```ts
 * const client = new AxMCPClient(new AxMCPStreamableHTTPTransport('https://mcp.example.com/mcp'), {
 *   namespace: 'example',
 * });
 * const catalog = await client.inspectCatalog();
 * const result = await client.callTool('echo', { text: 'hi' });
 * await client.close();
 * ```
 */
export class AxMCPClient {
  /** The sanitized namespace. */
  readonly namespace: string;
  readonly transport: AxMCPTransport;

  readonly #connection: Connection;
  readonly #catalog: Catalog;
  readonly #stream: ServerStream;
  readonly #inbound: Inbound;
  readonly #toolCalls: ToolCalls;
  readonly #draftTasks: DraftTaskMethods;
  readonly #reads: Reads;
  readonly #skills: SkillReader;
  readonly #taskWakers: TaskWakers;

  constructor(transport: AxMCPTransport, options: AxMCPClientOptions) {
    assertMCPOptions(CLIENT_OPTIONS, options, 'AxMCPClient options');
    assertMCPOptions(TRANSPORT, transport, 'AxMCPClient transport', { namespace: options.namespace });
    this.namespace = sanitizeNamespace(options.namespace);
    this.transport = transport;
    const rooms = clientRooms(this.namespace, transport, options);
    const connection = rooms.connection;
    this.#connection = connection;
    this.#catalog = rooms.catalog;
    this.#stream = rooms.stream;
    this.#inbound = rooms.inbound;
    this.#toolCalls = rooms.toolCalls;
    this.#draftTasks = rooms.draftTasks;
    this.#reads = rooms.reads;
    this.#taskWakers = rooms.taskWakers;
    this.#skills = new SkillReader({
      init: (signal) => this.init(signal),
      send: (request) => connection.send(request),
      readResource: (uri, callOptions) => this.readResource(uri, callOptions),
    });
    if (options.onTaskStatus) this.subscribeTaskStatus(options.onTaskStatus);
    transport.setHandlers({
      onMessage: (message, context) => this.#inbound.receive(message, context),
      onClose: (error) =>
        connection.events.emit({
          type: 'lifecycle',
          namespace: this.namespace,
          state: 'disconnected',
          error,
        }),
      // What the transport dropped as malformed was lost without a word when nobody listened.
      onProtocolError: (error) => connection.report(error),
    });
  }

  /** True when the transport plays back a recording: no server, no side effects. */
  get replaysRecording(): boolean {
    return this.transport.replaysRecording === true;
  }

  /** Connects if not connected yet. Idempotent; concurrent calls share one handshake. */
  init(signal?: AbortSignal): Promise<void> {
    return this.#connection.init(signal);
  }

  /** The era this endpoint speaks, once known. */
  getEra(): AxMCPEra | undefined {
    return this.#connection.wire?.era;
  }

  /**
   * The `server/discover` result of a 2026-07-28 endpoint, fetched fresh.
   * Throws {@link AxMCPUnsupportedError} on a legacy endpoint.
   */
  async discover(options: { signal?: AbortSignal } = {}): Promise<Record<string, unknown>> {
    this.#check(SIGNAL_OPTIONS, options, 'discover');
    await this.init(options.signal);
    return structuredClone(await this.#connection.onWire((wire) => wire.discover(options.signal)));
  }

  /** The negotiated protocol version, once connected. */
  get protocolVersion(): string | undefined {
    return this.#connection.identity?.protocolVersion;
  }

  get serverInfo(): AxMCPImplementation | undefined {
    return this.#connection.identity?.serverInfo;
  }

  get serverCapabilities(): AxMCPServerCapabilities | undefined {
    return this.#connection.identity?.capabilities;
  }

  get instructions(): string | undefined {
    return this.#connection.identity?.instructions;
  }

  /**
   * Everything the server offers, as an isolated snapshot. Lists are fetched on first
   * use and kept fresh by `list_changed`; `refresh: true` refetches them all.
   */
  async inspectCatalog(
    options: { refresh?: boolean; signal?: AbortSignal } = {},
  ): Promise<AxMCPCatalogSnapshot> {
    this.#check(CATALOG_OPTIONS, options, 'inspectCatalog');
    await this.init(options.signal);
    await this.#catalog.load(undefined, options.refresh ? 'force' : 'missing');
    const identity = this.#connection.identity as ServerIdentity;
    return this.#catalog.snapshot(
      {
        namespace: this.namespace,
        era: (this.#connection.wire as Wire).era,
        protocolVersion: identity.protocolVersion,
        serverInfo: identity.serverInfo,
        capabilities: identity.capabilities,
        instructions: identity.instructions,
      },
      this.#stream.uris(),
    );
  }

  /** Refetches lists: all of them with `force` (default), otherwise only expired ones. */
  async refresh(options: { force?: boolean } = {}): Promise<void> {
    this.#check(REFRESH_OPTIONS, options, 'refresh');
    await this.init();
    await this.#catalog.load(undefined, options.force === false ? 'stale' : 'force');
  }

  /** Throws (a rejection, in an async method) when a method's options do not fit their shape. */
  #check(shape: Shape, options: unknown, method: string): void {
    if (options !== undefined)
      assertMCPOptions(shape, options, `${method} options`, this.#connection.where());
  }

  /** A rejected promise when a method's options do not fit their shape (see call-options.ts). */
  #refused(shape: Shape, options: unknown, method: string): Promise<never> | undefined {
    return refusedOptions(shape, options, method, () => this.#connection.where());
  }

  /** The catalog revision: it increases whenever a list is replaced. */
  get catalogRevision(): number {
    return this.#catalog.revision;
  }

  /** One page of `tools/list`. */
  listTools(cursor?: string, options?: AxMCPCallOptions): Promise<AxMCPListPage<'tools'>> {
    return this.#refused(CALL_OPTIONS, options, 'listTools') ?? this.#reads.page('tools', cursor, options);
  }

  /** One page of `prompts/list`. */
  listPrompts(cursor?: string, options?: AxMCPCallOptions): Promise<AxMCPListPage<'prompts'>> {
    return (
      this.#refused(CALL_OPTIONS, options, 'listPrompts') ?? this.#reads.page('prompts', cursor, options)
    );
  }

  /** One page of `resources/list`. */
  listResources(cursor?: string, options?: AxMCPCallOptions): Promise<AxMCPListPage<'resources'>> {
    return (
      this.#refused(CALL_OPTIONS, options, 'listResources') ?? this.#reads.page('resources', cursor, options)
    );
  }

  /** One page of `resources/templates/list`. */
  listResourceTemplates(
    cursor?: string,
    options?: AxMCPCallOptions,
  ): Promise<AxMCPListPage<'resourceTemplates'>> {
    return (
      this.#refused(CALL_OPTIONS, options, 'listResourceTemplates') ??
      this.#reads.page('resourceTemplates', cursor, options)
    );
  }

  /**
   * Calls a tool and returns the server's raw result: every content block,
   * `structuredContent`, `isError` and `_meta` untouched. `authorizeToolCall` runs
   * first; a denial throws {@link AxMCPAuthorizationDeniedError} and sends nothing.
   * A call that becomes a task is awaited (polling, answering input) unless
   * `taskHandling: 'expose'`, which returns the task itself in the result's place — use
   * {@link callToolOutcome} for a typed answer. A call is never replayed after an
   * uncertain outcome. When the tool declares an `outputSchema`, `structuredContent` is
   * checked against it (unless `validateToolOutput: false`): a mismatch throws
   * {@link AxMCPToolOutputError}, which carries the raw result.
   */
  callTool(
    name: string,
    args: Record<string, unknown> = {},
    options: AxMCPToolCallOptions = {},
  ): Promise<AxMCPCallToolResult> {
    return this.#refused(TOOL_CALL_OPTIONS, options, 'callTool') ?? this.#toolCalls.call(name, args, options);
  }

  /** Calls a tool and says whether it finished or became a task, without waiting for the task. */
  callToolOutcome(
    name: string,
    args: Record<string, unknown> = {},
    options: AxMCPCallOptions = {},
  ): Promise<AxMCPToolCallOutcome> {
    return (
      this.#refused(CALL_OPTIONS, options, 'callToolOutcome') ?? this.#toolCalls.outcome(name, args, options)
    );
  }

  /** The current state of a task. */
  getTask(taskId: string, options: { signal?: AbortSignal } = {}): Promise<AxMCPTask> {
    return (
      this.#refused(SIGNAL_OPTIONS, options, 'getTask') ?? this.#toolCalls.getTask(taskId, options.signal)
    );
  }

  /** Asks the server to cancel a task (cooperative: it may still complete). */
  cancelTask(taskId: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    return (
      this.#refused(SIGNAL_OPTIONS, options, 'cancelTask') ??
      this.#toolCalls.cancelTask(taskId, options.signal)
    );
  }

  /** Answers a task's input requests (`tasks/update`, 2026-07-28). */
  provideTaskInput(
    taskId: string,
    responses: Record<string, unknown>,
    options: { signal?: AbortSignal } = {},
  ): Promise<void> {
    return (
      this.#refused(SIGNAL_OPTIONS, options, 'provideTaskInput') ??
      this.#toolCalls.provideTaskInput(taskId, responses, options.signal)
    );
  }

  /** Waits for a task to end and returns its tool result; a failed task throws its error. */
  waitForTask(task: AxMCPTask | string, options: AxMCPTaskWaitOptions = {}): Promise<AxMCPCallToolResult> {
    return this.#refused(TASK_WAIT_OPTIONS, options, 'waitForTask') ?? this.#toolCalls.waitFor(task, options);
  }

  /**
   * Calls a tool as a 2025-11-25 draft task and returns the task.
   * @deprecated The task draft is legacy-only; on 2026-07-28 use {@link callToolOutcome}.
   */
  callToolTask(
    name: string,
    args: Record<string, unknown> = {},
    options: AxMCPCallOptions & { ttlMs?: number } = {},
  ): Promise<AxMCPTask> {
    return (
      this.#refused(DRAFT_TASK_OPTIONS, options, 'callToolTask') ??
      this.#draftTasks.callToolTask(name, args, options)
    );
  }

  /**
   * Lists the server's tasks (2025-11-25 draft).
   * @deprecated Legacy-only; the 2026-07-28 Tasks extension has no task list.
   */
  listTasks(cursor?: string, options: { signal?: AbortSignal } = {}) {
    return (
      this.#refused(SIGNAL_OPTIONS, options, 'listTasks') ?? this.#draftTasks.list(cursor, options.signal)
    );
  }

  /**
   * Blocks until a draft task ends and returns its result (2025-11-25 `tasks/result`).
   * @deprecated Legacy-only; on 2026-07-28 use {@link waitForTask}.
   */
  getTaskResult(taskId: string, options: { signal?: AbortSignal } = {}): Promise<AxMCPCallToolResult> {
    return (
      this.#refused(SIGNAL_OPTIONS, options, 'getTaskResult') ??
      this.#draftTasks.result(taskId, options.signal)
    );
  }

  /** Gets a prompt with its arguments. */
  getPrompt(
    name: string,
    args: Record<string, string> = {},
    options: AxMCPCallOptions = {},
  ): Promise<AxMCPGetPromptResult> {
    return this.#refused(CALL_OPTIONS, options, 'getPrompt') ?? this.#reads.prompt(name, args, options);
  }

  /**
   * Reads a resource (text or blob contents). With `readCache: true`, on an era with cache
   * hints, a result is kept for its TTL and an update notification forgets it.
   */
  readResource(uri: string, options: AxMCPCallOptions = {}): Promise<AxMCPReadResourceResult> {
    return this.#refused(CALL_OPTIONS, options, 'readResource') ?? this.#reads.resource(uri, options);
  }

  /** Asks for completions of a prompt argument or a resource template variable. */
  complete(
    ref: AxMCPCompletionReference,
    argument: { name: string; value: string },
    context?: { arguments?: Record<string, string> },
    options: AxMCPCallOptions = {},
  ): Promise<AxMCPCompleteResult> {
    return (
      this.#refused(CALL_OPTIONS, options, 'complete') ??
      this.#reads.complete(ref, argument, context, options)
    );
  }

  /**
   * Checks the server is alive, in the era's way: 2025-11-25 sends `ping`; 2026-07-28 (which
   * removed it) asks `server/discover`.
   */
  async ping(options: AxMCPCallOptions = {}): Promise<void> {
    this.#check(CALL_OPTIONS, options, 'ping');
    await this.init(options.signal);
    await this.#connection.onWire((wire) => wire.ping(callOptions(options)));
  }

  /**
   * Asks the server to send log messages at `level` and above: `logging/setLevel` on
   * 2025-11-25 (sent again after a lost session is restored); on 2026-07-28 every later
   * request carries the level in its `_meta`.
   */
  async setLoggingLevel(level: AxMCPLoggingLevel, options: AxMCPCallOptions = {}): Promise<void> {
    const connection = this.#connection;
    assertMCPOptions(LOG_LEVEL_ARGUMENT, { level }, 'setLoggingLevel', connection.where());
    this.#check(CALL_OPTIONS, options, 'setLoggingLevel');
    await this.init(options.signal);
    if (!connection.identity?.capabilities.logging) {
      throw new AxMCPUnsupportedError('The server does not support logging', connection.where());
    }
    await connection.setLogLevel(level, callOptions(options));
  }

  /**
   * Tells the server the client's roots changed, so it lists them again: 2025-11-25 sends
   * `notifications/roots/list_changed`; on 2026-07-28 (which asks for roots per request) there is
   * nothing to send. Needs `roots` given as a function (a fixed list cannot change).
   */
  async notifyRootsChanged(options: { signal?: AbortSignal } = {}): Promise<void> {
    this.#check(SIGNAL_OPTIONS, options, 'notifyRootsChanged');
    const connection = this.#connection;
    if (typeof connection.options.roots !== 'function') {
      throw new AxMCPUnsupportedError(
        'notifyRootsChanged needs the roots option as a function returning the current roots',
        connection.where(),
      );
    }
    await this.init(options.signal);
    await connection.onWire((wire) => wire.notifyRootsChanged());
  }

  /**
   * Adds `owner` to the subscription of `uri`. The first owner subscribes on the wire;
   * later owners only join. Fails with {@link AxMCPUnsupportedError} when the server
   * does not offer subscriptions.
   */
  async acquireResourceSubscription(uri: string, owner: string): Promise<void> {
    await this.init();
    await this.#stream.acquire(uri, owner);
  }

  /** Removes `owner` from the subscription of `uri`; the last owner unsubscribes on the wire. */
  async releaseResourceSubscription(uri: string, owner: string): Promise<void> {
    await this.init();
    await this.#stream.release(uri, owner);
  }

  /** Subscribes to `uri` as the owner `manual`. */
  subscribeResource(uri: string): Promise<void> {
    return this.acquireResourceSubscription(uri, MANUAL_OWNER);
  }

  /** Releases the `manual` owner's subscription of `uri`. */
  unsubscribeResource(uri: string): Promise<void> {
    return this.releaseResourceSubscription(uri, MANUAL_OWNER);
  }

  /** URIs this client holds subscriptions for, and their owners. */
  get subscriptions(): { uri: string; owners: string[] }[] {
    return this.#stream.subscriptions();
  }

  /** One page of the server's skills (`skills/list`, the Skills extension). Lists only: no file is read. */
  listSkills(
    cursor?: string,
    options: AxMCPCallOptions = {},
  ): Promise<{ skills: AxMCPSkill[]; nextCursor?: string }> {
    return this.#refused(CALL_OPTIONS, options, 'listSkills') ?? this.#skills.list(cursor, options);
  }

  /** One skill's entry (`skills/get`). */
  getSkill(uri: string, options: AxMCPCallOptions = {}): Promise<AxMCPSkill> {
    return this.#refused(CALL_OPTIONS, options, 'getSkill') ?? this.#skills.get(uri, options);
  }

  /**
   * Loads a skill: reads its `SKILL.md` and verifies size, digest and frontmatter against
   * the listing before anything is used. A mismatch throws
   * {@link AxMCPSkillVerificationError} and no other file is read.
   */
  loadSkill(skill: AxMCPSkill, options: AxMCPCallOptions = {}): Promise<AxMCPLoadedSkill> {
    return this.#refused(CALL_OPTIONS, options, 'loadSkill') ?? this.#skills.load(skill, options);
  }

  /** Reads one file of a loaded skill, verified against its listing when the server listed it. */
  readSkillFile(
    loaded: AxMCPLoadedSkill,
    uri: string,
    options: AxMCPCallOptions = {},
  ): Promise<AxMCPResourceContents> {
    return (
      this.#refused(CALL_OPTIONS, options, 'readSkillFile') ?? this.#skills.readFile(loaded, uri, options)
    );
  }

  /**
   * Opens the server's notification stream and keeps it open across drops, session
   * losses and restarts. Returns at once; `ready` resolves once the stream is open.
   * All handles share one stream; it also stays open while subscriptions are owned.
   */
  startListening(options: AxMCPListenOptions = {}): AxMCPListening {
    // Not a promise: a misuse throws here, before anything listens.
    this.#check(LISTEN_OPTIONS, options, 'startListening');
    return this.#stream.listen(options);
  }

  /** Receives typed client events; returns the function that unsubscribes. */
  subscribeEvents(listener: AxMCPClientEventListener): () => void {
    // A listener that is not a function would be called into a caught TypeError: never heard from.
    assertMCPOptions(EVENT_LISTENER, listener, 'subscribeEvents listener', this.#connection.where());
    return this.#connection.events.subscribe(listener);
  }

  /**
   * Receives the status of tasks as this client learns it — from `notifications/tasks/status`
   * while the client listens (`startListening`, or a held subscription) and from polls while a
   * task is awaited. With a task id (or a filter naming ids), those tasks are also added to the
   * 2026-07-28 listen filter until the returned function is called. Returns the function that
   * unsubscribes.
   *
   * @example
   * ```ts
   * const stop = client.subscribeTaskStatus(task.taskId, (seen) => console.log(seen.status));
   * // … later
   * stop();
   * ```
   */
  subscribeTaskStatus(listener: (task: AxMCPTask) => void): () => void;
  subscribeTaskStatus(
    taskIdOrFilter: string | AxMCPTaskStatusFilter,
    listener: (task: AxMCPTask) => void,
  ): () => void;
  subscribeTaskStatus(
    first: string | AxMCPTaskStatusFilter | ((task: AxMCPTask) => void),
    second?: (task: AxMCPTask) => void,
  ): () => void {
    const filter = typeof first === 'function' ? {} : typeof first === 'string' ? { taskId: first } : first;
    const listener = typeof first === 'function' ? first : second;
    const connection = this.#connection;
    return subscribeTaskStatus(connection.events, this.#taskWakers, connection.where(), filter, listener);
  }

  /**
   * Ends the client: stops listening, releases every subscription on the wire
   * (bounded by `closeTimeoutMs`), ends the session and closes the transport.
   */
  async close(): Promise<void> {
    const connection = this.#connection;
    if (!connection.beginClose()) return;
    this.#inbound.close();
    await this.#stream.close(connection.options.closeTimeoutMs ?? 5000);
    connection.closed = true;
    try {
      await this.transport.close();
    } finally {
      connection.events.clear();
    }
  }
}

export type { AxMCPClientEvent };
