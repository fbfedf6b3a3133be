/**
 * The reindex tasks, era-neutral: creation, the status machine (working → input_required →
 * working → completed | failed | cancelled), polling, input, change listeners, and the two
 * wire views (2026-07-28 extension DetailedTask, 2025-11-25 draft Task). The SDK has no task
 * runtime, so this is hand-written.
 */
import { randomUUID } from 'node:crypto';
import type { JsonObject } from './rpc.js';

/** Status of a task (the same five values in both eras). */
export type AxMCPDemoTaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** A server→client request a task waits for (`{method, params}` without `jsonrpc`/`id`). */
export interface TaskInputRequest {
  readonly method: string;
  readonly params: JsonObject;
}

/** A task as the demo holds it. Mutated only through {@link TaskStore}. */
export interface TaskRecord {
  readonly taskId: string;
  readonly era: 'modern' | 'legacy';
  /** The legacy session that created it (legacy tasks are visible only there). */
  readonly sessionId?: string;
  readonly scope: string;
  status: AxMCPDemoTaskStatus;
  statusMessage?: string;
  readonly createdAt: string;
  lastUpdatedAt: string;
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
  polls: number;
  result?: JsonObject;
  error?: { code: number; message: string };
  /** Outstanding input requests by key (keys are unique for the task's lifetime). */
  readonly pendingInput: Map<string, TaskInputRequest>;
  /** Input responses received, by key. */
  readonly inputResponses: Map<string, unknown>;
  inputSeq: number;
}

/** A task as `GET /control/state` and the programmatic controls report it. */
export interface AxMCPDemoTask {
  readonly taskId: string;
  readonly era: 'modern' | 'legacy';
  readonly sessionId?: string;
  readonly scope: string;
  readonly status: AxMCPDemoTaskStatus;
  readonly statusMessage?: string;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  /** `tasks/get` calls so far. */
  readonly polls: number;
  /** Keys of input requests still unanswered. */
  readonly pendingInputKeys: readonly string[];
  /** Input responses received so far, by key. */
  readonly inputResponses: Readonly<Record<string, unknown>>;
}

/** Options of {@link TaskStore}. */
export interface TaskStoreOptions {
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
  /** Complete a working task on its N-th `tasks/get`; undefined = only by control. */
  readonly completeAfterPolls?: number;
  readonly maxTasks?: number;
}

const TERMINAL = new Set<AxMCPDemoTaskStatus>(['completed', 'failed', 'cancelled']);

/** True for `completed`, `failed` and `cancelled`. */
export function isTerminal(status: AxMCPDemoTaskStatus): boolean {
  return TERMINAL.has(status);
}

/** Every task of the demo server. */
export class TaskStore {
  readonly #tasks = new Map<string, TaskRecord>();
  readonly #listeners = new Set<(task: TaskRecord) => void>();
  readonly #waiters = new Set<() => void>();
  readonly #options: TaskStoreOptions;
  #closed = false;

  constructor(options: TaskStoreOptions) {
    this.#options = options;
  }

