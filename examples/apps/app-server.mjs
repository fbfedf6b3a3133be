// @ts-check
// A small MCP server with an app, on the official server SDK (a dependency of ax-mcp), run
// over stdio by bridge.mjs: `node app-server.mjs --stdio`. Without --stdio it only says so.
// show_cart names the app resource ui://shop/cart; cart_items is visible to the app only,
// checkout to the model only.
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

const APP_MIME = 'text/html;profile=mcp-app';
const VIEW = `<!doctype html><html><head><title>cart</title></head><body><ul id="items"></ul>
<script>/* the view speaks JSON-RPC with the host over postMessage: ui/initialize first */</script>
</body></html>`;

function cartServer() {
  const server = new McpServer(
    { name: 'shop', version: '1.0.0' },
    { capabilities: { tools: {}, resources: {} } },
  );
  server.registerTool(
    'show_cart',
    { description: 'Shows the cart as an app.', _meta: { ui: { resourceUri: 'ui://shop/cart' } } },
    async () => ({ content: [{ type: 'text', text: 'cart shown' }] }),
  );
  server.registerTool(
    'cart_items',
    {
      description: 'The items of a cart (for the app).',
      inputSchema: z.object({ cartId: z.string() }),
      annotations: { readOnlyHint: true },
      _meta: { ui: { resourceUri: 'ui://shop/cart', visibility: ['app'] } },
    },
    async ({ cartId }) => ({
      content: [{ type: 'text', text: `2 items in ${cartId}` }],
      structuredContent: { items: ['widget-a', 'gadget-x'] },
    }),
  );
  server.registerTool(
    'checkout',
    {
      description: 'Pays for the cart.',
      _meta: { ui: { resourceUri: 'ui://shop/cart', visibility: ['model'] } },
    },
    async () => ({ content: [{ type: 'text', text: 'paid' }] }),
  );
  server.registerResource('cart', 'ui://shop/cart', { mimeType: APP_MIME }, async (uri) => ({
    contents: [
      {
        uri: uri.href,
        mimeType: APP_MIME,
        text: VIEW,
        _meta: { ui: { csp: { connectDomains: ['https://api.shop.example'] } } },
      },
    ],
  }));
  return server;
}

if (process.argv.includes('--stdio')) serveStdio(() => cartServer());
else console.log('app-server.mjs: an MCP server for bridge.mjs; run it with --stdio');
