import { describeAnswer } from '../options/hook-answers.js';
import { linkAbort } from '../protocol/abort.js';
import {
  AxMCPAuthorizationDeniedError,
  AxMCPError,
  AxMCPTimeoutError,
  AxMCPUnsupportedError,
} from '../protocol/errors.js';
import { deepFreeze } from '../protocol/json.js';
import type { AxMCPCallToolResult, AxMCPTool } from '../protocol/messages.js';
import { assertToolArguments } from './call-arguments.js';
import type { CallSlots } from './call-slots.js';
import type { Catalog } from './catalog.js';
import type { Connection } from './connection.js';
import { type AxMCPCallOptions, callOptions } from './in-flight.js';
import { checkToolOutput } from './output-schema.js';
import type { AxMCPTaskWaitOptions } from './tasks/protocol.js';
import type { AxMCPTask, AxMCPToolCallOutcome, TaskWakers } from './tasks/task.js';
import type { Wire } from './wire.js';

/** How long an abandoned task-augmented `tools/call` may still take to tell which task it created (to cancel it). */
const TASK_CREATION_GRACE_MS = 10_000;
/** The same for a call the server may or may not turn into a task: shorter, as it may be plain work. */
const POSSIBLE_TASK_GRACE_MS = 2_000;

/** Options of {@link AxMCPClient.callTool}. */
export interface AxMCPToolCallOptions extends AxMCPCallOptions {
  /** `await` (default): wait for a task to finish; `expose`: return at once with the task. */
  taskHandling?: 'await' | 'expose';
  /** Every task status seen while awaiting. */
  onStatus?: (task: AxMCPTask) => void;
  /** Task polling interval when the server suggests none (default 1 000 ms). */
  pollIntervalMs?: number;
}

/** What tool calls need of the rest of the client. */
export interface ToolCallParts {
  connection: Connection;
  catalog: Catalog;
  taskWakers: TaskWakers;
  slots: CallSlots | undefined;
}

/**
 * Tool calls and the tasks they become: the tool looked up in the catalog, the guard
 * (`authorizeToolCall`) before anything is sent, the era's task augmentation, the output schema
 * check, and waiting for a task without ever orphaning it.
 */
export class ToolCalls {
  readonly #parts: ToolCallParts;
  readonly #connection: Connection;

  constructor(parts: ToolCallParts) {
    this.#parts = parts;
    this.#connection = parts.connection;
  }

