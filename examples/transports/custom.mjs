// @ts-check
/**
 * A transport of your own: wrap another and change one thing. `AxMCPWrappingTransport` passes
 * every member through to the inner transport; override only what you change.
 * Run: `node examples/transports/custom.mjs` against `npx ax-mcp demo --serve`.
 */
import { AxMCPClient, AxMCPStreamableHTTPTransport, AxMCPWrappingTransport } from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';

// #region wrapping
/** Counts the requests by method, and passes everything on unchanged. */
class CountingTransport extends AxMCPWrappingTransport {
  /** @type {Map<string, number>} */
  counts = new Map();

  /** @type {AxMCPWrappingTransport['request']} */
  request(message, options) {
    this.counts.set(message.method, (this.counts.get(message.method) ?? 0) + 1);
    return super.request(message, options);
  }
}

const counting = new CountingTransport(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
);
const client = new AxMCPClient(counting, { namespace: 'inventory' });
await client.inspectCatalog();
await client.callTool('get_stock', { sku: 'widget-a' });
await client.close();
console.log(Object.fromEntries(counting.counts));
// #endregion wrapping
