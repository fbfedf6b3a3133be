// @ts-check
// demo: { "taskCompletesAfterPolls": 2, "taskPollIntervalMs": 100 }
/**
 * Task continuation: a tool call becomes a task; the application publishes its own
 * `app.task.started` event, which wakes an owner that waits for `mcp.task = <namespace>:<taskId>`;
 * when the server finishes the task, the terminal status event resumes exactly that owner, under
 * the same identity. Events of any other identity could not resume it.
 * The last line is what it observed, as JSON.
 *
 * Run: `node examples/client/task-continuation.mjs` against `npx ax-mcp demo --serve --task-polls 2`
 * (the demo completes a task on its second poll; without --task-polls, complete it yourself with
 * `curl -X POST http://127.0.0.1:3000/control/task/complete`).
 */
import {
  AxMCPClient,
  AxMCPEventSource,
  AxMCPStreamableHTTPTransport,
  AxPushEventSource,
  axMCPEventRoutes,
  eventPath,
  eventRoute,
  eventRuntime,
  eventTarget,
  MCP_TASK_CORRELATION,
  mcpTaskKey,
} from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const client = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  {
    namespace: 'inventory',
  },
);
const identity = { tenantId: 'demo', userId: 'operator' };
const source = new AxMCPEventSource({ client, identity, trust: 'authenticated' });
const app = new AxPushEventSource({ id: 'app' });

// #region owner
let wokenScope = '';
/** @type {{ status: string, scope: string } | undefined} */
let resumed;
// On a wake the owner registers a continuation for the value at data.taskKey; a resume runs it again.
const owner = eventTarget('reindex-owner')
  .waitFor(MCP_TASK_CORRELATION, eventPath.data('taskKey'))
  .invoke((_input, context) => {
    const data = /** @type {{ taskKey?: string, status?: string }} */ (context.event.data);
    if (context.action === 'wake') {
      wokenScope = context.identityScope;
      console.log(`owner is waiting for ${data.taskKey}`);
      return { waiting: true };
    }
    resumed = { status: data.status ?? '?', scope: context.identityScope };
    console.log(`owner resumed: the task is ${resumed.status}`);
    return { status: resumed.status };
  })
  .build();

const runtime = eventRuntime({
  sources: [source, app],
  allowVolatile: true,
  onError: (error, report) =>
    console.log(`${report.phase} error: ${error instanceof Error ? error.message : error}`),
  routes: [
    // Includes the task route: input_required and terminal statuses resume the owner of mcp.task.
    ...axMCPEventRoutes({ client }),
    eventRoute('reindex-started').types('app.task.started').authenticated().wake(owner).build(),
  ],
});
// #endregion owner

try {
  await runtime.start();
  // #region task
  const outcome = await client.callToolOutcome('start_reindex', { scope: 'all' });
  if (outcome.kind !== 'task') throw new Error('start_reindex did not create a task');
  const { task } = outcome;
  const taskKey = mcpTaskKey(client.namespace, task.taskId);
  console.log(`start_reindex created task ${task.taskId} (${task.status})`);

  await app.push({
    event: {
      id: `started-${task.taskId}`,
      source: 'app://reindex',
      type: 'app.task.started',
      data: { taskKey },
    },
    identity,
    trust: 'authenticated',
  });
  // Follow the task (polling, plus notifications where the era has them): its statuses become events.
  source.watchTask(task);
  // #endregion task

  const deadline = Date.now() + 20_000;
  while (resumed === undefined) {
    if (Date.now() > deadline) throw new Error(`Task ${task.taskId} did not finish within 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  await runtime.waitForIdle({ timeoutMs: 5_000 });
  console.log(
    JSON.stringify({
      taskId: task.taskId,
      taskKey,
      status: resumed.status,
      wokenScope,
      resumedScope: resumed.scope,
    }),
  );
} finally {
  await runtime.close();
  await client.close();
}
