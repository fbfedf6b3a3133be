import { AxMCPError, AxMCPProtocolError } from '../../protocol/errors.js';
import { isObject } from '../../protocol/json.js';
import {
  type AxMCPCallToolResult,
  type AxMCPServerCapabilities,
  parseCallToolResult,
} from '../../protocol/messages.js';
import { TASKS_EXTENSION } from '../../protocol/meta.js';
import { answerInputRequests } from '../input-requests.js';
import type { AxMCPTaskWaitOptions, TaskDeps, TaskProtocol } from './protocol.js';
import { type AxMCPTask, type AxMCPToolCallOutcome, isTerminal, parseTask } from './task.js';

/**
 * Tasks in the 2026-07-28 era (the `io.modelcontextprotocol/tasks` extension): a
 * `tools/call` may answer `resultType: "task"`; `tasks/get` returns the detailed task
 * with its input requests, result or error; input goes back through `tasks/update`.
 */
export class ModernTasks implements TaskProtocol {
  readonly #deps: TaskDeps;

  readonly draft = undefined;

  constructor(deps: TaskDeps) {
    this.#deps = deps;
  }

  extensionNegotiated(server: AxMCPServerCapabilities, declared: boolean): boolean {
    const extensions = server.extensions;
    return declared && isObject(extensions) && TASKS_EXTENSION in extensions;
  }

  augmentToolCall(): void {
    // The server decides per call; the extension is declared in every request's capabilities.
  }

  outcome(result: Record<string, unknown>): AxMCPToolCallOutcome {
    if (result.resultType === 'task') return { kind: 'task', task: parseTask(result) };
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

  async provideInput(
    taskId: string,
    responses: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<void> {
    await this.#deps.send({
      method: 'tasks/update',
      params: { taskId, inputResponses: responses },
      ...sig(signal),
    });
  }

  async await(initial: AxMCPTask, options: AxMCPTaskWaitOptions): Promise<AxMCPCallToolResult> {
    const answered = new Set<string>();
    let task = initial;
    for (;;) {
      options.onStatus?.(task);
      if (isTerminal(task.status)) return finish(task);
      if (task.status === 'input_required' && task.inputRequests) {
        const fresh = Object.keys(task.inputRequests).filter((key) => !answered.has(key));
        if (fresh.length > 0) {
          const responses = await answerInputRequests(
            task.inputRequests,
            this.#deps.fulfil,
            { namespace: this.#deps.namespace, signal: options.signal ?? new AbortController().signal },
            answered,
          );
          await this.provideInput(task.taskId, responses, options.signal);
          // Keys are unique for the task's lifetime: never answer one twice across polls.
          for (const key of fresh) answered.add(key);
          task = await this.get(task.taskId, options.signal);
          continue;
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

function finish(task: AxMCPTask): AxMCPCallToolResult {
  if (task.status === 'completed') {
    if (!task.result) {
      throw new AxMCPProtocolError(-32602, `Task ${task.taskId} completed without a result`, undefined, {
        code: 'invalid_message',
      });
    }
    return parseCallToolResult(task.result);
  }
  if (task.status === 'failed') {
    const error = task.error ?? { code: -32603, message: task.statusMessage ?? 'Task failed' };
    throw new AxMCPProtocolError(
      error.code,
      `Task ${task.taskId} failed: ${error.message.slice(0, 2000)}`,
      error.data,
      {
        code: 'task_failed',
      },
    );
  }
  throw new AxMCPError('task_cancelled', `Task ${task.taskId} was cancelled`);
}

function sig(signal: AbortSignal | undefined): { signal?: AbortSignal } {
  return signal ? { signal } : {};
}
