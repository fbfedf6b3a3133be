// @ts-check
// trigger: { "when": "waiting for", "tool": "adjust_stock", "arguments": { "warehouseId": "berlin", "sku": "widget-a", "delta": -30 } }
import {
  AxMCPClient,
  AxMCPEventSource,
  AxMCPStreamableHTTPTransport,
  eventRoute,
  eventRuntime,
  MCP_EVENT_TYPES,
} from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const client = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  {
    namespace: 'inventory',
  },
);

// #region source
// The source owns the subscriptions its policy selects (default: none) and turns every
// notification into an event. Identity and trust are yours to state, from your own
// authentication of whoever runs this: an MCP session never proves who the tenant is.
const source = new AxMCPEventSource({
  client,
  resourceSubscriptions: ['inventory://warehouse/berlin'],
  identity: { tenantId: 'demo' },
  trust: 'authenticated',
});
// #endregion source

// #region observe
/** @type {(value?: unknown) => void} */
let updated = () => {};
const firstUpdate = new Promise((resolve) => (updated = resolve));
const runtime = eventRuntime({
  sources: [source],
  allowVolatile: true, // the in-memory store: fine here, not for production
  routes: [
    // observe: look at each update, never run a target (and never a model).
    eventRoute('print-updates')
      .types(MCP_EVENT_TYPES.resourceUpdated)
      .observe(({ event }) => {
        console.log(`${event.type}: ${event.subject}`);
        updated();
      })
      .build(),
  ],
});
await runtime.start(); // connects, opens the notification stream, subscribes
console.log(`waiting for updates of ${source.subscriptions.join(', ')}`);
await firstUpdate;
// #endregion observe

await runtime.close(); // also closes the source, which releases its subscription
await client.close();
