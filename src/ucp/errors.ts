/**
 * Typed errors of the UCP client. Every failure is an {@link AxUCPError} with a stable `code`,
 * the client `namespace`, the `endpoint` and the `operation` where known. No error carries a
 * request body: payment credentials and tokens the caller sent never reach a message, a
 * property or `toJSON()`. A response body kept for diagnosis is redacted first and is not
 * enumerable.
 */
import { AxError } from '../errors/ax-error.js';
import { findOptionsProblem, type Shape } from '../options/check.js';

/**
 * The stable error codes of the UCP client, one key each (the value means nothing). Match on
 * these, not on messages. A layer above may add its own by augmenting this interface.
 */
export interface AxUCPErrorCodes {
  /** Options that cannot work as written: an unknown key, a wrong type, a missing required field. */
  invalid_options: true;
  /** An argument of an operation that cannot be sent (not an object, a missing id). */
  invalid_argument: true;
  /** `/.well-known/ucp` (or a version profile) could not be fetched or is not a UCP profile. */
  discovery_failed: true;
  /** No protocol version both sides support (UCP `version_unsupported`). */
  version_unsupported: true;
  /** The operation's capability is not in the negotiated intersection, or no REST service serves it. */
  capability_unsupported: true;
  /** A response does not fit its published schema (`AxUCPSchemaError`). */
  schema_violation: true;
  /** A response carries a `__proto__` key. */
  unsafe_key: true;
  /** A response is not JSON. */
  invalid_response: true;
  /** A response body exceeds the size cap. */
  message_too_large: true;
  /** The business answered with a non-2xx status (`AxUCPResponseError`). */
  http_status: true;
  /** The business answered 2xx with `ucp.status: "error"` (`AxUCPResponseError`). */
  business_error: true;
  /** HTTP 409: the idempotency key was used before with another payload. Nothing was done. */
  idempotency_conflict: true;
  /** A mutating request whose outcome is unknown after every retry; retry with the same `idempotencyKey`. */
  outcome_unknown: true;
  /** The network failed before a response arrived (a read-only request, or a refused connection). */
  transport_error: true;
  /** No response within `timeoutMs`. */
  timeout: true;
  /** The caller's signal aborted the operation. */
  aborted: true;
  /** A URL refused by SSRF protection. */
  ssrf_blocked: true;
  /** `authorizeOperation` denied the operation, or none is configured (`AxUCPAuthorizationError`). Nothing was sent. */
  authorization_denied: true;
  /** A signature that must be present is not (UCP `signature_missing`). */
  signature_missing: true;
  /** A signature does not verify, or covers too little (UCP `signature_invalid`). */
  signature_invalid: true;
  /** The `keyid` is not among the signer's published keys (UCP `key_not_found`). */
  key_not_found: true;
  /** `Content-Digest` does not match the body (UCP `digest_mismatch`). */
  digest_mismatch: true;
  /** The key's algorithm is not supported here (UCP `algorithm_unsupported`). */
  algorithm_unsupported: true;
  /** A webhook delivery seen before (same `Webhook-Id`). */
  webhook_replayed: true;
  /** The client or source is closed. */
  closed: true;
}

/** A stable error code: a key of {@link AxUCPErrorCodes}. */
export type AxUCPErrorCode = keyof AxUCPErrorCodes;

/** Where a UCP error happened, without secrets. */
export interface AxUCPErrorContext {
  /** The client namespace (`shop`). */
  namespace?: string;
  /** The endpoint, without query or credentials. */
  endpoint?: string;
  /** The UCP operation (`checkout.complete`). */
  operation?: string;
  cause?: unknown;
}

/** The base class of every error the UCP client throws. */
export class AxUCPError extends AxError {
  /** The stable code. */
  declare readonly code: AxUCPErrorCode;
  /** The client namespace, when known. */
  namespace?: string;
  /** The endpoint, without query or credentials. */
  endpoint?: string;
  /** The operation (`checkout.complete`), when known. */
  operation?: string;

  constructor(code: AxUCPErrorCode, message: string, context: AxUCPErrorContext = {}) {
    super(code, message, context);
    if (context.namespace !== undefined) this.namespace = context.namespace;
    if (context.endpoint !== undefined) this.endpoint = context.endpoint;
    if (context.operation !== undefined) this.operation = context.operation;
  }

  /** Fill in what the throwing layer did not know. */
  attribute(context: { namespace?: string; endpoint?: string; operation?: string }): this {
    this.namespace ??= context.namespace;
    this.endpoint ??= context.endpoint;
    this.operation ??= context.operation;
    return this;
  }

  /** The serializable view: code, message and attribution only (never a body or a credential). */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { name: this.name, code: this.code, message: this.message };
    if (this.namespace !== undefined) out.namespace = this.namespace;
    if (this.endpoint !== undefined) out.endpoint = this.endpoint;
    if (this.operation !== undefined) out.operation = this.operation;
    return out;
  }
}

/**
 * `authorizeOperation` refused an operation that moves money or commits an order, or no
 * `authorizeOperation` is configured. Nothing was sent to the business.
 */
export class AxUCPAuthorizationError extends AxUCPError {
  /** The reason the authorizer gave, if any. */
  readonly reason: string | undefined;

  constructor(message: string, context: AxUCPErrorContext & { reason?: string } = {}) {
    super('authorization_denied', message, context);
    this.reason = context.reason;
  }

