import { AxError } from '../errors/ax-error.js';
import { type AxOptionsIssue, describeIssues, findOptionsProblem, type Shape } from '../options/check.js';

/**
 * Typed errors of the event runtime. Every failure the runtime reports is an
 * {@link AxEventError} with a stable string `code`; match on the code, not on messages.
 */

/** Stable error codes of the event runtime. */
export type AxEventErrorCode =
  | 'invalid_event'
  | 'event_too_large'
  | 'invalid_input'
  | 'unsafe_path'
  /** A route, target, source, store or runtime option that cannot work as written (the package-wide code). */
  | 'invalid_options'
  | 'backpressure'
  | 'continuation_not_found'
  | 'continuation_conflict'
  | 'outcome_unknown'
  | 'lease_lost'
  | 'durability_required'
  | 'target_not_found'
  | 'not_found'
  | 'invalid_state'
  | 'closed'
  | 'aborted'
  | 'store_error';

/** Extra context carried by an event error. */
export interface AxEventErrorContext {
  cause?: unknown;
  /** The delivery or run the error belongs to, when known. */
  deliveryId?: string;
  routeId?: string;
  targetId?: string;
}

/** The base class of every error the event runtime throws. */
export class AxEventError extends AxError {
  /** The stable code. */
  declare readonly code: AxEventErrorCode;
  deliveryId?: string;
  routeId?: string;
  targetId?: string;

  constructor(code: AxEventErrorCode, message: string, context: AxEventErrorContext = {}) {
    super(code, message, context);
    if (context.deliveryId !== undefined) this.deliveryId = context.deliveryId;
    if (context.routeId !== undefined) this.routeId = context.routeId;
    if (context.targetId !== undefined) this.targetId = context.targetId;
  }
}

/**
 * An event, an input plan or a path that cannot be used: a malformed envelope
 * (`invalid_event`), an oversized one (`event_too_large`), input that does not fit the
 * target's declared fields (`invalid_input`) or an unsafe path segment (`unsafe_path`).
 * Never retried: a delivery that meets it is dead-lettered before its target is invoked.
 */
export class AxEventInputError extends AxEventError {
  /** In a refused `publishMany` batch: the position of the event refused (0-based). */
  index?: number;

  constructor(
    code: 'invalid_event' | 'event_too_large' | 'invalid_input' | 'unsafe_path',
    message: string,
    context: AxEventErrorContext & { index?: number } = {},
  ) {
    super(code, message, context);
    if (context.index !== undefined) this.index = context.index;
  }
}

/**
 * A route, target, source, store or runtime option that cannot work as written. Its code is
 * `invalid_options`, as everywhere in the package; `issues` lists what the options check and
 * the rules beyond shapes (a wake route without a target, `coalesce` without `debounceMs`)
 * found, `path` and `suggestion` describe the first. A few problems that belong to no single
 * option (a route id defined twice) have no issues.
 */
export class AxEventConfigError extends AxEventError {
  readonly issues: readonly AxOptionsIssue[];
  /** Where the first problem is (`routes[2].match.types`), when known. */
  readonly path: string | undefined;
  /** The nearest known name when the first problem is a misspelled key. */
  readonly suggestion: string | undefined;

  constructor(message: string, context: AxEventErrorContext & { issues?: readonly AxOptionsIssue[] } = {}) {
    super('invalid_options', message, context);
    this.issues = context.issues ?? [];
    this.path = this.issues[0]?.path;
    this.suggestion = this.issues[0]?.suggestion;
  }
}

/** Throws {@link AxEventConfigError} when `value` does not fit `schema`. */
export function assertEventOptions(
  schema: Shape,
  value: unknown,
  label: string,
  context: AxEventErrorContext = {},
): void {
  const problem = findOptionsProblem(schema, value, label);
  if (problem) throw new AxEventConfigError(problem.message, { ...context, issues: problem.issues });
}

