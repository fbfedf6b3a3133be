import { AxError } from '../errors/ax-error.js';
import {
  type AxOptionsIssue,
  type AxOptionsProblem,
  findOptionsProblem,
  type Shape,
} from '../options/check.js';

/**
 * Typed errors. Every failure ax-mcp reports is an {@link AxMCPError} with a stable
 * string `code`, and, where known, the client `namespace` and the `endpoint`.
 * Messages never carry tokens or other secrets.
 */

/**
 * The stable error codes, one key each (the value means nothing). Match on these, not on
 * messages. A layer above adds its own by augmenting this interface: `src/auth/oauth/errors.ts`
 * adds the OAuth codes, so they live beside the error that carries them.
 */
export interface AxMCPErrorCodes {
  protocol_error: true;
  invalid_message: true;
  unsafe_key: true;
  http_status: true;
  transport_error: true;
  stream_ended: true;
  message_too_large: true;
  session_expired: true;
  timeout: true;
  aborted: true;
  authorization_denied: true;
  unsupported: true;
  ssrf_blocked: true;
  closed: true;
  pagination: true;
  invalid_argument: true;
  task_failed: true;
  task_cancelled: true;
  input_rounds_exhausted: true;
  /** Options that cannot work as written: an unknown key, a wrong type, a missing required field. */
  invalid_options: true;
  /** A tool's `structuredContent` does not fit its `outputSchema` (`AxMCPToolOutputError`). */
  output_schema_mismatch: true;
  /** A tool's `outputSchema` cannot be checked safely (too large, too deep, exponential patterns, endless references). */
  invalid_output_schema: true;
  /** A 2025-11-25 server needs a URL-mode elicitation first (`-32042`, `AxMCPURLElicitationRequiredError`). */
  url_elicitation_required: true;
  /** A sampling, elicitation or roots handler answered what the protocol cannot carry (`AxMCPHandlerResultError`). */
  invalid_handler_result: true;
}

/** A stable error code: a key of {@link AxMCPErrorCodes}. */
export type AxMCPErrorCode = keyof AxMCPErrorCodes;

/** Where an error happened, without secrets. */
export interface AxMCPErrorContext {
  namespace?: string;
  endpoint?: string;
  cause?: unknown;
}

/** The base class of every error ax-mcp throws. */
export class AxMCPError extends AxError {
  declare readonly code: AxMCPErrorCode;
  namespace?: string;
  endpoint?: string;

  constructor(code: AxMCPErrorCode, message: string, context: AxMCPErrorContext = {}) {
    super(code, message, context);
    if (context.namespace !== undefined) this.namespace = context.namespace;
    if (context.endpoint !== undefined) this.endpoint = context.endpoint;
  }

  /** Fill in the namespace and endpoint if the throwing layer did not know them. */
  attribute(context: { namespace?: string; endpoint?: string }): this {
    this.namespace ??= context.namespace;
    this.endpoint ??= context.endpoint;
    return this;
  }
}

/**
 * A JSON-RPC error returned by the server, or a message that breaks the protocol.
 * `rpcCode` is the JSON-RPC error code (for example `-32602`); `data` is the server's
 * untrusted `error.data`.
 */
export class AxMCPProtocolError extends AxMCPError {
  readonly rpcCode: number;
  readonly data: unknown;

  constructor(
    rpcCode: number,
    message: string,
    data?: unknown,
    context: AxMCPErrorContext & {
      code?:
        | 'protocol_error'
        | 'invalid_message'
        | 'unsafe_key'
        | 'task_failed'
        | 'input_rounds_exhausted'
        | 'url_elicitation_required';
    } = {},
  ) {
    super(context.code ?? 'protocol_error', message, context);
    this.rpcCode = rpcCode;
    this.data = data;
  }
}

/** One URL-mode elicitation a server needs completed (2025-11-25). */
export interface AxMCPURLElicitation {
  elicitationId: string;
  /** Where the user goes; open it only after the user agreed, and show its host. */
  url: string;
  message: string;
}

