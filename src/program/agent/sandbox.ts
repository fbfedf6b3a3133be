/**
 * The sandbox: QuickJS compiled to WebAssembly (`quickjs-emscripten-core` with the
 * release-sync build, whose `.wasm` ships inside the npm package). Each session has its
 * own WebAssembly instance, runtime and context, so nothing is shared between sessions and
 * closing one frees everything it had. The actor's code sees only the globals of
 * `guest.ts`: no host globals, network, file system, timers or module loading. Values
 * cross the boundary as JSON text.
 *
 * Host functions return promises (the code awaits them), which keeps `Promise.all` and
 * `await` anywhere working; the step's time limit covers the awaited calls. A step that
 * runs out of time, memory or stack ends with an error in its result, never a crash: a
 * runtime that cannot be trusted afterwards is replaced by a fresh one (`reset`).
 */
import type { QuickJSContext, QuickJSDeferredPromise, QuickJSHandle } from 'quickjs-emscripten-core';
import { AxProgramError } from '../errors.js';
import { type GuestShape, RESERVED_GLOBALS } from './guest.js';
import { type Instance, openInstance } from './sandbox-instance.js';
import type { SandboxLimits } from './sandbox-limits.js';
import { prepareStep } from './step-code.js';

export {
  type AxAgentSandboxLimits,
  DEFAULT_LIMITS,
  SANDBOX_LIMITS,
  type SandboxLimits,
} from './sandbox-limits.js';

/** What the sandbox asks of its host: the asynchronous operations behind the globals. */
export interface SandboxHost {
  /** Runs `mcp.…`, `agents.…`, `functions.…` or `discover`; the result must be JSON. */
  call(path: readonly string[], args: readonly unknown[], signal: AbortSignal): Promise<unknown>;
}

/** How one step ended. */
export interface SandboxStepResult {
  /** Console output, capped. */
  output: string;
  /** The uncaught error or the limit that ended the step. */
  error?: string;
  limit?: 'time' | 'memory' | 'stack';
  /** The runtime was replaced: variables of earlier steps are gone. */
  reset?: boolean;
  final?: { task: unknown; evidence: unknown };
  clarification?: { question: string };
  /** Names carried to later steps. */
  kept: string[];
}

/** How a step ended, before its console output and signals are added. */
type StepEnd = Omit<SandboxStepResult, 'output' | 'final' | 'clarification' | 'kept'> & { kept?: string[] };

/** Largest JSON text a host call may hand into the sandbox. */
const MAX_RESULT_CHARS = 4 * 1024 * 1024;

interface PendingCall {
  deferred: QuickJSDeferredPromise;
  abort: AbortController;
}

/**
 * A persistent sandbox session: globals defined by one step stay for the next. Create
 * with {@link SandboxSession.open}; `close()` frees the WebAssembly instance.
 */
export class SandboxSession {
  readonly #host: SandboxHost;
  readonly #limits: SandboxLimits;
  #shape: GuestShape;
  #instance: Instance | undefined;
  readonly #pending = new Set<PendingCall>();
  #wake: (() => void) | undefined;
  #output: string[] = [];
  #outputChars = 0;
  #signals: Pick<SandboxStepResult, 'final' | 'clarification'> = {};
  #closed = false;
  #running = false;

  private constructor(host: SandboxHost, limits: SandboxLimits, shape: GuestShape) {
    this.#host = host;
    this.#limits = limits;
    this.#shape = shape;
  }

  /** Starts a session (loads the WebAssembly module and installs the globals). */
  static async open(
    host: SandboxHost,
    limits: SandboxLimits,
    shape: Omit<GuestShape, 'reserved' | 'maxLogChars'>,
  ): Promise<SandboxSession> {
    const session = new SandboxSession(host, limits, {
      ...shape,
      reserved: RESERVED_GLOBALS,
      maxLogChars: limits.maxOutputChars,
    });
    session.#instance = await session.#start();
    return session;
  }

