/**
 * Targets: what a `wake` or `resume` delivery runs. Here a target is any
 * `invoke(input, context)` function; `eventTarget(id).program(p).ai(llm)` adapts any object
 * with the structural {@link AxEventProgram} shape, so the program layer plugs in later
 * without changes to the runtime.
 */

import type {
  AxEventCorrelation,
  AxEventEnvelope,
  AxEventIdentity,
  AxEventIngressRecord,
  AxEventTrust,
} from './envelope.js';
import type { AxEventInputField, AxEventInputPlan } from './input.js';
import type { AxJsonValue } from './json.js';
import type { AxEventPath } from './path.js';
import type { AxEventAction, AxEventContinuation, AxEventRun } from './store.js';

/** Whether a target may safely run again after a failure that happened after it was invoked. */
export type AxEventRetrySafety = 'idempotent' | 'unknown';

/** What every callback run by the runtime learns about its delivery. */
export interface AxEventHandlerContext {
  readonly runId: string;
  readonly deliveryId: string;
  readonly routeId: string;
  readonly action: AxEventAction;
  readonly instanceKey: string;
  /** The normalized, frozen envelope (raw data lives here, not in the input). */
  readonly event: AxEventEnvelope;
  readonly ingress: AxEventIngressRecord;
  readonly identity: Readonly<AxEventIdentity>;
  readonly trust: AxEventTrust;
  readonly identityScope: string;
  /** 1 on the first try. */
  readonly attempt: number;
  /** Stable across retries of this delivery: pass it to side-effecting calls. */
  readonly idempotencyKey: string;
  /** The lease's fencing token; a store rejects writes made with a stale one. */
  readonly fencingToken: number;
  /** Aborted on `cancelRun`, on a lost lease, and on `close({ drain: false })`. */
  readonly abortSignal: AbortSignal;
}

/** A request to be resumed later by a correlated event from the same identity scope. */
export interface AxEventContinuationRequest {
  correlation: AxEventCorrelation | readonly AxEventCorrelation[];
  /** Absolute expiry (epoch ms). */
  expiresAt?: number;
  /** Relative expiry; ignored when `expiresAt` is given. */
  expiresInMs?: number;
  /** Plain JSON kept with the continuation; `eventPath.continuation(...)` reads it on resume. */
  metadata?: unknown;
}

/** Per-(target, identity scope, instance) state a target may keep between runs. */
export interface AxEventStateHandle {
  load(): Promise<unknown>;
  save(state: unknown): Promise<void>;
}

/** The context a target's `invoke` receives. */
export interface AxEventContext extends AxEventHandlerContext {
  readonly targetId: string;
  /** The continuation a resume found, or `null` on a wake. */
  readonly continuation: AxEventContinuation | null;
  /** Register continuations owned by this run (unique per identity scope, kind and value). */
  registerContinuation(request: AxEventContinuationRequest): Promise<AxEventContinuation[]>;
  /** Saved state of this (target, identity scope, instance). */
  readonly state: AxEventStateHandle;
}

/** What `mapInput` receives besides the ingress. */
export interface AxEventMapInputContext {
  readonly action: AxEventAction;
  readonly instanceKey: string;
  readonly continuation: AxEventContinuation | null;
}

/** A continuation a target registers on every wake, before it is invoked. */
export interface AxEventWaitFor {
  kind: string;
  /** Where the correlation value comes from. */
  path: AxEventPath;
  expiresInMs?: number;
  metadata?: unknown;
}

/** What a sink's `write` receives. */
export interface AxEventSinkContext {
  readonly run: AxEventRun;
  readonly sinkId: string;
  /** `${runId}:${sinkId}`, stable across retries. */
  readonly idempotencyKey: string;
  readonly attempt: number;
  readonly abortSignal: AbortSignal;
}

/** Where a finished run's output goes. Retried on its own; never re-runs the target. */
export interface AxEventSink {
  id: string;
  write(output: AxJsonValue | null, context: AxEventSinkContext): void | Promise<void>;
}

/** The record form of a target. */
export interface AxEventTargetDefinition {
  /** Unique among the runtime's targets. */
  id: string;
  /** Default `'unknown'`: a failure after invocation ends `outcome_unknown` and is never replayed. */
  retrySafety?: AxEventRetrySafety;
  /** Declared input fields; plan output is validated against them. */
  inputFields?: readonly AxEventInputField[];
  /** The input plan for both actions (default: project the fields of `event.data`). */
  input?: AxEventInputPlan;
  /** The plan for wakes; falls back to `input`, never to `resumeInput`. */
  wakeInput?: AxEventInputPlan;
  /** The plan for resumes; falls back to `input`, never to `wakeInput`. */
  resumeInput?: AxEventInputPlan;
  /** Map the input in code instead of a plan (not combinable with plans); unknown fields are dropped. */
  mapInput?: (ingress: AxEventIngressRecord, context: AxEventMapInputContext) => unknown | Promise<unknown>;
  invoke(input: Record<string, unknown>, context: AxEventContext): unknown | Promise<unknown>;
  /** Continuations to register on every wake, before invocation. */
  waitFor?: readonly AxEventWaitFor[];
  sinks?: readonly AxEventSink[];
  /** Overrides the runtime's `maxAttempts` for this target. */
  maxAttempts?: number;
}

/** Options `forward` receives from the runtime. */
export interface AxEventForwardOptions {
  eventContext: AxEventContext;
  abortSignal: AbortSignal;
  [option: string]: unknown;
}

/**
 * The structural shape of a program the runtime can run (the program layer's `ax()` and
 * `agent()` programs satisfy it). With `getState`/`setState`, state is restored before and
 * saved after every run, per (target, identity scope, instance).
 */
export interface AxEventProgram {
  forward(ai: unknown, input: Record<string, unknown>, options: AxEventForwardOptions): Promise<unknown>;
  getState?(): unknown;
  setState?(state: unknown): void | Promise<void>;
  /** Declared input fields, used to validate the mapped input. */
  readonly inputFields?: readonly AxEventInputField[];
}
