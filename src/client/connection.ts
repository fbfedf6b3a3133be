import { UnheardErrors } from '../errors/unheard.js';
import { linkAbort } from '../protocol/abort.js';
import {
  AxMCPError,
  AxMCPTransportError,
  type AxMCPURLElicitationRequiredError,
} from '../protocol/errors.js';
import { deepFreeze } from '../protocol/json.js';
import type {
  AxMCPClientCapabilities,
  AxMCPImplementation,
  AxMCPLoggingLevel,
} from '../protocol/messages.js';
import { TASKS_EXTENSION } from '../protocol/meta.js';
import type { AxMCPTransport } from '../transport/types.js';
import { connectWithEra } from './era-connect.js';
import { defaultEraStore } from './era-store.js';
import type { ClientEvents } from './events.js';
import type { InFlightRequests, SendRequest } from './in-flight.js';
import { LegacyWire } from './legacy-wire.js';
import { ModernWire } from './modern-wire.js';
import type { AxMCPClientOptions } from './options.js';
import { type AxMCPServerRequestContext, capabilitiesFor, fulfilServerRequest } from './server-requests.js';
import { SKILLS_EXTENSION } from './skills.js';
import type { TaskWakers } from './tasks/task.js';
import { completeURLElicitations, type ElicitationCompletions } from './url-elicitation.js';
import type { ServerIdentity, Wire } from './wire.js';

/** The library's own identity, sent as `clientInfo` unless the caller gives one. */
export const AX_MCP_CLIENT_INFO: AxMCPImplementation = { name: 'ax-mcp', version: '0.1.0' };

/** What the other rooms of the client do when the connection changes. */
export interface ConnectionHooks {
  /** A server identity was adopted (first handshake, or a lost session restored). */
  adopted(identity: ServerIdentity): void;
  /** A lost session was replaced by a new one (its handshake done; nothing restored yet). */
  replaced(): void;
  /** A lost session came back: restore what it held (subscriptions), before it is announced. */
  restored(): Promise<void>;
  /** The wire carries server requests on the notification stream, and a handler could answer them. */
  serverRequestsNeedStream(): void;
  /** A 2026-07-28 server refused a call for its `x-mcp-header` values: the tool list is stale. */
  headerMismatch(): Promise<void>;
}

/** What a connection shares with every room of the client. */
export interface ConnectionParts {
  namespace: string;
  transport: AxMCPTransport;
  options: AxMCPClientOptions;
  events: ClientEvents;
  requests: InFlightRequests;
  taskWakers: TaskWakers;
  elicitationCompletions: ElicitationCompletions;
}

/**
 * The client's connection and lifecycle: the lazy, shared handshake that picks the era's wire,
 * the server's identity, the log level asked for, and the client's closing state. Every other
 * room reaches the server through {@link Connection.send} or {@link Connection.onWire}.
 */
export class Connection {
  readonly namespace: string;
  readonly transport: AxMCPTransport;
  readonly options: AxMCPClientOptions;
  readonly events: ClientEvents;
  readonly requests: InFlightRequests;
  /** Aborted by `close()`: ends task waits and listening handles. */
  readonly lifetime = new AbortController();
  /** Set when `close()` starts: public calls are refused, the client's own cleanup still runs. */
  closing = false;
  closed = false;
  /**
   * Hands an error nobody awaits, attributed to this client, to the `onError` option; never
   * throws. Without that option the first error of each kind is told once through `onWarning`:
   * in silence, a subscription that failed to come back after a reconnect, a listener that
   * throws or a malformed notification looked like a server that never wrote.
   */
  readonly report: (error: unknown) => void;

  readonly #parts: ConnectionParts;
  #hooks: ConnectionHooks | undefined;
  #wire: Wire | undefined;
  #identity: ServerIdentity | undefined;
  #ready: Promise<void> | undefined;
  #modernCapabilities: AxMCPClientCapabilities | undefined;
  /** The server log level asked for: the `logLevel` option, then the last `setLoggingLevel`. */
  #logLevel: AxMCPLoggingLevel | undefined;