/**
 * A rejected promise with {@link AxEventConfigError} when a call's `options` do not fit
 * `schema`, `undefined` when they fit (or none were given): for the methods that answer with
 * a promise, so that a misuse arrives where their other failures do.
 */
export function refusedCallOptions(
  schema: Shape,
  options: unknown,
  method: string,
): Promise<never> | undefined {
  if (options === undefined) return undefined;
  const problem = findOptionsProblem(schema, options, `${method} options`);
  return problem
    ? Promise.reject(new AxEventConfigError(problem.message, { issues: problem.issues }))
    : undefined;
}

/**
 * The error of a rule beyond shapes, worded like a shape issue:
 * `Route r: target: expected a target id or definition (a wake route runs one), got nothing`.
 */
export function eventRuleError(
  label: string,
  issue: AxOptionsIssue,
  context: AxEventErrorContext = {},
): AxEventConfigError {
  return new AxEventConfigError(`${label}: ${describeIssues([issue])}`, { ...context, issues: [issue] });
}

/** `key` under `path`, as the user writes it (`routes[2]` + `match` → `routes[2].match`). */
export function optionPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/**
 * A shape followed by rules beyond shapes: `rules` runs on a value that fits `shape` and
 * pushes issues with their full paths. Used where a route or target sits inside other options
 * (`routes[1].target`), so a cross-field problem is reported where it is.
 */
export function withRules<T>(
  shape: Shape,
  rules: (value: T, path: string, issues: AxOptionsIssue[]) => void,
): Shape {
  return {
    expected: shape.expected,
    optional: shape.optional,
    check(value, path, issues) {
      const before = issues.length;
      shape.check(value, path, issues);
      if (issues.length === before) rules(value as T, path, issues);
    },
  };
}

/** `publish` waited `publishTimeoutMs` for room in a full store and gave up. */
export class AxEventBackpressureError extends AxEventError {
  /** How long publish waited, in milliseconds. */
  readonly waitedMs: number;
  constructor(waitedMs: number, reason: string) {
    super('backpressure', `The event store stayed full for ${waitedMs} ms (${reason})`);
    this.waitedMs = waitedMs;
  }
}

/** A resume found no live continuation for its correlation in the event's identity scope. */
export class AxEventContinuationNotFoundError extends AxEventError {
  readonly kind: string;
  constructor(kind: string, context: AxEventErrorContext = {}) {
    super(
      'continuation_not_found',
      `No live continuation of kind "${kind}" in this identity scope (missing, expired, or owned by another scope)`,
      context,
    );
    this.kind = kind;
  }
}

/**
 * Whether a side effect happened is unknown. A target may throw this itself; the runtime
 * also records it for any failure after invocation on a target that is not `idempotent`.
 * A run in this state is never replayed automatically.
 */
export class AxEventOutcomeUnknownError extends AxEventError {
  constructor(message = 'The outcome of the invocation is unknown', context: AxEventErrorContext = {}) {
    super('outcome_unknown', message, context);
  }
}

/** The worker no longer holds the lease of a delivery (its fencing token is stale). */
export class AxEventLeaseLostError extends AxEventError {
  constructor(deliveryId: string) {
    super('lease_lost', `The lease on delivery ${deliveryId} was lost`, { deliveryId });
  }
}

/** The runtime or the store has been closed. */
export class AxEventClosedError extends AxEventError {
  constructor(what = 'event runtime') {
    super('closed', `The ${what} is closed`);
  }
}

/** The plain, serializable shape of an error kept in run records and dead letters. */
export interface AxEventErrorInfo {
  /** The stable code for event errors, otherwise the error's own `code` if it is a string, else `error`. */
  code: string;
  name: string;
  message: string;
}

/** Turn anything thrown into the serializable {@link AxEventErrorInfo}. */
export function toEventErrorInfo(error: unknown): AxEventErrorInfo {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return {
      code: typeof code === 'string' ? code : 'error',
      name: error.name,
      message: error.message.slice(0, 4000),
    };
  }
  return { code: 'error', name: 'Error', message: String(error).slice(0, 4000) };
}
