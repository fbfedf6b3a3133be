// @ts-check
// MCP notifications as events: an AxMCPEventSource subscribes to the resources its policy
// selects and publishes what the server sends; axMCPEventRoutes adds the default routes; one
// route of our own wakes a target when a warehouse document changes.
// Needs the demo server: npx ax-mcp demo --serve (AX_MCP_ENDPOINT overrides the URL).
import {
  AxMCPClient,
  AxMCPEventSource,
  AxMCPStreamableHTTPTransport,
  axMCPEventRoutes,
  eventPath,
  eventRoute,
  eventRuntime,
  eventTarget,
  MCP_EVENT_TYPES,
} from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
// The demo listens on loopback: SSRF protection refuses it unless you allow it.
const transport = new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } });
const client = new AxMCPClient(transport, { namespace: 'inventory' });

/** @type {(uri: string) => void} */
let changed = () => {};
const woken = new Promise((resolve) => {
  changed = resolve;
});

// #region source
const source = new AxMCPEventSource({
  client,
  identity: { tenantId: 'acme' }, // from YOUR verified authentication, never from the server
  trust: 'authenticated',
  resourceSubscriptions: { select: (resource) => resource.uri === 'inventory://warehouse/berlin' },
});

const restock = eventTarget('restock')
  .inputFields([{ name: 'uri', type: 'string' }])
  .input((input) => input.field('uri', eventPath.subject()))
  .retrySafety('idempotent') // it only reads: running it twice is harmless
  .invoke(async ({ uri }) => {
    const read = await client.readResource(String(uri));
    changed(String(uri));
    return { bytes: JSON.stringify(read.contents).length };
  })
  .build();

const runtime = eventRuntime({
  sources: [source],
  routes: [
    ...axMCPEventRoutes({ client }), // catalog → invalidate, progress/logging → observe, tasks → resume
    eventRoute('restock-on-update')
      .types(MCP_EVENT_TYPES.resourceUpdated)
      .authenticated()
      .debounce(200, { coalesce: 'latest' }) // a burst of updates wakes the target once
      .wake(restock)
      .build(),
  ],
});
await runtime.start();
console.log('subscribed:', source.subscriptions.join(', '));
// #endregion source

// The demo sends resources/updated when stock changes.
await client.callTool('adjust_stock', { warehouseId: 'berlin', sku: 'widget-a', delta: -5 });
const timeout = setTimeout(() => changed('(nothing within 10 s)'), 10_000);
console.log('woken for', await woken);
clearTimeout(timeout);

await runtime.close(); // closes the source: it releases its own subscriptions
await client.close();
