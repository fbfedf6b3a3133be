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

/** One era's way of creating, observing and finishing tasks. */
export interface TaskProtocol {
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
