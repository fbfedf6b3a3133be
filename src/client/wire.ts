import type { JSONRPCNotification, JSONRPCRequest } from '../protocol/jsonrpc.js';
import type {
  AxMCPImplementation,
  AxMCPLoggingLevel,
  AxMCPServerCapabilities,
  AxMCPTool,
} from '../protocol/messages.js';
import type { AxMCPEra } from '../protocol/versions.js';
import type { AxMCPMessageContext } from '../transport/types.js';
import type { AxMCPLifecycleState } from './events.js';
import type { SendRequest } from './in-flight.js';
import type { ListenFilter } from './listen-stream.js';
import type { AxMCPListenOptions } from './listening.js';
import type { TaskProtocol } from './tasks/protocol.js';

/** What the server told us about itself when the wire connected. */
export interface ServerIdentity {
  protocolVersion: string;
  serverInfo: AxMCPImplementation | undefined;
  capabilities: AxMCPServerCapabilities;
  instructions: string | undefined;
}

/** What the facade lends a wire to run the notification stream. */
export interface NotificationHost {
  /** Connects the client (shared with every other caller). */
  connect(signal?: AbortSignal): Promise<void>;
  /** Hands a server message to the client's inbox. */
  dispatch(message: JSONRPCRequest | JSONRPCNotification, context: AxMCPMessageContext): void;
  lifecycle(state: AxMCPLifecycleState, error?: unknown, resumed?: boolean): void;
  /** What the client wants to hear about right now (owned URIs, list changes, awaited tasks). */
  filter(): ListenFilter;
}

/** The one notification stream a client keeps, whichever era opened it. */
export interface NotificationStream {
  ready: Promise<void>;
  done: Promise<void>;
  close(): void;
  /**
   * Brings the stream in line with `host.filter()`; resolves with what the server honoured, or
   * `undefined` when the era's stream carries no filter (2025-11-25: subscriptions are requests).
   */
  update(): Promise<ListenFilter | undefined>;
  /** Whether a notification from the transport is for the client (a stream may drop acknowledgements and overlap copies). */
  accept(message: JSONRPCNotification): boolean;
}

/**
 * One protocol era's way of talking to a server. The client facade is era-neutral:
 * it asks a wire to connect, send and end, and never branches on the era itself.
 */
export interface Wire {
  readonly era: AxMCPEra;
  /** The era's task protocol. */
  readonly tasks: TaskProtocol;
  /** Connects (the legacy handshake, or the modern discovery) and reports the server. */
  connect(signal?: AbortSignal): Promise<ServerIdentity>;
  /** Sends a request and resolves with its result. */
  request(request: SendRequest): Promise<Record<string, unknown>>;
  /** Sends a notification. */
  notify(method: string, params?: Record<string, unknown>): Promise<void>;
  /** A cheap liveness check in the era's way (2025-11-25 `ping`; 2026-07-28, which has no `ping`, `server/discover`). */
  ping(options: Partial<SendRequest>): Promise<void>;
  /**
   * Makes `level` the log level the server sends at, in the era's way: 2025-11-25 sends
   * `logging/setLevel`; 2026-07-28 (no such method) carries it in every request's `_meta`.
   */
  setLogLevel(level: AxMCPLoggingLevel, options: Partial<SendRequest>): Promise<void>;
  /** Says the client's roots changed (2025-11-25 notification; 2026-07-28 asks per request, so nothing is sent). */
  notifyRootsChanged(): Promise<void>;
  /** Tells the server a request was abandoned, in the era's way. */
  cancel(requestId: string | number, reason: string): void;
  /** Ends the conversation on the server's side (legacy: the session). */
  end(signal?: AbortSignal): Promise<void>;
  /** Whether `resources/read` results may be kept for their TTL (the era has cache hints). */
  readonly cachesReads: boolean;
  /** Whether the server's own requests (sampling, elicitation, roots) arrive on the notification stream. */
  readonly serverRequestsOnStream: boolean;
  /** `server/discover` (2026-07-28); the legacy era has none and refuses with `unsupported`. */
  discover(signal?: AbortSignal): Promise<Record<string, unknown>>;
  /** Re-establishes a lost session (2025-11-25); nothing to do where there is no session. */
  recover(): Promise<unknown>;
  /** Puts an owned URI on the wire: a `resources/subscribe` (2025-11-25), or nothing (2026-07-28: the stream's filter carries it). */
  subscribe(uri: string, restoring: boolean): Promise<void>;
  /** Takes an owned URI off the wire, without recovering a lost session (which holds no subscriptions). */
  unsubscribe(uri: string): Promise<void>;
  /** Opens the era's notification stream: the 2025-11-25 GET stream, or the 2026-07-28 `subscriptions/listen`. */
  openNotifications(host: NotificationHost, options: AxMCPListenOptions): NotificationStream;
  /** The tools of a catalog revision the era lets the client call (2026-07-28 drops invalid `x-mcp-header` tools, warning once). */
  admitTools(tools: AxMCPTool[], revision: number): AxMCPTool[];
  /** The same, silently, for a page listed by hand. */
  callableTools(tools: AxMCPTool[]): AxMCPTool[];
  /** Why a tool was dropped from the catalog, or `undefined`. */
  droppedToolReason(name: string): string | undefined;
}
