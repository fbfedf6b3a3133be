import type { JSONRPCId, JSONRPCNotification, JSONRPCRequest } from '../protocol/jsonrpc.js';
import { parseLoggingMessage, parseProgress, parseResourceUpdated } from '../protocol/messages.js';
import type { AxMCPMessageContext } from '../transport/types.js';
import type { AxMCPListKind } from './catalog.js';
import type { CatalogChanges } from './catalog-changes.js';
import type { Connection } from './connection.js';
import type { AxMCPClientEvent } from './events.js';
import type { ReadCache } from './read-cache.js';
import { answerFor, capabilitiesFor, fulfilServerRequest, ServerRequestError } from './server-requests.js';
import type { ServerStream } from './server-stream.js';
import { ServerTasks } from './server-tasks.js';
import { parseTask, type TaskWakers } from './tasks/task.js';
import type { ElicitationCompletions } from './url-elicitation.js';

const RESOLVED = Promise.resolve();

const LIST_CHANGED: Record<string, AxMCPListKind[]> = {
  'notifications/tools/list_changed': ['tools'],
  'notifications/prompts/list_changed': ['prompts'],
  'notifications/resources/list_changed': ['resources', 'resourceTemplates'],
};

/** The rooms an inbound message may concern. */
export interface InboundParts {
  connection: Connection;
  stream: ServerStream;
  catalogChanges: CatalogChanges;
  readCache: ReadCache;
  taskWakers: TaskWakers;
  elicitationCompletions: ElicitationCompletions;
}

/**
 * Inbound messages: the inbox the transport fills, the notifications it turns into client
 * events, and the server's own requests (sampling, elicitation, roots, tasks the client runs),
 * answered by the handlers of the options.
 */
export class Inbound {
  readonly #parts: InboundParts;
  readonly #connection: Connection;
  /** Messages and their contexts, alternating, waiting for the microtask that handles them. */
  #inbox: (JSONRPCRequest | JSONRPCNotification | AxMCPMessageContext)[] | undefined;
  /** Server requests being answered; created with the first (an idle client holds none). */
  #answering: Map<JSONRPCId, AbortController> | undefined;
  /** Task-augmented server requests this client runs (2025-11-25); created with the first. */
  #serverTasks: ServerTasks | undefined;

  constructor(parts: InboundParts) {
    this.#parts = parts;
    this.#connection = parts.connection;
  }

  /**
   * Transport callback: only enqueue, never throw. Messages handed over together (one chunk of a
   * stream) are handled in one microtask, in order.
   */
  receive(message: JSONRPCRequest | JSONRPCNotification, context: AxMCPMessageContext): void {
    if (this.#inbox !== undefined) {
      this.#inbox.push(message, context);
      return;
    }
    this.#inbox = [message, context];
    // A resolved promise rather than queueMicrotask: Node wraps each of those in an async resource.
    RESOLVED.then(() => this.#drain());
  }

  /** Stops answering: every server request in progress is aborted, every task the client runs ends. */
  close(): void {
    for (const controller of this.#answering?.values() ?? []) controller.abort();
    this.#serverTasks?.close();
  }

  #drain(): void {
    const inbox = this.#inbox ?? [];
    this.#inbox = undefined;
    for (let i = 0; i < inbox.length; i += 2) {
      const message = inbox[i] as JSONRPCRequest | JSONRPCNotification;
      try {
        if ('id' in message) this.#answer(message);
        else this.#notified(message, inbox[i + 1] as AxMCPMessageContext);
      } catch (error) {
        this.#connection.report(error);
      }
    }
  }

  #notified(message: JSONRPCNotification, context: AxMCPMessageContext): void {
    if (!this.#parts.stream.accept(message)) return;
    const connection = this.#connection;
    const { events, namespace, options } = connection;
    const { method, params } = message;
    const kinds = LIST_CHANGED[method];
    if (kinds) {
      this.#parts.catalogChanges.refresh(kinds);
      return;
    }
    switch (method) {
      case 'notifications/progress': {
        const progress = parseProgress(params);
        connection.requests.progress(progress);
        options.onProgress?.(progress);
        events.emit({ type: 'progress', namespace, progress });
        return;
      }
      case 'notifications/message': {
        const logging = parseLoggingMessage(params);
        options.onLoggingMessage?.(logging);
        events.emit({
          type: 'logging',
          namespace,
          message: logging,
          ...(context.eventId === undefined ? {} : { eventId: context.eventId }),
        });
        return;
      }
      case 'notifications/resources/updated': {
        // One without a uri names nothing: reported (it was dropped without a word), not emitted.
        const uri = parseResourceUpdated(params);
        this.#parts.readCache.forget(uri);
        // The hottest event of all: built without a spread.
        const updated: AxMCPClientEvent = { type: 'resource_updated', namespace, uri };
        if (context.eventId !== undefined) updated.eventId = context.eventId;
        events.emit(updated);
        return;
      }
      case 'notifications/tasks':
      case 'notifications/tasks/status': {
        const task = parseTask(params);
        this.#parts.taskWakers.wake(task.taskId);
        events.emit({
          type: 'task_status',
          namespace,
          task: { ...task },
          ...(context.eventId === undefined ? {} : { eventId: context.eventId }),
        });
        return;
      }
      case 'notifications/elicitation/complete': {
        if (typeof params?.elicitationId === 'string')
          this.#parts.elicitationCompletions.complete(params.elicitationId);
        events.emit({ type: 'notification', namespace, method, params });
        return;
      }
      case 'notifications/cancelled': {
        const id = params?.requestId;
        if (typeof id === 'string' || typeof id === 'number') this.#answering?.get(id)?.abort();
        return;
      }
      default:
        events.emit({ type: 'notification', namespace, method, params });
    }
  }

  #answer(request: JSONRPCRequest): void {
    const connection = this.#connection;
    const controller = new AbortController();
    const answering = (this.#answering ??= new Map());
    answering.set(request.id, controller);
    const context = { namespace: connection.namespace, signal: controller.signal };
    fulfilServerRequest(
      connection.options,
      request.method,
      request.params ?? {},
      context,
      this.#receivedTasks(),
    )
      .then(
        (result) => answerFor(request, { result }),
        (error) => {
          // The server hears only that the client failed; why, the caller hears: a handler that
          // threw or answered what cannot be sent. A request refused as malformed is the server's.
          if (!(error instanceof ServerRequestError) && !controller.signal.aborted) connection.report(error);
          return answerFor(request, { error });
        },
      )
      .then((answer) =>
        controller.signal.aborted || connection.closed ? undefined : connection.transport.respond(answer),
      )
      .catch((error) => connection.report(error))
      .finally(() => answering.delete(request.id));
  }

  /** Tasks this client runs for the server, when a handler accepts task-augmented requests. */
  #receivedTasks(): ServerTasks | undefined {
    if (this.#serverTasks) return this.#serverTasks;
    const connection = this.#connection;
    if (capabilitiesFor(connection.options).tasks === undefined) return undefined;
    this.#serverTasks = new ServerTasks((task) => {
      if (connection.closed) return;
      connection.transport
        .notify({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: task })
        .catch((error) => connection.report(error));
    });
    return this.#serverTasks;
  }
}
