/**
 * A subscription policy: an `AxMCPEventSource` that subscribes only the resources a `select`
 * function chooses (every warehouse document but the aggregate view), the default MCP routes
 * (`axMCPEventRoutes`), and one route of our own that wakes a target on resource updates — for
 * authenticated events only. A look-alike event without an identity wakes nothing.
 *
 * Needs the ax-mcp demo server (its `adjust_stock` tool changes a warehouse document).
 * Run: `AX_MCP_URL=http://127.0.0.1:3000/mcp npx tsx examples/subscription-policy.ts` (see README.md).
 */
import { pathToFileURL } from 'node:url';
import {
  AxMCPClient,
  AxMCPEventSource,
  type AxMCPSSRFOptions,
  AxMCPStreamableHTTPTransport,
  axMCPEventRoutes,
  eventRoute,
  eventRuntime,
  eventTarget,
  MCP_EVENT_TYPES,
  mcpSource,
} from '../src/index.js';

/** What `main` observed. */
export interface SubscriptionPolicyResult {
  /** The URIs the source subscribed. */
  subscriptions: string[];
  /** Subjects (resource URIs) the restock target woke for. */
  woken: string[];
  /** Deliveries the anonymous look-alike event caused (expected: none). */
  spoofedDeliveries: number;
}

function ssrfFor(url: string): true | AxMCPSSRFOptions {
  const { hostname, protocol } = new URL(url);
  const loopback = hostname === '127.0.0.1' || hostname === 'localhost' || hostname === '[::1]';
  return loopback ? { allowHTTP: protocol === 'http:', allowLoopback: true } : true;
}

export async function main(
  url: string,
  log: (line: string) => void = console.log,
): Promise<SubscriptionPolicyResult> {
  const client = new AxMCPClient(new AxMCPStreamableHTTPTransport(url, { ssrfProtection: ssrfFor(url) }), {
    namespace: 'inventory',
  });
  // Identity and trust come from *your* verified authentication, never from server content.
  const source = new AxMCPEventSource({
    client,
    identity: { tenantId: 'demo', userId: 'operator' },
    trust: 'authenticated',
    resourceSubscriptions: {
      select: (resource) =>
        resource.uri.startsWith('inventory://warehouse/') && !resource.uri.endsWith('/current'),
    },
  });
  const woken: string[] = [];
  const restock = eventTarget('restock-agent')
    .invoke((_input, context) => {
      woken.push(context.event.subject ?? '');
      log(`restock agent woke for ${context.event.subject} (trust ${context.trust})`);
      return { checked: context.event.subject ?? null };
    })
    .build();
  const runtime = eventRuntime({
    sources: [source],
    allowVolatile: true, // an in-memory store is fine for an example; use a durable one in production
    onError: (error, report) =>
      log(`${report.phase} error: ${error instanceof Error ? error.message : error}`),
    routes: [
      ...axMCPEventRoutes({
        client,
        onCatalogInvalidated: (ingress) => log(`catalog changed: ${JSON.stringify(ingress.event.data)}`),
      }),
      // Resource updates wake nothing by default: this route asks for it, for authenticated events only.
      eventRoute('restock-on-update')
        .types(MCP_EVENT_TYPES.resourceUpdated)
        .authenticated()
        .wake(restock)
        .build(),
    ],
  });
  try {
    await runtime.start();
    log(`subscribed: ${source.subscriptions.join(', ')}`);

    await client.callTool('adjust_stock', { warehouseId: 'berlin', sku: 'widget-a', delta: 5 });
    log('adjust_stock restocked 5 widget-a in berlin; the server sends resources/updated');
    const deadline = Date.now() + 10_000;
    while (!woken.includes('inventory://warehouse/berlin')) {
      if (Date.now() > deadline) throw new Error('No resource update arrived within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }

    const spoofed = await runtime.publish({
      event: {
        id: `spoofed-${Date.now()}`,
        source: mcpSource(client.namespace),
        type: MCP_EVENT_TYPES.resourceUpdated,
        subject: 'inventory://warehouse/berlin',
      },
    });
    log(`an anonymous look-alike event made ${spoofed.deliveryIds.length} deliveries`);
    await runtime.waitForIdle({ timeoutMs: 5_000 });
    return {
      subscriptions: source.subscriptions,
      woken: [...woken],
      spoofedDeliveries: spoofed.deliveryIds.length,
    };
  } finally {
    await runtime.close(); // closes the source, which releases only its own subscriptions
    await client.close();
  }
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  main(process.env.AX_MCP_URL ?? 'http://127.0.0.1:3000/mcp').catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
