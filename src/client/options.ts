import type {
  AxMCPImplementation,
  AxMCPLoggingLevel,
  AxMCPLoggingMessage,
  AxMCPProgress,
  AxMCPToolAnnotations,
} from '../protocol/messages.js';
import type { AxMCPEraStore } from './era-store.js';
import type { AxMCPServerRequestHandlers } from './server-requests.js';

/** What `authorizeToolCall` is asked about. */
export interface AxMCPToolCallRequest {
  namespace: string;
  tool: string;
  arguments: Record<string, unknown>;
  /** The tool's annotations from the catalog (hints from the server, not guarantees). */
  annotations: AxMCPToolAnnotations | undefined;
}

/** Options of {@link AxMCPClient}. */
export interface AxMCPClientOptions extends AxMCPServerRequestHandlers {
  /**
   * A stable name for this server within your program: tool bindings, events and
   * errors carry it. Runs of characters outside `[A-Za-z0-9_]` become `_`.
   */
  namespace: string;
  /** How this client introduces itself (default: `ax-mcp` and its version). */
  clientInfo?: AxMCPImplementation;
  /**
   * Protocol era: `auto` classifies the endpoint once and remembers it;
   * `legacy` (2025-11-25, stateful) and `modern` (2026-07-28, stateless) pin it.
   */
  era?: 'auto' | 'legacy' | 'modern';
  /** Concurrent tool calls; further calls wait first-in first-out. Default unlimited. */
  maxConcurrency?: number;
  /** Runs before every tool call; `false` denies it and nothing is sent. */
  authorizeToolCall?: (request: AxMCPToolCallRequest) => boolean | Promise<boolean>;
  /** Server log level to ask for after connecting (when the server supports logging). */
  logLevel?: AxMCPLoggingLevel;
  /** Progress of every request. */
  onProgress?: (progress: AxMCPProgress) => void;
  /** Log messages from the server. */
  onLoggingMessage?: (message: AxMCPLoggingMessage) => void;
  /** Pages followed per list before giving up (default 1000). */
  maxPaginationPages?: number;
  /** Default request deadline in ms, restarted by progress (default 60 000; 0 disables). */
  timeoutMs?: number;
  /** `safe` (default): a lost session is re-initialized and safe requests retried. */
  sessionRecovery?: 'safe' | 'none';
  /** Upper bound on releasing subscriptions during `close()` (default 5 000 ms). */
  closeTimeoutMs?: number;
  /** Errors nobody awaits (a throwing event listener, a failed background refresh). */
  onError?: (error: unknown) => void;
  /** Warnings about what the server sent (a tool dropped for invalid header annotations). Default `console.warn`. */
  onWarning?: (message: string) => void;
  /** Where era verdicts are remembered, keyed by endpoint URL (default: process-wide memory). */
  eraStore?: AxMCPEraStore;
  /** How long a stdio `server/discover` probe may stay unanswered before the server counts as legacy (default 5 000). */
  probeTimeoutMs?: number;
  /** Rounds of `input_required` answered per request (default 5). */
  maxInputRounds?: number;
  /**
   * Extensions to declare in the client capabilities, by identifier (for example
   * `{ 'io.modelcontextprotocol/ui': {} }` for MCP Apps), besides the built-in ones.
   */
  extensions?: Record<string, Record<string, unknown>>;
  /** Declare the Skills extension (SEP-2640; default true): `listSkills`, `loadSkill`. */
  skills?: boolean;
  /** Declare the 2026-07-28 Tasks extension (default true). */
  tasksExtension?: boolean;
  /** Cache `resources/read` results for their TTL, until `resources/updated` (2026-07-28; default false). */
  readCache?: boolean;
}
