import type { AxMCPTransport } from '../transport/types.js';
import { CallSlots } from './call-slots.js';
import { Catalog, LIST_KINDS } from './catalog.js';
import { CatalogChanges } from './catalog-changes.js';
import { Connection } from './connection.js';
import { DraftTaskMethods } from './draft-tasks.js';
import { ClientEvents } from './events.js';
import { InFlightRequests } from './in-flight.js';
import { Inbound } from './inbound.js';
import type { AxMCPClientOptions } from './options.js';
import { ReadCache } from './read-cache.js';
import { Reads } from './reads.js';
import { ServerStream } from './server-stream.js';
import { TaskWakers } from './tasks/task.js';
import { ToolCalls } from './tool-calls.js';
import { ElicitationCompletions } from './url-elicitation.js';

/** The rooms an {@link AxMCPClient} delegates to. */
export interface ClientRooms {
  connection: Connection;
  catalog: Catalog;
  stream: ServerStream;
  inbound: Inbound;
  toolCalls: ToolCalls;
  draftTasks: DraftTaskMethods;
  reads: Reads;
  taskWakers: TaskWakers;
}

/**
 * Builds a client's rooms and connects them to each other: what one room needs of another is
 * passed in here, once, so no room reaches into the facade.
 */
export function clientRooms(
  namespace: string,
  transport: AxMCPTransport,
  options: AxMCPClientOptions,
): ClientRooms {
  const events = new ClientEvents((error) => connection.report(error));
  const requests = new InFlightRequests(transport, options.timeoutMs ?? 60_000, (id, reason) =>
    connection.wire?.cancel(id, reason),
  );
  const elicitationCompletions = new ElicitationCompletions();
  const taskWakers = new TaskWakers();
  const connection = new Connection({
    namespace,
    transport,
    options,
    events,
    requests,
    taskWakers,
    elicitationCompletions,
  });
  const catalog = new Catalog({
    filterTools: (tools, revision) => (connection.wire ? connection.wire.admitTools(tools, revision) : tools),
    maxPages: options.maxPaginationPages ?? 1000,
    fetchPage: (method, cursor) =>
      connection.send({ method, ...(cursor === undefined ? {} : { params: { cursor } }), idempotent: true }),
  });
  const catalogChanges = new CatalogChanges(connection, catalog);
  const readCache = new ReadCache();
  const stream: ServerStream = new ServerStream({
    connection,
    taskWakers,
    dispatch: (message, context) => inbound.receive(message, context),
    lookAfterReconnect: () => catalogChanges.refresh(LIST_KINDS, { onlyIfChanged: true }),
  });
  const inbound = new Inbound({
    connection,
    stream,
    catalogChanges,
    readCache,
    taskWakers,
    elicitationCompletions,
  });
  connection.setHooks({
    adopted: (identity) => catalog.reset(identity.capabilities),
    replaced: () => stream.sessionReplaced(),
    restored: () => stream.restore(),
    serverRequestsNeedStream: () => stream.keepOpenForServerRequests(),
    headerMismatch: () => catalog.refresh('tools'),
  });
  const slots = options.maxConcurrency === undefined ? undefined : new CallSlots(options.maxConcurrency);
  const toolCalls = new ToolCalls({ connection, catalog, taskWakers, slots });
  return {
    connection,
    catalog,
    stream,
    inbound,
    toolCalls,
    draftTasks: new DraftTaskMethods(connection, toolCalls),
    reads: new Reads(connection, readCache, catalog),
    taskWakers,
  };
}
