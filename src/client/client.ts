import { anyOf, array, func, instance, object, oneOf, required, string } from '../options/check.js';
import { delay, linkAbort } from '../protocol/abort.js';
import {
  AxMCPAuthorizationDeniedError,
  AxMCPError,
  AxMCPSessionExpiredError,
  AxMCPTimeoutError,
  AxMCPTransportError,
  AxMCPUnsupportedError,
  type AxMCPURLElicitationRequiredError,
  assertMCPOptions,
} from '../protocol/errors.js';
import type { JSONRPCId, JSONRPCNotification, JSONRPCRequest } from '../protocol/jsonrpc.js';
import {
  type AxMCPCallToolResult,
  type AxMCPClientCapabilities,
  type AxMCPCompleteResult,
  type AxMCPGetPromptResult,
  type AxMCPImplementation,
  type AxMCPLoggingLevel,
  type AxMCPPrompt,
  type AxMCPReadResourceResult,
  type AxMCPResource,
  type AxMCPResourceContents,
  type AxMCPResourceTemplate,
  type AxMCPServerCapabilities,
  type AxMCPTool,
  parseCompleteResult,
  parseGetPromptResult,
  parseLoggingMessage,
  parseProgress,
  parseReadResourceResult,
} from '../protocol/messages.js';
import type { AxMCPEra } from '../protocol/versions.js';
import type { AxMCPMessageContext, AxMCPTransport } from '../transport/types.js';
import { CallSlots } from './call-slots.js';
import {
  type AxMCPCatalogSnapshot,
  type AxMCPListKind,
  Catalog,
  LIST_KINDS,
  LIST_METHODS,
} from './catalog.js';
import { connectWithEra } from './era-connect.js';
import { defaultEraStore } from './era-store.js';
import {
  type AxMCPClientEvent,
  type AxMCPClientEventListener,
  type AxMCPLifecycleState,
  ClientEvents,
} from './events.js';
import { type AxMCPCallOptions, callOptions, InFlightRequests, type SendRequest } from './in-flight.js';
import { LegacyWire } from './legacy-wire.js';
import type { ListenFilter } from './listen-stream.js';
import type { AxMCPListening, AxMCPListenOptions } from './listening.js';
import { ModernWire } from './modern-wire.js';
import { sanitizeNamespace } from './namespace.js';
import { type AxMCPClientOptions, CLIENT_OPTIONS } from './options.js';
import { checkToolOutput } from './output-schema.js';
import {
  type AxMCPServerRequestContext,
  answerFor,
  capabilitiesFor,
  fulfilServerRequest,
} from './server-requests.js';
import { ServerTasks } from './server-tasks.js';
import { SkillReader } from './skill-reader.js';
import {
  type AxMCPLoadedSkill,
  type AxMCPSkill,
  AxMCPSkillVerificationError,
  SKILLS_EXTENSION,
} from './skills.js';
import { SubscriptionOwners } from './subscription-owners.js';
import type { AxMCPTaskWaitOptions, DraftTasks } from './tasks/protocol.js';
import {
  type AxMCPTask,
  type AxMCPTaskStatus,
  type AxMCPToolCallOutcome,
  parseTask,
  TaskWakers,
} from './tasks/task.js';
import { TASKS_EXTENSION } from './tool-headers.js';
import { completeURLElicitations, ElicitationCompletions } from './url-elicitation.js';
import type { NotificationStream, ServerIdentity, Wire } from './wire.js';

/** The library's own identity, sent as `clientInfo` unless the caller gives one. */
export const AX_MCP_CLIENT_INFO: AxMCPImplementation = { name: 'ax-mcp', version: '0.1.0' };

/** How long after a reconnect the client looks at the lists again. */
const RECONNECT_LOOK_DELAY_MS = 500;

/** The owner name `subscribeResource` and `unsubscribeResource` use. */
export const MANUAL_OWNER = 'manual';

const RESOLVED = Promise.resolve();

const TASK_STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'] as const;
const TASK_STATUS_FILTER = object(
  {
    taskId: anyOf(string({ nonEmpty: true }), array(string({ nonEmpty: true }))),
    status: anyOf(oneOf(...TASK_STATUSES), array(oneOf(...TASK_STATUSES))),
  },
  { expected: 'a task id or a filter { taskId?, status? }' },
);
const TASK_STATUS_LISTENER = func('a listener (task) => void');
const LOG_LEVEL_ARGUMENT = object({ level: required(CLIENT_OPTIONS.keys.logLevel!) });

function toList<T>(value: T | readonly T[]): readonly T[] {
  return Array.isArray(value) ? value : [value as T];
}

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
/** How long an abandoned task-augmented `tools/call` may still take to tell which task it created (to cancel it). */
const TASK_CREATION_GRACE_MS = 10_000;
/** The same for a call the server may or may not turn into a task: shorter, as it may be plain work. */
const POSSIBLE_TASK_GRACE_MS = 2_000;

const LIST_CHANGED: Record<string, AxMCPListKind[]> = {
  'notifications/tools/list_changed': ['tools'],
  'notifications/prompts/list_changed': ['prompts'],
  'notifications/resources/list_changed': ['resources', 'resourceTemplates'],
};

/** Which task statuses a {@link AxMCPClient.subscribeTaskStatus} listener receives. */
export interface AxMCPTaskStatusFilter {
  /** One task or several (these are also added to the 2026-07-28 listen filter). */
  taskId?: string | readonly string[];
  /** Only these statuses. */
  status?: AxMCPTaskStatus | readonly AxMCPTaskStatus[];
}

/** A completion reference: a prompt argument or a resource template variable. */
export type AxMCPCompletionReference =
  | { type: 'ref/prompt'; name: string }
  | { type: 'ref/resource'; uri: string };

