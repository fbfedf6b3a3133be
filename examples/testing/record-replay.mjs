// @ts-check
// Record a program's MCP session against the real server once, then replay it offline: no
// server, no network, no side effects. A program that departs from the recording fails with
// AxMCPReplayMismatchError, naming the step.
// Needs the demo server: npx ax-mcp demo --serve (AX_MCP_ENDPOINT overrides the URL).
// #region program
import { AxMCPClient, AxMCPStreamableHTTPTransport } from 'ax-mcp';
import { AxMCPReplayTransport, parseAxMCPRecording, recordAxMCPSession } from 'ax-mcp/testing';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';

/** The code under test. @param {AxMCPClient} client @param {string} sku */
async function stockReport(client, sku = 'widget-b') {
  const catalog = await client.inspectCatalog();
  const stock = await client.callTool('get_stock', { sku });
  return { tools: catalog.tools.map((tool) => tool.name), stock: stock.structuredContent };
}
// #endregion program

// #region record
const { result, recording } = await recordAxMCPSession({
  transport: new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  client: { namespace: 'inventory' },
  run: (client) => stockReport(client),
});
const file = JSON.stringify(recording, null, 2); // commit this next to your tests
console.log(`recorded ${recording.steps.length} steps, era ${recording.era}`);
// #endregion record

// #region replay
const replay = new AxMCPReplayTransport(parseAxMCPRecording(JSON.parse(file)), { strict: true });
const offline = new AxMCPClient(replay, { namespace: 'inventory' }); // the options it was recorded with
const replayed = await stockReport(offline);
replay.assertComplete(); // every recorded message was sent, in a matching order
console.log('same result:', JSON.stringify(replayed) === JSON.stringify(result)); // true
await offline.close();

const strict = new AxMCPReplayTransport(recording, { strict: true });
const departing = new AxMCPClient(strict, { namespace: 'inventory' });
await stockReport(departing, 'gadget-x').catch((/** @type {Error} */ error) =>
  console.log(error.name, error.message),
);
await departing.close();
// #endregion replay
