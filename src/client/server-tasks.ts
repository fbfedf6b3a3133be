/**
 * The client as a task receiver (2025-11-25): a server may send `sampling/createMessage` or
 * `elicitation/create` augmented with `task`; when the handler opted in (`tasks: true`), the
 * client answers at once with a task and runs the handler in the background, and the server
 * asks `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel`. The 2026-07-28 era has no
 * server → client requests, so this exists for the 2025-11-25 era only.
 */
import { RPC } from '../protocol/errors.js';
import { META } from '../protocol/meta.js';
import { ServerRequestError } from './server-requests.js';
import type { AxMCPTaskStatus } from './tasks/task.js';

/** Tasks kept at once; the oldest finished one goes first. */
const MAX_TASKS = 100;
/** Lifetime granted when the server asks for none, and the longest granted. */
const DEFAULT_TTL_MS = 300_000;
const MAX_TTL_MS = 3_600_000;
const POLL_INTERVAL_MS = 500;

interface Entry {
  taskId: string;
  status: AxMCPTaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttl: number;
  controller: AbortController;
  done: Promise<{ result: Record<string, unknown> } | { error: unknown }>;
  expiry: ReturnType<typeof setTimeout> | undefined;
}

/** The request methods a server may augment with a task, as declared in `tasks.requests`. */
export type ServerTaskMethod = 'sampling/createMessage' | 'elicitation/create';

export class ServerTasks {
  readonly #tasks = new Map<string, Entry>();
  readonly #onStatus: (task: Record<string, unknown>) => void;

  /** `onStatus` sends `notifications/tasks/status` (optional in the specification; we send it). */
  constructor(onStatus: (task: Record<string, unknown>) => void) {
    this.#onStatus = onStatus;
  }

  /** Starts `run` as a task and returns the `CreateTaskResult`. */
  create(
    requested: unknown,
    run: (signal: AbortSignal) => Promise<Record<string, unknown>>,
  ): Record<string, unknown> {
    this.#makeRoom();
    const ttlAsked =
      typeof requested === 'object' && requested !== null ? (requested as { ttl?: unknown }).ttl : undefined;
    const ttl =
      typeof ttlAsked === 'number' && Number.isFinite(ttlAsked) && ttlAsked > 0
        ? Math.min(ttlAsked, MAX_TTL_MS)
        : DEFAULT_TTL_MS;
    const now = new Date().toISOString();
    const controller = new AbortController();
    const entry: Entry = {
      taskId: crypto.randomUUID(),
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttl,
      controller,
      done: Promise.resolve({ result: {} }),
      expiry: undefined,
    };
    // A cancelled task ends at once, whether or not its handler heeds the signal.
    const cancelled = new Promise<never>((_resolve, reject) => {
      controller.signal.addEventListener(
        'abort',
        () => reject(new ServerRequestError(RPC.invalidParams, 'cancelled')),
        {
          once: true,
        },
      );
    });
    entry.done = Promise.race([run(controller.signal), cancelled]).then(
      (result) => {
        this.#settle(entry, controller.signal.aborted ? 'cancelled' : 'completed');
        return { result };
      },
      (error: unknown) => {
        this.#settle(entry, controller.signal.aborted ? 'cancelled' : 'failed', error);
        return { error };
      },
    );
    this.#tasks.set(entry.taskId, entry);
    return { task: describe(entry) };
  }

  get(params: Record<string, unknown>): Record<string, unknown> {
    return describe(this.#find(params));
  }

  /** Waits for the task to end; its result (or the error the request would have given). */
  async result(params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const entry = this.#find(params);
    const outcome = await entry.done;
    if (entry.status === 'cancelled')
      throw new ServerRequestError(RPC.invalidParams, `Task ${entry.taskId} was cancelled`);
    if ('error' in outcome) throw outcome.error;
    const meta = {
      ...(outcome.result._meta as Record<string, unknown> | undefined),
      [META.relatedTask]: { taskId: entry.taskId },
    };
    return { ...outcome.result, _meta: meta };
  }

  list(): Record<string, unknown> {
    return { tasks: [...this.#tasks.values()].map(describe) };
  }

  cancel(params: Record<string, unknown>): Record<string, unknown> {
    const entry = this.#find(params);
    if (entry.status === 'completed' || entry.status === 'failed' || entry.status === 'cancelled') {
      throw new ServerRequestError(RPC.invalidParams, `Task ${entry.taskId} already ended (${entry.status})`);
    }
    entry.controller.abort();
    this.#settle(entry, 'cancelled');
    return describe(entry);
  }

  /** Ends every task (the client closes). */
  close(): void {
    for (const entry of this.#tasks.values()) {
      entry.controller.abort();
      if (entry.expiry) clearTimeout(entry.expiry);
    }
    this.#tasks.clear();
  }

  #find(params: Record<string, unknown>): Entry {
    const entry = typeof params.taskId === 'string' ? this.#tasks.get(params.taskId) : undefined;
    if (!entry) throw new ServerRequestError(RPC.invalidParams, 'Failed to retrieve task: Task not found');
    return entry;
  }

  #settle(entry: Entry, status: AxMCPTaskStatus, error?: unknown): void {
    if (entry.status === 'completed' || entry.status === 'failed' || entry.status === 'cancelled') return;
    entry.status = status;
    entry.lastUpdatedAt = new Date().toISOString();
    if (status === 'failed')
      entry.statusMessage = error instanceof Error ? error.message.slice(0, 500) : 'The handler failed';
    // Kept for its lifetime from creation, then forgotten; the timer never holds the process.
    const left = Math.max(0, Date.parse(entry.createdAt) + entry.ttl - Date.now());
    entry.expiry = setTimeout(() => this.#tasks.delete(entry.taskId), left);
    (entry.expiry as { unref?: () => void }).unref?.();
    this.#onStatus(describe(entry));
  }

  #makeRoom(): void {
    if (this.#tasks.size < MAX_TASKS) return;
    for (const entry of this.#tasks.values()) {
      if (entry.status !== 'working') {
        if (entry.expiry) clearTimeout(entry.expiry);
        this.#tasks.delete(entry.taskId);
        return;
      }
    }
    throw new ServerRequestError(
      RPC.internalError,
      `The client already runs ${MAX_TASKS} tasks for this server`,
    );
  }
}

function describe(entry: Entry): Record<string, unknown> {
  return {
    taskId: entry.taskId,
    status: entry.status,
    ...(entry.statusMessage === undefined ? {} : { statusMessage: entry.statusMessage }),
    createdAt: entry.createdAt,
    lastUpdatedAt: entry.lastUpdatedAt,
    ttl: entry.ttl,
    pollInterval: POLL_INTERVAL_MS,
  };
}
