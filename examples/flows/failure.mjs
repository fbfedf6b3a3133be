// @ts-check
// openai: [{"toolCalls":[{"name":"start_reindex","arguments":{"scope":"berlin"}}]}]
// When a node fails, the flow aborts the other branches and asks the servers to cancel the
// tasks their tool calls created. A node is anything with forward(ai, input, options): here
// an ax() program whose tool call became a task, beside a check of our own that fails.
// Needs the demo server: npx ax-mcp demo --serve (AX_MCP_ENDPOINT overrides the URL).
import { AxMCPClient, AxMCPStreamableHTTPTransport, ax, axOpenAICompatible, flow } from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const llm = axOpenAICompatible({ model: process.env.OPENAI_MODEL ?? 'gpt-4.1-mini' });
/** @type {string[]} */
const tasks = [];
const inventory = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  { namespace: 'inventory', onTaskStatus: (task) => tasks.push(task.taskId) },
);

// #region failure
const budgetCheck = {
  inputFields: [{ name: 'scope' }],
  /** @param {unknown} _ai @param {Record<string, unknown>} input */
  async forward(_ai, input) {
    await new Promise((resolve) => setTimeout(resolve, 500)); // the reindex is under way by now
    throw new Error(`no budget left for ${input.scope}`);
  },
};
const maintenance = flow({ mcp: inventory })
  .node('reindex', ax('scope:string -> documents:number', { instructions: 'Reindex the scope.' }))
  .node('budget', budgetCheck);

const failed = await maintenance
  .forward(llm, { scope: 'berlin' })
  .catch((/** @type {Error} */ error) => error);
console.log('flow failed:', failed instanceof Error ? failed.message : failed);
const [taskId] = tasks;
if (taskId) console.log(`task ${taskId} is`, (await inventory.getTask(taskId)).status); // cancelled
// #endregion failure
await inventory.close();
