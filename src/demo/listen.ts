/**
 * `subscriptions/listen` streams that ask for `taskIds`. The SDK's listen router drops
 * `taskIds` from the filter (it acks only the core fields and closes a stream whose honoured
 * filter is empty), so these streams are served here: the same ack-first SSE framing, the SDK's
 * change-event bus for the core notification types, plus `notifications/tasks` (the full
 * DetailedTask) for the honoured task ids.
 */
import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';
import { DEMO_SERVER_INFO } from './mcp-surface.js';
import { isRecord, type JsonObject, type RpcRequest, SERVER_INFO_KEY, SUBSCRIPTION_ID_KEY } from './rpc.js';
import { modernTaskView, type TaskRecord, type TaskStore } from './tasks.js';

const MAX_URIS = 1_000;
const MAX_TASK_IDS = 100;

/** The honoured part of a listen filter. */
export interface HonouredFilter {
  toolsListChanged?: true;
  resourcesListChanged?: true;
  resourceSubscriptions?: string[];
  taskIds?: string[];
}

/** An open task-aware listen stream. */
export interface TaskListenStream {
  readonly id: string | number;
  readonly honoured: HonouredFilter;
  readonly openedAt: string;
  /** Ends the stream without the final result (a drop: the client may reconnect). */
  drop(): void;
  /** Ends the stream gracefully (final result carrying the subscription id). */
  close(): void;
}

/** Parses and honours a filter; `undefined` when `notifications` is missing or malformed. */
export function honourFilter(rpc: RpcRequest, tasks: TaskStore): HonouredFilter | undefined {
  const requested = rpc.params.notifications;
  if (!isRecord(requested)) return undefined;
  const strings = (value: unknown, max: number): string[] | undefined | null => {
    if (value === undefined) return undefined;
    if (!Array.isArray(value) || value.length > max || !value.every((v) => typeof v === 'string'))
      return null;
    return value as string[];
  };
  const uris = strings(requested.resourceSubscriptions, MAX_URIS);
  const taskIds = strings(requested.taskIds, MAX_TASK_IDS);
  if (uris === null || taskIds === null) return undefined;
  const honoured: HonouredFilter = {};
  if (requested.toolsListChanged === true) honoured.toolsListChanged = true;
  // No prompts/list_changed: the demo's prompts never change (the SDK drops it the same way).
  if (requested.resourcesListChanged === true) honoured.resourcesListChanged = true;
  if (uris !== undefined && uris.length > 0) honoured.resourceSubscriptions = [...new Set(uris)];
  const known = (taskIds ?? []).filter((id) => tasks.lookup(id, 'modern') !== undefined);
  if (known.length > 0) honoured.taskIds = [...new Set(known)];
  return honoured;
}

function accepts(filter: HonouredFilter, event: ServerEvent): boolean {
  switch (event.kind) {
    case 'tools_list_changed':
      return filter.toolsListChanged === true;
    case 'prompts_list_changed':
      return false;
    case 'resources_list_changed':
      return filter.resourcesListChanged === true;
    case 'resource_updated':
      return filter.resourceSubscriptions?.includes(event.uri) === true;
  }
}

function notificationOf(event: ServerEvent): { method: string; params: JsonObject } {
  switch (event.kind) {
    case 'tools_list_changed':
      return { method: 'notifications/tools/list_changed', params: {} };
    case 'prompts_list_changed':
      return { method: 'notifications/prompts/list_changed', params: {} };
    case 'resources_list_changed':
      return { method: 'notifications/resources/list_changed', params: {} };
    case 'resource_updated':
      return { method: 'notifications/resources/updated', params: { uri: event.uri } };
  }
}

/** Options of {@link openTaskListen}. */
export interface TaskListenOptions {
  readonly bus: ServerEventBus;
  readonly tasks: TaskStore;
  readonly keepAliveMs: number;
  readonly signal: AbortSignal;
  readonly onEnd: (stream: TaskListenStream) => void;
}

/** Opens the SSE stream for one listen request with an honoured filter. */
export function openTaskListen(
  rpc: RpcRequest,
  honoured: HonouredFilter,
  options: TaskListenOptions,
): { response: Response; stream: TaskListenStream } {
  const subscriptionId = rpc.id;
  const encoder = new TextEncoder();
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  let ended = false;
  const cleanups: Array<() => void> = [];

  const write = (frame: string) => {
    if (ended || controller === undefined) return;
    try {
      controller.enqueue(encoder.encode(frame));
    } catch {
      // The stream already closed.
    }
  };
  const notify = (method: string, params: JsonObject) =>
    write(
      `event: message\ndata: ${JSON.stringify({
        jsonrpc: '2.0',
        method,
        params: { ...params, _meta: { [SUBSCRIPTION_ID_KEY]: subscriptionId } },
      })}\n\n`,
    );
  const end = (graceful: boolean) => {
    if (ended) return;
    if (graceful) {
      const result = {
        resultType: 'complete',
        _meta: { [SUBSCRIPTION_ID_KEY]: subscriptionId, [SERVER_INFO_KEY]: DEMO_SERVER_INFO },
      };
      write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: subscriptionId, result })}\n\n`);
    }
    ended = true;
    for (const cleanup of cleanups.splice(0)) cleanup();
    try {
      controller?.close();
    } catch {
      // Already closed or cancelled.
    }
    options.onEnd(stream);
  };
  const stream: TaskListenStream = {
    id: subscriptionId,
    honoured,
    openedAt: new Date().toISOString(),
    drop: () => end(false),
    close: () => end(true),
  };

  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      notify('notifications/subscriptions/acknowledged', { notifications: honoured });
      if (Object.keys(honoured).length === 0) {
        end(true);
        return;
      }
      cleanups.push(
        options.bus.subscribe((event) => {
          if (accepts(honoured, event)) {
            const note = notificationOf(event);
            notify(note.method, note.params);
          }
        }),
      );
      const taskIds = new Set(honoured.taskIds ?? []);
      if (taskIds.size > 0) {
        cleanups.push(
          options.tasks.onChange((task: TaskRecord) => {
            if (task.era === 'modern' && taskIds.has(task.taskId))
              notify('notifications/tasks', modernTaskView(task));
          }),
        );
      }
      if (options.keepAliveMs > 0) {
        const timer = setInterval(() => write(': keepalive\n\n'), options.keepAliveMs);
        timer.unref();
        cleanups.push(() => clearInterval(timer));
      }
    },
    cancel() {
      end(false);
    },
  });
  if (options.signal.aborted) end(false);
  else {
    const onAbort = () => end(false);
    options.signal.addEventListener('abort', onAbort, { once: true });
    cleanups.push(() => options.signal.removeEventListener('abort', onAbort));
  }
  const response = new Response(body, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    },
  });
  return { response, stream };
}
