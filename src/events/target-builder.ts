/**
 * The target builder: `eventTarget('triage').program(p).ai(llm).input(plan).build()` or
 * `eventTarget('notify').invoke(fn).retrySafety('idempotent').build()`.
 */

import { kindOf } from '../options/check.js';
import type { AxEventIngressRecord } from './envelope.js';
import { AxEventOutcomeUnknownError, assertEventOptions, eventRuleError } from './errors.js';
import { type AxEventInputField, AxEventInputPlan, eventInput } from './input.js';
import type { AxEventPath } from './path.js';
import {
  type AxEventContext,
  type AxEventMapInputContext,
  type AxEventProgram,
  type AxEventRetrySafety,
  type AxEventSink,
  type AxEventTargetDefinition,
  type AxEventWaitFor,
  TARGET_DEFINITION,
} from './target.js';

/**
 * What `.input()`, `.wakeInput()` and `.resumeInput()` take: a plan, or a callback that
 * receives a fresh `eventInput()` builder and returns it. Both give the same deliveries.
 *
 * @example
 * ```ts
 * eventTarget('reindex').input((input) => input.field('uri', eventPath.data('uri'))).invoke(fn).build();
 * eventTarget('reindex').input(eventInput().field('uri', eventPath.data('uri'))).invoke(fn).build();
 * ```
 */
export type AxEventInputPlanner = AxEventInputPlan | ((input: AxEventInputPlan) => AxEventInputPlan);

const PLANNER_EXPECTED = 'an eventInput() plan, or a callback (input) => input.field(…) that returns it';

/** The plan of a planner, or the issue that says why there is none. */
function resolvePlanner(
  planner: unknown,
  path: string,
): { plan: AxEventInputPlan } | { issue: { path: string; expected: string; received: string } } {
  if (planner instanceof AxEventInputPlan) return { plan: planner };
  if (typeof planner !== 'function')
    return { issue: { path, expected: PLANNER_EXPECTED, received: kindOf(planner) } };
  const plan: unknown = planner(eventInput());
  if (plan instanceof AxEventInputPlan) return { plan };
  const received =
    plan === undefined
      ? 'a callback that returned nothing (return the builder)'
      : `a callback that returned ${kindOf(plan)}`;
  return { issue: { path, expected: PLANNER_EXPECTED, received } };
}

