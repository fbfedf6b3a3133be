/**
 * The host side of the actor's globals: every `mcp.<namespace>.…` path goes through the
 * client (so `authorizeToolCall`, concurrency limits, tasks and cancellation apply), every
 * `ucp.<namespace>.<operation>` through its UCP client (so `authorizeOperation` and
 * idempotency keys apply; results have payment credentials redacted), child
 * agents and host functions run with the step's abort signal, and `discover` searches the
 * callable index. Results keep their raw MCP shape; images, audio and binary contents are
 * replaced by `media:` references so base64 never reaches the prompt.
 */
import type { AxAIService } from '../../ai/types.js';
import type { AxEventContext } from '../../events/target.js';
import { AxMCPError } from '../../protocol/errors.js';
import { AxUCPError } from '../../ucp/errors.js';
import type { AxFunction } from '../functions.js';
import type { AxMCPExecutionContext } from '../mcp-context.js';
import type { AxMCPProgramEvent } from '../tool-calls.js';
import { runUCPOperation, unknownOperation } from '../ucp-context.js';
import type { AgentCallable, CallableIndex } from './callables.js';
import type { SandboxHost } from './sandbox.js';
import type { AgentLedger, AgentMCPClient } from './state.js';

/** A child agent as the host calls it. */
export interface AgentChild {
  readonly name: string | undefined;
  /** Runs the child inside the parent's execution context. */
  runAsChild(
    ai: AxAIService,
    inputs: Record<string, unknown>,
    options: {
      mcpParent: AxMCPExecutionContext;
      abortSignal: AbortSignal;
      onMCPEvent: (e: AxMCPProgramEvent) => void;
    },
  ): Promise<unknown>;
}

/** Binary content kept out of the sandbox, by reference. */
export interface AgentMedia {
  ref: string;
  type: 'image' | 'audio' | 'blob';
  mimeType: string | undefined;
  data: string;
}

/** What one run's host needs. */
export interface AgentHostOptions {
  context: AxMCPExecutionContext;
  index: CallableIndex;
  ledger: AgentLedger;
  functions: ReadonlyMap<string, AxFunction>;
  agents: ReadonlyMap<string, AgentChild>;
  ai: AxAIService;
  eventContext: AxEventContext | undefined;
  emit: (event: AxMCPProgramEvent) => void;
  /** Called with what `discover` found. */
  onDiscover: (found: AgentCallable[]) => void;
  discoverLimit: number;
}

/** The sandbox host of one run, with the media its results referenced. */
export class AgentHost implements SandboxHost {
  readonly media = new Map<string, AgentMedia>();
  readonly #options: AgentHostOptions;
  #calls = 0;

  constructor(options: AgentHostOptions) {
    this.#options = options;
  }

  async call(path: readonly string[], args: readonly unknown[], signal: AbortSignal): Promise<unknown> {
    const [root, name] = path;
    const options = this.#options;
    const callId = `agent-call-${++this.#calls}`;
    if (root === 'discover') {
      const found = options.index.search(stringOrList(args[0]), options.discoverLimit);
      options.onDiscover(found);
      return found.map(({ path: at, usage, description }) => ({ path: at, usage, description }));
    }
    if (root === 'functions' && name !== undefined) {
      const fn = options.functions.get(name) ?? fail(`functions.${name} does not exist`);
      return fn.func(objectArg(args[0]), {
        signal,
        ai: options.ai,
        mcp: options.context,
        toolCallId: callId,
        ...(options.eventContext ? { eventContext: options.eventContext } : {}),
      });
    }
    if (root === 'agents' && name !== undefined) {
      const child = options.agents.get(name) ?? fail(`agents.${name} does not exist`);
      return child.runAsChild(options.ai, objectArg(args[0]), {
        mcpParent: options.context,
        abortSignal: signal,
        onMCPEvent: options.emit,
      });
    }
    if (root === 'ucp' && name !== undefined) return this.#ucp(name, path.slice(2), args, signal, callId);
    if (root === 'mcp' && name !== undefined) {
      const client = options.context.client(name) ?? fail(notAttached(name, options.context));
      return this.#mcp(client as AgentMCPClient, path.slice(2), args, signal, callId);
    }
    return fail(`${path.join('.')} does not exist`);
  }