  /** See {@link AxMCPClient.callTool}. */
  call(
    name: string,
    args: Record<string, unknown>,
    options: AxMCPToolCallOptions,
  ): Promise<AxMCPCallToolResult> {
    return this.#inSlot(async () => {
      const outcome = await this.once(name, args, options);
      if (outcome.kind === 'complete') return outcome.result;
      if (options.taskHandling === 'expose')
        return { content: [], task: outcome.task } as AxMCPCallToolResult;
      const result = await this.await(outcome.task, options);
      const tool = this.#parts.catalog.tool(name);
      if (tool) this.#checkOutput(tool, result);
      return result;
    }, options.signal);
  }

  /** See {@link AxMCPClient.callToolOutcome}. */
  outcome(
    name: string,
    args: Record<string, unknown>,
    options: AxMCPCallOptions,
  ): Promise<AxMCPToolCallOutcome> {
    return this.#inSlot(() => this.once(name, args, options), options.signal);
  }

  /** One `tools/call`, guarded and checked; `extraParams` go into its params (the draft's `task`). */
  async once(
    name: string,
    args: Record<string, unknown>,
    options: AxMCPCallOptions,
    extraParams: Record<string, unknown> = {},
  ): Promise<AxMCPToolCallOutcome> {
    const connection = this.#connection;
    const wire = await connection.wireReady(options.signal);
    const tool = await this.#findTool(name);
    assertToolArguments(tool, args, connection.where());
    const authorize = connection.options.authorizeToolCall;
    if (authorize) {
      // A frozen copy: the guard sees what the catalog says and cannot change what is sent.
      const described = deepFreeze(structuredClone(tool));
      const allowed = await authorize({
        namespace: connection.namespace,
        tool: described,
        arguments: structuredClone(args),
        annotations: described.annotations,
      });
      if (allowed !== true) {
        // Failing closed is right; leaving the caller to guess why every call is denied is not.
        const reason =
          allowed === false ? {} : { reason: `it answered ${describeAnswer(allowed)}, not true or false` };
        throw new AxMCPAuthorizationDeniedError(name, { ...connection.where(), ...reason });
      }
    }
    const params: Record<string, unknown> = { name, arguments: args, ...extraParams };
    wire.tasks.augmentToolCall(params, tool, connection.identity?.capabilities ?? {});
    // A task-augmented call creates a task; a 2026-07-28 server with the extension may make any
    // call one. The grace is what an abandoned call may still take to say which.
    const grace =
      params.task !== undefined
        ? TASK_CREATION_GRACE_MS
        : connection.tasksNegotiated()
          ? POSSIBLE_TASK_GRACE_MS
          : undefined;
    const result =
      grace !== undefined && options.signal
        ? await this.#sendKeepingTask(wire, params, options, options.signal, grace)
        : await connection.send({ method: 'tools/call', params, ...callOptions(options) });
    const outcome = wire.tasks.outcome(result);
    if (outcome.kind === 'complete') this.#checkOutput(tool, outcome.result);
    return outcome;
  }

  /** The current state of a task. */
  async getTask(taskId: string, signal?: AbortSignal): Promise<AxMCPTask> {
    return (await this.#connection.wireReady(signal)).tasks.get(taskId, signal);
  }

  async cancelTask(taskId: string, signal?: AbortSignal): Promise<void> {
    await (await this.#connection.wireReady(signal)).tasks.cancel(taskId, signal);
  }

  async provideTaskInput(
    taskId: string,
    responses: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<void> {
    await (await this.#connection.wireReady(signal)).tasks.provideInput(taskId, responses, signal);
  }

  /** Waits for a task (or the task of an id) to end and returns its tool result. */
  async waitFor(task: AxMCPTask | string, options: AxMCPTaskWaitOptions): Promise<AxMCPCallToolResult> {
    const wire = await this.#connection.wireReady(options.signal);
    const current = typeof task === 'string' ? await wire.tasks.get(task, options.signal) : task;
    return this.await(current, options);
  }

  /** Waits for a task; the statuses seen become `task_status` events; abandoning the wait cancels the task. */
  async await(task: AxMCPTask, options: AxMCPTaskWaitOptions): Promise<AxMCPCallToolResult> {
    const connection = this.#connection;
    const wire = connection.wire as Wire;
    const unwatch = this.#parts.taskWakers.watch(task.taskId);
    // Statuses seen by polling become events too, so task routes work without notifications.
    let last = '';
    const onStatus = (seen: AxMCPTask) => {
      const key = `${seen.status}:${seen.lastUpdatedAt ?? ''}`;
      if (key !== last) {
        last = key;
        connection.events.emit({
          type: 'task_status',
          namespace: connection.namespace,
          task: structuredClone(seen),
        });
      }
      options.onStatus?.(seen);
    };
    const lifetime = connection.lifetime.signal;
    const link = linkAbort(options.signal, lifetime);
    try {
      return await wire.tasks.await(task, { ...options, onStatus, signal: link.signal });
    } catch (error) {
      // Abandoning the wait abandons the task: tell the server, best effort.
      if (options.signal?.aborted) wire.tasks.cancel(task.taskId).catch(() => {});
      if (lifetime.aborted && !options.signal?.aborted) throw lifetime.reason;
      throw error instanceof AxMCPError ? error.attribute(connection.where()) : error;
    } finally {
      link.dispose();
      unwatch();
    }
  }

  #inSlot<T>(run: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    const slots = this.#parts.slots;
    if (!slots) return run();
    return slots.run(run, signal).catch((error: unknown) => {
      throw error instanceof AxMCPError ? error.attribute(this.#connection.where()) : error;
    });
  }

  #checkOutput(tool: AxMCPTool, result: AxMCPCallToolResult): void {
    if (this.#connection.options.validateToolOutput !== false)
      checkToolOutput(tool, result, this.#connection.where());
  }

  /**
   * A `tools/call` that may create a task, sent so that abandoning it never orphans the task:
   * the caller's `signal` ends the wait at once, but the request itself runs on (at most `graceMs`
   * more, then it is cancelled as usual), and a task it turns out to have created is cancelled.
   * Aborting the request instead would leave the server running a task nobody knows the id of.
   */
  async #sendKeepingTask(
    wire: Wire,
    params: Record<string, unknown>,
    options: AxMCPCallOptions,
    signal: AbortSignal,
    graceMs: number,
  ): Promise<Record<string, unknown>> {
    if (signal.aborted)
      throw new AxMCPTimeoutError('"tools/call" was aborted', { aborted: true, cause: signal.reason });
    const request = linkAbort(this.#connection.lifetime.signal);
    const sending = this.#connection.send({
      method: 'tools/call',
      params,
      ...callOptions({ ...options, signal: request.signal }),
    });
    let onAbort = () => {};
    const abandoned = new Promise<never>((_resolve, reject) => {
      onAbort = () =>
        reject(new AxMCPTimeoutError('"tools/call" was aborted', { aborted: true, cause: signal.reason }));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const result = await Promise.race([sending, abandoned]);
      request.dispose();
      return result;
    } catch (error) {
      if (!signal.aborted) {
        request.dispose();
        throw error;
      }
      const grace = setTimeout(
        () =>
          request.abort(
            new AxMCPTimeoutError('The abandoned task creation took too long', { timeoutMs: graceMs }),
          ),
        graceMs,
      );
      // The request in flight holds the process while it matters; the deadline need not.
      (grace as { unref?: () => void }).unref?.();
      sending
        .then((result) => {
          const outcome = wire.tasks.outcome(result);
          return outcome.kind === 'task' ? wire.tasks.cancel(outcome.task.taskId) : undefined;
        })
        .catch(() => {})
        .finally(() => {
          clearTimeout(grace);
          request.dispose();
        });
      throw error;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  async #findTool(name: string): Promise<AxMCPTool> {
    const { catalog } = this.#parts;
    const where = this.#connection.where();
    if (!catalog.offers('tools')) throw new AxMCPUnsupportedError('The server does not offer tools', where);
    if (!catalog.isLoaded('tools')) await catalog.load(['tools']);
    const dropped = this.#connection.wire?.droppedToolReason(name);
    if (dropped !== undefined) {
      throw new AxMCPError(
        'invalid_argument',
        `Tool "${name}" was dropped: invalid x-mcp-header (${dropped})`,
        where,
      );
    }
    let tool = catalog.tool(name);
    if (!tool) {
      await catalog.refresh('tools');
      tool = catalog.tool(name);
    }
    if (!tool) throw new AxMCPError('invalid_argument', `The server has no tool named "${name}"`, where);
    return tool;
  }
}
