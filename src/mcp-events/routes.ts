import type { AxMCPClient } from '../client/client.js';
import { assertEventOptions } from '../events/errors.js';
import type { AxEventHandler, AxEventRouteDefinition } from '../events/route.js';
import { eventRoute } from '../events/route-builder.js';
import { func, object, required } from '../options/check.js';
import { MCP_CLIENT } from './event-source.js';
import { MCP_EVENT_TYPES, MCP_TASK_CORRELATION, mcpSource } from './normalize.js';

/** Options of {@link axMCPEventRoutes}. */
export interface AxMCPEventRoutesOptions {
  client: AxMCPClient;
  /** Called when the server announced a catalog change (the client has already refreshed). */
  onCatalogInvalidated?: AxEventHandler;
  /** Called with progress and logging events. */
  onObserve?: AxEventHandler;
}

/** What {@link axMCPEventRoutes} accepts; checked once per call. */
export const MCP_EVENT_ROUTES_OPTIONS = object(
  {
    client: required(MCP_CLIENT),
    onCatalogInvalidated: func('a function (ingress, context)'),
    onObserve: func('a function (ingress, context)'),
  },
  {
    expected: 'options { client, onCatalogInvalidated?, onObserve? }',
    aliases: {
      onCatalogChanged: 'onCatalogInvalidated',
      onInvalidate: 'onCatalogInvalidated',
      observe: 'onObserve',
    },
  },
);

const RESUMING_STATUSES = new Set(['input_required', 'completed', 'failed', 'cancelled']);

/**
 * The default routes for one MCP client: catalog changes invalidate, progress and
 * logging are observed, and task `input_required` or terminal statuses resume only the
 * continuation that owns the task (`mcp.task = <namespace>:<taskId>`), within the
 * event's identity scope. Resource updates wake nothing: add your own authenticated
 * route for that.
 */
export function axMCPEventRoutes(options: AxMCPEventRoutesOptions): AxEventRouteDefinition[] {
  assertEventOptions(MCP_EVENT_ROUTES_OPTIONS, options, 'axMCPEventRoutes options');
  const namespace = options.client.namespace;
  const source = mcpSource(namespace);
  return [
    eventRoute(`mcp-${namespace}-catalog`)
      .sources(source)
      .types(MCP_EVENT_TYPES.catalogChanged)
      .invalidate(options.onCatalogInvalidated ?? (() => {}))
      .build(),
    eventRoute(`mcp-${namespace}-observe`)
      .sources(source)
      .types(MCP_EVENT_TYPES.progress, MCP_EVENT_TYPES.logging)
      .observe(options.onObserve ?? (() => {}))
      .build(),
    eventRoute(`mcp-${namespace}-task-resume`)
      .match(({ event }) => {
        const status = (event.data as { status?: unknown } | undefined)?.status;
        return (
          event.source === source &&
          event.type === MCP_EVENT_TYPES.taskStatus &&
          typeof status === 'string' &&
          RESUMING_STATUSES.has(status)
        );
      })
      .correlate(MCP_TASK_CORRELATION)
      .resume()
      .build(),
  ];
}
