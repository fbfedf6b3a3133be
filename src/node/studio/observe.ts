/**
 * What the studio sees of live objects: every event published into the runtime (with its
 * receipt and the runtime's `explain()` decisions), and each client's `resources/updated`
 * and connection changes, from the runtime's `onPublish` hook and the clients' events.
 * Everything is kept in bounded buffers; nothing here can slow a publish down by more than
 * one extra promise, and a failing explain is a note, not an error.
 */

import type {
  AxEventIngress,
  AxEventReceipt,
  AxEventRouteExplanation,
  AxEventRuntime,
  AxMCPClient,
  AxMCPClientEvent,
} from '../../index.js';
import type { AxStudioPendingElicitation } from './elicitation.js';

/** An error as the page shows it: a name, a stable code when there is one, the message. */
export interface StudioError {
  name: string;
  code?: string;
  message: string;
}

/** One published event as the studio recorded it. */
export interface StudioEventRecord {
  seq: number;
  at: number;
  /** The envelope; `data` is left out (with its size) when it is large. */
  event: Record<string, unknown>;
  dataBytes?: number;
  identity: Record<string, unknown>;
  trust: string;
  correlation: unknown[];
  partitionKey?: string;
  receipt?: { duplicate: boolean; deliveryIds: string[] };
  error?: StudioError;
  /** Each route's decision; `null` when the studio was too busy to ask (see `explainSkipped`). */
  decisions: AxEventRouteExplanation[] | null;
  explainSkipped?: boolean;
}

/** One `resources/updated` seen by a client. */
export interface StudioResourceUpdate {
  at: number;
  namespace: string;
  uri: string;
  eventId?: string;
}

/** A connection change of a client's stream. */
export interface StudioLifecycle {
  at: number;
  namespace: string;
  state: string;
  resumed?: boolean;
  error?: string;
}

/** What the SSE stream carries. */
export type StudioStreamItem =
  | { kind: 'event'; record: StudioEventRecord }
  | { kind: 'update'; update: StudioResourceUpdate }
  | { kind: 'lifecycle'; lifecycle: StudioLifecycle }
  | { kind: 'catalog'; namespace: string; revision: number }
  | StudioTryItem;

/** A task as the Try view shows it while a call waits for it. */
export interface StudioTaskView {
  taskId: string;
  status: string;
  statusMessage?: string;
  inputRequests?: Record<string, unknown>;
}

/** What the Try view's calls, the elicitation bridge and the catalog history add to the stream. */
export type StudioTryItem =
  | {
      kind: 'call';
      callId: string;
      namespace: string;
      state: 'progress';
      progress: { progress: number; total?: number; message?: string };
    }
  | { kind: 'call'; callId: string; namespace: string; state: 'task'; task: StudioTaskView }
  | ({ kind: 'elicitation' } & AxStudioPendingElicitation)
  | { kind: 'elicitation_settled'; id: string; namespace: string; action: string; by: string }
  | { kind: 'revision'; namespace: string; revision: number };

const MAX_EVENTS = 500;
const MAX_RUN_IDS = 1000;
const MAX_UPDATES_PER_URI = 50;
const MAX_URIS = 1000;
const MAX_LIFECYCLE = 100;
const MAX_INLINE_DATA_BYTES = 16 * 1024;
/** Explains in flight at once; beyond it an event is recorded without decisions. */
const MAX_EXPLAINS = 64;

export function errorOf(error: unknown): StudioError {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { name: error.name, ...(typeof code === 'string' ? { code } : {}), message: error.message };
  }
  return { name: 'Error', message: String(error) };
}

function jsonCopy(value: unknown): unknown {
  try {
    return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
  } catch {
    return null;
  }
}

/** Bounded records of what the runtime and the clients did, fanned out to listeners. */
export class StudioObserver {
  readonly #listeners = new Set<(item: StudioStreamItem) => void>();
  readonly #events: StudioEventRecord[] = [];
  /** Run (delivery) ids from receipts, newest last. */
  readonly #runIds = new Set<string>();
  readonly #updates = new Map<string, StudioResourceUpdate[]>();
  readonly #lifecycle: StudioLifecycle[] = [];
  readonly #undo: (() => void)[] = [];
  #seq = 0;
  #explaining = 0;

  constructor(clients: readonly AxMCPClient[], runtime: AxEventRuntime | undefined) {
    for (const client of clients) {
      this.#undo.push(client.subscribeEvents((event) => this.#clientEvent(event)));
    }
    if (runtime) this.#observe(runtime);
  }

