// @ts-check
// openai: [{"toolCalls":[{"name":"get_stock","arguments":{"sku":"widget-b"}}]},{"content":"widget-b is low in Berlin (8 left); Lisbon holds 60."}]
// axMCPChat: a chat request with MCP tools and the same tool loop as programs, without a
// signature. The conversation comes back whole, raw MCP results included.
// Needs the demo server: npx ax-mcp demo --serve (AX_MCP_ENDPOINT overrides the URL).
import { AxMCPClient, AxMCPStreamableHTTPTransport, axMCPChat, axOpenAICompatible } from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const inventory = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  { namespace: 'inventory' },
);
const llm = axOpenAICompatible({ model: process.env.OPENAI_MODEL ?? 'gpt-4.1-mini' });

// #region chat
const { response, messages, steps } = await axMCPChat(
  llm,
  { messages: [{ role: 'user', content: 'Is widget-b running low anywhere?' }] },
  { mcp: inventory, maxSteps: 5 },
);
console.log(response.message.content);
for (const message of messages) {
  const content = message.role === 'tool' ? message.content : undefined;
  if (typeof content === 'object' && 'type' in content && content.type === 'mcp_tool_result') {
    console.log(content.componentId, JSON.stringify(content.result.structuredContent)); // raw, as sent
  }
}
console.log(`${steps} model calls`);
// #endregion chat
await inventory.close();