  /** Replaces the callable tools of the namespaces given (after a catalog change). */
  setTools(namespaces: Record<string, string[]>): void {
    this.#shape = { ...this.#shape, namespaces: { ...this.#shape.namespaces, ...namespaces } };
    const instance = this.#instance;
    if (!instance) return;
    const { context } = instance;
    const text = context.newString(JSON.stringify(namespaces));
    const result = context.callMethod(instance.control, 'setTools', [text]);
    text.dispose();
    (result.error ?? result.value).dispose();
  }

  /** Runs one step. Limits end the step with an error; an abort of `signal` throws. */
  async run(code: string, signal: AbortSignal): Promise<SandboxStepResult> {
    if (this.#closed || !this.#instance) throw new AxProgramError('closed', 'The sandbox session is closed');
    if (this.#running)
      throw new AxProgramError('invalid_options', 'A sandbox session runs one step at a time');
    signal.throwIfAborted();
    this.#running = true;
    try {
      return await this.#runStep(this.#instance, code, signal);
    } finally {
      this.#running = false;
      if (this.#closed) this.#reset();
    }
  }

  async #runStep(instance: Instance, code: string, signal: AbortSignal): Promise<SandboxStepResult> {
    this.#output = [];
    this.#outputChars = 0;
    this.#signals = {};
    const { context } = instance;
    instance.deadline = Date.now() + this.#limits.stepTimeoutMs;
    instance.aborting = false;
    const onAbort = () => {
      instance.aborting = true;
      this.#wake?.();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.#limits.stepTimeoutMs);
    });
    let result: StepEnd = {};
    try {
      const evaluated = context.evalCode(prepareStep(code).source, 'step.js', {
        type: 'module',
        strict: true,
      });
      if (evaluated.error) {
        result = this.#failure(context.dump(evaluated.error), instance);
        evaluated.error.dispose();
      } else {
        result = await this.#settle(instance, evaluated.value, timeout, signal);
      }
    } catch (error) {
      if (signal.aborted) {
        this.#reset();
        throw new AxProgramError('aborted', 'The run was aborted', { cause: signal.reason });
      }
      if (!(error instanceof RangeError || error instanceof WebAssembly.RuntimeError)) throw error;
      result = { error: 'RangeError: the step exhausted the host stack', limit: 'stack' };
      instance.broken = true;
      await this.#replace();
      result.reset = true;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      instance.deadline = Number.POSITIVE_INFINITY;
    }
    if (signal.aborted) {
      this.#reset();
      throw new AxProgramError('aborted', 'The run was aborted', { cause: signal.reason });
    }
    if (this.#closed) throw new AxProgramError('closed', 'The sandbox session was closed during the step');
    if (result.limit === 'time' && !result.reset) {
      this.#abandonPending();
      if (!this.#drain(instance)) {
        await this.#replace();
        result.reset = true;
      }
    }
    const output = this.#output.join('\n');
    return { output, ...result, ...this.#signals, kept: result.kept ?? [] };
  }

  /** Frees the WebAssembly instance; pending calls are aborted, a running step ends. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (!this.#running) {
      this.#reset();
      return;
    }
    // The running step stops at its next check and frees the instance itself.
    if (this.#instance) this.#instance.aborting = true;
    this.#abandonPending();
    this.#wake?.();
  }

  /** Waits until the step's module promise settles, running jobs as host calls finish. */
  async #settle(
    instance: Instance,
    handle: QuickJSHandle,
    timeout: Promise<void>,
    signal: AbortSignal,
  ): Promise<StepEnd> {
    const { context, runtime } = instance;
    let timedOut = false;
    timeout.then(() => {
      timedOut = true;
      instance.deadline = 0;
      this.#wake?.();
    });
    try {
      for (;;) {
        if (signal.aborted || this.#closed) return { error: 'The step was aborted' };
        const jobs = runtime.executePendingJobs();
        if (jobs.error) {
          const failure = context.dump(jobs.error);
          jobs.error.dispose();
          if (isInterrupted(failure) || isResourceError(failure)) return this.#failure(failure, instance);
        }
        const state = context.getPromiseState(handle);
        if (state.type === 'fulfilled') {
          if (state.notAPromise) return { kept: this.#keep(instance, handle) };
          const kept = this.#keep(instance, state.value);
          state.value.dispose();
          return { kept };
        }
        if (state.type === 'rejected') {
          const failure = context.dump(state.error);
          state.error.dispose();
          return this.#failure(failure, instance);
        }
        if (signal.aborted) return {};
        if (timedOut || Date.now() > instance.deadline) return this.#timeLimit();
        if (this.#pending.size === 0 && !runtime.hasPendingJob()) {
          return { error: 'The step awaits a promise that can never settle (nothing is pending)' };
        }
        if (!runtime.hasPendingJob()) await new Promise<void>((resolve) => (this.#wake = resolve));
        this.#wake = undefined;
      }
    } finally {
      handle.dispose();
    }
  }

  #timeLimit(): StepEnd {
    return {
      error: `The step exceeded its time limit of ${this.#limits.stepTimeoutMs} ms`,
      limit: 'time',
    };
  }

  #failure(failure: unknown, instance: Instance): StepEnd {
    if (isInterrupted(failure)) {
      return instance.aborting ? { error: 'The step was aborted' } : this.#timeLimit();
    }
    const text = describeError(failure);
    if (/out of memory|string too long|allocation failed/i.test(text)) {
      return {
        error: `${text} (the runtime's memory limit is ${Math.round(this.#limits.memoryLimitBytes / 1048576)} MiB)`,
        limit: 'memory',
      };
    }
    if (/stack overflow|call stack size/i.test(text)) return { error: text, limit: 'stack' };
    return { error: text };
  }

  /** Copies the step's exports to globals; returns their names. */
  #keep(instance: Instance, exports: QuickJSHandle): string[] {
    const { context } = instance;
    if (context.typeof(exports) !== 'object') return [];
    const result = context.callMethod(instance.control, 'keep', [exports]);
    if (result.error) {
      result.error.dispose();
      return [];
    }
    const text = context.getString(result.value);
    result.value.dispose();
    return JSON.parse(text) as string[];
  }

  /** Runs leftover jobs of an interrupted step with the interrupt raised; false if some remain. */
  #drain(instance: Instance): boolean {
    instance.deadline = 0;
    try {
      for (let round = 0; round < 100 && instance.runtime.hasPendingJob(); round++) {
        const jobs = instance.runtime.executePendingJobs(1000);
        jobs.error?.dispose();
      }
      return !instance.runtime.hasPendingJob();
    } catch {
      return false;
    } finally {
      instance.deadline = Number.POSITIVE_INFINITY;
    }
  }

  /** Host calls of an abandoned step: aborted, and their promises never settle in the guest. */
  #abandonPending(): void {
    for (const call of this.#pending) {
      call.abort.abort(new AxProgramError('aborted', 'The step ended'));
      try {
        call.deferred.dispose();
      } catch {
        // already disposed
      }
    }
    this.#pending.clear();
  }

  #reset(): void {
    this.#abandonPending();
    this.#instance?.dispose();
    this.#instance = undefined;
  }

