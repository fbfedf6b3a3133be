/**
 * Talking to the studio server: JSON over same-origin fetch (the token travels in the
 * HttpOnly cookie the first load set), and the one SSE stream, whose batches land in bounded
 * buffers here and are drawn at most once per animation frame by whoever listens.
 */

export interface StudioError {
  name?: string;
  code?: string;
  message: string;
}

export interface EventRecord {
  seq: number;
  at: number;
  event: { id?: string; source?: string; type?: string; subject?: string; time?: string; data?: unknown };
  dataBytes?: number;
  identity: Record<string, unknown>;
  trust: string;
  correlation: unknown[];
  partitionKey?: string;
  receipt?: { duplicate: boolean; deliveryIds: string[] };
  error?: StudioError;
  decisions: { routeId: string; matches: boolean; reason?: { code: string; message: string } }[] | null;
  explainSkipped?: boolean;
}

export interface ResourceUpdate {
  at: number;
  namespace: string;
  uri: string;
  eventId?: string;
}

export interface Lifecycle {
  at: number;
  namespace: string;
  state: string;
  resumed?: boolean;
  error?: string;
}

/** A progress notification or a task status of a call the page started with a `callId`. */
export interface CallProgress {
  progress: number;
  total?: number;
  message?: string;
}

export interface TaskInputRequest {
  method?: string;
  params?: { mode?: string; message?: string; requestedSchema?: ElicitationSchema };
}

export interface TaskStatus {
  taskId: string;
  status: string;
  statusMessage?: string;
  inputRequests?: Record<string, TaskInputRequest>;
}

/** The JSON Schema subset a form elicitation may ask for: flat properties of simple types. */
export interface ElicitationSchema {
  type?: string;
  properties?: Record<string, FieldSchema>;
  required?: string[];
}

export interface FieldSchema {
  type?: string | string[];
  enum?: unknown[];
  title?: string;
  description?: string;
  default?: unknown;
}

/** A form elicitation from a server, waiting for the page's answer. */
export interface Elicitation {
  id: string;
  namespace: string;
  message: string;
  requestedSchema?: ElicitationSchema;
  /** When it is answered `cancel` if nobody answers (ms since the epoch). */
  expiresAt?: number;
  /** The task that asks, when the server said so. */
  taskId?: string;
}

/** What the stream told about one call: its latest progress and every task status, in order. */
export interface CallState {
  progress?: CallProgress;
  tasks: TaskStatus[];
}

type StreamItem =
  | { kind: 'event'; record: EventRecord }
  | { kind: 'update'; update: ResourceUpdate }
  | { kind: 'lifecycle'; lifecycle: Lifecycle }
  | { kind: 'catalog'; namespace: string; revision: number }
  | { kind: 'call'; callId: string; namespace: string; state: 'progress'; progress: CallProgress }
  | { kind: 'call'; callId: string; namespace: string; state: 'task'; task: TaskStatus }
  | ({ kind: 'elicitation' } & Elicitation)
  | { kind: 'elicitation_settled'; id: string; namespace: string; action: string; by: string }
  | { kind: 'revision'; namespace: string; revision: number };

export class APIError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function parse<T>(response: Response): Promise<T> {
  const body = (await response.json().catch(() => ({}))) as { error?: { message?: string } };
  if (!response.ok) throw new APIError(response.status, body.error?.message ?? `HTTP ${response.status}`);
  return body as T;
}

export function get<T>(path: string): Promise<T> {
  return fetch(`/api/${path}`, { credentials: 'same-origin' }).then((r) => parse<T>(r));
}

export function post<T>(path: string, body: unknown = {}): Promise<T> {
  return fetch(`/api/${path}`, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', 'x-ax-studio': '1' },
    body: JSON.stringify(body),
  }).then((r) => parse<T>(r));
}

export const seg = (value: string): string => encodeURIComponent(value);

/** True when the studio server has no such route (an older server than this page). */
export const missingRoute = (error: unknown): boolean =>
  error instanceof APIError && error.status === 404 && error.message === 'not found';

/** What an operation against an MCP server answers: failures on the MCP side are not HTTP errors. */
export type OperationReply<T = Record<string, unknown>> =
  | { ok: true; result: T; ms: number }
  | { ok: false; error: StudioError; ms: number };

const MAX_EVENTS = 1000;
const MAX_LIFECYCLE = 200;
const MAX_CALLS = 50;
const MAX_TASK_STATES = 100;
const MAX_ELICITATIONS = 50;

/**
 * What the stream has brought so far, bounded, and who wants to know. Buffers are newest
 * first; listeners run at most once per animation frame however many batches arrived.
 */
export class LiveState {
  events: EventRecord[] = [];
  updates: ResourceUpdate[] = [];
  lifecycle: Lifecycle[] = [];
  /** The calls this page started, by `callId` (the latest few). */
  readonly calls = new Map<string, CallState>();
  /** Form elicitations waiting for an answer. */
  elicitations: Elicitation[] = [];
  /** The latest catalog revision each client announced. */
  readonly catalogs = new Map<string, number>();
  /** How many of each arrived in all (the buffers above keep only the latest). */
  readonly received = { events: 0, updates: 0, lifecycle: 0, catalog: 0 };
  dropped = 0;
  connected = false;
  /** Grows by one per drawn frame with news: a cheap "did anything change" for views. */
  version = 0;
  readonly #listeners = new Set<() => void>();
  readonly #tasksShown = new Map<string, number>();
  #frame = 0;
  #newestSeq = -1;
  #source: EventSource | undefined;

