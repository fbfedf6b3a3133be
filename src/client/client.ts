import {
  AxMCPAuthorizationDeniedError,
  AxMCPError,
  AxMCPTransportError,
  AxMCPUnsupportedError,
} from '../protocol/errors.js';
import type { JSONRPCId, JSONRPCNotification, JSONRPCRequest } from '../protocol/jsonrpc.js';
import {
  type AxMCPCallToolResult,
  type AxMCPCompleteResult,
  type AxMCPGetPromptResult,
  type AxMCPImplementation,
  type AxMCPLoggingLevel,
  type AxMCPPrompt,
  type AxMCPReadResourceResult,
  type AxMCPResource,
  type AxMCPResourceTemplate,
  type AxMCPServerCapabilities,
  type AxMCPTool,
  parseCallToolResult,
  parseCompleteResult,
  parseGetPromptResult,
  parseLoggingMessage,
  parseProgress,
  parseReadResourceResult,
} from '../protocol/messages.js';
import type { AxMCPEra } from '../protocol/versions.js';
import type { AxMCPMessageContext, AxMCPTransport } from '../transport/types.js';
import { CallSlots } from './call-slots.js';
import { type AxMCPCatalogSnapshot, type AxMCPListKind, Catalog, LIST_METHODS } from './catalog.js';
import { type AxMCPClientEvent, type AxMCPClientEventListener, ClientEvents } from './events.js';
import { type AxMCPCallOptions, InFlightRequests, type SendRequest } from './in-flight.js';
import { LegacyWire } from './legacy-wire.js';
import { type AxMCPListening, type AxMCPListenOptions, listenStandalone } from './listening.js';
import { sanitizeNamespace } from './namespace.js';
import type { AxMCPClientOptions } from './options.js';
import { answerFor, capabilitiesFor, fulfilServerRequest } from './server-requests.js';
import { SubscriptionOwners } from './subscription-owners.js';
import type { ServerIdentity, Wire } from './wire.js';

/** The library's own identity, sent as `clientInfo` unless the caller gives one. */
export const AX_MCP_CLIENT_INFO: AxMCPImplementation = { name: 'ax-mcp', version: '0.1.0' };

/** The owner name `subscribeResource` and `unsubscribeResource` use. */
export const MANUAL_OWNER = 'manual';

