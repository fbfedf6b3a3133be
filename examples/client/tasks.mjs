// @ts-check
// demo: { "taskCompletesAfterPolls": 2, "taskPollIntervalMs": 100 }
/**
 * Tasks: a tool call that becomes a task, awaited or handled by hand. Run against
 * `npx ax-mcp demo --serve --task-polls 2` (a task completes on its second poll).
 */
import { AxMCPClient, AxMCPStreamableHTTPTransport } from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const client = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  {
    namespace: 'inventory',
    onTaskStatus: (task) => console.log(`  task ${task.taskId.slice(0, 8)}… ${task.status}`),
  },
);

// #region await
// callTool waits for a task to finish (polling at the server's suggested interval) and returns its result.
const result = await client.callTool('start_reindex', { scope: 'berlin' });
console.log(
  'awaited:',
  result.content[0]?.type === 'text' ? result.content[0].text : result.structuredContent,
);
// #endregion await

// #region outcome
// callToolOutcome says what happened without waiting: a result, or a task to follow yourself.
const outcome = await client.callToolOutcome('start_reindex', { scope: 'all' });
if (outcome.kind === 'task') {
  const stop = client.subscribeTaskStatus(outcome.task.taskId, (task) =>
    console.log(`  seen ${task.status}`),
  );
  console.log('state now:', (await client.getTask(outcome.task.taskId)).status);
  const done = await client.waitForTask(outcome.task);
  console.log('waited:', done.isError ? 'failed' : 'completed');
  stop();
}
// #endregion outcome

// #region cancel
// Cancelling is a request: the server may still complete the task.
const another = await client.callToolOutcome('start_reindex', { scope: 'lisbon' });
if (another.kind === 'task') {
  await client.cancelTask(another.task.taskId);
  console.log('after cancel:', (await client.getTask(another.task.taskId)).status);
}
// #endregion cancel

await client.close();
