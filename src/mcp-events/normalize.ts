import type { AxMCPClientEvent } from '../client/events.js';
import type {
  AxEventCorrelation,
  AxEventIdentity,
  AxEventIngress,
  AxEventTrust,
} from '../events/envelope.js';

/** The event types an MCP source publishes. */
export const MCP_EVENT_TYPES = {
  resourceUpdated: 'mcp.resource.updated',
  catalogChanged: 'mcp.catalog.changed',
  progress: 'mcp.progress',
  logging: 'mcp.logging',
  taskStatus: 'mcp.task.status',
  lifecycle: 'mcp.lifecycle',
} as const;

/** The correlation kind of task events: `mcp.task = <namespace>:<taskId>`. */
export const MCP_TASK_CORRELATION = 'mcp.task';

/** The event source URI of a client's namespace. */
export function mcpSource(namespace: string): string {
  return `mcp://${namespace}`;
}

/** The correlation value of a task. */
export function mcpTaskKey(namespace: string, taskId: string): string {
  return `${namespace}:${taskId}`;
}

export interface Attribution {
  /** A random id of the publishing source instance, for ids that restart per client. */
  origin: string;
  identity?: AxEventIdentity;
  trust: AxEventTrust;
  /** Identifies the wire conversation, so SSE event ids become unique event ids. */
  sessionId?: string;
}

/**
 * Turns a client event into an attributed, untrusted-by-default event. Where the wire
 * gives the notification an identity (an SSE event id within a session, a task id with
 * its status) the event id is derived from it, so a redelivered notification dedupes.
 */
export function toIngress(event: AxMCPClientEvent, attribution: Attribution): AxEventIngress | undefined {
  const source = mcpSource(event.namespace);
  const base = (
    type: string,
    idSeed: string | undefined,
    rest: Omit<AxEventIngress['event'], 'id' | 'source' | 'type'>,
  ) => {
    const ingress: AxEventIngress = {
      event: { id: idSeed ?? crypto.randomUUID(), source, type, time: new Date().toISOString(), ...rest },
      trust: attribution.trust,
    };
    if (attribution.identity) ingress.identity = attribution.identity;
    return ingress;
  };
  const wireId = (eventId: string | undefined) =>
    eventId === undefined ? undefined : `sse:${attribution.sessionId ?? 'stream'}:${eventId}`;
  switch (event.type) {
    case 'resource_updated': {
      const ingress = base(MCP_EVENT_TYPES.resourceUpdated, wireId(event.eventId), {
        subject: event.uri,
        data: { namespace: event.namespace, uri: event.uri },
      });
      ingress.partitionKey = `${event.namespace}:resource:${event.uri}`;
      return ingress;
    }
    case 'catalog_changed':
      return base(MCP_EVENT_TYPES.catalogChanged, `catalog:${attribution.origin}:${event.revision}`, {
        subject: 'catalog',
        data: { namespace: event.namespace, kinds: event.kinds, revision: event.revision },
      });
    case 'progress':
      return base(MCP_EVENT_TYPES.progress, undefined, {
        data: { namespace: event.namespace, ...event.progress },
      });
    case 'logging':
      return base(MCP_EVENT_TYPES.logging, wireId(event.eventId), {
        data: { namespace: event.namespace, ...event.message, data: jsonSafe(event.message.data) },
      });
    case 'task_status': {
      const { task } = event;
      const key = mcpTaskKey(event.namespace, task.taskId);
      const version =
        task.lastUpdatedAt ??
        Object.keys(task.inputRequests ?? {})
          .sort()
          .join(',');
      const ingress = base(MCP_EVENT_TYPES.taskStatus, `task:${task.taskId}:${task.status}:${version}`, {
        subject: key,
        data: { namespace: event.namespace, ...(jsonSafe(task) as Record<string, unknown>) },
      });
      const correlation: AxEventCorrelation[] = [{ kind: MCP_TASK_CORRELATION, value: key }];
      ingress.correlation = correlation;
      ingress.partitionKey = `${event.namespace}:task:${task.taskId}`;
      return ingress;
    }
    case 'lifecycle':
      return base(MCP_EVENT_TYPES.lifecycle, undefined, {
        data: {
          namespace: event.namespace,
          state: event.state,
          ...(event.resumed !== undefined ? { resumed: event.resumed } : {}),
        },
      });
    default:
      return undefined;
  }
}

/** Server data as plain JSON (undefined dropped, cycles impossible from JSON.parse). */
function jsonSafe(value: unknown): unknown {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}
