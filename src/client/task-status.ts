import { anyOf, array, func, object, oneOf, string } from '../options/check.js';
import { assertMCPOptions } from '../protocol/errors.js';
import type { ClientEvents } from './events.js';
import type { AxMCPTask, AxMCPTaskStatus, TaskWakers } from './tasks/task.js';

/** Which task statuses a {@link AxMCPClient.subscribeTaskStatus} listener receives. */
export interface AxMCPTaskStatusFilter {
  /** One task or several (these are also added to the 2026-07-28 listen filter). */
  taskId?: string | readonly string[];
  /** Only these statuses. */
  status?: AxMCPTaskStatus | readonly AxMCPTaskStatus[];
}

const TASK_STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'] as const;
const TASK_STATUS_FILTER = object(
  {
    taskId: anyOf(string({ nonEmpty: true }), array(string({ nonEmpty: true }))),
    status: anyOf(oneOf(...TASK_STATUSES), array(oneOf(...TASK_STATUSES))),
  },
  { expected: 'a task id or a filter { taskId?, status? }' },
);
const TASK_STATUS_LISTENER = func('a listener (task) => void');

function toList<T>(value: T | readonly T[]): readonly T[] {
  return Array.isArray(value) ? value : [value as T];
}

/**
 * Delivers the `task_status` events that pass `filter` to `listener`, as copies; the task ids it
 * names are watched (so the 2026-07-28 listen filter carries them) until the returned function
 * is called. The filter and listener are checked first: a wrong one is refused, never ignored.
 */
export function subscribeTaskStatus(
  events: ClientEvents,
  wakers: TaskWakers,
  where: { namespace: string; endpoint: string },
  filter: AxMCPTaskStatusFilter,
  listener: ((task: AxMCPTask) => void) | undefined,
): () => void {
  assertMCPOptions(TASK_STATUS_FILTER, filter, 'subscribeTaskStatus filter', where);
  assertMCPOptions(TASK_STATUS_LISTENER, listener, 'subscribeTaskStatus listener', where);
  const ids = filter.taskId === undefined ? undefined : new Set(toList(filter.taskId));
  const statuses = filter.status === undefined ? undefined : new Set(toList(filter.status));
  const unwatch = [...(ids ?? [])].map((id) => wakers.watch(id));
  const unsubscribe = events.subscribe((event) => {
    if (event.type !== 'task_status') return;
    if (ids && !ids.has(event.task.taskId)) return;
    if (statuses && !statuses.has(event.task.status)) return;
    (listener as (task: AxMCPTask) => void)(structuredClone(event.task));
  });
  let done = false;
  return () => {
    if (done) return;
    done = true;
    unsubscribe();
    for (const stop of unwatch) stop();
  };
}