/**
 * The server cannot process the request until the user completes URL-mode elicitations
 * (2025-11-25, JSON-RPC `-32042`). With an `elicitation.url` handler the client asks it and, once
 * the user is done (and the server said `notifications/elicitation/complete`, or
 * `urlElicitationTimeoutMs` passed), retries the request once; without a handler, when the user
 * declines, or when the retry is refused again, this error reaches the caller with the URLs.
 * Nothing was done on the server.
 */
export class AxMCPURLElicitationRequiredError extends AxMCPProtocolError {
  readonly elicitations: readonly AxMCPURLElicitation[];

  constructor(
    message: string,
    elicitations: readonly AxMCPURLElicitation[],
    data: unknown,
    context: AxMCPErrorContext = {},
  ) {
    super(RPC.urlElicitationRequired, message, data, { ...context, code: 'url_elicitation_required' });
    this.elicitations = elicitations;
  }
}

/** An HTTP response whose status the transport cannot turn into a JSON-RPC message. */
export class AxMCPHTTPStatusError extends AxMCPError {
  readonly status: number;
  /** At most a few hundred characters of the response body, for diagnosis. */
  readonly bodySnippet: string;
  readonly retryAfterMs?: number;

  constructor(
    status: number,
    message: string,
    context: AxMCPErrorContext & { bodySnippet?: string; retryAfterMs?: number } = {},
  ) {
    super('http_status', message, context);
    this.status = status;
    this.bodySnippet = context.bodySnippet ?? '';
    if (context.retryAfterMs !== undefined) this.retryAfterMs = context.retryAfterMs;
  }
}

/** A failure to move a message: network error, broken stream, oversized message, closed transport. */
export class AxMCPTransportError extends AxMCPError {
  constructor(
    code:
      | 'transport_error'
      | 'stream_ended'
      | 'message_too_large'
      | 'session_expired'
      | 'closed'
      | 'ssrf_blocked',
    message: string,
    context: AxMCPErrorContext = {},
  ) {
    super(code, message, context);
  }
}

/** The legacy session the server knew is gone (HTTP 404 on a live session). */
export class AxMCPSessionExpiredError extends AxMCPTransportError {
  /** The session the server no longer knows (not a secret: servers put it in URLs and logs). */
  readonly sessionId: string | undefined;
  constructor(
    message = 'The server no longer knows this MCP session',
    context: AxMCPErrorContext & { sessionId?: string } = {},
  ) {
    super('session_expired', message, context);
    this.sessionId = context.sessionId;
  }
}

/** The `ssrfProtection` options that allow what a default policy refuses. */
export type AxMCPSSRFAllowance = 'allowHTTP' | 'allowLoopback' | 'allowPrivateNetwork';

/**
 * A URL refused by SSRF protection. `reason` says what was refused; `allowWith`, when one
 * option would allow it, names that option — the message adds it as the remedy, and a tool
 * with its own words for it (the CLI's `--allow-localhost`) reads it here, not in the message.
 */
export class AxMCPSSRFError extends AxMCPTransportError {
  /** The refused URL, without credentials. */
  readonly url: string;
  /** What was refused (`loopback address`, `plain http: is refused, HTTPS is required`). */
  readonly reason: string;
  /** The `ssrfProtection` option that would allow it, if one would. */
  readonly allowWith: AxMCPSSRFAllowance | undefined;
  constructor(
    url: string,
    reason: string,
    context: AxMCPErrorContext & { allowWith?: AxMCPSSRFAllowance } = {},
  ) {
    const remedy =
      context.allowWith === undefined
        ? ''
        : ` (allow it with ssrfProtection: { ${context.allowWith}: true })`;
    super('ssrf_blocked', `Refused ${url}: ${reason}${remedy}`, context);
    this.url = url;
    this.reason = reason;
    this.allowWith = context.allowWith;
  }
}