  async #mcp(
    client: AgentMCPClient,
    path: readonly string[],
    args: readonly unknown[],
    signal: AbortSignal,
    callId: string,
  ): Promise<unknown> {
    const ns = client.namespace;
    const { context, ledger } = this.#options;
    const [area, op] = path;
    const where = `mcp.${ns}.${path.join('.')}`;
    await context.initialize(client, signal);
    try {
      if (area === 'tools' && op !== undefined)
        return await this.#tool(client, op, objectArg(args[0]), signal, callId);
      if (area === 'prompts' && op === 'list') return (await client.inspectCatalog({ signal })).prompts;
      if (area === 'prompts' && op === 'get') {
        const prompt = await client.getPrompt(stringArg(args[0], 'a prompt name'), stringRecord(args[1]), {
          signal,
        });
        return this.#reference(prompt);
      }
      if (area === 'resources') {
        const uri = () => stringArg(args[0], 'a resource URI');
        if (op === 'list') return (await client.inspectCatalog({ signal })).resources;
        if (op === 'templates') return (await client.inspectCatalog({ signal })).resourceTemplates;
        if (op === 'read') return this.#reference(await client.readResource(uri(), { signal }));
        if (op === 'subscribe') {
          const target = uri();
          await method(client, 'acquireResourceSubscription').call(client, target, ledger.owner);
          ledger.subscribed(ns, target);
          return { subscribed: target };
        }
        if (op === 'unsubscribe') {
          const target = uri();
          await method(client, 'releaseResourceSubscription').call(client, target, ledger.owner);
          ledger.unsubscribed(ns, target);
          return { unsubscribed: target };
        }
      }
      if (area === 'tasks' && op === 'list') {
        // The 2025-11-25 draft's tasks/list; a 2026-07-28 server has none (the client says so, typed).
        const cursor = args[0] === undefined || args[0] === null ? undefined : stringArg(args[0], 'a cursor');
        return this.#reference(await method(client, 'listTasks').call(client, cursor, { signal }));
      }
      if (area === 'tasks' && (op === 'get' || op === 'cancel' || op === 'update' || op === 'result')) {
        const taskId = stringArg(args[0], 'a task id');
        if (op === 'cancel') {
          await client.cancelTask(taskId, { signal });
          ledger.task(ns, taskId, 'cancelled');
          return { cancelled: taskId };
        }
        if (op === 'update') {
          // 2026-07-28 tasks/update: answers the task's inputRequests, by key.
          const input = objectArg(args[1]);
          await method(client, 'provideTaskInput').call(client, taskId, input, { signal });
          return { updated: taskId, keys: Object.keys(input) };
        }
        if (op === 'result') {
          // The 2025-11-25 draft's tasks/result: blocks until the task ends.
          const result = await method(client, 'getTaskResult').call(client, taskId, { signal });
          ledger.task(ns, taskId, 'completed');
          return this.#reference(result);
        }
        const task = await method(client, 'getTask').call(client, taskId, { signal });
        ledger.task(ns, task.taskId, task.status);
        return this.#reference(task);
      }
      if (area === 'complete' && op === undefined) {
        const ref = objectArg(args[0]) as Parameters<AgentMCPClient['complete']>[0];
        const argument = objectArg(args[1]) as { name: string; value: string };
        const extra = args[2] === undefined || args[2] === null ? undefined : objectArg(args[2]);
        return await method(client, 'complete').call(client, ref, argument, extra, { signal });
      }
    } catch (error) {
      if (signal.aborted) throw error;
      throw new AgentCallError(`${where} failed: ${describe(error)}`, codeOf(error));
    }
    return fail(`${where} does not exist`);
  }

  async #ucp(
    ns: string,
    path: readonly string[],
    args: readonly unknown[],
    signal: AbortSignal,
    toolCallId: string,
  ): Promise<unknown> {
    const { context, index, emit } = this.#options;
    const client = context.ucpClient(ns) ?? fail(ucpNotAttached(ns, context));
    const operation = path.join('.');
    const offered = index.ucpOffered(ns) ?? [];
    if (path.length !== 2 || !(offered as readonly string[]).includes(operation)) {
      throw new AgentCallError(unknownOperation(ns, operation, offered), 'unknown_operation');
    }
    const where = `ucp.${ns}.${operation}`;
    let outcome: Awaited<ReturnType<typeof runUCPOperation>>;
    try {
      outcome = await runUCPOperation(client, operation, objectArg(args[0]), signal);
    } catch (error) {
      if (signal.aborted) throw error;
      if (error instanceof AxUCPError && error.code === 'outcome_unknown') {
        throw new AgentCallError(
          `${where}: the outcome is unknown, it may have been done. Read the resource (for example ` +
            `ucp.${ns}.checkout.get({ id })) before anything else; do not repeat the call.`,
          error.code,
        );
      }
      throw new AgentCallError(`${where} failed: ${describe(error)}`, codeOf(error));
    }
    if (outcome.kind === 'result') return outcome.value;
    if (outcome.kind === 'refused') {
      const componentId = `ucp:${ns}:${operation}`;
      emit({
        type: 'refused',
        namespace: ns,
        tool: operation,
        componentId,
        toolCallId,
        reason: outcome.reason,
      });
      throw new AgentCallError(outcome.reason, 'authorization_denied');
    }
    throw new AgentCallError(outcome.message, outcome.code);
  }

  async #tool(
    client: AgentMCPClient,
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    toolCallId: string,
  ): Promise<unknown> {
    const ns = client.namespace;
    const { index, context, ledger, emit } = this.#options;
    await index.refresh(signal);
    if (!index.tool(ns, tool)) fail(`mcp.${ns} has no tool "${tool}" (discover() finds tools)`);
    const componentId = `mcp:${ns}:${tool}`;
    const where = { namespace: ns, tool, componentId, toolCallId };
    let outcome: Awaited<ReturnType<AgentMCPClient['callToolOutcome']>>;
    try {
      outcome = await client.callToolOutcome(tool, args, {
        signal,
        onProgress: (progress) => emit({ type: 'progress', ...where, progress }),
      });
    } catch (error) {
      if (error instanceof AxMCPError && error.code === 'authorization_denied' && !signal.aborted) {
        const reason = `The host refused the call to ${componentId}; it was not run. Do not retry it.`;
        emit({ type: 'refused', ...where, reason });
        throw new Error(reason);
      }
      throw error;
    }
    if (outcome.kind === 'complete') return this.#reference(outcome.result);
    const task = outcome.task;
    emit({ type: 'task', ...where, task });
    ledger.task(ns, task.taskId, task.status);
    const forget = context.trackTask(client, task);
    const result = await client.waitForTask(task, {
      signal,
      onStatus: (status) => {
        ledger.task(ns, status.taskId, status.status);
        emit({ type: 'task', ...where, task: status });
      },
    });
    forget();
    ledger.task(ns, task.taskId, 'completed');
    return this.#reference(result);
  }

  /** A JSON copy of an MCP value with binary content replaced by `media:` references. */
  #reference(value: unknown, depth = 0): unknown {
    if (depth > 64 || typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) return value.map((item) => this.#reference(item, depth + 1));
    const record = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    const media =
      (record.type === 'image' || record.type === 'audio') && typeof record.data === 'string'
        ? { type: record.type as 'image' | 'audio', field: 'data' }
        : typeof record.blob === 'string'
          ? { type: 'blob' as const, field: 'blob' }
          : undefined;
    for (const [key, item] of Object.entries(record)) {
      if (key === '__proto__') continue;
      if (media && key === media.field) {
        const ref = `media:${this.media.size + 1}`;
        const mimeType = typeof record.mimeType === 'string' ? record.mimeType : undefined;
        this.media.set(ref, { ref, type: media.type, mimeType, data: item as string });
        out.ref = ref;
        out.bytes = Math.floor(((item as string).length * 3) / 4);
      } else out[key] = this.#reference(item, depth + 1);
    }
    return out;
  }
}

