/**
 * The studio's elicitation bridge: a form-mode `elicitation/create` that a server sends to a
 * client (a plain request, a 2026-07-28 task's input request, a 2025-11-25 task's request) is
 * held here until the page answers it. Held requests are bounded; one that nobody answers in
 * time, or that arrives while no studio shows the bridge, is answered `cancel`.
 */

import { randomUUID } from 'node:crypto';
import type { AxMCPElicitationHandlers, AxMCPElicitResult } from '../../index.js';
import { number, object } from '../../options/check.js';
import { assertMCPOptions } from '../../protocol/errors.js';

/** Options of {@link axStudioElicitation}. */
export interface AxStudioElicitationOptions {
  /** How long a request waits for the page before it is answered `cancel`. Default 300 000 (5 min). */
  timeoutMs?: number;
  /** Requests held at once; one more is answered `cancel` at once. Default 20. */
  maxPending?: number;
}

/** One request waiting for an answer from the page. */
export interface AxStudioPendingElicitation {
  id: string;
  namespace: string;
  message: string;
  requestedSchema: Record<string, unknown>;
  /** When it arrived and when it is answered `cancel` (ms since the epoch). */
  at: number;
  expiresAt: number;
  /** The task that asks, when the request says so (a 2025-11-25 task's related-task `_meta`). */
  taskId?: string;
}

/** How a held request ended: answered from the page, timed out, abandoned by the asker (the server, or the call that waits), answered by a task's input, or the bridge closed. */
export type AxStudioElicitationEnd = 'page' | 'timeout' | 'abandoned' | 'task_input' | 'closed';

/** What the bridge tells the studio that shows it. */
export type AxStudioElicitationChange =
  | { type: 'pending'; request: AxStudioPendingElicitation; params: Record<string, unknown> }
  | {
      type: 'settled';
      id: string;
      namespace: string;
      action: AxMCPElicitResult['action'];
      by: AxStudioElicitationEnd;
    };

/**
 * An elicitation bridge: give its `handlers` to your clients and the bridge itself to
 * `startStudio({ elicitation })`, and form elicitations are answered from the studio's page.
 */
export interface AxStudioElicitation {
  /** The clients' `elicitation` option (form mode only: URL elicitations stay the application's). */
  readonly handlers: AxMCPElicitationHandlers;
  /** The requests waiting, oldest first. */
  pending(): AxStudioPendingElicitation[];
  /** Answers a waiting request; false when there is none of that id (answered, timed out). */
  answer(id: string, result: AxMCPElicitResult, by?: AxStudioElicitationEnd): boolean;
  /**
   * Listens to requests arriving and ending (the studio shows them); returns the function that
   * stops. While nobody listens, a request is answered `cancel` at once: no page can answer it.
   */
  listen(listener: (change: AxStudioElicitationChange) => void): () => void;
  /** Answers every waiting request `cancel`. */
  close(): void;
}

const OPTIONS = object(
  {
    timeoutMs: number({ integer: true, min: 1 }),
    maxPending: number({ integer: true, min: 1, max: 1000 }),
  },
  { expected: 'options { timeoutMs?, maxPending? }' },
);

const RELATED_TASK = 'io.modelcontextprotocol/related-task';

interface Held {
  request: AxStudioPendingElicitation;
  settle: (result: AxMCPElicitResult, by: AxStudioElicitationEnd) => void;
}

function relatedTaskId(params: Record<string, unknown>): string | undefined {
  const meta = params._meta;
  if (typeof meta !== 'object' || meta === null) return undefined;
  const related = (meta as Record<string, unknown>)[RELATED_TASK];
  if (typeof related !== 'object' || related === null) return undefined;
  const taskId = (related as Record<string, unknown>).taskId;
  return typeof taskId === 'string' ? taskId : undefined;
}

/**
 * Creates an elicitation bridge for the studio.
 *
 * ```ts
 * const elicitation = axStudioElicitation();
 * const client = new AxMCPClient(transport, { namespace: 'shop', elicitation: elicitation.handlers });
 * const studio = await startStudio({ clients: [client], elicitation });
 * ```
 */
export function axStudioElicitation(options: AxStudioElicitationOptions = {}): AxStudioElicitation {
  assertMCPOptions(OPTIONS, options, 'axStudioElicitation options');
  const timeoutMs = options.timeoutMs ?? 300_000;
  const maxPending = options.maxPending ?? 20;
  const held = new Map<string, Held>();
  const listeners = new Set<(change: AxStudioElicitationChange) => void>();
  const tell = (change: AxStudioElicitationChange) => {
    for (const listener of listeners) {
      try {
        listener(change);
      } catch {
        // A broken listener must not leave a server waiting.
      }
    }
  };

  const handlers: AxMCPElicitationHandlers = {
    form: (params, context) => {
      if (listeners.size === 0 || held.size >= maxPending || context.signal.aborted)
        return { action: 'cancel' };
      const at = Date.now();
      const taskId = relatedTaskId(params);
      const request: AxStudioPendingElicitation = {
        id: randomUUID(),
        namespace: context.namespace,
        message: params.message,
        requestedSchema: structuredClone(params.requestedSchema) as Record<string, unknown>,
        at,
        expiresAt: at + timeoutMs,
        ...(taskId === undefined ? {} : { taskId }),
      };
      return new Promise<AxMCPElicitResult>((resolve) => {
        const timer = setTimeout(() => settle({ action: 'cancel' }, 'timeout'), timeoutMs);
        // A request nobody answers must not keep the process alive.
        timer.unref?.();
        const onAbort = () => settle({ action: 'cancel' }, 'abandoned');
        context.signal.addEventListener('abort', onAbort, { once: true });
        const settle = (result: AxMCPElicitResult, by: AxStudioElicitationEnd) => {
          if (!held.delete(request.id)) return;
          clearTimeout(timer);
          context.signal.removeEventListener('abort', onAbort);
          resolve(result);
          tell({ type: 'settled', id: request.id, namespace: request.namespace, action: result.action, by });
        };
        held.set(request.id, { request, settle });
        tell({ type: 'pending', request: { ...request }, params });
      });
    },
  };

  return {
    handlers,
    pending: () => [...held.values()].map(({ request }) => ({ ...request })),
    answer: (id, result, by = 'page') => {
      const entry = held.get(id);
      if (!entry) return false;
      entry.settle(result, by);
      return true;
    },
    listen: (listener) => {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
        // The last page went away: nobody can answer what waits.
        if (listeners.size === 0)
          for (const entry of [...held.values()]) entry.settle({ action: 'cancel' }, 'closed');
      };
    },
    close: () => {
      for (const entry of [...held.values()]) entry.settle({ action: 'cancel' }, 'closed');
    },
  };
}
