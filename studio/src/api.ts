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

type StreamItem =
  | { kind: 'event'; record: EventRecord }
  | { kind: 'update'; update: ResourceUpdate }
  | { kind: 'lifecycle'; lifecycle: Lifecycle }
  | { kind: 'catalog'; namespace: string; revision: number };

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

const MAX_EVENTS = 1000;

/** What the stream has brought so far, bounded, and who wants to know. */
export class LiveState {
  readonly events: EventRecord[] = [];
  readonly updates: ResourceUpdate[] = [];
  readonly lifecycle: Lifecycle[] = [];
  /** How many of each arrived in all (the buffers above keep only the latest). */
  readonly received = { events: 0, updates: 0, lifecycle: 0 };
  dropped = 0;
  connected = false;
  readonly #listeners = new Set<() => void>();
  #frame = 0;
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
      this.dropped += batch.dropped;
      for (const item of batch.items) {
        if (item.kind === 'event') {
          if (this.events.some((known) => known.seq === item.record.seq)) continue;
          this.events.unshift(item.record);
          this.received.events++;
        } else if (item.kind === 'update') {
          this.updates.unshift(item.update);
          this.received.updates++;
        } else if (item.kind === 'lifecycle') {
          this.lifecycle.unshift(item.lifecycle);
          this.received.lifecycle++;
        }
      }
      if (this.events.length > MAX_EVENTS) this.events.length = MAX_EVENTS;
      if (this.updates.length > MAX_EVENTS) this.updates.length = MAX_EVENTS;
      if (this.lifecycle.length > 200) this.lifecycle.length = 200;
      this.#changed();
    };
  }

  /** Called at most once per frame after new items arrived; returns the function that stops. */
  listen(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #changed(): void {
    if (this.#frame !== 0) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      for (const listener of this.#listeners) listener();
    });
  }
}