const LIST_CHANGED: Record<string, AxMCPListKind[]> = {
  'notifications/tools/list_changed': ['tools'],
  'notifications/prompts/list_changed': ['prompts'],
  'notifications/resources/list_changed': ['resources', 'resourceTemplates'],
};

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

  readonly #options: AxMCPClientOptions;
  readonly #requests: InFlightRequests;
  readonly #catalog: Catalog;
  readonly #events: ClientEvents;
  readonly #slots: CallSlots | undefined;
  readonly #owners: SubscriptionOwners;
  readonly #serverRequests = new Map<JSONRPCId, AbortController>();
  readonly #listeners = new Set<AxMCPListening>();
  #wire: Wire | undefined;
  #identity: ServerIdentity | undefined;
  #ready: Promise<void> | undefined;
  #closed = false;

  constructor(transport: AxMCPTransport, options: AxMCPClientOptions) {
    this.namespace = sanitizeNamespace(options.namespace);
    this.transport = transport;
    this.#options = options;
    this.#events = new ClientEvents((error) => this.#report(error));
    this.#slots = options.maxConcurrency === undefined ? undefined : new CallSlots(options.maxConcurrency);
    this.#requests = new InFlightRequests(transport, options.timeoutMs ?? 60_000, (id, reason) =>
      this.#wire?.cancel(id, reason),
    );
    this.#catalog = new Catalog({
      maxPages: options.maxPaginationPages ?? 1000,
      fetchPage: (method, cursor) =>
        this.#send({ method, ...(cursor === undefined ? {} : { params: { cursor } }), idempotent: true }),
    });
    this.#owners = new SubscriptionOwners({
      subscribe: (uri) =>
        this.#send({ method: 'resources/subscribe', params: { uri }, idempotent: true }).then(() => {}),
      unsubscribe: (uri) =>
        this.#send({ method: 'resources/unsubscribe', params: { uri }, idempotent: true }).then(() => {}),
    });
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
   * A call is never replayed after an uncertain outcome.
   */
  async callTool(
    name: string,
    args: Record<string, unknown> = {},
    options: AxMCPCallOptions = {},
  ): Promise<AxMCPCallToolResult> {
    await this.init(options.signal);
    const tool = await this.#findTool(name);
    if (this.#options.authorizeToolCall) {
      const allowed = await this.#options.authorizeToolCall({
        namespace: this.namespace,
        tool: name,
        arguments: structuredClone(args),
        annotations: tool?.annotations ? structuredClone(tool.annotations) : undefined,
      });
      if (allowed !== true) throw new AxMCPAuthorizationDeniedError(name, this.#where());
    }
    const call = async () =>
      parseCallToolResult(
        await this.#send({
          method: 'tools/call',
          params: { name, arguments: args },
          ...callOptions(options),
        }),
      );
    return this.#slots ? this.#slots.run(call, options.signal) : call();
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
    return parseReadResourceResult(
      await this.#send({
        method: 'resources/read',
        params: { uri },
        idempotent: true,
        ...callOptions(options),
      }),
    );
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

  /** Checks the server is alive. */
  async ping(options: AxMCPCallOptions = {}): Promise<void> {
    await this.init(options.signal);
    await this.#send({ method: 'ping', idempotent: true, progress: false, ...callOptions(options) });
  }

  /** Asks the server to send log messages at `level` and above. */
  async setLoggingLevel(level: AxMCPLoggingLevel, options: AxMCPCallOptions = {}): Promise<void> {
    await this.init(options.signal);
    if (!this.#identity?.capabilities.logging) {
      throw new AxMCPUnsupportedError('The server does not support logging', this.#where());
    }
    await this.#send({
      method: 'logging/setLevel',
      params: { level },
      idempotent: true,
      ...callOptions(options),
    });
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

  /**
   * Opens the server's notification stream and keeps it open across drops, session
   * losses and restarts. Returns at once.
   */
  startListening(options: AxMCPListenOptions = {}): AxMCPListening {
    this.#assertOpen();
    const listening = listenStandalone(
      {
        transport: this.transport,
        connect: (signal) => this.init(signal),
        recover: async () => {
          await this.#legacyWire()?.recover();
        },
        dispatch: (message, context) => this.#onMessage(message, context),
        lifecycle: (state, error) =>
          this.#events.emit({
            type: 'lifecycle',
            namespace: this.namespace,
            state,
            ...(error ? { error } : {}),
          }),
      },
      options,
    );
    this.#listeners.add(listening);
    listening.done.finally(() => this.#listeners.delete(listening));
    return listening;
  }

  /** Receives typed client events; returns the function that unsubscribes. */
  subscribeEvents(listener: AxMCPClientEventListener): () => void {
    return this.#events.subscribe(listener);
  }

  /**
   * Ends the client: stops listening, releases every subscription on the wire
   * (bounded by `closeTimeoutMs`), ends the session and closes the transport.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const listening of this.#listeners) listening.close();
    for (const controller of this.#serverRequests.values()) controller.abort();
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
    await Promise.allSettled([...this.#listeners].map((listening) => listening.done));
    try {
      await this.transport.close();
    } finally {
      this.#events.clear();
    }
  }

  async #connect(signal?: AbortSignal): Promise<void> {
    const era = this.#options.era ?? 'auto';
    if (era === 'modern') {
      throw new AxMCPUnsupportedError('The 2026-07-28 era is not available yet', this.#where());
    }
    const wire = new LegacyWire({
      transport: this.transport,
      requests: this.#requests,
      clientInfo: this.#options.clientInfo ?? AX_MCP_CLIENT_INFO,
      capabilities: () => capabilitiesFor(this.#options),
      sessionRecovery: this.#options.sessionRecovery ?? 'safe',
      onReinitialized: (identity) => this.#afterReconnect(identity),
    });
    const identity = await wire.connect(signal);
    this.#wire = wire;
    this.#adopt(identity);
    await this.#applyLogLevel();
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
    const level = this.#options.logLevel;
    if (level && this.#identity?.capabilities.logging) {
      await this.#send({ method: 'logging/setLevel', params: { level }, idempotent: true });
    }
  }

  #legacyWire(): LegacyWire | undefined {
    return this.#wire instanceof LegacyWire ? this.#wire : undefined;
  }

  async #send(request: SendRequest): Promise<Record<string, unknown>> {
    this.#assertOpen();
    const wire = this.#wire;
    if (!wire) throw new AxMCPTransportError('closed', 'The client is not connected', this.#where());
    try {
      return await wire.request(request);
    } catch (error) {
      throw error instanceof AxMCPError ? error.attribute(this.#where()) : error;
    }
  }

  async #listPage(kind: AxMCPListKind, cursor: string | undefined, options: AxMCPCallOptions = {}) {
    await this.init(options.signal);
    const { method, parse } = LIST_METHODS[kind];
    const params = cursor === undefined ? undefined : { cursor };
    const page = parse(
      await this.#send({ method, ...(params ? { params } : {}), idempotent: true, ...callOptions(options) }),
    );
    return page.nextCursor === undefined
      ? { [kind]: page.items }
      : { [kind]: page.items, nextCursor: page.nextCursor };
  }

  async #findTool(name: string): Promise<AxMCPTool | undefined> {
    if (!this.#catalog.offers('tools')) {
      throw new AxMCPUnsupportedError('The server does not offer tools', this.#where());
    }
    if (!this.#catalog.isLoaded('tools')) await this.#catalog.load(['tools']);
    let tool = this.#catalog.tool(name);
    if (!tool) {
      await this.#catalog.refresh('tools');
      tool = this.#catalog.tool(name);
    }
    if (!tool)
      throw new AxMCPError('invalid_argument', `The server has no tool named "${name}"`, this.#where());
    return tool;
  }

  /** Transport callback: only enqueue, never throw. */
  #onMessage(message: JSONRPCRequest | JSONRPCNotification, context: AxMCPMessageContext): void {
    queueMicrotask(() => {
      try {
        if ('id' in message) this.#answer(message);
        else this.#notified(message, context);
      } catch (error) {
        this.#report(error);
      }
    });
  }

  #notified(message: JSONRPCNotification, context: AxMCPMessageContext): void {
    const { method, params } = message;
    const eventId = context.eventId === undefined ? {} : { eventId: context.eventId };
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
        this.#events.emit({ type: 'logging', namespace: this.namespace, message: logging, ...eventId });
        return;
      }
      case 'notifications/resources/updated': {
        if (typeof params?.uri !== 'string') return;
        this.#events.emit({
          type: 'resource_updated',
          namespace: this.namespace,
          uri: params.uri,
          ...eventId,
        });
        return;
      }
      case 'notifications/cancelled': {
        const id = params?.requestId;
        if (typeof id === 'string' || typeof id === 'number') this.#serverRequests.get(id)?.abort();
        return;
      }
      default:
        this.#events.emit({ type: 'notification', namespace: this.namespace, method, params });
    }
  }

  #refreshAfterChange(kinds: AxMCPListKind[]): void {
    const offered = kinds.filter((kind) => this.#catalog.offers(kind));
    Promise.all(offered.map((kind) => this.#catalog.refresh(kind))).then(
      () =>
        this.#events.emit({
          type: 'catalog_changed',
          namespace: this.namespace,
          kinds: offered,
          revision: this.#catalog.revision,
        }),
      (error) => this.#report(error),
    );
  }

  #answer(request: JSONRPCRequest): void {
    const controller = new AbortController();
    this.#serverRequests.set(request.id, controller);
    const context = { namespace: this.namespace, signal: controller.signal };
    fulfilServerRequest(this.#options, request.method, request.params ?? {}, context)
      .then(
        (result) => answerFor(request, { result }),
        (error) => answerFor(request, { error }),
      )
      .then((answer) =>
        controller.signal.aborted || this.#closed ? undefined : this.transport.respond(answer),
      )
      .catch((error) => this.#report(error))
      .finally(() => this.#serverRequests.delete(request.id));
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
    if (this.#closed) throw new AxMCPTransportError('closed', 'The client was closed', this.#where());
  }
}

function callOptions(options: AxMCPCallOptions): Partial<SendRequest> {
  const out: Partial<SendRequest> = {};
  if (options.signal) out.signal = options.signal;
  if (options.timeoutMs !== undefined) out.timeoutMs = options.timeoutMs;
  if (options.onProgress) out.onProgress = options.onProgress;
  return out;
}

export type { AxMCPClientEvent };