  async #replace(): Promise<void> {
    this.#reset();
    this.#instance = await this.#start();
  }

  #start(): Promise<Instance> {
    return openInstance(this.#limits, this.#shape, {
      call: (context, pathText, argsText) => this.#call(context, pathText, argsText),
      log: (level, text) => this.#log(level, text),
      signal: (kind, text) => this.#signal(kind, text),
    });
  }

  #call(context: QuickJSContext, pathText: QuickJSHandle, argsText: QuickJSHandle): QuickJSHandle {
    const deferred = context.newPromise();
    const pending: PendingCall = { deferred, abort: new AbortController() };
    this.#pending.add(pending);
    const settle = (fn: () => void) => {
      if (!this.#pending.delete(pending)) return;
      fn();
      deferred.dispose();
      this.#wake?.();
    };
    let calling: Promise<unknown>;
    try {
      const path = JSON.parse(context.getString(pathText)) as string[];
      let args: unknown[];
      try {
        args = parseGuestJSON(context.getString(argsText));
      } catch (error) {
        throw new TypeError(`${path.join('.')} was not called: ${(error as Error).message}`);
      }
      calling = this.#host.call(path, args, pending.abort.signal);
    } catch (error) {
      // Refused before any host work: the promise is rejected now, but its handle is what this
      // function returns, and QuickJS frees a returned handle itself once it holds its own
      // reference — disposing it here (as `settle` does) would hand back a dead handle.
      this.#pending.delete(pending);
      rejectWith(context, deferred, error);
      return deferred.handle;
    }
    calling.then(
      (value) =>
        settle(() => {
          let text: string | undefined;
          try {
            text = value === undefined ? undefined : JSON.stringify(value);
          } catch (error) {
            rejectWith(
              context,
              deferred,
              new TypeError(`The result is not JSON: ${(error as Error).message}`),
            );
            return;
          }
          if (text !== undefined && text.length > MAX_RESULT_CHARS) {
            rejectWith(
              context,
              deferred,
              new RangeError(`The result is too large (${text.length} characters)`),
            );
            return;
          }
          if (text === undefined) deferred.resolve();
          else {
            const handle = context.newString(text);
            deferred.resolve(handle);
            handle.dispose();
          }
        }),
      (error: unknown) => settle(() => rejectWith(context, deferred, error)),
    );
    return deferred.handle;
  }

  #log(level: string, text: string): void {
    const max = this.#limits.maxOutputChars;
    if (this.#outputChars >= max) return;
    const line = level === 'log' || level === 'info' || level === 'debug' ? text : `[${level}] ${text}`;
    const room = max - this.#outputChars;
    this.#output.push(
      line.length > room ? `${line.slice(0, room)}… [output truncated at ${max} characters]` : line,
    );
    this.#outputChars += line.length + 1;
  }

  #signal(kind: string, text: string): void {
    const value = parseGuestJSON(text) as unknown as Record<string, unknown>;
    if (kind === 'final') this.#signals.final = { task: value.task, evidence: value.evidence };
    else if (kind === 'clarification') this.#signals.clarification = { question: String(value.question) };
  }
}