/** A request that did not finish in time (or was aborted, with code `aborted`). */
export class AxMCPTimeoutError extends AxMCPError {
  readonly timeoutMs?: number;
  constructor(message: string, context: AxMCPErrorContext & { timeoutMs?: number; aborted?: boolean } = {}) {
    super(context.aborted ? 'aborted' : 'timeout', message, context);
    if (context.timeoutMs !== undefined) this.timeoutMs = context.timeoutMs;
  }
}

/** `authorizeToolCall` refused a tool call; nothing was sent. */
export class AxMCPAuthorizationDeniedError extends AxMCPError {
  readonly tool: string;
  constructor(tool: string, context: AxMCPErrorContext & { reason?: string } = {}) {
    super(
      'authorization_denied',
      `Call to tool "${tool}" was denied by authorizeToolCall${context.reason ? `: ${context.reason}` : ''}`,
      context,
    );
    this.tool = tool;
  }
}

/** The server, the era or the transport does not support what was asked. */
export class AxMCPUnsupportedError extends AxMCPError {
  constructor(message: string, context: AxMCPErrorContext = {}) {
    super('unsupported', message, context);
  }
}

/**
 * Options that cannot work as written (an unknown or misspelled key, a wrong type or shape,
 * a value outside its enumeration, a missing required field), thrown at construction
 * before anything is sent. `issues` lists every problem; `path`, `expected` and
 * `suggestion` describe the first.
 */
export class AxMCPInvalidOptionsError extends AxMCPError {
  readonly issues: readonly AxOptionsIssue[];
  /** Where the first problem is: `elicitation`, `ssrfProtection.allowLoopback`. */
  readonly path: string;
  /** The nearest known name when the first problem is a misspelled key. */
  readonly suggestion: string | undefined;

  constructor(problem: AxOptionsProblem, context: AxMCPErrorContext = {}) {
    super('invalid_options', problem.message, context);
    this.issues = problem.issues;
    this.path = problem.issues[0]!.path;
    this.suggestion = problem.issues[0]!.suggestion;
  }
}

/**
 * A handler of a server request (`sampling`, `elicitation`, `roots`) returned a result the
 * protocol cannot carry: a required field missing, a value outside its enumeration, a field
 * that looks like a misspelt one. The server is answered with a JSON-RPC error naming the
 * problem instead of the broken result, and the client's `onError` is told. `issues` lists
 * every problem; `path` and `suggestion` describe the first.
 */
export class AxMCPHandlerResultError extends AxMCPError {
  /** The server request the handler answered (`sampling/createMessage`). */
  readonly method: string;
  readonly issues: readonly AxOptionsIssue[];
  readonly path: string;
  readonly suggestion: string | undefined;

  constructor(method: string, problem: AxOptionsProblem, context: AxMCPErrorContext = {}) {
    super('invalid_handler_result', problem.message, context);
    this.method = method;
    this.issues = problem.issues;
    this.path = problem.issues[0]!.path;
    this.suggestion = problem.issues[0]!.suggestion;
  }
}

/**
 * Throws {@link AxMCPInvalidOptionsError} when `value` does not fit `schema`.
 * `label` names the options object in the message ("AxMCPClient options").
 */
export function assertMCPOptions(
  schema: Shape,
  value: unknown,
  label: string,
  context: AxMCPErrorContext = {},
): void {
  const problem = findOptionsProblem(schema, value, label);
  if (problem) throw new AxMCPInvalidOptionsError(problem, context);
}

/** Well-known JSON-RPC and MCP error codes. */
export const RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** Legacy resource-not-found (retired in 2026-07-28, still accepted). */
  resourceNotFound: -32002,
  /** 2026-07-28: HTTP headers do not match the body. */
  headerMismatch: -32020,
  /** 2026-07-28: a client capability the server needs is missing. */
  missingCapability: -32021,
  /** 2026-07-28: protocol version not supported. */
  unsupportedVersion: -32022,
  /** 2025-11-25: URL elicitation required (retired in 2026-07-28). */
  urlElicitationRequired: -32042,
} as const;
