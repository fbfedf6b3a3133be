// @ts-check
/**
 * A subscription policy: an `AxMCPEventSource` that subscribes only the resources a `select`
 * function chooses (every warehouse document but the aggregate view), the default MCP routes
 * (`axMCPEventRoutes`), and one route of our own that wakes a target on resource updates — for
 * authenticated events only. A look-alike event without an identity wakes nothing.
 * The last line is what it observed, as JSON.
 *
 * Run: `node examples/subscriptions/subscription-policy.mjs` with the demo server up
 * (`npx ax-mcp demo --serve`); its `adjust_stock` tool changes a warehouse document.
 */
import {
  AxMCPClient,
  AxMCPEventSource,
  AxMCPStreamableHTTPTransport,
  axMCPEventRoutes,
  eventRoute,
  eventRuntime,
  eventTarget,
  MCP_EVENT_TYPES,
  mcpSource,
} from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const client = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  {
    namespace: 'inventory',
  },
);

// #region policy
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
/** @type {string[]} */
const woken = [];
const restock = eventTarget('restock-agent')
  .invoke((_input, context) => {
    woken.push(context.event.subject ?? '');
    console.log(`restock agent woke for ${context.event.subject} (trust ${context.trust})`);
    return { checked: context.event.subject ?? null };
  })
  .build();
const runtime = eventRuntime({
  sources: [source],
  allowVolatile: true, // an in-memory store is fine for an example; use a durable one in production
  onError: (error, report) =>
    console.log(`${report.phase} error: ${error instanceof Error ? error.message : error}`),
  routes: [
    ...axMCPEventRoutes({
      client,
      onCatalogInvalidated: (ingress) =>
        console.log(`catalog changed: ${JSON.stringify(ingress.event.data)}`),
    }),
    // Resource updates wake nothing by default: this route asks for it, for authenticated events only.
    eventRoute('restock-on-update')
      .types(MCP_EVENT_TYPES.resourceUpdated)
      .authenticated()
      .wake(restock)
      .build(),
  ],
});
await runtime.start();
console.log(`subscribed: ${source.subscriptions.join(', ')}`);
// #endregion policy

try {
  // #region update
  await client.callTool('adjust_stock', { warehouseId: 'berlin', sku: 'widget-a', delta: 5 });
  console.log('adjust_stock restocked 5 widget-a in berlin; the server sends resources/updated');
  const deadline = Date.now() + 10_000;
  while (!woken.includes('inventory://warehouse/berlin')) {
    if (Date.now() > deadline) throw new Error('No resource update arrived within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  // #endregion update

  // #region spoofed
  const spoofed = await runtime.publish({
    event: {
      id: `spoofed-${Date.now()}`,
      source: mcpSource(client.namespace),
      type: MCP_EVENT_TYPES.resourceUpdated,
      subject: 'inventory://warehouse/berlin',
    },
  });
  console.log(`an anonymous look-alike event made ${spoofed.deliveryIds.length} deliveries`);
  // #endregion spoofed
  await runtime.waitForIdle({ timeoutMs: 5_000 });
  console.log(
    JSON.stringify({
      subscriptions: source.subscriptions,
      woken,
      spoofedDeliveries: spoofed.deliveryIds.length,
    }),
  );
} finally {
  await runtime.close(); // closes the source, which releases only its own subscriptions
  await client.close();
}