function rejectWith(context: QuickJSContext, deferred: QuickJSDeferredPromise, error: unknown): void {
  // A message made from an error's `String()` starts with `Error: `: the guest's own error
  // name says it already, so it is not repeated (`Error: Error: …` in the actor's view).
  const message = (error instanceof Error ? error.message : String(error)).replace(/^(?:Error: )+/, '');
  const handle = context.newError({ name: 'Error', message: message.slice(0, 2000) });
  // A typed failure keeps its stable code (`error.code === 'unsupported'` in the actor's code).
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[a-z][a-z0-9_]{0,63}$/.test(code)) {
    context.newString(code).consume((value) => context.setProp(handle, 'code', value));
  }
  deferred.reject(handle);
  handle.dispose();
}

/** Parses JSON from the guest; keys that could reach a prototype are refused. */
export function parseGuestJSON(text: string): unknown[] {
  return JSON.parse(text, (key, value) => {
    if (key === '__proto__') throw new TypeError('"__proto__" cannot be used as a key');
    return value;
  });
}

function isInterrupted(failure: unknown): boolean {
  if (typeof failure !== 'object' || failure === null) return false;
  const { name, message } = failure as { name?: unknown; message?: unknown };
  return name === 'InternalError' && message === 'interrupted';
}

function isResourceError(failure: unknown): boolean {
  return /out of memory|stack overflow/i.test(describeError(failure));
}

/** `Name: message (step.js:line:column)` from a dumped QuickJS error. */
export function describeError(failure: unknown): string {
  if (typeof failure !== 'object' || failure === null) return `Uncaught ${String(failure).slice(0, 500)}`;
  const { name, message, stack } = failure as { name?: unknown; message?: unknown; stack?: unknown };
  const head = `${typeof name === 'string' ? name : 'Error'}: ${typeof message === 'string' ? message : ''}`;
  const where = typeof stack === 'string' ? /step\.js:(\d+):(\d+)/.exec(stack) : null;
  return where ? `${head} (line ${where[1]})` : head;
}
