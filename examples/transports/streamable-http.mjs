// @ts-check
/**
 * Streamable HTTP, the transport of both eras: its options, and the same transport over Node's
 * keep-alive HTTP stack (`ax-mcp/node`). Run: `node examples/transports/streamable-http.mjs`
 * against `npx ax-mcp demo --serve`.
 */
import { AxMCPClient, AxMCPStreamableHTTPTransport } from 'ax-mcp';
import { AxMCPNodeHTTPTransport } from 'ax-mcp/node';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';

// #region options
const transport = new AxMCPStreamableHTTPTransport(endpoint, {
  headers: { 'x-request-source': 'docs' }, // sent with every HTTP request
  ssrfProtection: { allowLoopback: true }, // default: HTTPS to public addresses only
  timeoutMs: 30_000, // exchanges without a request deadline (notifications, opening a stream)
  maxResponseBytes: 4 * 1024 * 1024, // the largest single message (default 16 MiB)
  maxRedirects: 5, // each hop checked again by the SSRF policy
  retry: { attempts: 3, baseDelayMs: 250, maxDelayMs: 30_000 }, // what is safe to repeat, never tools/call
  maxResumeAttempts: 5, // a broken SSE response resumed with Last-Event-ID
});
const client = new AxMCPClient(transport, { namespace: 'inventory' });
console.log(transport.kind, (await client.inspectCatalog()).era);
await client.close(); // ends the session (DELETE on 2025-11-25) and closes the transport
// #endregion options

// #region node
// Node: the same protocol handling over keep-alive node:http agents; every address DNS
// resolves is checked against the SSRF policy before a socket connects.
const fast = new AxMCPClient(
  new AxMCPNodeHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  {
    namespace: 'inventory',
  },
);
console.log((await fast.callTool('get_stock', { sku: 'widget-a' })).structuredContent);
await fast.close();
// #endregion node