  /** True after {@link TaskStore.close}. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Creates a working task. */
  create(input: { era: 'modern' | 'legacy'; scope: string; sessionId?: string; ttlMs?: number }): TaskRecord {
    this.#purge();
    const now = new Date().toISOString();
    const task: TaskRecord = {
      taskId: randomUUID(),
      era: input.era,
      ...(input.sessionId === undefined ? {} : { sessionId: input.sessionId }),
      scope: input.scope,
      status: 'working',
      statusMessage: `Reindexing ${input.scope}`,
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: Math.min(input.ttlMs ?? this.#options.ttlMs, this.#options.ttlMs),
      pollIntervalMs: this.#options.pollIntervalMs,
      polls: 0,
      pendingInput: new Map(),
      inputResponses: new Map(),
      inputSeq: 0,
    };
    this.#tasks.set(task.taskId, task);
    return task;
  }

  /** A task visible to a requester of `era` (legacy: only from the session that created it). */
  lookup(taskId: string, era: 'modern' | 'legacy', sessionId?: string): TaskRecord | undefined {
    const task = this.#tasks.get(taskId);
    if (task === undefined || task.era !== era) return undefined;
    if (era === 'legacy' && task.sessionId !== sessionId) return undefined;
    return task;
  }

  /** Any task by id (controls). */
  find(taskId: string): TaskRecord | undefined {
    return this.#tasks.get(taskId);
  }

  /** The most recently created task. */
  latest(): TaskRecord | undefined {
    let last: TaskRecord | undefined;
    for (const task of this.#tasks.values()) last = task;
    return last;
  }

  /** Tasks of one legacy session, oldest first. */
  listSession(sessionId: string): TaskRecord[] {
    return [...this.#tasks.values()].filter((t) => t.era === 'legacy' && t.sessionId === sessionId);
  }

  /** All tasks, oldest first. */
  all(): TaskRecord[] {
    return [...this.#tasks.values()];
  }

  /** Counts a `tasks/get`; completes a working task when the configured poll count is reached. */
  poll(task: TaskRecord): void {
    task.polls++;
    const after = this.#options.completeAfterPolls;
    if (after !== undefined && task.polls >= after && task.status === 'working') this.complete(task);
  }

  /** Completes a non-terminal task with the reindex result; false when already terminal. */
  complete(task: TaskRecord): boolean {
    if (isTerminal(task.status)) return false;
    const documents = 1_000 + task.scope.length * 37;
    task.result = {
      content: [{ type: 'text', text: `Reindexed scope "${task.scope}": ${documents} documents.` }],
      structuredContent: { scope: task.scope, documents },
    };
    task.pendingInput.clear();
    return this.#set(task, 'completed', `Reindexed ${documents} documents`);
  }

  /** Fails a non-terminal task; false when already terminal. */
  fail(task: TaskRecord, message = 'Reindex failed'): boolean {
    if (isTerminal(task.status)) return false;
    task.error = { code: -32603, message };
    task.pendingInput.clear();
    return this.#set(task, 'failed', message);
  }

  /** Cancels a non-terminal task; false when already terminal. */
  cancel(task: TaskRecord): boolean {
    if (isTerminal(task.status)) return false;
    task.pendingInput.clear();
    return this.#set(task, 'cancelled', 'Cancelled by the client');
  }

  /** Moves a non-terminal task to input_required with a new form elicitation; returns its key. */
  requestInput(task: TaskRecord): string | undefined {
    if (isTerminal(task.status)) return undefined;
    task.inputSeq++;
    const key = `confirm-${task.inputSeq}`;
    task.pendingInput.set(key, {
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message: `Confirm reindexing scope "${task.scope}"`,
        requestedSchema: {
          type: 'object',
          properties: { confirm: { type: 'boolean', description: 'Proceed with the reindex' } },
          required: ['confirm'],
        },
      },
    });
    this.#set(task, 'input_required', 'Waiting for confirmation');
    return key;
  }

  /**
   * Records input responses; unknown or already answered keys are ignored. When nothing is
   * outstanding any more, the task goes back to working. Returns the keys accepted.
   */
  provideInput(task: TaskRecord, responses: Record<string, unknown>): string[] {
    const accepted: string[] = [];
    for (const [key, value] of Object.entries(responses)) {
      if (!task.pendingInput.has(key)) continue;
      task.pendingInput.delete(key);
      task.inputResponses.set(key, value);
      accepted.push(key);
    }
    if (accepted.length > 0 && task.pendingInput.size === 0 && task.status === 'input_required') {
      this.#set(task, 'working', 'Input received');
    }
    return accepted;
  }

  /** Calls `listener` after every status change; returns the unsubscribe function. */
  onChange(listener: (task: TaskRecord) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Resolves at the next change of `task` (or when the store closes or `signal` aborts). */
  nextChange(task: TaskRecord, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (this.#closed || signal.aborted) return resolve();
      const done = () => {
        off();
        this.#waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const off = this.onChange((changed) => {
        if (changed === task) done();
      });
      this.#waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Releases every waiter and listener. */
  close(): void {
    this.#closed = true;
    for (const done of [...this.#waiters]) done();
    this.#listeners.clear();
  }

  #set(task: TaskRecord, status: AxMCPDemoTaskStatus, statusMessage: string): boolean {
    task.status = status;
    task.statusMessage = statusMessage;
    task.lastUpdatedAt = new Date().toISOString();
    for (const listener of [...this.#listeners]) {
      try {
        listener(task);
      } catch {
        // A broken listener must not stop the others.
      }
    }
    return true;
  }

  #purge(): void {
    const now = Date.now();
    for (const [id, task] of this.#tasks) {
      if (Date.parse(task.createdAt) + task.ttlMs < now) this.#tasks.delete(id);
    }
    const max = this.#options.maxTasks ?? 1_000;
    for (const id of this.#tasks.keys()) {
      if (this.#tasks.size < max) break;
      this.#tasks.delete(id);
    }
  }
}

function baseFields(task: TaskRecord): JsonObject {
  return {
    taskId: task.taskId,
    status: task.status,
    ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
  };
}

/** The 2026-07-28 Tasks-extension DetailedTask (without `resultType`; the SDK stamps it). */
export function modernTaskView(task: TaskRecord): JsonObject {
  return {
    ...baseFields(task),
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
    ...(task.status === 'input_required' ? { inputRequests: Object.fromEntries(task.pendingInput) } : {}),
    ...(task.status === 'completed' && task.result
      ? { result: { ...task.result, resultType: 'complete' } }
      : {}),
    ...(task.status === 'failed' && task.error ? { error: task.error } : {}),
  };
}

/** The flat 2026-07-28 CreateTaskResult. */
export function modernCreateResult(task: TaskRecord): JsonObject {
  return { resultType: 'task', ...baseFields(task), ttlMs: task.ttlMs, pollIntervalMs: task.pollIntervalMs };
}

/** The 2025-11-25 draft Task (flat, `ttl`/`pollInterval`). */
export function legacyTaskView(task: TaskRecord): JsonObject {
  return { ...baseFields(task), ttl: task.ttlMs, pollInterval: task.pollIntervalMs };
}

/** The public snapshot of a task. */
export function taskSnapshot(task: TaskRecord): AxMCPDemoTask {
  return {
    taskId: task.taskId,
    era: task.era,
    ...(task.sessionId === undefined ? {} : { sessionId: task.sessionId }),
    scope: task.scope,
    status: task.status,
    ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    polls: task.polls,
    pendingInputKeys: [...task.pendingInput.keys()],
    inputResponses: Object.fromEntries(task.inputResponses),
  };
}
