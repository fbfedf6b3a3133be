import { AxMCPError, AxMCPProtocolError, AxMCPUnsupportedError } from '../../protocol/errors.js';
import { isObject } from '../../protocol/json.js';
import {
  type AxMCPCallToolResult,
  type AxMCPServerCapabilities,
  type AxMCPTool,
  parseCallToolResult,
} from '../../protocol/messages.js';
import type { AxMCPTaskWaitOptions, DraftTasks, TaskDeps, TaskProtocol } from './protocol.js';
import { type AxMCPTask, type AxMCPToolCallOutcome, parseTask } from './task.js';

/**
 * The 2025-11-25 task draft: a tool whose `execution.taskSupport` is `required` is
 * called with a `task` parameter and answers `{ task }`; `tasks/get` polls, and
 * `tasks/result` blocks until the outcome (server requests for input arrive on the way).
 */
export class LegacyTasks implements TaskProtocol {
  readonly #deps: TaskDeps;

  constructor(deps: TaskDeps) {
    this.#deps = deps;
  }

  /** The draft's own methods are this object's. */
  get draft(): DraftTasks {
    return this;
  }

  extensionNegotiated(): boolean {
    return false;
  }

  augmentToolCall(
    params: Record<string, unknown>,
    tool: AxMCPTool | undefined,
    server: AxMCPServerCapabilities,
  ): void {
    const support = tool?.execution?.taskSupport;
    if (support !== 'required' || params.task !== undefined) return;
    const tasks = server.tasks;
    const callable = isObject(tasks) && isObject(tasks.requests) && isObject(tasks.requests.tools);
    if (!callable) return;
    params.task = {};
  }

  outcome(result: Record<string, unknown>): AxMCPToolCallOutcome {
    if (isObject(result.task) && result.content === undefined)
      return { kind: 'task', task: parseTask(result.task) };
    return { kind: 'complete', result: parseCallToolResult(result) };
  }

  async get(taskId: string, signal?: AbortSignal): Promise<AxMCPTask> {
    return parseTask(
      await this.#deps.send({ method: 'tasks/get', params: { taskId }, idempotent: true, ...sig(signal) }),
    );
  }

  async cancel(taskId: string, signal?: AbortSignal): Promise<void> {
    await this.#deps.send({ method: 'tasks/cancel', params: { taskId }, ...sig(signal) });
  }

  async provideInput(): Promise<void> {
    throw new AxMCPUnsupportedError('2025-11-25 tasks take input through server requests, not tasks/update');
  }

  /** The draft's `tasks/result`: blocks until the task ends and returns its outcome. */
  async result(taskId: string, signal?: AbortSignal): Promise<AxMCPCallToolResult> {
    const result = await this.#deps.send({
      method: 'tasks/result',
      params: { taskId },
      timeoutMs: 0,
      ...sig(signal),
    });
    return parseCallToolResult(result);
  }

  /** The draft's `tasks/list`. */
  async list(cursor?: string, signal?: AbortSignal): Promise<{ tasks: AxMCPTask[]; nextCursor?: string }> {
    const params = cursor === undefined ? {} : { cursor };
    const result = await this.#deps.send({ method: 'tasks/list', params, idempotent: true, ...sig(signal) });
    if (!Array.isArray(result.tasks)) {
      throw new AxMCPProtocolError(-32602, 'Server sent an invalid tasks/list result', undefined, {
        code: 'invalid_message',
      });
    }
    const tasks = result.tasks.map(parseTask);
    return typeof result.nextCursor === 'string' ? { tasks, nextCursor: result.nextCursor } : { tasks };
  }

  async await(initial: AxMCPTask, options: AxMCPTaskWaitOptions): Promise<AxMCPCallToolResult> {
    let task = initial;
    for (;;) {
      options.onStatus?.(task);
      if (task.status === 'cancelled')
        throw new AxMCPError('task_cancelled', `Task ${task.taskId} was cancelled`);
      if (task.status !== 'working') {
        // completed, failed or input_required: tasks/result carries the outcome (or the input requests).
        try {
          return await this.result(task.taskId, options.signal);
        } catch (error) {
          if (error instanceof AxMCPProtocolError && task.status === 'failed') {
            throw new AxMCPProtocolError(
              error.rpcCode,
              `Task ${task.taskId} failed: ${error.message}`,
              error.data,
              {
                code: 'task_failed',
              },
            );
          }
          throw error;
        }
      }
      await this.#deps.wakers.wait(
        task.taskId,
        task.pollIntervalMs ?? options.pollIntervalMs ?? 1000,
        options.signal,
      );
      task = await this.get(task.taskId, options.signal);
    }
  }
}

function sig(signal: AbortSignal | undefined): { signal?: AbortSignal } {
  return signal ? { signal } : {};
}
