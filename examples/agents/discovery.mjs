// @ts-check
// openai: [{"content":"```js\nconst found = await discover('stock of one sku')\nconsole.log(found.map((f) => f.path).join('\\n'))\n```"},{"content":"```js\nconst stock = await mcp.inventory.tools.get_stock({ sku: 'gadget-x' })\nfinal('Report the gadget-x total', stock.structuredContent)\n```"},{"content":"{\"total\":43}"}]
// Discovery keeps large catalogs out of the prompt: with functionDiscovery the actor sees only
// the namespaces and their sizes, calls discover(query), and the documentation of what it
// found is added to its next turn (marked untrusted: it comes from the server).
// Needs the demo server: npx ax-mcp demo --serve (AX_MCP_ENDPOINT overrides the URL).
import { AxMCPClient, AxMCPStreamableHTTPTransport, agent, axOpenAICompatible } from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const llm = axOpenAICompatible({ model: process.env.OPENAI_MODEL ?? 'gpt-4.1-mini' });
const inventory = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  { namespace: 'inventory' },
);

// #region discovery
const counter = agent('sku:string -> total:number', {
  mcp: inventory,
  functionDiscovery: { maxResults: 5 }, // or true (8 results)
});
const { total } = await counter.forward(
  llm,
  { sku: 'gadget-x' },
  {
    onAgentEvent: (event) => {
      if (event.type === 'discovered') console.log('discovered:', event.paths.join(', '));
    },
  },
);
console.log('total', total);
await counter.close();
// #endregion discovery
await inventory.close();
