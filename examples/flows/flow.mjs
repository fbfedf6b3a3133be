// @ts-check
// openai: [{"content":"{\"facts\":\"Berlin holds 8 widget-b, Lisbon 60.\",\"tone\":\"urgent\"}"},{"content":"{\"facts\":\"Berlin holds 8 widget-b, Lisbon 60.\",\"tone\":\"urgent\"}"},{"content":"{\"reply\":\"Berlin is almost out of widget-b (8 left); Lisbon can send some of its 60.\"}"}]
// A flow runs programs as the nodes of a directed acyclic graph: a node runs once its
// predecessors have, independent nodes run in parallel, and each node inherits only the MCP
// clients its mcpInheritance lets through.
// Needs the demo server: npx ax-mcp demo --serve (AX_MCP_ENDPOINT overrides the URL).
import { AxMCPClient, AxMCPStreamableHTTPTransport, ax, axOpenAICompatible, flow } from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const llm = axOpenAICompatible({ model: process.env.OPENAI_MODEL ?? 'gpt-4.1-mini' });
const connect = (/** @type {string} */ namespace) =>
  new AxMCPClient(new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }), {
    namespace,
  });
const inventory = connect('inventory');
const tickets = connect('tickets'); // a second server (here the same demo under another namespace)

// #region flow
const support = flow({ mcp: [inventory, tickets], maxConcurrency: 4 })
  .node('stock', ax('question:string -> facts:string'), { mcpInheritance: ['inventory'] })
  .node('tone', ax('question:string -> tone:class "calm, urgent"'), { mcpInheritance: 'none' })
  .node('reply', ax('question:string, facts:string, tone:string -> reply:string'), {
    mcpInheritance: 'none',
  })
  .edge('stock', 'reply') // reply gets facts from stock and tone from tone (its declared inputs)
  .edge('tone', 'reply')
  .output((state) => state.outputs.reply);

const result = await support.forward(llm, { question: 'Can Berlin still ship widget-b?' });
console.log(result?.reply);
// #endregion flow
await Promise.all([inventory.close(), tickets.close()]);
