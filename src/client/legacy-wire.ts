import {
  AxMCPSessionExpiredError,
  AxMCPUnsupportedError,
  AxMCPURLElicitationRequiredError,
} from '../protocol/errors.js';
import {
  type AxMCPClientCapabilities,
  type AxMCPImplementation,
  type AxMCPLoggingLevel,
  type AxMCPTool,
  parseInitializeResult,
} from '../protocol/messages.js';
import { LEGACY_PROTOCOL_VERSION, LEGACY_PROTOCOL_VERSIONS } from '../protocol/versions.js';
import type { AxMCPTransport } from '../transport/types.js';
import type { InFlightRequests, SendRequest } from './in-flight.js';
import { type AxMCPListenOptions, listenStandalone } from './listening.js';
import { LegacyTasks } from './tasks/legacy-tasks.js';
import type { TaskDeps } from './tasks/protocol.js';
import type { NotificationHost, NotificationStream, ServerIdentity, Wire } from './wire.js';

export interface LegacyWireOptions {
  transport: AxMCPTransport;
  requests: InFlightRequests;
  clientInfo: AxMCPImplementation;
  capabilities: () => AxMCPClientCapabilities;
  /** Recover lost sessions by re-initializing (default) or surface the loss. */
  sessionRecovery: 'safe' | 'none';
  /**
   * Runs after a lost session was re-initialized (subscriptions back, log level, the
   * `session_restored` event). With a standalone stream open it runs once that stream is
   * open on the new session (listen first), otherwise before safe requests are retried.
   */
  onReinitialized: (identity: ServerIdentity) => Promise<void>;
  /** A lost session was replaced by a new one: right after its handshake, before `onReinitialized`. */
  onReplaced?: () => void;
  /** A failure of an `onReinitialized` that ran after its recovery returned. */
  report?: (error: unknown) => void;
  taskDeps: Omit<TaskDeps, 'send'>;
  /**
   * Lets the user complete the URL-mode elicitations a `-32042` asks for; resolves when the
   * request may go again, throws when it may not. Absent: the error reaches the caller.
   */
  completeURLElicitations?: (error: AxMCPURLElicitationRequiredError, signal?: AbortSignal) => Promise<void>;
}

/**
 * The stateful 2025-11-25 wire: `initialize`, a session the server may lose, and
 * `notifications/cancelled`. A lost session is re-initialized once for all waiting
 * callers; safe requests are retried, `tools/call` and other side effects never are.
 */
/** The longest a restored session's subscriptions wait for its standalone stream to open. */
const RESTORE_WAIT_MS = 2000;

export class LegacyWire implements Wire {
  readonly era = 'legacy' as const;
  readonly tasks: LegacyTasks;
  readonly #options: LegacyWireOptions;
  #recovering: Promise<ServerIdentity> | undefined;
  /** The `initialize` of a recovery, which other requests wait for. */
  #handshaking: Promise<void> | undefined;
  /** Standalone streams being kept open (see {@link openNotifications}). */
  #standalone = 0;
  /** Their reconnect waits, cut short when a recovery replaced the session. */
  readonly #reopen = new Set<() => void>();
  /** A recovered session whose restoration waits for a standalone stream to open on it. */
  #restoring: { done: Promise<void>; finish: () => void; drop: () => void } | undefined;

  constructor(options: LegacyWireOptions) {
    this.#options = options;
    this.tasks = new LegacyTasks({ ...options.taskDeps, send: (request) => this.request(request) });
  }

