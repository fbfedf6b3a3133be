/**
 * The target builder: `eventTarget('triage').program(p).ai(llm).input(plan).build()` or
 * `eventTarget('notify').invoke(fn).retrySafety('idempotent').build()`.
 */

import type { AxEventIngressRecord } from './envelope.js';
import { AxEventConfigError, AxEventOutcomeUnknownError } from './errors.js';
import { type AxEventInputField, type AxEventInputPlan, indexInputFields } from './input.js';
import { assertPlainJson } from './json.js';
import { type AxEventPath, isEventPath } from './path.js';
import type {
  AxEventContext,
  AxEventMapInputContext,
  AxEventProgram,
  AxEventRetrySafety,
  AxEventSink,
  AxEventTargetDefinition,
  AxEventWaitFor,
} from './target.js';

/** Check a target definition; throws {@link AxEventConfigError}. */
export function checkTarget(target: AxEventTargetDefinition): void {
  const id = target?.id;
  if (typeof id !== 'string' || id.length === 0)
    throw new AxEventConfigError('A target needs a non-empty id');
  const fail = (message: string) => new AxEventConfigError(`Target ${id}: ${message}`, { targetId: id });
  if (typeof target.invoke !== 'function') throw fail('invoke must be a function');
  if (
    target.retrySafety !== undefined &&
    target.retrySafety !== 'idempotent' &&
    target.retrySafety !== 'unknown'
  ) {
    throw fail("retrySafety must be 'idempotent' or 'unknown'");
  }
  const hasPlan =
    target.input !== undefined || target.wakeInput !== undefined || target.resumeInput !== undefined;
  if (target.mapInput !== undefined && (hasPlan || typeof target.mapInput !== 'function')) {
    throw fail('mapInput is a function and cannot be combined with input plans');
  }
  if (target.inputFields !== undefined) indexInputFields(target.inputFields);
  for (const w of target.waitFor ?? []) {
    if (typeof w.kind !== 'string' || w.kind.length === 0 || !isEventPath(w.path)) {
      throw fail('waitFor needs a kind and an eventPath');
    }
    if (w.expiresInMs !== undefined && !(Number.isFinite(w.expiresInMs) && w.expiresInMs > 0)) {
      throw fail('waitFor expiresInMs must be a positive number');
    }
    if (w.metadata !== undefined) assertPlainJson(w.metadata, 'waitFor metadata');
  }
  const sinkIds = new Set<string>();
  for (const s of target.sinks ?? []) {
    if (typeof s.id !== 'string' || s.id.length === 0 || typeof s.write !== 'function' || sinkIds.has(s.id)) {
      throw fail('each sink needs a unique id and a write function');
    }
    sinkIds.add(s.id);
  }
  if (
    target.maxAttempts !== undefined &&
    !(Number.isSafeInteger(target.maxAttempts) && target.maxAttempts >= 1)
  ) {
    throw fail('maxAttempts must be a positive integer');
  }
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
  #forwardOptions: Record<string, unknown> = {};
  #def: Omit<Partial<AxEventTargetDefinition>, 'waitFor' | 'sinks'> = {};
  readonly #waitFor: AxEventWaitFor[] = [];
  readonly #sinks: AxEventSink[] = [];

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
    this.#def.inputFields = [...fields];
    return this;
  }

  /** The input plan for wakes and resumes. */
  input(plan: AxEventInputPlan): this {
    this.#def.input = plan;
    return this;
  }

  /** The input plan for wakes. */
  wakeInput(plan: AxEventInputPlan): this {
    this.#def.wakeInput = plan;
    return this;
  }

  /** The input plan for resumes. */
  resumeInput(plan: AxEventInputPlan): this {
    this.#def.resumeInput = plan;
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

  /** Check and return the target. */
  build(): AxEventTargetDefinition {
    const fail = (message: string) =>
      new AxEventConfigError(`Target ${this.#id}: ${message}`, { targetId: this.#id });
    if (this.#invoke && this.#program) throw fail('use invoke() or program(), not both');
    let invoke = this.#invoke;
    let inputFields = this.#def.inputFields;
    if (this.#program) {
      if (typeof this.#program.forward !== 'function') throw fail('a program needs a forward() method');
      if (!this.#hasAi) throw fail('a program target needs .ai(service)');
      invoke = programInvoke(this.#program, this.#ai, this.#forwardOptions);
      inputFields ??= this.#program.inputFields ? [...this.#program.inputFields] : undefined;
    }
    if (!invoke) throw fail('choose invoke(fn) or program(p).ai(service)');
    const target: AxEventTargetDefinition = { ...this.#def, id: this.#id, invoke };
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