  constructor(parts: ConnectionParts) {
    this.#parts = parts;
    this.namespace = parts.namespace;
    this.transport = parts.transport;
    this.options = parts.options;
    this.events = parts.events;
    this.requests = parts.requests;
    this.#logLevel = parts.options.logLevel;
    const tell = new UnheardErrors(
      `client "${parts.namespace}" (${parts.transport.endpoint})`,
      'onError to AxMCPClient',
      (message) => this.warn(message),
    ).reporter(parts.options.onError);
    // Attributed here, once, whichever room reports: the caller learns which client and endpoint.
    this.report = (error) => tell(error instanceof AxMCPError ? error.attribute(this.where()) : error);
  }

  /** Set once by the facade, before the first `init`: the rooms exist only after the connection. */
  setHooks(hooks: ConnectionHooks): void {
    this.#hooks = hooks;
  }

  get wire(): Wire | undefined {
    return this.#wire;
  }

  get identity(): ServerIdentity | undefined {
    return this.#identity;
  }

  /** Connects if not connected yet. Idempotent; concurrent calls share one handshake. */
  init(signal?: AbortSignal): Promise<void> {
    this.assertOpen();
    this.#ready ??= this.#connect(signal).catch((error) => {
      this.#ready = undefined;
      throw error instanceof AxMCPError ? error.attribute(this.where()) : error;
    });
    return this.#ready;
  }

  /** Connects and returns the era's wire. */
  async wireReady(signal?: AbortSignal): Promise<Wire> {
    await this.init(signal);
    return this.#wire as Wire;
  }

  /** Runs `use` on the connected wire, with errors attributed to this client. */
  async onWire<T>(use: (wire: Wire) => Promise<T>): Promise<T> {
    if (this.closed) throw new AxMCPTransportError('closed', 'The client was closed', this.where());
    const wire = this.#wire;
    if (!wire) throw new AxMCPTransportError('closed', 'The client is not connected', this.where());
    try {
      return await use(wire);
    } catch (error) {
      throw error instanceof AxMCPError ? error.attribute(this.where()) : error;
    }
  }

  send(request: SendRequest): Promise<Record<string, unknown>> {
    return this.onWire((wire) => wire.request(request));
  }

  /** Whether the 2026-07-28 Tasks extension is in use (both sides offer it). */
  tasksNegotiated(): boolean {
    const capabilities = this.#identity?.capabilities ?? {};
    return (
      this.#wire?.tasks.extensionNegotiated(capabilities, this.options.tasksExtension !== false) === true
    );
  }

  /** Makes `level` the server's log level and remembers it for a restored session. */
  async setLogLevel(level: AxMCPLoggingLevel, options: Partial<SendRequest>): Promise<void> {
    await this.onWire((wire) => wire.setLogLevel(level, options));
    this.#logLevel = level;
  }

  where(): { namespace: string; endpoint: string } {
    return { namespace: this.namespace, endpoint: this.transport.endpoint };
  }

  /** Starts closing: public calls are refused from now on and the lifetime ends. False when already closing. */
  beginClose(): boolean {
    if (this.closing) return false;
    this.closing = true;
    this.lifetime.abort(new AxMCPTransportError('closed', 'The client was closed', this.where()));
    return true;
  }

  assertOpen(): void {
    if (this.closing) throw new AxMCPTransportError('closed', 'The client was closed', this.where());
  }

  /** Warnings about what the server sent: the `onWarning` option, else the console. */
  warn(message: string): void {
    const onWarning = this.options.onWarning;
    if (onWarning) onWarning(message);
    else console.warn(message);
  }

  async #connect(signal?: AbortSignal): Promise<void> {
    const options = this.options;
    const hooks = this.#hooks as ConnectionHooks;
    const { wire, identity } = await connectWithEra({
      transport: this.transport,
      era: options.era ?? 'auto',
      store: options.eraStore ?? defaultEraStore,
      probeTimeoutMs: options.probeTimeoutMs ?? 5000,
      ...(signal ? { signal } : {}),
      report: (error) => this.report(error),
      legacy: () =>
        new LegacyWire({
          transport: this.transport,
          requests: this.requests,
          clientInfo: options.clientInfo ?? AX_MCP_CLIENT_INFO,
          capabilities: () => this.#legacyCapabilities(),
          sessionRecovery: options.sessionRecovery ?? 'safe',
          onReplaced: () => this.#hooks?.replaced(),
          onReinitialized: (restored) => this.#afterReconnect(restored),
          report: (error) => this.report(error),
          taskDeps: this.#taskDeps(),
          ...(options.elicitation?.url
            ? { completeURLElicitations: (error, signal) => this.#completeURLElicitations(error, signal) }
            : {}),
        }),
      modern: (cachedDiscover) =>
        new ModernWire({
          transport: this.transport,
          requests: this.requests,
          clientInfo: options.clientInfo ?? AX_MCP_CLIENT_INFO,
          capabilities: () => this.#modernCapabilitiesOnce(),
          logLevel: this.#logLevel,
          fulfil: (method, params, context) => fulfilServerRequest(options, method, params, context),
          namespace: this.namespace,
          maxInputRounds: options.maxInputRounds ?? 5,
          onWarning: (message) => this.warn(message),
          onHeaderMismatch: () => hooks.headerMismatch(),
          ...(cachedDiscover ? { cachedDiscover } : {}),
          taskDeps: this.#taskDeps(),
        }),
    });
    this.#wire = wire;
    this.#adopt(identity);
    await this.#applyLogLevel();
    // Such servers may send their requests (sampling, elicitation, roots) on the notification
    // stream alone: keep it open whenever a handler could answer them.
    if (wire.serverRequestsOnStream && (options.sampling || options.elicitation || options.roots)) {
      hooks.serverRequestsNeedStream();
    }
  }

  #completeURLElicitations(error: AxMCPURLElicitationRequiredError, signal?: AbortSignal): Promise<void> {
    const link = linkAbort(signal, this.lifetime.signal);
    return completeURLElicitations(
      error,
      this.options.elicitation,
      this.#parts.elicitationCompletions,
      { namespace: this.namespace, signal: link.signal },
      this.options.urlElicitationTimeoutMs ?? 5_000,
    ).finally(() => link.dispose());
  }

  #taskDeps() {
    return {
      fulfil: (method: string, params: Record<string, unknown>, context: AxMCPServerRequestContext) =>
        fulfilServerRequest(this.options, method, params, context),
      wakers: this.#parts.taskWakers,
      namespace: this.namespace,
    };
  }

  /** Sent with every 2026-07-28 request: built once (the options never change), frozen. */
  #modernCapabilitiesOnce(): AxMCPClientCapabilities {
    if (this.#modernCapabilities) return this.#modernCapabilities;
    const capabilities = this.#legacyCapabilities();
    // The client receives no tasks in this era: it has no server → client requests.
    delete capabilities.tasks;
    if (this.options.tasksExtension !== false) {
      capabilities.extensions = { ...capabilities.extensions, [TASKS_EXTENSION]: {} };
    }
    this.#modernCapabilities = deepFreeze(capabilities);
    return capabilities;
  }

  #legacyCapabilities(): AxMCPClientCapabilities {
    const capabilities = capabilitiesFor(this.options);
    const extensions: Record<string, unknown> = { ...this.options.extensions };
    if (this.options.skills !== false) extensions[SKILLS_EXTENSION] = {};
    if (Object.keys(extensions).length > 0) capabilities.extensions = extensions;
    return capabilities;
  }

  #adopt(identity: ServerIdentity): void {
    this.#identity = identity;
    this.#hooks?.adopted(identity);
  }

  /** After a lost session came back: fresh lists, restored subscriptions, the log level. */
  async #afterReconnect(identity: ServerIdentity): Promise<void> {
    this.#adopt(identity);
    await this.#hooks?.restored();
    await this.#applyLogLevel().catch((error) => this.report(error));
    this.events.emit({ type: 'lifecycle', namespace: this.namespace, state: 'session_restored' });
  }

  async #applyLogLevel(): Promise<void> {
    const level = this.#logLevel;
    if (level && this.#identity?.capabilities.logging)
      await this.onWire((wire) => wire.setLogLevel(level, {}));
  }
}
