import type { AxMCPCallToolResult, AxMCPServerCapabilities, AxMCPTool } from '../../protocol/messages.js';
import type { SendRequest } from '../in-flight.js';
import type { InputFulfiller } from '../input-requests.js';
import type { AxMCPTask, AxMCPToolCallOutcome, TaskWakers } from './task.js';

/** Options of waiting for a task. */
export interface AxMCPTaskWaitOptions {
  signal?: AbortSignal;
  /** Every status the client observes while waiting. */
  onStatus?: (task: AxMCPTask) => void;
  /** Polling interval when the server suggests none (default 1 000 ms). */
  pollIntervalMs?: number;
}

export interface TaskDeps {
  send(request: SendRequest): Promise<Record<string, unknown>>;
  fulfil: InputFulfiller;
  wakers: TaskWakers;
  namespace: string;
}

/** The deprecated 2025-11-25 task draft's own methods. */
export interface DraftTasks {
  list(cursor?: string, signal?: AbortSignal): Promise<{ tasks: AxMCPTask[]; nextCursor?: string }>;
  result(taskId: string, signal?: AbortSignal): Promise<AxMCPCallToolResult>;
}

/** One era's way of creating, observing and finishing tasks. */
export interface TaskProtocol {
  /** The 2025-11-25 draft's `tasks/list` and `tasks/result`; `undefined` in an era without them. */
  readonly draft: DraftTasks | undefined;
  /**
   * Whether the server may turn any tool call into a task and announce task statuses on the
   * notification stream (the 2026-07-28 Tasks extension, declared by both sides).
   */
  extensionNegotiated(server: AxMCPServerCapabilities, declared: boolean): boolean;
  /** Adds what the era needs to a `tools/call` of this tool (2025-11-25: the `task` parameter). */
  augmentToolCall(
    params: Record<string, unknown>,
    tool: AxMCPTool | undefined,
    server: AxMCPServerCapabilities,
  ): void;
  /** Reads a `tools/call` result as finished or as a task. */
  outcome(result: Record<string, unknown>): AxMCPToolCallOutcome;
  get(taskId: string, signal?: AbortSignal): Promise<AxMCPTask>;
  cancel(taskId: string, signal?: AbortSignal): Promise<void>;
  provideInput(taskId: string, responses: Record<string, unknown>, signal?: AbortSignal): Promise<void>;
  /** Waits for the task to end; resolves with its tool result, throws its failure. */
  await(task: AxMCPTask, options: AxMCPTaskWaitOptions): Promise<AxMCPCallToolResult>;
}
