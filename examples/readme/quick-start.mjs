// @ts-check
import {
  AxMCPClient,
  AxMCPEventSource,
  AxMCPStreamableHTTPTransport,
  eventRoute,
  eventRuntime,
  eventTarget,
  MCP_EVENT_TYPES,
} from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp'; // npx ax-mcp demo --serve
const client = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }), // a server on this machine
  { namespace: 'inventory' },
);

// 1. Discover: look at what the server offers. Nothing is subscribed, nothing is called.
const catalog = await client.inspectCatalog();
console.log(`${catalog.era} era, tools: ${catalog.tools.map((tool) => tool.name).join(', ')}`);

// 2. Subscribe: the source owns the subscriptions its policy selects. Who the events belong to
//    comes from your own authentication, never from the MCP session.
const source = new AxMCPEventSource({
  client,
  resourceSubscriptions: ['inventory://warehouse/berlin'],
  identity: { tenantId: 'demo' },
  trust: 'authenticated',
});

// 3. Route: nothing wakes by default; this rule wakes a target on updates, for authenticated events.
/** @type {(value?: unknown) => void} */
let woke = () => {};
const done = new Promise((resolve) => (woke = resolve));
const restock = eventTarget('restock')
  .invoke((_input, { event }) => {
    console.log(`restock woke for ${event.subject}`);
    woke();
  })
  .build();
const runtime = eventRuntime({
  sources: [source],
  allowVolatile: true, // in-memory store; SQLite and PostgreSQL stores come from ax-mcp/node
  routes: [
    eventRoute('restock-on-update')
      .types(MCP_EVENT_TYPES.resourceUpdated)
      .authenticated()
      .wake(restock)
      .build(),
  ],
});
await runtime.start();

// A change on the server: adjust_stock makes the demo send notifications/resources/updated.
await client.callTool('adjust_stock', { warehouseId: 'berlin', sku: 'widget-a', delta: -5 });
await done;
await runtime.close();
await client.close();
