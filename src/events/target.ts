/**
 * Targets: what a `wake` or `resume` delivery runs. Here a target is any
 * `invoke(input, context)` function; `eventTarget(id).program(p).ai(llm)` adapts any object
 * with the structural {@link AxEventProgram} shape, so the program layer plugs in later
 * without changes to the runtime.
 */

import {
  type AxOptionsIssue,
  anyOf,
  anything,
  array,
  boolean,
  func,
  instance,
  number,
  object,
  oneOf,
  required,
  string,
} from '../options/check.js';
import type {
  AxEventCorrelation,
  AxEventEnvelope,
  AxEventIdentity,
  AxEventIngressRecord,
  AxEventTrust,
} from './envelope.js';
import { optionPath, withRules } from './errors.js';
import { type AxEventInputField, AxEventInputPlan } from './input.js';
import { type AxJsonValue, assertPlainJson, isUnsafeKey } from './json.js';
import { type AxEventPath, isEventPath } from './path.js';
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

/** A checked path built with `eventPath`. */
export const EVENT_PATH = instance('an eventPath (eventPath.data(…), eventPath.subject(), …)', isEventPath);

/** A plan built with `eventInput()` (the record form takes the plan itself, not a callback). */
export const INPUT_PLAN = instance(
  'an eventInput() plan (the callback form is for the builder: eventTarget(id).input((input) => …))',
  (value) => value instanceof AxEventInputPlan,
);

/** The shape of an {@link AxEventInputField}. */
export const INPUT_FIELD = object(
  {
    name: required(string({ nonEmpty: true })),
    type: oneOf('string', 'number', 'integer', 'boolean', 'object', 'array', 'json'),
    optional: boolean(),
    description: string(),
  },
  { expected: 'an input field { name, type?, optional?, description? }' },
);

const WAIT_FOR = object(
  {
    kind: required(string({ nonEmpty: true })),
    path: required(EVENT_PATH),
    expiresInMs: number({ min: 1 }),
    metadata: anything(),
  },
  { expected: 'a wait { kind, path, expiresInMs?, metadata? }', aliases: { expiresIn: 'expiresInMs' } },
);

const CORRELATION = object(
  { kind: required(string({ nonEmpty: true })), value: required(string({ nonEmpty: true })) },
  { expected: 'a correlation { kind, value }' },
);

/**
 * The shape of an {@link AxEventContinuationRequest}, checked on every `registerContinuation`:
 * a misspelt `expiresInMs` would leave the continuation waiting for ever.
 */
export const CONTINUATION_REQUEST = object(
  {
    correlation: required(
      anyOf(CORRELATION, array(CORRELATION, { minLength: 1, expected: 'a non-empty list of them' })),
    ),
    expiresAt: number(),
    expiresInMs: number({ min: 0 }),
    metadata: anything(),
  },
  {
    expected: 'a continuation request { correlation, expiresAt?, expiresInMs?, metadata? }',
    aliases: { expiresIn: 'expiresInMs', correlations: 'correlation' },
  },
);

/** Sinks are objects of the application's (class instances too): only `id` and `write` are read. */
const SINK = object(
  { id: required(string({ nonEmpty: true })), write: required(func('a function (output, context)')) },
  { expected: 'a sink { id, write(output, context) }', open: true },
);

const PLAN_KEYS = ['input', 'wakeInput', 'resumeInput'] as const;

/** Rules beyond shapes: unique field and sink names, plans that fit the declared fields. */
function targetRules(target: AxEventTargetDefinition, path: string, issues: AxOptionsIssue[]): void {
  const declared = new Set<string>();
  target.inputFields?.forEach((field, index) => {
    const at = `${optionPath(path, 'inputFields')}[${index}].name`;
    if (isUnsafeKey(field.name))
      issues.push({ path: at, expected: 'a safe field name', received: `'${field.name}'` });
    else if (declared.has(field.name))
      issues.push({ path: at, expected: 'a name declared once', received: `'${field.name}' again` });
    declared.add(field.name);
  });
  const plans = PLAN_KEYS.filter((key) => target[key] !== undefined);
  if (target.mapInput !== undefined && plans.length > 0) {
    issues.push({
      path: optionPath(path, 'mapInput'),
      expected: `a function or input plans, not both (${plans.join(', ')} given)`,
      received: 'a function',
    });
  }
  if (target.inputFields !== undefined) {
    for (const key of plans) {
      for (const step of target[key]!.steps) {
        if (step.kind === 'field' && !declared.has(step.name)) {
          issues.push({
            path: optionPath(path, key),
            expected: `fields among the declared inputFields (${[...declared].join(', ') || 'none'})`,
            received: `field '${step.name}'`,
          });
        }
      }
    }
  }
  target.waitFor?.forEach((wait, index) => {
    if (wait.metadata === undefined) return;
    try {
      assertPlainJson(wait.metadata, 'metadata');
    } catch (error) {
      issues.push({
        path: `${optionPath(path, 'waitFor')}[${index}].metadata`,
        expected: 'plain JSON',
        received: (error as Error).message,
      });
    }
  });
  const sinkIds = new Set<string>();
  target.sinks?.forEach((sink, index) => {
    if (sinkIds.has(sink.id)) {
      issues.push({
        path: `${optionPath(path, 'sinks')}[${index}].id`,
        expected: 'a sink id used once',
        received: `'${sink.id}' again`,
      });
    }
    sinkIds.add(sink.id);
  });
}

/** What a target definition may hold; checked once when it is built or registered. */
export const TARGET_DEFINITION = withRules<AxEventTargetDefinition>(
  object(
    {
      id: required(string({ nonEmpty: true })),
      retrySafety: oneOf('idempotent', 'unknown'),
      inputFields: array(INPUT_FIELD),
      input: INPUT_PLAN,
      wakeInput: INPUT_PLAN,
      resumeInput: INPUT_PLAN,
      mapInput: func('a function (ingress, context) => input'),
      invoke: required(func('a function (input, context)')),
      waitFor: array(WAIT_FOR),
      sinks: array(SINK),
      maxAttempts: number({ integer: true, min: 1 }),
    },
    {
      expected: 'a target definition { id, invoke, … }',
      aliases: { run: 'invoke', handler: 'invoke', fields: 'inputFields', retry: 'retrySafety' },
    },
  ),
  targetRules,
);

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
