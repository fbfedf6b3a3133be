// @ts-check
// demo: { "taskCompletesAfterPolls": 2 }
// A target starts an MCP task and registers a continuation for it (`mcp.task =
// <namespace>:<taskId>`); the task's terminal status, published by the MCP source, resumes
// exactly that run through the default task route of axMCPEventRoutes.
// Needs the demo server with tasks that finish: npx ax-mcp demo --serve --task-polls 2
import {
  AxMCPClient,
  AxMCPEventSource,
  AxMCPStreamableHTTPTransport,
  axMCPEventRoutes,
  eventRoute,
  eventRuntime,
  eventTarget,
  MCP_TASK_CORRELATION,
  mcpTaskKey,
} from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const client = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  { namespace: 'inventory' },
);
const identity = { tenantId: 'acme' };
const source = new AxMCPEventSource({ client, identity, trust: 'authenticated' });

/** @type {(status: string) => void} */
let finished = () => {};
const done = new Promise((resolve) => {
  finished = resolve;
});

// #region owner
const reindexer = eventTarget('reindexer')
  .invoke(async (_input, context) => {
    if (context.action === 'resume') {
      const { status } = /** @type {{ status: string }} */ (context.event.data);
      finished(status);
      return { status };
    }
    const outcome = await client.callToolOutcome('start_reindex', { scope: 'berlin' });
    if (outcome.kind !== 'task') return { done: true };
    await context.registerContinuation({
      correlation: { kind: MCP_TASK_CORRELATION, value: mcpTaskKey(client.namespace, outcome.task.taskId) },
    });
    source.watchTask(outcome.task); // poll it, in case the server sends no task notifications
    console.log(`waiting for task ${outcome.task.taskId}`);
    return { taskId: outcome.task.taskId };
  })
  .build();

const runtime = eventRuntime({
  sources: [source],
  routes: [
    ...axMCPEventRoutes({ client }), // its task route resumes the continuation that owns a task
    eventRoute('reindex-requested').types('app.reindex.requested').authenticated().wake(reindexer).build(),
  ],
});
// #endregion owner
await runtime.start();
await runtime.publish({
  event: { id: 'r-1', source: 'app://ops', type: 'app.reindex.requested' },
  identity,
  trust: 'authenticated',
});
const timeout = setTimeout(() => finished('(no status within 20 s)'), 20_000);
console.log('resumed with status', await done);
clearTimeout(timeout);
await runtime.waitForIdle({ timeoutMs: 5000 });
await runtime.close();
await client.close();
