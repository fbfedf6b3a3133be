import type {
  AxMCPImplementation,
  AxMCPLoggingLevel,
  AxMCPServerCapabilities,
} from '../protocol/messages.js';
import type { AxMCPEra } from '../protocol/versions.js';
import type { SendRequest } from './in-flight.js';
import type { TaskProtocol } from './tasks/protocol.js';

/** What the server told us about itself when the wire connected. */
export interface ServerIdentity {
  protocolVersion: string;
  serverInfo: AxMCPImplementation | undefined;
  capabilities: AxMCPServerCapabilities;
  instructions: string | undefined;
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
}