  /** Listen to everything recorded from now on; returns the function that stops. */
  listen(listener: (item: StudioStreamItem) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  get events(): readonly StudioEventRecord[] {
    return this.#events;
  }

  /** The most recent run ids first. */
  recentRunIds(limit: number): string[] {
    return [...this.#runIds].reverse().slice(0, limit);
  }

  updatesOf(namespace: string, uri: string): readonly StudioResourceUpdate[] {
    return this.#updates.get(`${namespace}\u0000${uri}`) ?? [];
  }

  get lifecycle(): readonly StudioLifecycle[] {
    return this.#lifecycle;
  }

  close(): void {
    for (const undo of this.#undo.splice(0)) undo();
    this.#listeners.clear();
  }

  /** Puts an item of the Try view (a call's progress, an elicitation, …) on the stream. */
  note(item: StudioTryItem): void {
    this.#emit(item);
  }

  #emit(item: StudioStreamItem): void {
    for (const listener of this.#listeners) {
      try {
        listener(item);
      } catch {
        // A broken stream must not break the runtime or the client.
      }
    }
  }

  #clientEvent(event: AxMCPClientEvent): void {
    const at = Date.now();
    if (event.type === 'resource_updated') {
      const update: StudioResourceUpdate = {
        at,
        namespace: event.namespace,
        uri: event.uri,
        ...(event.eventId ? { eventId: event.eventId } : {}),
      };
      const key = `${event.namespace}\u0000${event.uri}`;
      let list = this.#updates.get(key);
      if (!list) {
        if (this.#updates.size >= MAX_URIS) {
          const oldest = this.#updates.keys().next().value;
          if (oldest !== undefined) this.#updates.delete(oldest);
        }
        list = [];
        this.#updates.set(key, list);
      }
      list.push(update);
      if (list.length > MAX_UPDATES_PER_URI) list.shift();
      this.#emit({ kind: 'update', update });
    } else if (event.type === 'lifecycle') {
      const lifecycle: StudioLifecycle = {
        at,
        namespace: event.namespace,
        state: event.state,
        ...(event.resumed === undefined ? {} : { resumed: event.resumed }),
        ...(event.error === undefined ? {} : { error: errorOf(event.error).message }),
      };
      this.#lifecycle.push(lifecycle);
      if (this.#lifecycle.length > MAX_LIFECYCLE) this.#lifecycle.shift();
      this.#emit({ kind: 'lifecycle', lifecycle });
    } else if (event.type === 'catalog_changed') {
      this.#emit({ kind: 'catalog', namespace: event.namespace, revision: event.revision });
    }
  }

  /** Every event published into the runtime (sources publish through it too), from its publish hook. */
  #observe(runtime: AxEventRuntime): void {
    this.#undo.push(
      runtime.onPublish(({ ingress, receipt }) => {
        void this.#record(ingress, receipt, this.#explain(runtime, ingress));
      }),
    );
  }

  async #explain(
    runtime: AxEventRuntime,
    ingress: AxEventIngress,
  ): Promise<AxEventRouteExplanation[] | null> {
    if (this.#explaining >= MAX_EXPLAINS) return null;
    this.#explaining++;
    try {
      const { event, ...rest } = ingress;
      return await runtime.explain(event, rest);
    } catch {
      return [];
    } finally {
      this.#explaining--;
    }
  }

  async #record(
    ingress: AxEventIngress,
    receipt: Promise<AxEventReceipt>,
    explained: Promise<AxEventRouteExplanation[] | null>,
  ): Promise<void> {
    let outcome: Pick<StudioEventRecord, 'receipt' | 'error'>;
    try {
      const done = await receipt;
      outcome = { receipt: { duplicate: done.duplicate, deliveryIds: [...done.deliveryIds] } };
      for (const id of done.deliveryIds) {
        this.#runIds.delete(id);
        this.#runIds.add(id);
        if (this.#runIds.size > MAX_RUN_IDS) {
          const oldest = this.#runIds.values().next().value;
          if (oldest !== undefined) this.#runIds.delete(oldest);
        }
      }
    } catch (error) {
      outcome = { error: errorOf(error) };
    }
    const decisions = await explained;
    const { data, ...envelope } = (jsonCopy(ingress.event) ?? {}) as Record<string, unknown>;
    const dataText = data === undefined ? undefined : JSON.stringify(data);
    const large = dataText !== undefined && dataText.length > MAX_INLINE_DATA_BYTES;
    const record: StudioEventRecord = {
      seq: ++this.#seq,
      at: Date.now(),
      event: large || data === undefined ? envelope : { ...envelope, data },
      ...(large ? { dataBytes: dataText.length } : {}),
      identity: (jsonCopy(ingress.identity) ?? {}) as Record<string, unknown>,
      trust: ingress.trust ?? 'untrusted',
      correlation: (jsonCopy(ingress.correlation) ?? []) as unknown[],
      ...(ingress.partitionKey === undefined ? {} : { partitionKey: ingress.partitionKey }),
      ...outcome,
      decisions,
      ...(decisions === null ? { explainSkipped: true } : {}),
    };
    this.#events.push(record);
    if (this.#events.length > MAX_EVENTS) this.#events.shift();
    this.#emit({ kind: 'event', record });
  }
}
