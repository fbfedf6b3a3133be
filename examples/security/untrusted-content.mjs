// @ts-check
// openai: [{ "toolCalls": [{ "name": "get_stock", "arguments": { "sku": "widget-b" } }] }, { "content": "{\"answer\":\"Berlin holds 8 widget-b.\"}" }]
/**
 * What the model sees of server content: `mcpContext` wrapped as untrusted data, tool results
 * kept raw and attributed, and the system rule that both are data, never instructions. A `fetch`
 * wrapper prints the request as the provider receives it. Run: `node examples/security/untrusted-content.mjs`
 * against `npx ax-mcp demo --serve`, with OPENAI_API_KEY (or OPENAI_BASE_URL) set.
 */
import { AxMCPClient, AxMCPStreamableHTTPTransport, ax, axOpenAICompatible } from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const inventory = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  {
    namespace: 'inventory',
    authorizeToolCall: ({ tool }) => tool.annotations?.readOnlyHint === true,
  },
);

// #region seen
/** @type {{ role: string, content: unknown }[][]} */
const sent = [];
const llm = axOpenAICompatible({
  model: process.env.OPENAI_MODEL ?? 'gpt-4.1-mini',
  fetch: async (input, init) => {
    sent.push(JSON.parse(String(init?.body)).messages);
    return fetch(input, init);
  },
});
const program = ax('question:string -> answer:string', {
  mcp: inventory,
  mcpContext: [{ client: 'inventory', resource: { uri: 'inventory://warehouse/berlin' } }],
});
console.log(await program.forward(llm, { question: 'How many widget-b are in Berlin?' }));

const text = (/** @type {unknown} */ content) =>
  typeof content === 'string' ? content : JSON.stringify(content);
for (const message of sent.at(-1) ?? []) {
  const body = text(message.content);
  // From the system message, only the rule about server content.
  const shown =
    message.role === 'system'
      ? body
          .split('\n')
          .filter((line) => line.includes('untrusted'))
          .join(' ')
      : body;
  console.log(`${message.role.padEnd(9)} ${shown.replace(/\s+/g, ' ').slice(0, 160)}`);
}
// #endregion seen

await inventory.close();
