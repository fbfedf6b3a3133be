// @ts-check
// openai: [{"content":"```js\nconst { facts } = await agents.researcher({ sku: 'widget-b' })\nconsole.log(Object.keys(mcp).join(','), facts.length)\n```"},{"content":"```js\nconst stock = await mcp.inventory.tools.get_stock({ sku: inputs.sku })\nfinal('State the stock facts', stock.structuredContent)\n```"},{"content":"{\"facts\":[\"Berlin holds 8 widget-b\",\"Lisbon holds 60 widget-b\"]}"},{"content":"```js\nfinal('Answer from the facts', { facts })\n```"},{"content":"{\"answer\":\"Berlin is low on widget-b (8); Lisbon has 60.\"}"}]
// Child agents: a parent's actor calls agents.<name>(inputs); the child runs its own actor and
// responder inside the parent's execution context, limited by its mcpInheritance.
// Needs the demo server: npx ax-mcp demo --serve (AX_MCP_ENDPOINT overrides the URL).
import { AxMCPClient, AxMCPStreamableHTTPTransport, agent, axOpenAICompatible } from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const llm = axOpenAICompatible({ model: process.env.OPENAI_MODEL ?? 'gpt-4.1-mini' });
const connect = (/** @type {string} */ namespace) =>
  new AxMCPClient(new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }), {
    namespace,
  });
const inventory = connect('inventory');
const ops = connect('ops'); // a second server (here the same demo under another namespace)

// #region children
const researcher = agent('sku:string -> facts:string[]', {
  name: 'researcher',
  description: 'Looks up the stock of one SKU',
  mcpInheritance: ['inventory'], // 'all' (default), 'none', or an allowlist of namespaces
});
const lead = agent('question:string -> answer:string', { mcp: [inventory, ops], agents: [researcher] });
const { answer } = await lead.forward(
  llm,
  { question: 'Is widget-b low anywhere?' },
  { onAgentEvent: (event) => event.type === 'observation' && console.log('lead saw:', event.entry.output) },
);
console.log(answer);
await lead.close();
// #endregion children
await Promise.all([inventory.close(), ops.close()]);
