import {
  anyOf,
  anything,
  array,
  boolean,
  func,
  instance,
  number,
  object,
  oneOf,
  record,
  refine,
  required,
  string,
} from '../options/check.js';
import type {
  AxMCPImplementation,
  AxMCPLoggingLevel,
  AxMCPLoggingMessage,
  AxMCPProgress,
  AxMCPTool,
  AxMCPToolAnnotations,
} from '../protocol/messages.js';
import { AX_MCP_APPS_EXTENSION, SKILLS_EXTENSION, TASKS_EXTENSION } from '../protocol/meta.js';
import type { AxMCPEraStore } from './era-store.js';
import { ROOT } from './handler-results.js';
import type { AxMCPServerRequestHandlers } from './server-requests.js';
import type { AxMCPTask } from './tasks/task.js';

/**
 * What `authorizeToolCall` is asked about.
 *
 * @example
 * ```ts
 * // Deny destructive tools; the server's annotations are hints, so a guard may also check names.
 * const authorizeToolCall = async ({ tool }: AxMCPToolCallRequest) => tool.annotations?.destructiveHint !== true;
 * ```
 */
export interface AxMCPToolCallRequest {
  namespace: string;
  /**
   * The tool as the catalog lists it (`name`, `title`, `description`, `annotations`,
   * `inputSchema`, `outputSchema`, `_meta`), a frozen copy. (A tool the catalog does not list
   * is refused before the guard runs.)
   */
  tool: Readonly<AxMCPTool>;
  arguments: Record<string, unknown>;
  /** The tool's annotations from the catalog (hints from the server, not guarantees); the same as `tool.annotations`. */
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
  /**
   * Every task status this client learns of (a notification, or a poll while awaiting a task):
   * the same as `subscribeTaskStatus(listener)` from construction on.
   */
  onTaskStatus?: (task: AxMCPTask) => void;
  /** Pages followed per list before giving up (default 1000). */
  maxPaginationPages?: number;
  /** Default request deadline in ms, restarted by progress (default 60 000; 0 disables). */
  timeoutMs?: number;
  /** `safe` (default): a lost session is re-initialized and safe requests retried. */
  sessionRecovery?: 'safe' | 'none';
  /** Upper bound on releasing subscriptions during `close()` (default 5 000 ms). */
  closeTimeoutMs?: number;
  /**
   * Errors nobody awaits: a throwing event listener, a failed background refresh or
   * subscription restore, a message the transport dropped as malformed (when the transport has
   * no `onProtocolError` of its own). Without it, the first error of each kind is told through
   * `onWarning`, and later ones of that kind are not.
   */
  onError?: (error: unknown) => void;
  /** Warnings about what the server sent (a tool dropped for invalid header annotations). Default `console.warn`. */
  onWarning?: (message: string) => void;
  /** Where era verdicts are remembered, keyed by endpoint URL (default: process-wide memory). */
  eraStore?: AxMCPEraStore;
  /** How long a stdio `server/discover` probe may stay unanswered before the server counts as legacy (default 5 000). */
  probeTimeoutMs?: number;
  /**
   * A request refused with `-32042` (2025-11-25: a URL-mode elicitation is required) goes to the
   * `elicitation.url` handler, which resolves when the user is done; the client then waits at
   * most this long for the server's optional `notifications/elicitation/complete` before it
   * retries the request once (default 5 000 ms).
   */
  urlElicitationTimeoutMs?: number;
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
  /**
   * Check `structuredContent` against the tool's `outputSchema` (default true): a mismatch
   * throws `AxMCPToolOutputError` (`output_schema_mismatch`) carrying the raw result. Each
   * schema is compiled once per catalog revision; one that could make checking unbounded is
   * refused as `invalid_output_schema`.
   */
  validateToolOutput?: boolean;
  /** Cache `resources/read` results for their TTL, until `resources/updated` (2026-07-28; default false). */
  readCache?: boolean;
}

const HANDLER = func();
const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;

/** The shape of the server-request handlers (also the program layer's `sampling`/`elicitation`). */
export const SERVER_REQUEST_HANDLER_KEYS = {
  sampling: anyOf(
    func('a function (params, context) => result'),
    object(
      {
        createMessage: required(func('a function (params, context) => result')),
        tools: boolean(),
        context: boolean(),
        tasks: boolean(),
      },
      { expected: 'an object { createMessage, tools?, context?, tasks? }' },
    ),
  ),
  elicitation: object(
    {
      form: func('a function (params, context) => result'),
      url: func('a function (params, context) => result'),
      applyDefaults: boolean(),
      tasks: boolean(),
    },
    { expected: 'an object { form?, url?, applyDefaults? } of handlers, one per mode' },
  ),
  roots: anyOf(array(ROOT, { expected: 'an array of roots { uri, name? }' }), func()),
} as const;

const EXTENSION_SETTINGS = record(anything());
const KNOWN_EXTENSIONS = object(
  {
    [TASKS_EXTENSION]: EXTENSION_SETTINGS,
    [SKILLS_EXTENSION]: EXTENSION_SETTINGS,
    [AX_MCP_APPS_EXTENSION]: EXTENSION_SETTINGS,
  },
  { open: 'misspellings-refused', keyNoun: 'extension' },
);
const ANY_EXTENSIONS = record(EXTENSION_SETTINGS, 'an object of extension settings, by identifier');

/**
 * `extensions`: any identifier (third parties name their own), each with an object of settings;
 * one a letter or two off a known one (`io.modelcontextprotocol/taks`) is refused, since a server
 * would ignore it and nothing would say so.
 */
const EXTENSIONS = refine(ANY_EXTENSIONS, (value, path, issues) =>
  KNOWN_EXTENSIONS.check(value, path, issues),
);

/** What {@link AxMCPClient} accepts; checked once in the constructor. */
export const CLIENT_OPTIONS = object(
  {
    ...SERVER_REQUEST_HANDLER_KEYS,
    namespace: required(string({ nonEmpty: true })),
    clientInfo: object({ name: required(string()), version: required(string()) }, { open: true }),
    era: oneOf('auto', 'legacy', 'modern'),
    maxConcurrency: number({ integer: true, min: 1 }),
    authorizeToolCall: func('a function ({ namespace, tool, arguments }) => boolean'),
    logLevel: oneOf(...LOG_LEVELS),
    onProgress: HANDLER,
    onLoggingMessage: HANDLER,
    onTaskStatus: HANDLER,
    maxPaginationPages: number({ integer: true, min: 1 }),
    timeoutMs: number({ min: 0 }),
    sessionRecovery: oneOf('safe', 'none'),
    closeTimeoutMs: number({ min: 0 }),
    onError: HANDLER,
    onWarning: HANDLER,
    eraStore: instance(
      'an era store { get, set, delete? }',
      (v) =>
        typeof v === 'object' &&
        v !== null &&
        typeof (v as { get?: unknown }).get === 'function' &&
        typeof (v as { set?: unknown }).set === 'function',
    ),
    probeTimeoutMs: number({ min: 1 }),
    urlElicitationTimeoutMs: number({ min: 0 }),
    maxInputRounds: number({ integer: true, min: 0 }),
    extensions: EXTENSIONS,
    skills: boolean(),
    tasksExtension: boolean(),
    readCache: boolean(),
    validateToolOutput: boolean(),
  },
  {
    expected: 'an options object { namespace, … }',
    aliases: { authorize: 'authorizeToolCall', timeout: 'timeoutMs', name: 'namespace' },
  },
);