type OptionalMethod =
  | 'getTask'
  | 'provideTaskInput'
  | 'listTasks'
  | 'getTaskResult'
  | 'complete'
  | 'acquireResourceSubscription'
  | 'releaseResourceSubscription';

function method<K extends OptionalMethod>(client: AgentMCPClient, method: K): AgentMCPClient[K] {
  const fn = (client as Partial<AgentMCPClient>)[method];
  if (typeof fn !== 'function') fail(`the client of mcp.${client.namespace} cannot ${method}`);
  return fn as AgentMCPClient[K];
}

/**
 * A failed MCP operation as the actor's code sees it: the message, and the MCP error's
 * `code` (`unsupported` for a task method the server's era lacks), which the sandbox copies
 * onto the guest's error.
 */
export class AgentCallError extends Error {
  readonly code: string | undefined;

  constructor(message: string, code: string | undefined) {
    super(message);
    this.name = 'AgentCallError';
    this.code = code;
  }
}

function codeOf(error: unknown): string | undefined {
  return error instanceof AxMCPError || error instanceof AxUCPError ? error.code : undefined;
}

/** `ucp.<name> is not attached to this agent (attached: ucp.shop)`. */
function ucpNotAttached(name: string, context: AxMCPExecutionContext): string {
  const attached = context.ucpNamespaces.map((namespace) => `ucp.${namespace}`);
  const shown = JSON.stringify(name).slice(1, -1).slice(0, 80);
  return `ucp.${shown} is not attached to this agent (attached: ${attached.length > 0 ? attached.join(', ') : 'none'})`;
}

/** `mcp.<name> is not attached to this agent (attached: mcp.a, mcp.b)`. */
function notAttached(name: string, context: AxMCPExecutionContext): string {
  const attached = context.clients.map((client) => `mcp.${client.namespace}`);
  const shown = JSON.stringify(name).slice(1, -1).slice(0, 80);
  return `mcp.${shown} is not attached to this agent (attached: ${attached.length > 0 ? attached.join(', ') : 'none'})`;
}

function fail(message: string): never {
  throw new Error(message);
}

function describe(error: unknown): string {
  if (error instanceof AxMCPError || error instanceof AxUCPError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

function objectArg(value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) fail('the argument must be an object');
  return value as Record<string, unknown>;
}

function stringArg(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') fail(`expected ${what} (a string)`);
  return value;
}

function stringOrList(value: unknown): string | string[] {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value;
  return fail('discover takes a query string or a list of strings');
}

function stringRecord(value: unknown): Record<string, string> {
  const record = objectArg(value);
  const out: Record<string, string> = {};
  for (const [key, item] of Object.entries(record))
    out[key] = typeof item === 'string' ? item : JSON.stringify(item);
  return out;
}
