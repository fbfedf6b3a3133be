// @ts-check
/**
 * Subscriptions survive a dropped stream: the client reconnects by itself, says whether the
 * stream resumed (`resumed`), and the source re-checks its subscriptions. The demo's control
 * endpoint drops every stream. Run: `node examples/subscriptions/reconnect.mjs` against
 * `npx ax-mcp demo --serve`.
 */
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
/** @type {string[]} */
const seen = [];
const wait = async (/** @type {() => boolean} */ done) => {
  const deadline = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

// #region lifecycle
// What the stream does, as it happens: connected, disconnected, reconnected (resumed or not).
client.subscribeEvents((event) => {
  if (event.type === 'lifecycle') {
    console.log(
      `lifecycle ${event.state}${event.resumed === undefined ? '' : ` (resumed: ${event.resumed})`}`,
    );
    seen.push(event.state);
  }
});
const runtime = eventRuntime({
  sources: [
    new AxMCPEventSource({
      client,
      resourceSubscriptions: 'all',
      identity: { tenantId: 'demo' },
      trust: 'authenticated',
    }),
  ],
  allowVolatile: true,
  // Failures of the stream and of subscription changes arrive here (phase 'source'), never silently.
  onError: (error, report) =>
    console.log(`${report.phase}: ${error instanceof Error ? error.message : error}`),
  routes: [
    eventRoute('updates')
      .types(MCP_EVENT_TYPES.resourceUpdated)
      .observe(({ event }) => void seen.push(String(event.subject)))
      .build(),
  ],
});
await runtime.start();
// #endregion lifecycle

// #region drop
await fetch(endpoint.replace(/\/mcp$/, '/control/drop'), { method: 'POST' }); // the demo drops every stream
await wait(() => seen.includes('reconnected'));
await client.callTool('adjust_stock', { warehouseId: 'lisbon', sku: 'widget-a', delta: 1 });
await wait(() => seen.includes('inventory://warehouse/lisbon'));
console.log('after the reconnect, the update of inventory://warehouse/lisbon still arrived');
// #endregion drop

await runtime.close();
await client.close();
