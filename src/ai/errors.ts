import { AxError } from '../errors/ax-error.js';
import {
  type AxOptionsIssue,
  type AxOptionsProblem,
  findOptionsProblem,
  type Shape,
} from '../options/check.js';

/**
 * Typed errors of AI services. Every failure an {@link AxAIService} reports is an
 * {@link AxAIError} with a stable `code`; match on the code, not on messages. Messages
 * never carry the API key or request headers.
 */

/** Stable error codes of AI services. */
export type AxAIErrorCode =
  /** The provider refused the credentials (HTTP 401/403). */
  | 'authentication'
  /** The request was malformed or refused as such (HTTP 400, 404, 409, 422). */
  | 'invalid_request'
  /** Too many requests (HTTP 429) after every retry. */
  | 'rate_limited'
  /** The provider failed (HTTP 5xx) after every retry. */
  | 'server_error'
  /** Any other HTTP status. */
  | 'http_status'
  /** The network failed (DNS, connection reset, TLS) after every retry. */
  | 'network_error'
  /** The provider answered with something that is not a valid response. */
  | 'invalid_response'
  /** The response exceeded `maxResponseBytes`. */
  | 'response_too_large'
  /** The request did not finish within `timeoutMs`. */
  | 'timeout'
  /** The caller's signal aborted the request. */
  | 'aborted'
  /** The service cannot do what was asked (for example tools on a service without them). */
  | 'unsupported'
  /**
   * Options that cannot work as written (a misspelled key, a wrong type, a missing `model`, a
   * `baseURL` that is not http(s)), thrown at construction before anything is sent; see
   * {@link AxAIOptionsError}.
   */
  | 'invalid_options';

/** Where an AI error happened, without secrets. */
export interface AxAIErrorContext {
  /** The service's name (for example `openai-compatible`). */
  provider?: string;
  /** The model asked for. */
  model?: string;
  /** The HTTP status, when there was a response. */
  status?: number;
  /** The provider's own error code or type (for example `context_length_exceeded`). */
  providerCode?: string;
  /** How long the provider asked to wait before retrying, from `Retry-After`. */
  retryAfterMs?: number;
  /** How many attempts were made. */
  attempts?: number;
  cause?: unknown;
}

/** The error every AI service throws. */
export class AxAIError extends AxError {
  /** The stable code. */
  declare readonly code: AxAIErrorCode;
  readonly provider: string | undefined;
  readonly model: string | undefined;
  readonly status: number | undefined;
  readonly providerCode: string | undefined;
  readonly retryAfterMs: number | undefined;
  readonly attempts: number | undefined;

  constructor(code: AxAIErrorCode, message: string, context: AxAIErrorContext = {}) {
    super(code, message, context);
    this.provider = context.provider;
    this.model = context.model;
    this.status = context.status;
    this.providerCode = context.providerCode;
    this.retryAfterMs = context.retryAfterMs;
    this.attempts = context.attempts;
  }

  /** Whether retrying the same request later may succeed (rate limits, provider failures, the network). */
  get retryable(): boolean {
    return this.code === 'rate_limited' || this.code === 'server_error' || this.code === 'network_error';
  }
}

/**
 * Options of an AI service that cannot work as written (code `invalid_options`), thrown at
 * construction before anything is sent; `issues` lists what the options check found, `path`
 * and `suggestion` describe the first. Never retryable; the message never holds a value of
 * the options (an API key stays out of it).
 */
export class AxAIOptionsError extends AxAIError {
  readonly issues: readonly AxOptionsIssue[];
  /** Where the first problem is (`capabilities.maxTools`, `baseURL`). */
  readonly path: string;
  /** The nearest known name when the first problem is a misspelled key. */
  readonly suggestion: string | undefined;

  constructor(problem: AxOptionsProblem, context: AxAIErrorContext = {}) {
    super('invalid_options', problem.message, context);
    this.issues = problem.issues;
    this.path = problem.issues[0]!.path;
    this.suggestion = problem.issues[0]!.suggestion;
  }
}

/**
 * Throws {@link AxAIOptionsError} when `value` does not fit `schema`. `label` names the
 * options object in the message ("AxAIOpenAICompatible options").
 */
export function assertAIOptions(
  schema: Shape,
  value: unknown,
  label: string,
  context: AxAIErrorContext = {},
): void {
  const problem = findOptionsProblem(schema, value, label);
  if (problem) throw new AxAIOptionsError(problem, context);
}

/** The error code an HTTP status maps to. */
export function codeForStatus(status: number): AxAIErrorCode {
  if (status === 401 || status === 403) return 'authentication';
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'server_error';
  if (status === 400 || status === 404 || status === 409 || status === 413 || status === 422) {
    return 'invalid_request';
  }
  return 'http_status';
}