  async connect(signal?: AbortSignal): Promise<ServerIdentity> {
    const { transport, requests } = this.#options;
    await transport.start?.(signal);
    transport.setProtocolVersion?.(undefined);
    const result = parseInitializeResult(
      await requests.send({
        method: 'initialize',
        params: {
          protocolVersion: LEGACY_PROTOCOL_VERSION,
          capabilities: this.#options.capabilities(),
          clientInfo: this.#options.clientInfo,
        },
        progress: false,
        idempotent: true,
        ...(signal ? { signal } : {}),
      }),
    );
    if (!LEGACY_PROTOCOL_VERSIONS.includes(result.protocolVersion)) {
      await transport.terminateSession?.().catch(() => {});
      throw new AxMCPUnsupportedError(
        `Server answered initialize with protocol version "${result.protocolVersion.slice(0, 40)}", which this client does not speak`,
        { endpoint: transport.endpoint },
      );
    }
    transport.setProtocolVersion?.(result.protocolVersion);
    await transport.notify({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return {
      protocolVersion: result.protocolVersion,
      serverInfo: result.serverInfo,
      capabilities: result.capabilities,
      instructions: result.instructions,
    };
  }

  async request(request: SendRequest): Promise<Record<string, unknown>> {
    try {
      return await this.#requestInSession(request);
    } catch (error) {
      const complete = this.#options.completeURLElicitations;
      if (!(error instanceof AxMCPURLElicitationRequiredError) || !complete) throw error;
      // The server refused before doing anything: once the user completed what it asked, the
      // same request goes again, once.
      await complete(error, request.signal);
      return await this.#requestInSession(request);
    }
  }

  async #requestInSession(request: SendRequest): Promise<Record<string, unknown>> {
    // While a lost session is being re-initialized there is no session to send with: wait.
    if (this.#handshaking && !request.noRecovery) await this.#handshaking;
    try {
      return await this.#options.requests.send(request);
    } catch (error) {
      if (
        !(error instanceof AxMCPSessionExpiredError) ||
        this.#options.sessionRecovery === 'none' ||
        request.noRecovery
      ) {
        throw error;
      }
      // Another caller may already have replaced the session this request was sent with.
      const replaced = error.sessionId !== undefined && this.#options.transport.sessionId !== error.sessionId;
      if (!replaced || this.#recovering) await this.recover();
      if (!request.idempotent) throw error;
      return await this.#options.requests.send(request);
    }
  }

  /**
   * Re-initializes after the server lost the session and restores what the client had on it
   * (subscriptions, log level); concurrent callers share one handshake. With a standalone
   * stream open, restoration waits for that stream to open on the new session (listen
   * first, see `#restoreOnceListening`), and so does this.
   */
  async recover(): Promise<ServerIdentity> {
    const identity = await this.#reinitialize();
    await this.#restoring?.done;
    return identity;
  }

  /** The handshake of a recovery, shared; restoration may still be waiting for the stream. */
  #reinitialize(): Promise<ServerIdentity> {
    this.#recovering ??= (async () => {
      try {
        this.#options.transport.resetSession?.();
        const handshake = this.connect();
        // Requests wait for the handshake to be over, not for it to succeed (they then fail
        // or pass on their own); a rejection here nobody awaited would end the process.
        this.#handshaking = handshake.then(
          () => {},
          () => {},
        );
        let identity: ServerIdentity;
        try {
          identity = await handshake;
        } finally {
          this.#handshaking = undefined;
        }
        this.#options.onReplaced?.();
        if (this.#standalone > 0) this.#restoreOnceListening(identity);
        else await this.#options.onReinitialized(identity);
        return identity;
      } finally {
        this.#recovering = undefined;
      }
    })();
    return this.#recovering;
  }