/** How a target is named in messages: `Target triage`. */
export function targetLabel(target: unknown): string {
  const id = (target as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'string' && id.length > 0 ? `Target ${id}` : 'Target definition';
}

/**
 * Check a target definition (record form); throws {@link AxEventConfigError} (`invalid_options`)
 * with the path of the first problem (`inputFields[1].name`, `invoke`) and, for a misspelled
 * key, the nearest known name.
 */
export function checkTarget(target: AxEventTargetDefinition): void {
  const id = (target as { id?: unknown } | null)?.id;
  assertEventOptions(
    TARGET_DEFINITION,
    target,
    targetLabel(target),
    typeof id === 'string' ? { targetId: id } : {},
  );
}

/** Per-program lock, so a stateful program never interleaves two instances' state. */
const programLocks = new WeakMap<object, Promise<unknown>>();

async function withProgramLock<T>(program: object, fn: () => Promise<T>): Promise<T> {
  const previous = programLocks.get(program) ?? Promise.resolve();
  const run = previous.then(fn, fn);
  programLocks.set(
    program,
    run.catch(() => undefined),
  );
  return run;
}

/**
 * Adapt a structural program to a target's `invoke`: restore state, call
 * `forward(ai, input, { ...forwardOptions, eventContext, abortSignal })`, save state. A
 * state save that fails after `forward` succeeded is an unknown outcome.
 */
export function programInvoke(
  program: AxEventProgram,
  ai: unknown,
  forwardOptions: Record<string, unknown> = {},
): AxEventTargetDefinition['invoke'] {
  const stateful = typeof program.getState === 'function' && typeof program.setState === 'function';
  return (input, context: AxEventContext) => {
    const call = () =>
      program.forward(ai, input, {
        ...forwardOptions,
        eventContext: context,
        abortSignal: context.abortSignal,
      });
    if (!stateful) return call();
    return withProgramLock(program, async () => {
      const saved = await context.state.load();
      if (saved !== undefined) await program.setState?.(saved);
      const output = await call();
      try {
        await context.state.save(program.getState?.());
      } catch (cause) {
        throw new AxEventOutcomeUnknownError('The program ran but its state could not be saved', { cause });
      }
      return output;
    });
  };
}

/** Builds an {@link AxEventTargetDefinition}. */
export class AxEventTargetBuilder {
  readonly #id: string;
  #invoke?: AxEventTargetDefinition['invoke'];
  #program?: AxEventProgram;
  #ai?: unknown;
  #hasAi = false;
  #forwardOptions: Record<string, unknown> | undefined;
  #def: Omit<Partial<AxEventTargetDefinition>, 'waitFor' | 'sinks'> = {};
  readonly #waitFor: AxEventWaitFor[] = [];
  readonly #sinks: AxEventSink[] = [];
  readonly #planners: Partial<Record<'input' | 'wakeInput' | 'resumeInput', unknown>> = {};

  constructor(id: string) {
    this.#id = id;
  }

  /** Run this function. */
  invoke(fn: AxEventTargetDefinition['invoke']): this {
    this.#invoke = fn;
    return this;
  }

  /** Run this program's `forward` (requires `.ai(...)`). */
  program(program: AxEventProgram): this {
    this.#program = program;
    return this;
  }

  /** The AI service handed to the program's `forward`. */
  ai(ai: unknown): this {
    this.#ai = ai;
    this.#hasAi = true;
    return this;
  }

  /** Extra options passed to every `forward`. */
  forwardOptions(options: Record<string, unknown>): this {
    this.#forwardOptions = { ...options };
    return this;
  }

  /** Declared input fields (a program's own `inputFields` are used when not given). */
  inputFields(fields: readonly AxEventInputField[]): this {
    this.#def.inputFields = Array.isArray(fields) ? [...fields] : fields;
    return this;
  }

  /**
   * The input plan for wakes and resumes: a plan, or `(input) => input.field(…)` (see
   * {@link AxEventInputPlanner}). Anything else is refused at `build()`.
   */
  input(plan: AxEventInputPlanner): this {
    this.#planners.input = plan;
    return this;
  }

  /** The input plan for wakes (a plan or a callback, as for {@link input}). */
  wakeInput(plan: AxEventInputPlanner): this {
    this.#planners.wakeInput = plan;
    return this;
  }

  /** The input plan for resumes (a plan or a callback, as for {@link input}). */
  resumeInput(plan: AxEventInputPlanner): this {
    this.#planners.resumeInput = plan;
    return this;
  }

  /** Map input in code instead of a plan. */
  mapInput(fn: (ingress: AxEventIngressRecord, context: AxEventMapInputContext) => unknown): this {
    this.#def.mapInput = fn;
    return this;
  }

  /** Register a continuation of `kind`, correlated by the value at `path`, on every wake. */
  waitFor(kind: string, path: AxEventPath, options: { expiresInMs?: number; metadata?: unknown } = {}): this {
    this.#waitFor.push({ kind, path, ...options });
    return this;
  }

  /** Whether a failure after invocation may be retried. */
  retrySafety(safety: AxEventRetrySafety): this {
    this.#def.retrySafety = safety;
    return this;
  }

  /** Attempts before dead-lettering (overrides the runtime's `maxAttempts`). */
  maxAttempts(n: number): this {
    this.#def.maxAttempts = n;
    return this;
  }

  /** Send each successful output to this sink. */
  sink(sink: AxEventSink): this {
    this.#sinks.push(sink);
    return this;
  }

  /**
   * Check and return the target: builder rules first (one of `invoke`/`program`, `.ai()` with
   * a program, plans or callbacks that return plans), then the record check `eventRuntime()`
   * applies to targets given as records. Throws {@link AxEventConfigError} (`invalid_options`)
   * with the path.
   */
  build(): AxEventTargetDefinition {
    const label = targetLabel({ id: this.#id });
    const context = { targetId: this.#id };
    const fail = (path: string, expected: string, received: string) =>
      eventRuleError(label, { path, expected, received }, context);
    if (this.#invoke && this.#program) throw fail('program', 'invoke(fn) or program(p), not both', 'both');
    let invoke = this.#invoke;
    let inputFields = this.#def.inputFields;
    if (this.#program) {
      if (typeof this.#program.forward !== 'function')
        throw fail('program', 'a program with a forward(ai, input, options) method', kindOf(this.#program));
      if (!this.#hasAi) throw fail('ai', 'an AI service: a program target needs .ai(service)', 'nothing');
      invoke = programInvoke(this.#program, this.#ai, this.#forwardOptions);
      inputFields ??= this.#program.inputFields ? [...this.#program.inputFields] : undefined;
    } else if (this.#hasAi || this.#forwardOptions !== undefined) {
      const what = this.#hasAi ? 'ai' : 'forwardOptions';
      throw fail(what, `nothing: ${what}() is for program(p) targets`, 'a value');
    }
    if (!invoke) throw fail('invoke', 'invoke(fn) or program(p).ai(service)', 'nothing');
    const target: AxEventTargetDefinition = { ...this.#def, id: this.#id, invoke };
    for (const key of ['input', 'wakeInput', 'resumeInput'] as const) {
      if (!Object.hasOwn(this.#planners, key)) continue;
      const resolved = resolvePlanner(this.#planners[key], key);
      if ('issue' in resolved) throw eventRuleError(label, resolved.issue, context);
      target[key] = resolved.plan;
    }
    if (inputFields) target.inputFields = inputFields;
    if (this.#waitFor.length > 0) target.waitFor = [...this.#waitFor];
    if (this.#sinks.length > 0) target.sinks = [...this.#sinks];
    checkTarget(target);
    return Object.freeze(target);
  }
}

/** Start a target. */
export function eventTarget(id: string): AxEventTargetBuilder {
  return new AxEventTargetBuilder(id);
}
