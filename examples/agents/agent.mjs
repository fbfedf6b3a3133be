// @ts-check
// openai: [{"content":"Step 1:\n```js\nconst stock = await Promise.all(['widget-a', 'widget-b', 'gadget-x'].map((sku) => mcp.inventory.tools.get_stock({ sku })))\nconst low = stock.map((r) => r.structuredContent).filter((s) => Object.values(s.warehouses).some((n) => n < 10))\nconsole.log(low.map((s) => s.sku).join(', '))\n```"},{"content":"```js\nfinal('List the SKUs below 10 in some warehouse', { low })\n```"},{"content":"{\"answer\":\"widget-b is low in Berlin (8) and gadget-x in Lisbon (3).\",\"skus\":[\"widget-b\",\"gadget-x\"]}"}]
// An agent acts by writing code: each turn its actor writes one JavaScript step that runs in
// a QuickJS sandbox, where MCP is reachable only as mcp.<namespace>.…; variables persist from
// step to step; final(task, evidence) hands the evidence to a responder that writes the outputs.
// Needs the demo server: npx ax-mcp demo --serve (AX_MCP_ENDPOINT overrides the URL).
import { AxMCPClient, AxMCPStreamableHTTPTransport, agent, axOpenAICompatible } from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const llm = axOpenAICompatible({ model: process.env.OPENAI_MODEL ?? 'gpt-4.1-mini' });

// #region agent
const inventory = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  { namespace: 'inventory', authorizeToolCall: ({ tool }) => tool.annotations?.readOnlyHint === true },
);
const analyst = agent('"Answers stock questions" question:string -> answer:string, skus:string[]', {
  mcp: inventory,
  maxTurns: 6,
  limits: { stepTimeoutMs: 10_000 },
});
const { answer, skus } = await analyst.forward(
  llm,
  { question: 'Which SKUs are low somewhere?' },
  {
    onAgentEvent: (event) => {
      if (event.type === 'step') console.log(`turn ${event.turn} runs:\n${event.code}`);
      if (event.type === 'observation') console.log(`turn ${event.turn} printed: ${event.entry.output}`);
    },
  },
);
console.log(answer, skus);
await analyst.close(); // frees the sandbox, releases what the agent's code subscribed
await inventory.close();
// #endregion agent
