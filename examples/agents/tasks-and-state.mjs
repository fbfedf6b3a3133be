// @ts-check
// openai: [{"content":"```js\nconst task = await mcp.inventory.tasks.get(inputs.taskId)\nconsole.log('task is', task.status)\nawait mcp.inventory.resources.subscribe('inventory://warehouse/berlin')\nconst cancelled = await mcp.inventory.tasks.cancel(inputs.taskId)\nconsole.log('now', cancelled.status)\nfinal('Report the task status', { status: cancelled.status })\n```"},{"content":"{\"status\":\"cancelled\"}"}]
// Tasks and subscriptions from the sandbox: mcp.<ns>.tasks.get / .cancel (and .update on
// 2026-07-28, .list / .result on the 2025-11-25 draft), resources.subscribe. getState() says
// what the agent's code holds — never credentials — and close() releases its subscriptions.
// Needs the demo server: npx ax-mcp demo --serve (AX_MCP_ENDPOINT overrides the URL).
import { AxMCPClient, AxMCPStreamableHTTPTransport, agent, axOpenAICompatible } from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const llm = axOpenAICompatible({ model: process.env.OPENAI_MODEL ?? 'gpt-4.1-mini' });
const inventory = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  { namespace: 'inventory' },
);

// #region tasks
const outcome = await inventory.callToolOutcome('start_reindex', { scope: 'berlin' });
if (outcome.kind !== 'task') throw new Error('expected start_reindex to become a task');

const operator = agent('taskId:string -> status:string', { id: 'operator', mcp: inventory });
const { status } = await operator.forward(llm, { taskId: outcome.task.taskId });
console.log('status:', status);
console.log(JSON.stringify(operator.getState().mcp.clients));
console.log('held by the client:', JSON.stringify(inventory.subscriptions));
await operator.close(); // releases what its code subscribed (owner ax-agent:operator)
console.log('after close:', inventory.subscriptions.length);
// #endregion tasks
await inventory.close();
