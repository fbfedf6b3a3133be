// @ts-check
// openai: [{"content":"{\"plan\":\"Order 50 widget-b for Berlin; its stock of 8 is below the reorder point.\"}"}]
// Prompts and resources as context: mcpContext fetches them before the first model call and
// adds them as one user message, each part marked as untrusted data from its server. Entries
// name their client by object or by namespace.
// Needs the demo server: npx ax-mcp demo --serve (AX_MCP_ENDPOINT overrides the URL).
import { AxMCPClient, AxMCPStreamableHTTPTransport, ax, axOpenAICompatible } from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const inventory = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  { namespace: 'inventory' },
);
const llm = axOpenAICompatible({ model: process.env.OPENAI_MODEL ?? 'gpt-4.1-mini' });

// #region context
const planner = ax('request:string -> plan:string', { mcp: inventory });
const { plan } = await planner.forward(
  llm,
  { request: 'What should Berlin reorder?' },
  {
    mcpContext: [
      { client: inventory, resource: { uri: 'inventory://warehouse/berlin' } },
      { client: 'inventory', prompt: { name: 'restock_plan', arguments: { warehouseId: 'berlin' } } },
    ],
  },
);
console.log(plan);
// #endregion context

// #region unknown
// A namespace no attached client has is refused before any model call.
await planner
  .forward(
    llm,
    { request: 'x' },
    { mcpContext: [{ client: 'inventroy', resource: { uri: 'inventory://x' } }] },
  )
  .catch((/** @type {Error & { code?: string }} */ error) => console.log(error.code, '-', error.message));
// #endregion unknown
await inventory.close();
