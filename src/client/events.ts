import type { AxMCPLoggingMessage, AxMCPProgress } from '../protocol/messages.js';
import type { AxMCPListKind } from './catalog.js';
import type { AxMCPTask } from './tasks/task.js';

/** Connection state changes of a client's listening stream. */
export type AxMCPLifecycleState = 'connected' | 'reconnected' | 'disconnected' | 'session_restored';

/** Typed events a client emits. Listeners observe or enqueue; they cannot break the client. */
export type AxMCPClientEvent =
  | { type: 'catalog_changed'; namespace: string; kinds: AxMCPListKind[]; revision: number }
  | { type: 'resource_updated'; namespace: string; uri: string; eventId?: string }
  | { type: 'logging'; namespace: string; message: AxMCPLoggingMessage; eventId?: string }
  | { type: 'progress'; namespace: string; progress: AxMCPProgress }
  | { type: 'task_status'; namespace: string; task: AxMCPTask; eventId?: string }
  | {
      type: 'lifecycle';
      namespace: string;
      state: AxMCPLifecycleState;
      error?: unknown;
      /**
       * On `reconnected`: true when the stream resumed from the server's replay (its
       * `Last-Event-ID` was accepted, so nothing in between was lost); false when it started
       * afresh and updates sent while it was down may be lost (2026-07-28 listen streams keep no
       * state; a refused or missing resume point). The client looks at its catalog again either way.
       */
      resumed?: boolean;
    }
  | { type: 'notification'; namespace: string; method: string; params: Record<string, unknown> | undefined };

export type AxMCPClientEventListener = (event: AxMCPClientEvent) => void;

/** Fan-out of client events; a throwing listener is reported and skipped. */
export class ClientEvents {
  readonly #listeners = new Set<AxMCPClientEventListener>();
  readonly #onListenerError: (error: unknown) => void;

  constructor(onListenerError: (error: unknown) => void) {
    this.#onListenerError = onListenerError;
  }

  get size(): number {
    return this.#listeners.size;
  }

  subscribe(listener: AxMCPClientEventListener): () => void {
    // Wrap so the same function subscribed twice gets two independent subscriptions.
    const entry: AxMCPClientEventListener = (event) => listener(event);
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  emit(event: AxMCPClientEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (error) {
        this.#onListenerError(error);
      }
    }
  }

  clear(): void {
    this.#listeners.clear();
  }
}