/**
 * A native MCP client for one server. Initialization is lazy and shared: the first
 * call of any method connects, and concurrent first calls share one handshake.
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

  /** True when the transport plays back a recording: no server, no side effects. */
  get replaysRecording(): boolean {
    return this.transport.replaysRecording === true;
  }

  readonly #options: AxMCPClientOptions;
  readonly #requests: InFlightRequests;
  readonly #catalog: Catalog;
  readonly #events: ClientEvents;
  readonly #slots: CallSlots | undefined;
  readonly #owners: SubscriptionOwners;
  /** Server requests being answered; created with the first (an idle client holds none). */
  #serverRequests: Map<JSONRPCId, AbortController> | undefined;
  /** The one notification stream this client keeps (GET stream or listen stream), and who holds it. */
  #stream: NotificationStream | undefined;
  #streamHolds = 0;
  #keepStreamForServerRequests = false;
  #sessionLostWhileReleasing = false;
  /** Resource URIs subscribed on the wire (in the 2026-07-28 era: in the listen filter). */
  readonly #wiredUris = new Set<string>();
  readonly #taskWakers = new TaskWakers();
  /** Task-augmented server requests this client runs (2025-11-25); created with the first. */
  #serverTasks: ServerTasks | undefined;
  /** The Skills extension's reads, verified against their listing. */
  readonly #skills: SkillReader;
  /** `notifications/elicitation/complete` seen, for requests waiting to be retried. */
  readonly #elicitationCompletions = new ElicitationCompletions();
  /** What each list looked like when its last change was announced. */
  readonly #announced = new Map<AxMCPListKind, string>();
  /** `resources/read` results kept for their TTL; created with the first (`readCache: true`). */
  #readCache: Map<string, { result: AxMCPReadResourceResult; expiresAt: number }> | undefined;
  #wire: Wire | undefined;
  #modernCapabilitiesOnce: AxMCPClientCapabilities | undefined;
  /** The server log level asked for: the `logLevel` option, then the last `setLoggingLevel`. */
  #logLevel: AxMCPLoggingLevel | undefined;
  #identity: ServerIdentity | undefined;
  #ready: Promise<void> | undefined;
  /** Aborted by `close()`: ends task waits and listening handles. */
  readonly #lifetime = new AbortController();
  /** Set when `close()` starts: public calls are refused, the client's own cleanup still runs. */
  #closing = false;
  #closed = false;
  /** Messages and their contexts, alternating, waiting for the microtask that handles them. */
  #inbox: (JSONRPCRequest | JSONRPCNotification | AxMCPMessageContext)[] | undefined;

  constructor(transport: AxMCPTransport, options: AxMCPClientOptions) {
    assertMCPOptions(CLIENT_OPTIONS, options, 'AxMCPClient options');
    assertMCPOptions(TRANSPORT, transport, 'AxMCPClient transport', { namespace: options.namespace });
    this.namespace = sanitizeNamespace(options.namespace);
    this.transport = transport;
    this.#options = options;
    this.#logLevel = options.logLevel;
    this.#events = new ClientEvents((error) => this.#report(error));
    this.#slots = options.maxConcurrency === undefined ? undefined : new CallSlots(options.maxConcurrency);
    this.#requests = new InFlightRequests(transport, options.timeoutMs ?? 60_000, (id, reason) =>
      this.#wire?.cancel(id, reason),
    );
    this.#taskWakers.onChange = () => {
      if (this.#tasksNegotiated()) this.#stream?.update().catch((error) => this.#report(error));
    };
    this.#catalog = new Catalog({
      filterTools: (tools, revision) => (this.#wire ? this.#wire.admitTools(tools, revision) : tools),
      maxPages: options.maxPaginationPages ?? 1000,
      fetchPage: (method, cursor) =>
        this.#send({ method, ...(cursor === undefined ? {} : { params: { cursor } }), idempotent: true }),
    });
    this.#owners = new SubscriptionOwners({
      subscribe: (uri, restoring) => this.#putOnWire(uri, restoring === true),
      unsubscribe: (uri) => this.#takeOffWire(uri),
    });
    this.#skills = new SkillReader({
      init: (signal) => this.init(signal),
      send: (request) => this.#send(request),
      readResource: (uri, callOptions) => this.readResource(uri, callOptions),
    });
    if (options.onTaskStatus) this.subscribeTaskStatus(options.onTaskStatus);
    transport.setHandlers({
      onMessage: (message, context) => this.#onMessage(message, context),
      onClose: (error) =>
        this.#events.emit({ type: 'lifecycle', namespace: this.namespace, state: 'disconnected', error }),
    });
  }

  /** Connects if not connected yet. Idempotent; concurrent calls share one handshake. */
  init(signal?: AbortSignal): Promise<void> {
    this.#assertOpen();
    this.#ready ??= this.#connect(signal).catch((error) => {
      this.#ready = undefined;
      throw error instanceof AxMCPError ? error.attribute(this.#where()) : error;
    });
    return this.#ready;
  }

  /** The era this endpoint speaks, once known. */
  getEra(): AxMCPEra | undefined {
    return this.#wire?.era;
  }

  /**
   * The `server/discover` result of a 2026-07-28 endpoint, fetched fresh.
   * Throws {@link AxMCPUnsupportedError} on a legacy endpoint.
   */
  async discover(options: { signal?: AbortSignal } = {}): Promise<Record<string, unknown>> {
    await this.init(options.signal);
    return structuredClone(await this.#onWire((wire) => wire.discover(options.signal)));
  }

  /** The negotiated protocol version, once connected. */
  get protocolVersion(): string | undefined {
    return this.#identity?.protocolVersion;
  }

  get serverInfo(): AxMCPImplementation | undefined {
    return this.#identity?.serverInfo;
  }

  get serverCapabilities(): AxMCPServerCapabilities | undefined {
    return this.#identity?.capabilities;
  }

  get instructions(): string | undefined {
    return this.#identity?.instructions;
  }

  /**
   * Everything the server offers, as an isolated snapshot. Lists are fetched on first
   * use and kept fresh by `list_changed`; `refresh: true` refetches them all.
   */
  async inspectCatalog(
    options: { refresh?: boolean; signal?: AbortSignal } = {},
  ): Promise<AxMCPCatalogSnapshot> {
    await this.init(options.signal);
    await this.#catalog.load(undefined, options.refresh ? 'force' : 'missing');
    const identity = this.#identity as ServerIdentity;
    return this.#catalog.snapshot(
      {
        namespace: this.namespace,
        era: (this.#wire as Wire).era,
        protocolVersion: identity.protocolVersion,
        serverInfo: identity.serverInfo,
        capabilities: identity.capabilities,
        instructions: identity.instructions,
      },
      this.#owners.uris(),
    );
  }

  /** Refetches lists: all of them with `force` (default), otherwise only expired ones. */
  async refresh(options: { force?: boolean } = {}): Promise<void> {
    await this.init();
    await this.#catalog.load(undefined, options.force === false ? 'stale' : 'force');
  }

  /** The catalog revision: it increases whenever a list is replaced. */
  get catalogRevision(): number {
    return this.#catalog.revision;
  }

  /** One page of `tools/list`. */
  listTools(
    cursor?: string,
    options?: AxMCPCallOptions,
  ): Promise<{ tools: AxMCPTool[]; nextCursor?: string }> {
    return this.#listPage('tools', cursor, options) as Promise<{ tools: AxMCPTool[]; nextCursor?: string }>;
  }

  /** One page of `prompts/list`. */
  listPrompts(
    cursor?: string,
    options?: AxMCPCallOptions,
  ): Promise<{ prompts: AxMCPPrompt[]; nextCursor?: string }> {
    return this.#listPage('prompts', cursor, options) as Promise<{
      prompts: AxMCPPrompt[];
      nextCursor?: string;
    }>;
  }

  /** One page of `resources/list`. */
  listResources(
    cursor?: string,
    options?: AxMCPCallOptions,
  ): Promise<{ resources: AxMCPResource[]; nextCursor?: string }> {
    return this.#listPage('resources', cursor, options) as Promise<{
      resources: AxMCPResource[];
      nextCursor?: string;
    }>;
  }

  /** One page of `resources/templates/list`. */
  listResourceTemplates(
    cursor?: string,
    options?: AxMCPCallOptions,
  ): Promise<{ resourceTemplates: AxMCPResourceTemplate[]; nextCursor?: string }> {
    return this.#listPage('resourceTemplates', cursor, options) as Promise<{
      resourceTemplates: AxMCPResourceTemplate[];
      nextCursor?: string;
    }>;
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
  async callTool(
    name: string,
    args: Record<string, unknown> = {},
    options: AxMCPToolCallOptions = {},
  ): Promise<AxMCPCallToolResult> {
    const run = async () => {
      const outcome = await this.#callToolOnce(name, args, options);
      if (outcome.kind === 'complete') return outcome.result;
      if (options.taskHandling === 'expose')
        return { content: [], task: outcome.task } as AxMCPCallToolResult;
      const result = await this.#awaitTask(outcome.task, options);
      const tool = this.#catalog.tool(name);
      if (tool) this.#checkOutput(tool, result);
      return result;
    };
    return this.#slots ? this.#slots.run(run, options.signal) : run();
  }

  /** Calls a tool and says whether it finished or became a task, without waiting for the task. */
  async callToolOutcome(
    name: string,
    args: Record<string, unknown> = {},
    options: AxMCPCallOptions = {},
  ): Promise<AxMCPToolCallOutcome> {
    const run = () => this.#callToolOnce(name, args, options);
    return this.#slots ? this.#slots.run(run, options.signal) : run();
  }

  /** The current state of a task. */
  async getTask(taskId: string, options: { signal?: AbortSignal } = {}): Promise<AxMCPTask> {
    return (await this.#wireReady(options.signal)).tasks.get(taskId, options.signal);
  }

  /** Asks the server to cancel a task (cooperative: it may still complete). */
  async cancelTask(taskId: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    await (await this.#wireReady(options.signal)).tasks.cancel(taskId, options.signal);
  }

  /** Answers a task's input requests (`tasks/update`, 2026-07-28). */
  async provideTaskInput(
    taskId: string,
    responses: Record<string, unknown>,
    options: { signal?: AbortSignal } = {},
  ): Promise<void> {
    await (await this.#wireReady(options.signal)).tasks.provideInput(taskId, responses, options.signal);
  }

  /** Waits for a task to end and returns its tool result; a failed task throws its error. */
  async waitForTask(
    task: AxMCPTask | string,
    options: AxMCPTaskWaitOptions = {},
  ): Promise<AxMCPCallToolResult> {
    const wire = await this.#wireReady(options.signal);
    const current = typeof task === 'string' ? await wire.tasks.get(task, options.signal) : task;
    return this.#awaitTask(current, options);
  }

  /**
   * Calls a tool as a 2025-11-25 draft task and returns the task.
   * @deprecated The task draft is legacy-only; on 2026-07-28 use {@link callToolOutcome}.
   */
  async callToolTask(
    name: string,
    args: Record<string, unknown> = {},
    options: AxMCPCallOptions & { ttlMs?: number } = {},
  ): Promise<AxMCPTask> {
    this.#draftTasks(await this.#wireReady(options.signal));
    const outcome = await this.#callToolOnce(name, args, options, {
      task: options.ttlMs === undefined ? {} : { ttl: options.ttlMs },
    });
    if (outcome.kind !== 'task') {
      throw new AxMCPUnsupportedError(
        `Tool "${name}" answered directly instead of creating a task`,
        this.#where(),
      );
    }
    return outcome.task;
  }

  /**
   * Lists the server's tasks (2025-11-25 draft).
   * @deprecated Legacy-only; the 2026-07-28 Tasks extension has no task list.
   */
  async listTasks(cursor?: string, options: { signal?: AbortSignal } = {}) {
    return this.#draftTasks(await this.#wireReady(options.signal)).list(cursor, options.signal);
  }

  /**
   * Blocks until a draft task ends and returns its result (2025-11-25 `tasks/result`).
   * @deprecated Legacy-only; on 2026-07-28 use {@link waitForTask}.
   */
  async getTaskResult(taskId: string, options: { signal?: AbortSignal } = {}): Promise<AxMCPCallToolResult> {
    return this.#draftTasks(await this.#wireReady(options.signal)).result(taskId, options.signal);
  }

  /** Gets a prompt with its arguments. */
  async getPrompt(
    name: string,
    args: Record<string, string> = {},
    options: AxMCPCallOptions = {},
  ): Promise<AxMCPGetPromptResult> {
    await this.init(options.signal);
    return parseGetPromptResult(
      await this.#send({
        method: 'prompts/get',
        params: { name, arguments: args },
        idempotent: true,
        ...callOptions(options),
      }),
    );
  }

  /** Reads a resource (text or blob contents). */
  async readResource(uri: string, options: AxMCPCallOptions = {}): Promise<AxMCPReadResourceResult> {
    await this.init(options.signal);
    const cached = this.#readCache?.get(uri);
    if (cached && cached.expiresAt > Date.now()) return structuredClone(cached.result);
    let askedForInput = false;
    const result = parseReadResourceResult(
      await this.#send({
        method: 'resources/read',
        params: { uri },
        idempotent: true,
        onInputRound: () => {
          askedForInput = true;
        },
        ...callOptions(options),
      }),
    );
    const ttl = result.ttlMs;
    // Reads that needed input rounds are never cached (the answer depended on that input).
    const cacheable = this.#options.readCache === true && this.#wire?.cachesReads === true && !askedForInput;
    if (cacheable && typeof ttl === 'number' && Number.isInteger(ttl) && ttl > 0) {
      (this.#readCache ??= new Map()).set(uri, {
        result: structuredClone(result),
        expiresAt: Date.now() + ttl,
      });
    }
    return result;
  }

  /** Asks for completions of a prompt argument or a resource template variable. */
  async complete(
    ref: AxMCPCompletionReference,
    argument: { name: string; value: string },
    context?: { arguments?: Record<string, string> },
    options: AxMCPCallOptions = {},
  ): Promise<AxMCPCompleteResult> {
    await this.init(options.signal);
    const params: Record<string, unknown> = { ref, argument };
    if (context) params.context = context;
    return parseCompleteResult(
      await this.#send({ method: 'completion/complete', params, idempotent: true, ...callOptions(options) }),
    );
  }

  /**
   * Checks the server is alive, in the era's way: 2025-11-25 sends `ping`; 2026-07-28 (which
   * removed it) asks `server/discover`.
   */
  async ping(options: AxMCPCallOptions = {}): Promise<void> {
    await this.init(options.signal);
    await this.#onWire((wire) => wire.ping(callOptions(options)));
  }

  /**
   * Asks the server to send log messages at `level` and above: `logging/setLevel` on
   * 2025-11-25 (sent again after a lost session is restored); on 2026-07-28 every later
   * request carries the level in its `_meta`.
   */
  async setLoggingLevel(level: AxMCPLoggingLevel, options: AxMCPCallOptions = {}): Promise<void> {
    assertMCPOptions(LOG_LEVEL_ARGUMENT, { level }, 'setLoggingLevel', this.#where());
    await this.init(options.signal);
    if (!this.#identity?.capabilities.logging) {
      throw new AxMCPUnsupportedError('The server does not support logging', this.#where());
    }
    await this.#onWire((wire) => wire.setLogLevel(level, callOptions(options)));
    this.#logLevel = level;
  }

  /**
   * Tells the server the client's roots changed, so it lists them again: 2025-11-25 sends
   * `notifications/roots/list_changed`; on 2026-07-28 (which asks for roots per request) there is
   * nothing to send. Needs `roots` given as a function (a fixed list cannot change).
   */
  async notifyRootsChanged(options: { signal?: AbortSignal } = {}): Promise<void> {
    if (typeof this.#options.roots !== 'function') {
      throw new AxMCPUnsupportedError(
        'notifyRootsChanged needs the roots option as a function returning the current roots',
        this.#where(),
      );
    }
    await this.init(options.signal);
    await this.#onWire((wire) => wire.notifyRootsChanged());
  }

  /**
   * Adds `owner` to the subscription of `uri`. The first owner subscribes on the wire;
   * later owners only join. Fails with {@link AxMCPUnsupportedError} when the server
   * does not offer subscriptions.
   */
  async acquireResourceSubscription(uri: string, owner: string): Promise<void> {
    await this.init();
    if (!this.#identity?.capabilities.resources?.subscribe) {
      throw new AxMCPUnsupportedError('The server does not offer resource subscriptions', this.#where());
    }
    await this.#owners.acquire(uri, owner);
  }

  /** Removes `owner` from the subscription of `uri`; the last owner unsubscribes on the wire. */
  async releaseResourceSubscription(uri: string, owner: string): Promise<void> {
    await this.init();
    await this.#owners.release(uri, owner);
    if (this.#sessionLostWhileReleasing) {
      // The release itself needed no session; the other owners' subscriptions do: restore them now.
      this.#sessionLostWhileReleasing = false;
      await this.#wire?.recover();
    }
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
    return this.#owners.uris().map((uri) => ({ uri, owners: this.#owners.owners(uri) }));
  }

  /** One page of the server's skills (`skills/list`, the Skills extension). Lists only: no file is read. */
  listSkills(
    cursor?: string,
    options: AxMCPCallOptions = {},
  ): Promise<{ skills: AxMCPSkill[]; nextCursor?: string }> {
    return this.#skills.list(cursor, options);
  }

  /** One skill's entry (`skills/get`). */
  getSkill(uri: string, options: AxMCPCallOptions = {}): Promise<AxMCPSkill> {
    return this.#skills.get(uri, options);
  }

  /**
   * Loads a skill: reads its `SKILL.md` and verifies size, digest and frontmatter against
   * the listing before anything is used. A mismatch throws
   * {@link AxMCPSkillVerificationError} and no other file is read.
   */
  loadSkill(skill: AxMCPSkill, options: AxMCPCallOptions = {}): Promise<AxMCPLoadedSkill> {
    return this.#skills.load(skill, options);
  }

  /** Reads one file of a loaded skill, verified against its listing when the server listed it. */
  readSkillFile(
    loaded: AxMCPLoadedSkill,
    uri: string,
    options: AxMCPCallOptions = {},
  ): Promise<AxMCPResourceContents> {
    return this.#skills.readFile(loaded, uri, options);
  }

  /**
   * Opens the server's notification stream and keeps it open across drops, session
   * losses and restarts. Returns at once; `ready` resolves once the stream is open.
   * All handles share one stream; it also stays open while subscriptions are owned.
   */
  startListening(options: AxMCPListenOptions = {}): AxMCPListening {
    this.#assertOpen();
    const link = linkAbort(options.signal, this.#lifetime.signal);
    let release: (() => void) | undefined;
    const done = new Promise<void>((resolve) => {
      link.signal.addEventListener(
        'abort',
        () => {
          release?.();
          link.dispose();
          resolve();
        },
        { once: true },
      );
    });
    const ready = (async () => {
      await this.init(link.signal);
      if (link.signal.aborted)
        throw new AxMCPTransportError('closed', 'Listening was stopped', this.#where());
      release = this.#holdStream(options);
      await this.#stream?.ready;
    })();
    ready.catch(() => {});
    return { ready, done, close: () => link.abort() };
  }

  /** Keeps the shared stream running until the returned function is called. */
  #holdStream(options: AxMCPListenOptions = {}): () => void {
    this.#ensureStream(options);
    this.#streamHolds++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#streamHolds--;
      this.#stopStreamIfUnused();
    };
  }

  #ensureStream(options: AxMCPListenOptions = {}): NotificationStream {
    if (!this.#stream) {
      const { signal: _ignored, ...shared } = options;
      this.#stream = (this.#wire as Wire).openNotifications(
        {
          connect: (signal) => this.init(signal),
          dispatch: (message, context) => this.#onMessage(message, context),
          lifecycle: (state, error, resumed) => this.#lifecycle(state, error, resumed),
          filter: () => this.#listenFilter(),
        },
        shared,
      );
    }
    return this.#stream;
  }

  /** Subscriptions need the stream their updates arrive on; without them and without handles it stops. */
  #stopStreamIfUnused(): void {
    if (
      this.#streamHolds > 0 ||
      this.#wiredUris.size > 0 ||
      this.#keepStreamForServerRequests ||
      !this.#stream
    ) {
      return;
    }
    this.#stream.close();
    this.#stream = undefined;
  }

  /** What the notification stream should carry: list changes the server offers, owned URIs, awaited tasks. */
  #listenFilter(): ListenFilter {
    const capabilities = this.#identity?.capabilities ?? {};
    const filter: ListenFilter = {};
    if (capabilities.tools?.listChanged) filter.toolsListChanged = true;
    if (capabilities.prompts?.listChanged) filter.promptsListChanged = true;
    if (capabilities.resources?.listChanged) filter.resourcesListChanged = true;
    if (this.#wiredUris.size > 0) filter.resourceSubscriptions = [...this.#wiredUris].sort();
    const tasks = this.#taskWakers.ids();
    if (tasks.length > 0 && this.#tasksNegotiated()) filter.taskIds = tasks.sort();
    return filter;
  }

  #tasksNegotiated(): boolean {
    const capabilities = this.#identity?.capabilities ?? {};
    return (
      this.#wire?.tasks.extensionNegotiated(capabilities, this.#options.tasksExtension !== false) === true
    );
  }

  #lifecycle(state: AxMCPLifecycleState, error?: unknown, resumed?: boolean): void {
    this.#events.emit({
      type: 'lifecycle',
      namespace: this.namespace,
      state,
      ...(error ? { error } : {}),
      ...(resumed !== undefined ? { resumed } : {}),
    });
    // A change announced while the stream was down is lost (2026-07-28 listen streams keep no
    // state; a legacy stream with no event id has nothing to resume from): look again.
    if (state === 'reconnected') {
      // A moment later, so what the server replays on reconnect (Last-Event-ID) is counted first.
      delay(RECONNECT_LOOK_DELAY_MS, this.#lifetime.signal).then(
        () => this.#refreshAfterChange(LIST_KINDS, { onlyIfChanged: true }),
        () => {},
      );
    }
  }

  /** Receives typed client events; returns the function that unsubscribes. */
  subscribeEvents(listener: AxMCPClientEventListener): () => void {
    return this.#events.subscribe(listener);
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
    assertMCPOptions(TASK_STATUS_FILTER, filter, 'subscribeTaskStatus filter', this.#where());
    assertMCPOptions(TASK_STATUS_LISTENER, listener, 'subscribeTaskStatus listener', this.#where());
    const ids = filter.taskId === undefined ? undefined : new Set(toList(filter.taskId));
    const statuses = filter.status === undefined ? undefined : new Set(toList(filter.status));
    const unwatch = [...(ids ?? [])].map((id) => this.#taskWakers.watch(id));
    const unsubscribe = this.#events.subscribe((event) => {
      if (event.type !== 'task_status') return;
      if (ids && !ids.has(event.task.taskId)) return;
      if (statuses && !statuses.has(event.task.status)) return;
      (listener as (task: AxMCPTask) => void)(structuredClone(event.task));
    });
    let done = false;
    return () => {
      if (done) return;
      done = true;
      unsubscribe();
      for (const stop of unwatch) stop();
    };
  }

  /**
   * Ends the client: stops listening, releases every subscription on the wire
   * (bounded by `closeTimeoutMs`), ends the session and closes the transport.
   */
  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    this.#lifetime.abort(new AxMCPTransportError('closed', 'The client was closed', this.#where()));
    for (const controller of this.#serverRequests?.values() ?? []) controller.abort();
    this.#serverTasks?.close();
    if (this.#wire && this.#owners.uris().length > 0) {
      const bound = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.#options.closeTimeoutMs ?? 5000);
        this.#owners.releaseAll().finally(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      await bound;
    }
    this.#owners.clear();
    const stream = this.#stream;
    this.#stream = undefined;
    stream?.close();
    await stream?.done;
    this.#closed = true;
    try {
      await this.transport.close();
    } finally {
      this.#events.clear();
    }
  }

  async #connect(signal?: AbortSignal): Promise<void> {
    const options = this.#options;
    const { wire, identity } = await connectWithEra({
      transport: this.transport,
      era: options.era ?? 'auto',
      store: options.eraStore ?? defaultEraStore,
      probeTimeoutMs: options.probeTimeoutMs ?? 5000,
      ...(signal ? { signal } : {}),
      legacy: () =>
        new LegacyWire({
          transport: this.transport,
          requests: this.#requests,
          clientInfo: options.clientInfo ?? AX_MCP_CLIENT_INFO,
          capabilities: () => this.#legacyCapabilities(),
          sessionRecovery: options.sessionRecovery ?? 'safe',
          onReinitialized: (restored) => this.#afterReconnect(restored),
          taskDeps: this.#taskDeps(),
          ...(options.elicitation?.url
            ? {
                completeURLElicitations: (error: AxMCPURLElicitationRequiredError, signal?: AbortSignal) => {
                  const link = linkAbort(signal, this.#lifetime.signal);
                  return completeURLElicitations(
                    error,
                    options.elicitation,
                    this.#elicitationCompletions,
                    { namespace: this.namespace, signal: link.signal },
                    options.urlElicitationTimeoutMs ?? 5_000,
                  ).finally(() => link.dispose());
                },
              }
            : {}),
        }),
      modern: (cachedDiscover) =>
        new ModernWire({
          transport: this.transport,
          requests: this.#requests,
          clientInfo: options.clientInfo ?? AX_MCP_CLIENT_INFO,
          capabilities: () => this.#modernCapabilities(),
          logLevel: this.#logLevel,
          fulfil: (method, params, context) => fulfilServerRequest(options, method, params, context),
          namespace: this.namespace,
          maxInputRounds: options.maxInputRounds ?? 5,
          onWarning: options.onWarning ?? ((message) => console.warn(message)),
          onHeaderMismatch: () => this.#catalog.refresh('tools'),
          ...(cachedDiscover ? { cachedDiscover } : {}),
          taskDeps: this.#taskDeps(),
        }),
    });
    this.#wire = wire;
    this.#adopt(identity);
    await this.#applyLogLevel();
    if (wire.serverRequestsOnStream) {
      // Such servers may send their requests (sampling, elicitation, roots) on the notification
      // stream alone: keep it open whenever a handler could answer them.
      if (options.sampling || options.elicitation || options.roots) {
        this.#keepStreamForServerRequests = true;
        this.#ensureStream();
      }
    }
  }

  #taskDeps() {
    return {
      fulfil: (method: string, params: Record<string, unknown>, context: AxMCPServerRequestContext) =>
        fulfilServerRequest(this.#options, method, params, context),
      wakers: this.#taskWakers,
      namespace: this.namespace,
    };
  }

  /** Sent with every 2026-07-28 request: built once (the options never change), frozen. */
  #modernCapabilities(): AxMCPClientCapabilities {
    if (this.#modernCapabilitiesOnce) return this.#modernCapabilitiesOnce;
    const capabilities = this.#legacyCapabilities();
    // The client receives no tasks in this era: it has no server → client requests.
    delete capabilities.tasks;
    if (this.#options.tasksExtension !== false) {
      capabilities.extensions = { ...capabilities.extensions, [TASKS_EXTENSION]: {} };
    }
    this.#modernCapabilitiesOnce = deepFreeze(capabilities);
    return capabilities;
  }

  #legacyCapabilities(): AxMCPClientCapabilities {
    const capabilities = capabilitiesFor(this.#options);
    const extensions: Record<string, unknown> = { ...this.#options.extensions };
    if (this.#options.skills !== false) extensions[SKILLS_EXTENSION] = {};
    if (Object.keys(extensions).length > 0) capabilities.extensions = extensions;
    return capabilities;
  }

  #adopt(identity: ServerIdentity): void {
    this.#identity = identity;
    this.#catalog.reset(identity.capabilities);
  }

  /** After a lost session came back: fresh lists, restored subscriptions, the log level. */
  async #afterReconnect(identity: ServerIdentity): Promise<void> {
    this.#adopt(identity);
    const failures = await this.#owners.restore();
    for (const failure of failures) this.#report(failure.error);
    await this.#applyLogLevel().catch((error) => this.#report(error));
    this.#events.emit({ type: 'lifecycle', namespace: this.namespace, state: 'session_restored' });
  }

  async #applyLogLevel(): Promise<void> {
    const level = this.#logLevel;
    if (level && this.#identity?.capabilities.logging)
      await this.#onWire((wire) => wire.setLogLevel(level, {}));
  }

  async #callToolOnce(
    name: string,
    args: Record<string, unknown>,
    options: AxMCPCallOptions,
    extraParams: Record<string, unknown> = {},
  ): Promise<AxMCPToolCallOutcome> {
    const wire = await this.#wireReady(options.signal);
    const tool = await this.#findTool(name);
    if (this.#options.authorizeToolCall) {
      // A frozen copy: the guard sees what the catalog says and cannot change what is sent.
      const described = deepFreeze(structuredClone(tool));
      const allowed = await this.#options.authorizeToolCall({
        namespace: this.namespace,
        tool: described,
        arguments: structuredClone(args),
        annotations: described.annotations,
      });
      if (allowed !== true) throw new AxMCPAuthorizationDeniedError(name, this.#where());
    }
    const params: Record<string, unknown> = { name, arguments: args, ...extraParams };
    wire.tasks.augmentToolCall(params, tool, this.#identity?.capabilities ?? {});
    // A task-augmented call creates a task; a 2026-07-28 server with the extension may make any
    // call one. The grace is what an abandoned call may still take to say which.
    const grace =
      params.task !== undefined
        ? TASK_CREATION_GRACE_MS
        : this.#tasksNegotiated()
          ? POSSIBLE_TASK_GRACE_MS
          : undefined;
    const result =
      grace !== undefined && options.signal
        ? await this.#sendKeepingTask(wire, params, options, options.signal, grace)
        : await this.#send({ method: 'tools/call', params, ...callOptions(options) });
    const outcome = wire.tasks.outcome(result);
    if (outcome.kind === 'complete') this.#checkOutput(tool, outcome.result);
    return outcome;
  }

  #checkOutput(tool: AxMCPTool, result: AxMCPCallToolResult): void {
    if (this.#options.validateToolOutput !== false) checkToolOutput(tool, result, this.#where());
  }

  /**
   * A `tools/call` that may create a task, sent so that abandoning it never orphans the task:
   * the caller's `signal` ends the wait at once, but the request itself runs on (at most `graceMs`
   * more, then it is cancelled as usual), and a task it turns out to have created is cancelled.
   * Aborting the request instead would leave the server running a task nobody knows the id of.
   */
  async #sendKeepingTask(
    wire: Wire,
    params: Record<string, unknown>,
    options: AxMCPCallOptions,
    signal: AbortSignal,
    graceMs: number,
  ): Promise<Record<string, unknown>> {
    if (signal.aborted)
      throw new AxMCPTimeoutError('"tools/call" was aborted', { aborted: true, cause: signal.reason });
    const request = linkAbort(this.#lifetime.signal);
    const sending = this.#send({
      method: 'tools/call',
      params,
      ...callOptions({ ...options, signal: request.signal }),
    });
    let onAbort = () => {};
    const abandoned = new Promise<never>((_resolve, reject) => {
      onAbort = () =>
        reject(new AxMCPTimeoutError('"tools/call" was aborted', { aborted: true, cause: signal.reason }));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const result = await Promise.race([sending, abandoned]);
      request.dispose();
      return result;
    } catch (error) {
      if (!signal.aborted) {
        request.dispose();
        throw error;
      }
      const grace = setTimeout(
        () =>
          request.abort(
            new AxMCPTimeoutError('The abandoned task creation took too long', {
              timeoutMs: graceMs,
            }),
          ),
        graceMs,
      );
      // The request in flight holds the process while it matters; the deadline need not.
      (grace as { unref?: () => void }).unref?.();
      sending
        .then((result) => {
          const outcome = wire.tasks.outcome(result);
          return outcome.kind === 'task' ? wire.tasks.cancel(outcome.task.taskId) : undefined;
        })
        .catch(() => {})
        .finally(() => {
          clearTimeout(grace);
          request.dispose();
        });
      throw error;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  async #awaitTask(task: AxMCPTask, options: AxMCPTaskWaitOptions): Promise<AxMCPCallToolResult> {
    const wire = this.#wire as Wire;
    const unwatch = this.#taskWakers.watch(task.taskId);
    // Statuses seen by polling become events too, so task routes work without notifications.
    let last = '';
    const onStatus = (seen: AxMCPTask) => {
      const key = `${seen.status}:${seen.lastUpdatedAt ?? ''}`;
      if (key !== last) {
        last = key;
        this.#events.emit({ type: 'task_status', namespace: this.namespace, task: structuredClone(seen) });
      }
      options.onStatus?.(seen);
    };
    const link = linkAbort(options.signal, this.#lifetime.signal);
    try {
      return await wire.tasks.await(task, { ...options, onStatus, signal: link.signal });
    } catch (error) {
      // Abandoning the wait abandons the task: tell the server, best effort.
      if (options.signal?.aborted) wire.tasks.cancel(task.taskId).catch(() => {});
      if (this.#lifetime.signal.aborted && !options.signal?.aborted) throw this.#lifetime.signal.reason;
      throw error instanceof AxMCPError ? error.attribute(this.#where()) : error;
    } finally {
      link.dispose();
      unwatch();
    }
  }

  async #wireReady(signal?: AbortSignal): Promise<Wire> {
    await this.init(signal);
    return this.#wire as Wire;
  }

  #draftTasks(wire: Wire): DraftTasks {
    const draft = wire.tasks.draft;
    if (!draft) {
      throw new AxMCPUnsupportedError(
        'This task method exists only in the 2025-11-25 draft; the endpoint is 2026-07-28',
        this.#where(),
      );
    }
    return draft;
  }

  /**
   * An ownership transition reaches the server in the era's way (a `resources/subscribe`, or
   * the URI in the notification stream's filter); the stream then carries its updates.
   */
  async #putOnWire(uri: string, restoring: boolean): Promise<void> {
    await this.#onWire((wire) => wire.subscribe(uri, restoring));
    this.#wiredUris.add(uri);
    if (this.#closing) return;
    try {
      const honoured = await this.#ensureStream().update();
      if (honoured && !honouredURIs(honoured).has(uri)) {
        throw new AxMCPUnsupportedError(`The server did not accept a subscription to ${uri}`, this.#where());
      }
    } catch (error) {
      this.#wiredUris.delete(uri);
      this.#stream?.update().catch(() => {});
      this.#stopStreamIfUnused();
      throw error;
    }
  }

  async #takeOffWire(uri: string): Promise<void> {
    try {
      await this.#onWire((wire) => wire.unsubscribe(uri));
    } catch (error) {
      // A lost session holds no subscriptions, which is what was asked.
      if (!(error instanceof AxMCPSessionExpiredError)) throw error;
      this.#sessionLostWhileReleasing = true;
    }
    this.#wiredUris.delete(uri);
    // When closing, the stream's end is the unsubscription.
    if (!this.#closing) await this.#stream?.update();
    this.#stopStreamIfUnused();
  }

  /** Runs `use` on the connected wire, with errors attributed to this client. */
  async #onWire<T>(use: (wire: Wire) => Promise<T>): Promise<T> {
    if (this.#closed) throw new AxMCPTransportError('closed', 'The client was closed', this.#where());
    const wire = this.#wire;
    if (!wire) throw new AxMCPTransportError('closed', 'The client is not connected', this.#where());
    try {
      return await use(wire);
    } catch (error) {
      throw error instanceof AxMCPError ? error.attribute(this.#where()) : error;
    }
  }

  #send(request: SendRequest): Promise<Record<string, unknown>> {
    return this.#onWire((wire) => wire.request(request));
  }

  async #listPage(kind: AxMCPListKind, cursor: string | undefined, options: AxMCPCallOptions = {}) {
    await this.init(options.signal);
    const { method, parse } = LIST_METHODS[kind];
    const params = cursor === undefined ? undefined : { cursor };
    const page = parse(
      await this.#send({ method, ...(params ? { params } : {}), idempotent: true, ...callOptions(options) }),
    );
    let items = page.items;
    // The same tools the catalog admits: a tool with invalid header annotations cannot be called.
    if (kind === 'tools') items = (this.#wire as Wire).callableTools(items as AxMCPTool[]);
    return page.nextCursor === undefined ? { [kind]: items } : { [kind]: items, nextCursor: page.nextCursor };
  }

  async #findTool(name: string): Promise<AxMCPTool> {
    if (!this.#catalog.offers('tools')) {
      throw new AxMCPUnsupportedError('The server does not offer tools', this.#where());
    }
    if (!this.#catalog.isLoaded('tools')) await this.#catalog.load(['tools']);
    const dropped = this.#wire?.droppedToolReason(name);
    if (dropped !== undefined) {
      throw new AxMCPError(
        'invalid_argument',
        `Tool "${name}" was dropped: invalid x-mcp-header (${dropped})`,
        this.#where(),
      );
    }
    let tool = this.#catalog.tool(name);
    if (!tool) {
      await this.#catalog.refresh('tools');
      tool = this.#catalog.tool(name);
    }
    if (!tool)
      throw new AxMCPError('invalid_argument', `The server has no tool named "${name}"`, this.#where());
    return tool;
  }

  /**
   * Transport callback: only enqueue, never throw. Messages handed over together (one chunk of a
   * stream) are handled in one microtask, in order.
   */
  #onMessage(message: JSONRPCRequest | JSONRPCNotification, context: AxMCPMessageContext): void {
    if (this.#inbox !== undefined) {
      this.#inbox.push(message, context);
      return;
    }
    this.#inbox = [message, context];
    // A resolved promise rather than queueMicrotask: Node wraps each of those in an async resource.
    RESOLVED.then(() => this.#drainInbox());
  }

  #drainInbox(): void {
    const inbox = this.#inbox ?? [];
    this.#inbox = undefined;
    for (let i = 0; i < inbox.length; i += 2) {
      const message = inbox[i] as JSONRPCRequest | JSONRPCNotification;
      try {
        if ('id' in message) this.#answer(message);
        else this.#notified(message, inbox[i + 1] as AxMCPMessageContext);
      } catch (error) {
        this.#report(error);
      }
    }
  }

  #notified(message: JSONRPCNotification, context: AxMCPMessageContext): void {
    const stream = this.#stream;
    if (stream && !stream.accept(message)) return;
    const { method, params } = message;
    const kinds = LIST_CHANGED[method];
    if (kinds) {
      this.#refreshAfterChange(kinds);
      return;
    }
    switch (method) {
      case 'notifications/progress': {
        const progress = parseProgress(params);
        this.#requests.progress(progress);
        this.#options.onProgress?.(progress);
        this.#events.emit({ type: 'progress', namespace: this.namespace, progress });
        return;
      }
      case 'notifications/message': {
        const logging = parseLoggingMessage(params);
        this.#options.onLoggingMessage?.(logging);
        this.#events.emit({
          type: 'logging',
          namespace: this.namespace,
          message: logging,
          ...(context.eventId === undefined ? {} : { eventId: context.eventId }),
        });
        return;
      }
      case 'notifications/resources/updated': {
        if (typeof params?.uri !== 'string') return;
        this.#readCache?.delete(params.uri);
        // The hottest event of all: built without a spread.
        const updated: AxMCPClientEvent = {
          type: 'resource_updated',
          namespace: this.namespace,
          uri: params.uri,
        };
        if (context.eventId !== undefined) updated.eventId = context.eventId;
        this.#events.emit(updated);
        return;
      }
      case 'notifications/tasks':
      case 'notifications/tasks/status': {
        const task = parseTask(params);
        this.#taskWakers.wake(task.taskId);
        this.#events.emit({
          type: 'task_status',
          namespace: this.namespace,
          task: { ...task },
          ...(context.eventId === undefined ? {} : { eventId: context.eventId }),
        });
        return;
      }
      case 'notifications/elicitation/complete': {
        if (typeof params?.elicitationId === 'string')
          this.#elicitationCompletions.complete(params.elicitationId);
        this.#events.emit({ type: 'notification', namespace: this.namespace, method, params });
        return;
      }
      case 'notifications/cancelled': {
        const id = params?.requestId;
        if (typeof id === 'string' || typeof id === 'number') this.#serverRequests?.get(id)?.abort();
        return;
      }
      default:
        this.#events.emit({ type: 'notification', namespace: this.namespace, method, params });
    }
  }

  /**
   * Refetches lists and announces `catalog_changed` for those that differ from what was last
   * announced — so a change seen twice (a replayed `list_changed` and a reconnect's look) is
   * announced once, and a `list_changed` that changed nothing announces nothing.
   */
  #refreshAfterChange(kinds: readonly AxMCPListKind[], options: { onlyIfChanged?: boolean } = {}): void {
    const offered = kinds.filter((kind) => this.#catalog.offers(kind));
    for (const kind of offered) {
      if (!this.#announced.has(kind)) this.#announced.set(kind, JSON.stringify(this.#catalog.items(kind)));
    }
    Promise.all(offered.map((kind) => this.#catalog.refresh(kind))).then(
      () => {
        const changed = offered.filter((kind) => {
          const now = JSON.stringify(this.#catalog.items(kind));
          const differs = now !== this.#announced.get(kind);
          this.#announced.set(kind, now);
          // The server's own list_changed is always announced; a look of ours only when it found a change.
          return differs || !options.onlyIfChanged;
        });
        if (changed.length === 0) return;
        this.#events.emit({
          type: 'catalog_changed',
          namespace: this.namespace,
          kinds: changed,
          revision: this.#catalog.revision,
        });
      },
      (error) => this.#report(error),
    );
  }

  #answer(request: JSONRPCRequest): void {
    const controller = new AbortController();
    const answering = (this.#serverRequests ??= new Map());
    answering.set(request.id, controller);
    const context = { namespace: this.namespace, signal: controller.signal };
    fulfilServerRequest(this.#options, request.method, request.params ?? {}, context, this.#receivedTasks())
      .then(
        (result) => answerFor(request, { result }),
        (error) => answerFor(request, { error }),
      )
      .then((answer) =>
        controller.signal.aborted || this.#closed ? undefined : this.transport.respond(answer),
      )
      .catch((error) => this.#report(error))
      .finally(() => answering.delete(request.id));
  }

  /** Tasks this client runs for the server, when a handler accepts task-augmented requests. */
  #receivedTasks(): ServerTasks | undefined {
    if (this.#serverTasks) return this.#serverTasks;
    if (capabilitiesFor(this.#options).tasks === undefined) return undefined;
    this.#serverTasks = new ServerTasks((task) => {
      if (this.#closed) return;
      this.transport
        .notify({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: task })
        .catch((error) => this.#report(error));
    });
    return this.#serverTasks;
  }

  #report(error: unknown): void {
    try {
      this.#options.onError?.(error);
    } catch {
      // The error sink itself failed; there is nowhere left to report to.
    }
  }

  #where(): { namespace: string; endpoint: string } {
    return { namespace: this.namespace, endpoint: this.transport.endpoint };
  }

  #assertOpen(): void {
    if (this.#closing) throw new AxMCPTransportError('closed', 'The client was closed', this.#where());
  }
}

/** Options of {@link AxMCPClient.callTool}. */
export interface AxMCPToolCallOptions extends AxMCPCallOptions {
  /** `await` (default): wait for a task to finish; `expose`: return at once with the task. */
  taskHandling?: 'await' | 'expose';
  /** Every task status seen while awaiting. */
  onStatus?: (task: AxMCPTask) => void;
  /** Task polling interval when the server suggests none (default 1 000 ms). */
  pollIntervalMs?: number;
}

/** The URIs a listen acknowledgement honoured, as a set built once per acknowledgement. */
const honouredSets = new WeakMap<ListenFilter, ReadonlySet<string>>();
function honouredURIs(honoured: ListenFilter): ReadonlySet<string> {
  let set = honouredSets.get(honoured);
  if (!set) honouredSets.set(honoured, (set = new Set(honoured.resourceSubscriptions ?? [])));
  return set;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

export type { AxMCPClientEvent };
