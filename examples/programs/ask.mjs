// @ts-check
// openai: [{"toolCalls":[{"name":"adjust_stock","arguments":{"warehouseId":"berlin","sku":"widget-a","delta":-5}}]},{"toolCalls":[{"name":"get_stock","arguments":{"sku":"widget-a"}}]},{"content":"{\"answer\":\"I may not change stock. We hold 155 widget-a: 120 in Berlin, 35 in Lisbon.\",\"total\":155}"}]
// A program with a signature and an MCP client: the model calls the server's tools through
// the client (its guard, concurrency limit, tasks and cancellation apply) until its answer
// matches the outputs. Any OpenAI-compatible endpoint: OPENAI_BASE_URL, OPENAI_API_KEY.
// Needs the demo server: npx ax-mcp demo --serve (AX_MCP_ENDPOINT overrides the URL).
import { AxMCPClient, AxMCPStreamableHTTPTransport, ax, axOpenAICompatible } from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';

// #region program
const inventory = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  // The program may call only what the server marks read-only.
  { namespace: 'inventory', authorizeToolCall: ({ tool }) => tool.annotations?.readOnlyHint === true },
);
// apiKey and baseURL default to OPENAI_API_KEY and OPENAI_BASE_URL (else https://api.openai.com/v1).
const llm = axOpenAICompatible({ model: process.env.OPENAI_MODEL ?? 'gpt-4.1-mini' });

const stock = ax('"Answers stock questions" question:string -> answer:string, total:number', {
  mcp: inventory,
  instructions: 'Check the inventory tools before answering.',
});
const { answer, total } = await stock.forward(
  llm,
  { question: 'Take 5 widget-a out of Berlin, then tell me how many we hold.' },
  { maxSteps: 4, onMCPEvent: (event) => console.log(event.type, event.componentId) },
);
console.log(answer, `(total ${total})`);
await inventory.close();
// #endregion program
