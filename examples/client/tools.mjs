// @ts-check
/**
 * Tool calls: the raw result, an `isError` result, a per-call deadline and an abort, and the
 * client-wide guard. Run: `node examples/client/tools.mjs` against `npx ax-mcp demo --serve`.
 */
import { AxMCPClient, AxMCPError, AxMCPStreamableHTTPTransport } from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';

// #region options
const client = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  {
    namespace: 'inventory', // required: names the server in tool bindings, events and errors
    timeoutMs: 30_000, // default deadline of every request (60 s); progress restarts it
    // Runs before every call with the catalog's (frozen) tool; false sends nothing.
    authorizeToolCall: ({ tool, arguments: args }) =>
      tool.annotations?.destructiveHint !== true ||
      (typeof args.delta === 'number' && Math.abs(args.delta) <= 10),
  },
);
// #endregion options

// #region call
const result = await client.callTool('get_stock', { sku: 'widget-b' });
// The raw MCP result: every content block, structuredContent, isError and _meta, untouched.
console.log(result.content.map((block) => block.type).join(', '), result.structuredContent);

// A tool that fails reports it in the result (isError), not as an exception.
const failed = await client.callTool('adjust_stock', { warehouseId: 'berlin', sku: 'widget-b', delta: -9 });
console.log(failed.isError ? 'the tool refused:' : 'adjusted:', failed.content[0]);
// #endregion call

// #region deadline
// Per call: a deadline and a signal. An aborted or timed-out call is never replayed.
const controller = new AbortController();
controller.abort();
try {
  await client.callTool('get_stock', { sku: 'widget-a' }, { signal: controller.signal, timeoutMs: 5_000 });
} catch (error) {
  if (!(error instanceof AxMCPError)) throw error;
  console.log(`${error.code}: ${error.message}`);
}
// #endregion deadline

await client.close();