  async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    await this.#options.transport.notify(
      params ? { jsonrpc: '2.0', method, params } : { jsonrpc: '2.0', method },
    );
  }

  readonly cachesReads = false;
  readonly serverRequestsOnStream = true;

  async discover(): Promise<Record<string, unknown>> {
    throw new AxMCPUnsupportedError(
      'server/discover exists only in the 2026-07-28 era; this endpoint is legacy',
      {
        endpoint: this.#options.transport.endpoint,
      },
    );
  }

  async subscribe(uri: string, restoring: boolean): Promise<void> {
    await this.request({
      method: 'resources/subscribe',
      params: { uri },
      idempotent: true,
      noRecovery: restoring,
    });
  }

  async unsubscribe(uri: string): Promise<void> {
    await this.request({
      method: 'resources/unsubscribe',
      params: { uri },
      idempotent: true,
      noRecovery: true,
    });
  }

  /** The standalone GET stream, resumed with `Last-Event-ID`, reopened after a lost session. */
  /**
   * Listen first: after a lost session, subscriptions go back once a standalone stream is
   * open on the new session, so that what the server sends after a `resources/subscribe`
   * has a stream to ride on. The new session's first stream has no resume point: updates
   * sent between a subscribe and the stream's opening would reach no one. The stream is told
   * to reopen now; if it has not opened within {@link RESTORE_WAIT_MS}, restoration goes on
   * without it.
   */
  #restoreOnceListening(identity: ServerIdentity): void {
    // A restoration still waiting belongs to a session lost again since: this one replaces it.
    this.#restoring?.drop();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let settle!: () => void;
    const done = new Promise<void>((resolve) => {
      settle = resolve;
    });
    const entry = {
      done,
      drop: () => {
        clearTimeout(timer);
        // Whoever waited for it waits for its replacement instead.
        void (this.#restoring?.done ?? Promise.resolve()).then(settle);
      },
      finish: () => {
        if (this.#restoring !== entry) return;
        this.#restoring = undefined;
        clearTimeout(timer);
        this.#options
          .onReinitialized(identity)
          .catch((error) => this.#options.report?.(error))
          .finally(settle);
      },
    };
    this.#restoring = entry;
    timer = setTimeout(entry.finish, RESTORE_WAIT_MS);
    for (const reopen of this.#reopen) reopen();
  }

  openNotifications(host: NotificationHost, options: AxMCPListenOptions): NotificationStream {
    this.#standalone++;
    const listening = listenStandalone(
      {
        transport: this.#options.transport,
        connect: (signal) => host.connect(signal),
        // The stream's own recovery must not wait for the stream to open: it opens next.
        recover: async () => {
          await this.#reinitialize();
        },
        dispatch: (message, context) => host.dispatch(message, context),
        lifecycle: (state, error, resumed) => host.lifecycle(state, error, resumed),
        opened: () => this.#restoring?.finish(),
        onSessionReplaced: (reopen) => {
          this.#reopen.add(reopen);
          return () => this.#reopen.delete(reopen);
        },
      },
      options,
    );
    let open = true;
    const stop = () => {
      if (!open) return;
      open = false;
      this.#standalone--;
      // The last stream gone: a restoration waiting for one goes on now.
      if (this.#standalone === 0) this.#restoring?.finish();
    };
    void listening.done.then(stop);
    return {
      ready: listening.ready,
      done: listening.done,
      close: () => {
        stop();
        listening.close();
      },
      // Subscriptions are requests in this era: the stream has no filter to change.
      update: () => Promise.resolve(undefined),
      accept: () => true,
    };
  }

  admitTools(tools: AxMCPTool[]): AxMCPTool[] {
    return tools;
  }

  callableTools(tools: AxMCPTool[]): AxMCPTool[] {
    return tools;
  }

  droppedToolReason(): string | undefined {
    return undefined;
  }

  notifyRootsChanged(): Promise<void> {
    return this.notify('notifications/roots/list_changed');
  }

  async ping(options: Partial<SendRequest>): Promise<void> {
    await this.request({ ...options, method: 'ping', idempotent: true, progress: false });
  }

  async setLogLevel(level: AxMCPLoggingLevel, options: Partial<SendRequest>): Promise<void> {
    await this.request({ ...options, method: 'logging/setLevel', params: { level }, idempotent: true });
  }

  cancel(requestId: string | number, reason: string): void {
    this.notify('notifications/cancelled', { requestId, reason }).catch(() => {});
  }

  async end(signal?: AbortSignal): Promise<void> {
    await this.#options.transport.terminateSession?.(signal);
  }
}