  override toJSON(): Record<string, unknown> {
    const out = super.toJSON();
    if (this.reason !== undefined) out.reason = this.reason;
    return out;
  }
}

/** One way a response breaks its schema. */
export interface AxUCPSchemaIssue {
  /** JSON pointer into the response (`#/line_items/0/quantity`). */
  instanceLocation: string;
  /** The schema keyword that failed (`type`, `required`, …). */
  keyword: string;
  message: string;
}

/**
 * A response that does not fit its published schema. `body` is the parsed response with
 * payment credentials redacted (not enumerable, not in `toJSON()`): nothing else is lost.
 */
export class AxUCPSchemaError extends AxUCPError {
  /** What failed (at most ten). */
  readonly issues: readonly AxUCPSchemaIssue[];
  declare readonly body: unknown;

  constructor(
    message: string,
    issues: readonly AxUCPSchemaIssue[],
    body: unknown,
    context: AxUCPErrorContext,
  ) {
    super('schema_violation', message, context);
    this.issues = issues;
    Object.defineProperty(this, 'body', { value: redactCredentials(body), enumerable: false });
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), issues: this.issues };
  }
}

/** One UCP message from a business (`messages[]`), as carried by {@link AxUCPResponseError}. */
export interface AxUCPMessage {
  type?: string;
  code?: string;
  content?: string;
  severity?: string;
  path?: string;
}

/**
 * The business refused: a non-2xx status (`http_status`, `idempotency_conflict` for 409) or a
 * 2xx whose `ucp.status` is `error` (`business_error`). `messages` are the business's UCP
 * messages (untrusted text); `body` is the redacted parsed body, not enumerable.
 */
export class AxUCPResponseError extends AxUCPError {
  /** The HTTP status. */
  readonly status: number;
  /** The UCP error code the business gave (`out_of_stock`, `profile_unreachable`), if any. */
  readonly ucpCode: string | undefined;
  /** The business's messages (at most 20). */
  readonly messages: readonly AxUCPMessage[];
  /** The fallback web experience the business offered, if any. */
  readonly continueURL: string | undefined;
  /** From `Retry-After`, when present. */
  readonly retryAfterMs: number | undefined;
  declare readonly body: unknown;

  constructor(
    code: 'http_status' | 'business_error' | 'idempotency_conflict',
    message: string,
    details: {
      status: number;
      ucpCode?: string;
      messages?: readonly AxUCPMessage[];
      continueURL?: string;
      retryAfterMs?: number;
      body?: unknown;
    },
    context: AxUCPErrorContext,
  ) {
    super(code, message, context);
    this.status = details.status;
    this.ucpCode = details.ucpCode;
    this.messages = details.messages ?? [];
    this.continueURL = details.continueURL;
    this.retryAfterMs = details.retryAfterMs;
    Object.defineProperty(this, 'body', { value: redactCredentials(details.body), enumerable: false });
  }

  override toJSON(): Record<string, unknown> {
    const out = super.toJSON();
    out.status = this.status;
    if (this.ucpCode !== undefined) out.ucpCode = this.ucpCode;
    if (this.messages.length > 0) out.messages = this.messages;
    if (this.continueURL !== undefined) out.continueURL = this.continueURL;
    return out;
  }
}

/** A signature that is missing, invalid, made with an unknown key or an unsupported algorithm. */
export class AxUCPSignatureError extends AxUCPError {
  constructor(
    code:
      | 'signature_missing'
      | 'signature_invalid'
      | 'key_not_found'
      | 'digest_mismatch'
      | 'algorithm_unsupported',
    message: string,
    context: AxUCPErrorContext = {},
  ) {
    super(code, message, context);
  }
}

/** Throws `AxUCPError('invalid_options')` when `value` does not fit `shape`. */
export function assertUCPOptions(shape: Shape, value: unknown, label: string): void {
  const problem = findOptionsProblem(shape, value, label);
  if (problem) throw new AxUCPError('invalid_options', problem.message);
}

/** Keys whose values are payment secrets wherever they appear. */
const SECRET_KEYS = new Set(['credential', 'token', 'cryptogram', 'number', 'cvc', 'cvv', 'pan']);

/**
 * A deep copy of JSON data with payment secrets replaced by `"[redacted]"`: every `credential`
 * object, and `token`/`number`/`cvc`-like members. Used wherever a body could end up in an
 * error, a log or event state.
 */
export function redactCredentials(value: unknown, depth = 0): unknown {
  if (depth > 64 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => redactCredentials(item, depth + 1));
  const out: Record<string, unknown> = Object.create(null);
  for (const [key, child] of Object.entries(value)) {
    out[key] = SECRET_KEYS.has(key.toLowerCase()) ? '[redacted]' : redactCredentials(child, depth + 1);
  }
  return out;
}

/**
 * A mutating request whose outcome is unknown: the connection failed after it may have
 * reached the business, on every attempt. Retrying the same logical call with this
 * `idempotencyKey` (and the same arguments) is safe: the business returns the original
 * result and does not act twice.
 */
export class AxUCPOutcomeUnknownError extends AxUCPError {
  /** The idempotency key every attempt carried (not a secret). */
  readonly idempotencyKey: string;

  constructor(message: string, idempotencyKey: string, context: AxUCPErrorContext) {
    super('outcome_unknown', message, context);
    this.idempotencyKey = idempotencyKey;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), idempotencyKey: this.idempotencyKey };
  }
}
