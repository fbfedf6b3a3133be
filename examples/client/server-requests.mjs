// @ts-check
/**
 * What a server may ask of the client: here a running task needs input, and the client's
 * `elicitation.form` handler answers it (on 2026-07-28 through `tasks/update`). The demo's
 * control endpoints play the server's part. Run: `node examples/client/server-requests.mjs`
 * against `npx ax-mcp demo --serve`.
 */
import { AxMCPClient, AxMCPStreamableHTTPTransport } from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const control = (/** @type {string} */ path) => fetch(endpoint.replace(/\/mcp$/, path), { method: 'POST' });
/** @type {string[]} */
const asked = [];

// #region handlers
const client = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  {
    namespace: 'inventory',
    elicitation: {
      // Show params.message and the form (params.requestedSchema) to the user; answer with their choice.
      form: (params) => {
        asked.push(params.message);
        console.log(`the server asks: ${params.message}`);
        return { action: 'accept', content: { confirm: true } };
      },
    },
    roots: [{ uri: 'file:///srv/inventory', name: 'inventory data' }], // what the server may look at
  },
);
// #endregion handlers

const outcome = await client.callToolOutcome('start_reindex', { scope: 'all' });
if (outcome.kind !== 'task') throw new Error('start_reindex did not create a task');
const { taskId } = outcome.task;
await control(`/control/task/input?taskId=${taskId}`); // the task now needs input
const result = await client.waitForTask(outcome.task, {
  onStatus: (task) => {
    console.log(`task ${task.status}`);
    // Once the handler has answered, let the demo finish the task.
    if (asked.length > 0 && task.status === 'working')
      void control(`/control/task/complete?taskId=${taskId}`);
  },
});
console.log(result.isError ? 'failed' : 'completed');
await client.close();
