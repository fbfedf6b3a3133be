import { AxMCPUnsupportedError } from '../protocol/errors.js';
import type { AxMCPCallToolResult } from '../protocol/messages.js';
import type { Connection } from './connection.js';
import type { AxMCPCallOptions } from './in-flight.js';
import type { DraftTasks } from './tasks/protocol.js';
import type { AxMCPTask } from './tasks/task.js';
import type { ToolCalls } from './tool-calls.js';

/**
 * The deprecated 2025-11-25 task draft's own methods (a tool called as a task, the task list,
 * the blocking `tasks/result`), in one place. On a 2026-07-28 endpoint each refuses with
 * `unsupported`: the Tasks extension has other means (`callToolOutcome`, `waitForTask`).
 */
export class DraftTaskMethods {
  readonly #connection: Connection;
  readonly #toolCalls: ToolCalls;

  constructor(connection: Connection, toolCalls: ToolCalls) {
    this.#connection = connection;
    this.#toolCalls = toolCalls;
  }

  async callToolTask(
    name: string,
    args: Record<string, unknown>,
    options: AxMCPCallOptions & { ttlMs?: number },
  ): Promise<AxMCPTask> {
    await this.#draft(options.signal);
    const outcome = await this.#toolCalls.once(name, args, options, {
      task: options.ttlMs === undefined ? {} : { ttl: options.ttlMs },
    });
    if (outcome.kind !== 'task') {
      throw new AxMCPUnsupportedError(
        `Tool "${name}" answered directly instead of creating a task`,
        this.#connection.where(),
      );
    }
    return outcome.task;
  }

  async list(cursor: string | undefined, signal?: AbortSignal) {
    return (await this.#draft(signal)).list(cursor, signal);
  }

  async result(taskId: string, signal?: AbortSignal): Promise<AxMCPCallToolResult> {
    return (await this.#draft(signal)).result(taskId, signal);
  }

  async #draft(signal?: AbortSignal): Promise<DraftTasks> {
    const draft = (await this.#connection.wireReady(signal)).tasks.draft;
    if (!draft) {
      throw new AxMCPUnsupportedError(
        'This task method exists only in the 2025-11-25 draft; the endpoint is 2026-07-28',
        this.#connection.where(),
      );
    }
    return draft;
  }
}
