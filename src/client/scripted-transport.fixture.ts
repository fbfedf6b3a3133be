/**
 * A transport for the client's unit tests: it answers requests from a script, keeps every
 * message the client sent, and lets a test hand the client a server message. Not built into
 * the package (`*.fixture.ts` is excluded like the tests).
 */
import type { JSONRPCNotification, JSONRPCRequest, JSONRPCResponse } from '../protocol/jsonrpc.js';
import type { AxMCPMessageContext, AxMCPTransport, AxMCPTransportHandlers } from '../transport/types.js';
import { Catalog } from './catalog.js';
import { Connection } from './connection.js';
import { type AxMCPClientEvent, ClientEvents } from './events.js';
import { InFlightRequests } from './in-flight.js';
import type { AxMCPClientOptions } from './options.js';
import { TaskWakers } from './tasks/task.js';
import { ElicitationCompletions } from './url-elicitation.js';

export type Script = Record<
  string,
  (params: Record<string, unknown>) => Record<string, unknown> | { error: { code: number; message: string } }
>;

export const LEGACY_INITIALIZE = (capabilities: Record<string, unknown> = {}) => ({
  protocolVersion: '2025-11-25',
  capabilities,
  serverInfo: { name: 'scripted', version: '1' },
});

export function scriptedTransport(script: Script) {
  const sent: JSONRPCRequest[] = [];
  const notified: JSONRPCNotification[] = [];
  const responded: JSONRPCResponse[] = [];
  let handlers: AxMCPTransportHandlers | undefined;
  const transport: AxMCPTransport = {
    kind: 'custom',
    endpoint: 'scripted://test',
    endpointKey: 'scripted://test',
    setHandlers(given: AxMCPTransportHandlers) {
      handlers = given;
    },
    async request(message: JSONRPCRequest): Promise<JSONRPCResponse> {
      sent.push(message);
      const answer = script[message.method];
      if (!answer)
        return { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: `no ${message.method}` } };
      const result = answer(message.params ?? {});
      if ('error' in result && typeof result.error === 'object') {
        return { jsonrpc: '2.0', id: message.id, error: result.error as { code: number; message: string } };
      }
      return { jsonrpc: '2.0', id: message.id, result };
    },
    async notify(message: JSONRPCNotification) {
      notified.push(message);
    },
    async respond(message: JSONRPCResponse) {
      responded.push(message);
    },
    async close() {},
  };
  return {
    transport,
    sent,
    notified,
    responded,
    methods: () => sent.map((message) => message.method),
    /** Hands the client a message as if the server had sent it. */
    deliver(message: JSONRPCRequest | JSONRPCNotification, context: AxMCPMessageContext = {}) {
      handlers?.onMessage(message, context);
    },
  };
}

/** A {@link Connection} over a scripted transport, with hooks that record what they were told. */
export function scriptedConnection(script: Script, options: Partial<AxMCPClientOptions> = {}) {
  const rig = scriptedTransport(script);
  const reported: unknown[] = [];
  const hookCalls: string[] = [];
  const taskWakers = new TaskWakers();
  const events = new ClientEvents((error) => reported.push(error));
  const requests = new InFlightRequests(rig.transport, 5_000, (id, reason) =>
    connection.wire?.cancel(id, reason),
  );
  const connection: Connection = new Connection({
    namespace: 'ns',
    transport: rig.transport,
    options: { namespace: 'ns', era: 'legacy', onError: (error) => reported.push(error), ...options },
    events,
    requests,
    taskWakers,
    elicitationCompletions: new ElicitationCompletions(),
  });
  connection.setHooks({
    adopted: (identity) => hookCalls.push(`adopted ${identity.protocolVersion}`),
    replaced: () => hookCalls.push('replaced'),
    restored: async () => {
      hookCalls.push('restored');
    },
    serverRequestsNeedStream: () => hookCalls.push('serverRequestsNeedStream'),
    headerMismatch: async () => {
      hookCalls.push('headerMismatch');
    },
  });
  const seen: AxMCPClientEvent[] = [];
  events.subscribe((event) => seen.push(event));
  return { ...rig, connection, events, seen, taskWakers, reported, hookCalls };
}

/** A catalog that lists through `connection`, reset to the server's capabilities on adoption. */
export function scriptedCatalog(connection: Connection): Catalog {
  return new Catalog({
    filterTools: (tools) => tools,
    maxPages: 10,
    fetchPage: (method, cursor) =>
      connection.send({ method, ...(cursor === undefined ? {} : { params: { cursor } }), idempotent: true }),
  });
}
