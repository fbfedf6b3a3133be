// @ts-check
/**
 * Listening and subscriptions with logical owners, without the event runtime: the client's own
 * events. Run: `node examples/client/events.mjs` against `npx ax-mcp demo --serve`.
 */
import { AxMCPClient, AxMCPStreamableHTTPTransport } from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const client = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  {
    namespace: 'inventory',
  },
);

// #region listen
/** @type {string[]} */
const changed = [];
const stop = client.subscribeEvents((event) => {
  if (event.type === 'resource_updated') changed.push(event.uri);
  if (event.type === 'lifecycle') console.log(`lifecycle: ${event.state}`);
});
const listening = client.startListening({ onError: (error) => console.error('stream:', error) });
await listening.ready; // the notification stream is open
// #endregion listen

// #region owners
const uri = 'inventory://warehouse/berlin';
await client.acquireResourceSubscription(uri, 'dashboard'); // on the wire
await client.acquireResourceSubscription(uri, 'restock-agent'); // no wire traffic: another owner
console.log(client.subscriptions); // [{ uri, owners: ['dashboard', 'restock-agent'] }]
await client.releaseResourceSubscription(uri, 'dashboard'); // still subscribed for restock-agent
// #endregion owners

await client.callTool('adjust_stock', { warehouseId: 'berlin', sku: 'widget-b', delta: 2 });
const deadline = Date.now() + 5_000;
while (!changed.includes(uri) && Date.now() < deadline)
  await new Promise((resolve) => setTimeout(resolve, 20));
console.log(`updated: ${changed.join(', ')}`);

// #region stop
await client.releaseResourceSubscription(uri, 'restock-agent'); // the last owner: off the wire
listening.close();
stop();
await client.close(); // close() also releases whatever is still owned
// #endregion stop
