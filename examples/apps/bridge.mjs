// @ts-check
// The host side of an MCP App: load the app a tool names as a sandboxed document, and answer
// the view's JSON-RPC messages. In a browser the view is an iframe and messages move with
// postMessage; here a few lines stand in for the view, so the example runs in Node. The app's
// server is app-server.mjs (the official server SDK), started over stdio.
// #region bridge
import { fileURLToPath } from 'node:url';
import { AxMCPAppBridge, AxMCPClient, withAxMCPAppsExtension } from 'ax-mcp';
import { AxMCPStdioTransport } from 'ax-mcp/node';

const server = fileURLToPath(new URL('./app-server.mjs', import.meta.url));
/** @typedef {{ id?: unknown, method?: string, result?: { structuredContent?: unknown }, error?: { message: string } }} ViewMessage */
/** @type {ViewMessage[]} */
const toView = [];

const client = new AxMCPClient(
  // The client declares the Apps extension; a client that does not loads no app.
  withAxMCPAppsExtension(new AxMCPStdioTransport({ command: process.execPath, args: [server, '--stdio'] })),
  { namespace: 'shop' },
);
/** @type {import('ax-mcp').AxMCPAppModelContent | undefined} */
let appContext; // untrusted data for the next model call
const bridge = new AxMCPAppBridge({
  client,
  tool: 'show_cart',
  // In a browser: (message) => iframe.contentWindow?.postMessage(message, '*')
  sendToView: (message) => {
    toView.push(/** @type {ViewMessage} */ (message));
  },
  // The view may read, and call only tools the server marks read-only.
  authorize: ({ method, tool }) => method !== 'tools/call' || tool?.annotations?.readOnlyHint === true,
  updateModelContext: (update) => {
    appContext = update;
  },
});
const app = await bridge.load();
console.log('sandbox:', app.sandbox);
console.log('csp:', app.csp);
// In a browser: iframe.sandbox.value = app.sandbox; iframe.allow = app.allow; iframe.srcdoc = app.html;
// window.addEventListener('message', (e) => { if (e.source === iframe.contentWindow) void bridge.receive(e.data); });
// #endregion bridge

// #region view
// What a view posts, handed to bridge.receive() (it never throws; errors are answered).
const view = async (/** @type {Record<string, unknown>} */ message) => {
  await bridge.receive({ jsonrpc: '2.0', ...message });
  return toView.at(-1);
};
console.log(
  'early call:',
  (await view({ id: 1, method: 'tools/call', params: { name: 'cart_items' } }))?.error?.message,
);
await view({
  id: 2,
  method: 'ui/initialize',
  params: { protocolVersion: '2026-01-26', appInfo: { name: 'cart' } },
});
await bridge.receive({ jsonrpc: '2.0', method: 'ui/notifications/initialized', params: {} });
const items = await view({
  id: 3,
  method: 'tools/call',
  params: { name: 'cart_items', arguments: { cartId: 'c-42' } },
});
console.log('cart_items:', JSON.stringify(items?.result?.structuredContent));
const checkout = await view({ id: 4, method: 'tools/call', params: { name: 'checkout', arguments: {} } });
console.log('checkout:', checkout?.error?.message);
await view({
  id: 5,
  method: 'ui/update-model-context',
  params: { content: [{ type: 'text', text: 'user chose c-42' }] },
});
console.log('model context:', JSON.stringify(appContext));
// #endregion view

await bridge.sendToolResult(await client.callTool('show_cart', {})); // delivered: the view is ready
console.log('host sent:', toView.at(-1)?.method);
bridge.close();
await client.close(); // ends the server process