  start(): void {
    this.#source = new EventSource('/api/events');
    this.#source.onopen = () => {
      this.connected = true;
      this.#changed();
    };
    this.#source.onerror = () => {
      this.connected = false;
      this.#changed();
    };
    this.#source.onmessage = (message) => {
      const batch = JSON.parse(message.data as string) as { items: StreamItem[]; dropped: number };
      this.take(batch.items, batch.dropped);
    };
  }

  /** One batch of the stream: each buffer is cut back once per batch, not once per item. */
  take(items: readonly StreamItem[], dropped = 0): void {
    this.dropped += dropped;
    const events: EventRecord[] = [];
    const updates: ResourceUpdate[] = [];
    const lifecycle: Lifecycle[] = [];
    for (const item of items) {
      if (item.kind === 'event') {
        // A reconnect replays the recent past; seq only grows.
        if (item.record.seq <= this.#newestSeq) continue;
        this.#newestSeq = item.record.seq;
        events.push(item.record);
        this.received.events++;
      } else if (item.kind === 'update') {
        updates.push(item.update);
        this.received.updates++;
      } else if (item.kind === 'lifecycle') {
        lifecycle.push(item.lifecycle);
        this.received.lifecycle++;
      } else if (item.kind === 'catalog' || item.kind === 'revision') {
        this.catalogs.set(item.namespace, item.revision);
        this.received.catalog++;
      } else if (item.kind === 'call') {
        this.#call(item);
      } else if (item.kind === 'elicitation') {
        const { kind: _kind, ...elicitation } = item;
        this.elicitations = [...this.elicitations.filter((e) => e.id !== item.id), elicitation].slice(
          -MAX_ELICITATIONS,
        );
      } else if (item.kind === 'elicitation_settled') {
        // Answered elsewhere, timed out, or withdrawn by the server.
        this.elicitations = this.elicitations.filter((e) => e.id !== item.id);
      }
    }
    if (events.length > 0) this.events = newestFirst(events, this.events, MAX_EVENTS);
    if (updates.length > 0) this.updates = newestFirst(updates, this.updates, MAX_EVENTS);
    if (lifecycle.length > 0) this.lifecycle = newestFirst(lifecycle, this.lifecycle, MAX_LIFECYCLE);
    this.#changed();
  }

  /**
   * A call on the page shows this task's questions itself, so the list of waiting
   * elicitations leaves them out while it does; returns the function that stops.
   */
  showTask(taskId: string): () => void {
    this.#tasksShown.set(taskId, (this.#tasksShown.get(taskId) ?? 0) + 1);
    this.#changed();
    return () => {
      const count = (this.#tasksShown.get(taskId) ?? 1) - 1;
      if (count === 0) this.#tasksShown.delete(taskId);
      else this.#tasksShown.set(taskId, count);
      this.#changed();
    };
  }

  /** The elicitations waiting that no call on the page shows. */
  get waiting(): Elicitation[] {
    return this.elicitations.filter((e) => e.taskId === undefined || !this.#tasksShown.has(e.taskId));
  }

  /** An elicitation answered (or gone): no longer pending. */
  settle(id: string): void {
    this.elicitations = this.elicitations.filter((e) => e.id !== id);
    this.#changed();
  }

  /** Pending elicitations as the server lists them (for a page that loaded late). */
  pending(elicitations: readonly Elicitation[]): void {
    const known = new Set(this.elicitations.map((e) => e.id));
    this.elicitations = [...this.elicitations, ...elicitations.filter((e) => !known.has(e.id))].slice(
      -MAX_ELICITATIONS,
    );
    this.#changed();
  }

  #call(item: Extract<StreamItem, { kind: 'call' }>): void {
    let state = this.calls.get(item.callId);
    if (!state) {
      state = { tasks: [] };
      this.calls.set(item.callId, state);
      // Maps keep insertion order: the first key is the oldest call.
      if (this.calls.size > MAX_CALLS) this.calls.delete(this.calls.keys().next().value as string);
    }
    if (item.state === 'progress') state.progress = item.progress;
    else {
      // A poll that finds the task as it was is not a new state.
      const last = state.tasks[state.tasks.length - 1];
      if (last?.status === item.task.status && last.statusMessage === item.task.statusMessage) {
        state.tasks[state.tasks.length - 1] = item.task;
        return;
      }
      state.tasks.push(item.task);
      if (state.tasks.length > MAX_TASK_STATES) state.tasks.splice(0, state.tasks.length - MAX_TASK_STATES);
    }
  }

  /**
   * Calls `listener` at most once per frame after new items arrived; returns the function
   * that stops. `drawnAt` is the {@link version} the caller last drew with: a view subscribes
   * in an effect, after it drew, and a frame with news can land in between. When the version
   * has moved since, the listener runs at once, so that news is not missed until the next.
   */
  listen(listener: () => void, drawnAt: number): () => void {
    this.#listeners.add(listener);
    if (this.version !== drawnAt) listener();
    return () => this.#listeners.delete(listener);
  }

  #changed(): void {
    if (this.#frame !== 0) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      this.version++;
      for (const listener of this.#listeners) listener();
    });
  }
}

/** `fresh` (oldest first) before `known` (newest first), newest first, at most `max`. */
function newestFirst<T>(fresh: T[], known: T[], max: number): T[] {
  fresh.reverse();
  if (fresh.length >= max) return fresh.slice(0, max);
  return fresh.concat(known.slice(0, max - fresh.length));
}
