import { AxMCPProtocolError, RPC } from '../../protocol/errors.js';
import { isObject } from '../../protocol/json.js';
import type { JSONRPCErrorObject } from '../../protocol/jsonrpc.js';
import type { AxMCPCallToolResult } from '../../protocol/messages.js';

/** Where a task stands. The last three are terminal. */
export type AxMCPTaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

const STATUSES = new Set<string>(['working', 'input_required', 'completed', 'failed', 'cancelled']);
const TERMINAL = new Set<string>(['completed', 'failed', 'cancelled']);

/** A server-side task, in one shape for both eras. */
export interface AxMCPTask {
  taskId: string;
  status: AxMCPTaskStatus;
  statusMessage?: string;
  createdAt?: string;
  lastUpdatedAt?: string;
  /** How long the server keeps the task; `null` means unlimited. */
  ttlMs?: number | null;
  /** The server's suggested polling interval. */
  pollIntervalMs?: number;
  /** Input the task waits for (`input_required`, 2026-07-28). */
  inputRequests?: Record<string, unknown>;
  /** The tool result, once `completed` (2026-07-28 detail). */
  result?: AxMCPCallToolResult;
  /** The failure, once `failed` (2026-07-28 detail). */
  error?: JSONRPCErrorObject;
}

/** A tool call either finished or became a task. */
export type AxMCPToolCallOutcome =
  | { kind: 'complete'; result: AxMCPCallToolResult }
  | { kind: 'task'; task: AxMCPTask };

export function isTerminal(status: AxMCPTaskStatus): boolean {
  return TERMINAL.has(status);
}

/** Reads a task from either era's wire shape (`ttl`/`pollInterval` are the 2025 names). */
export function parseTask(value: unknown): AxMCPTask {
  if (!isObject(value) || typeof value.taskId !== 'string' || value.taskId === '')
    throw invalid('without a taskId');
  if (typeof value.status !== 'string' || !STATUSES.has(value.status)) {
    throw invalid(`with unknown status "${String(value.status).slice(0, 40)}"`);
  }
  const task: AxMCPTask = { taskId: value.taskId, status: value.status as AxMCPTaskStatus };
  if (typeof value.statusMessage === 'string') task.statusMessage = value.statusMessage;
  if (typeof value.createdAt === 'string') task.createdAt = value.createdAt;
  if (typeof value.lastUpdatedAt === 'string') task.lastUpdatedAt = value.lastUpdatedAt;
  const ttl = value.ttlMs !== undefined ? value.ttlMs : value.ttl;
  if (ttl === null || (typeof ttl === 'number' && ttl >= 0)) task.ttlMs = ttl;
  const poll = value.pollIntervalMs ?? value.pollInterval;
  if (typeof poll === 'number' && Number.isFinite(poll) && poll >= 0) task.pollIntervalMs = poll;
  if (isObject(value.inputRequests)) task.inputRequests = value.inputRequests;
  if (isObject(value.result)) task.result = value.result as AxMCPCallToolResult;
  if (
    isObject(value.error) &&
    typeof value.error.code === 'number' &&
    typeof value.error.message === 'string'
  ) {
    task.error = value.error as unknown as JSONRPCErrorObject;
  }
  return task;
}

function invalid(what: string): AxMCPProtocolError {
  return new AxMCPProtocolError(RPC.invalidParams, `Server sent a task ${what}`, undefined, {
    code: 'invalid_message',
  });
}

/** Per-task wake-ups, so a task notification ends a poll wait early. */
export class TaskWakers {
  readonly #wakers = new Map<string, Set<() => void>>();
  /** Called when the set of awaited task ids changes (a listen filter follows it). */
  onChange: (() => void) | undefined;

  /** Waits up to `ms`, or until `wake(taskId)`, or the signal. */
  wait(taskId: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const set = this.#wakers.get(taskId);
        set?.delete(done);
        if (set?.size === 0) this.#wakers.delete(taskId);
        resolve();
      };
      const onAbort = () => {
        done();
        reject(signal?.reason);
      };
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
      let set = this.#wakers.get(taskId);
      if (!set) this.#wakers.set(taskId, (set = new Set()));
      set.add(done);
    });
  }

  wake(taskId: string): void {
    for (const done of [...(this.#wakers.get(taskId) ?? [])]) done();
  }

  readonly #watched = new Map<string, number>();

  /** Marks a task as awaited until the returned function is called. */
  watch(taskId: string): () => void {
    const count = this.#watched.get(taskId) ?? 0;
    this.#watched.set(taskId, count + 1);
    if (count === 0) this.onChange?.();
    let watching = true;
    return () => {
      if (!watching) return;
      watching = false;
      const left = (this.#watched.get(taskId) ?? 1) - 1;
      if (left > 0) this.#watched.set(taskId, left);
      else {
        this.#watched.delete(taskId);
        this.onChange?.();
      }
    };
  }

  /** Task ids someone is awaiting. */
  ids(): string[] {
    return [...this.#watched.keys()];
  }
}
