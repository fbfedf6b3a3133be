/**
 * Task continuation: a tool call becomes a task; the application publishes its own
 * `app.task.started` event, which wakes an owner that waits for `mcp.task = <namespace>:<taskId>`;
 * when the server finishes the task, the terminal status event resumes exactly that owner, under
 * the same identity. Events of any other identity could not resume it.
 *
 * Needs the ax-mcp demo server (its `start_reindex` tool runs as a task). Someone must finish the
 * task: start the demo with `TASK_POLLS=2` (it completes on its second poll), or call
 * `POST /control/task/complete?taskId=<id>` on the demo's port.
 * Run: `AX_MCP_URL=http://127.0.0.1:3000/mcp npx tsx examples/task-continuation.ts` (see README.md).
 */
import { pathToFileURL } from 'node:url';
import {
  AxMCPClient,
  AxMCPEventSource,
  type AxMCPSSRFOptions,
  AxMCPStreamableHTTPTransport,
  AxPushEventSource,
  axMCPEventRoutes,
  eventPath,
  eventRoute,
  eventRuntime,
  eventTarget,
  MCP_TASK_CORRELATION,
  mcpTaskKey,
} from '../src/index.js';

/** What `main` observed. */
export interface TaskContinuationResult {
  taskId: string;
  /** `mcp.task` correlation value: `<namespace>:<taskId>`. */
  taskKey: string;
  /** The task status the owner was resumed with. */
  status: string;
  /** The identity scope the owner was woken in, and resumed in (they must match). */
  wokenScope: string;
  resumedScope: string;
}

function ssrfFor(url: string): true | AxMCPSSRFOptions {
  const { hostname, protocol } = new URL(url);
  const loopback = hostname === '127.0.0.1' || hostname === 'localhost' || hostname === '[::1]';
  return loopback ? { allowHTTP: protocol === 'http:', allowLoopback: true } : true;
}

export async function main(
  url: string,
  log: (line: string) => void = console.log,
  timeoutMs = 30_000,
): Promise<TaskContinuationResult> {
  const client = new AxMCPClient(new AxMCPStreamableHTTPTransport(url, { ssrfProtection: ssrfFor(url) }), {
    namespace: 'inventory',
  });
  const identity = { tenantId: 'demo', userId: 'operator' };
  const source = new AxMCPEventSource({ client, identity, trust: 'authenticated' });
  const app = new AxPushEventSource({ id: 'app' });

  let wokenScope = '';
  let resumed: { status: string; scope: string } | undefined;
  // On a wake the owner registers a continuation for the value at data.taskKey; a resume runs it again.
  const owner = eventTarget('reindex-owner')
    .waitFor(MCP_TASK_CORRELATION, eventPath.data('taskKey'))
    .invoke((_input, context) => {
      if (context.action === 'wake') {
        wokenScope = context.identityScope;
        log(`owner is waiting for ${(context.event.data as { taskKey: string }).taskKey}`);
        return { waiting: true };
      }
      const status = (context.event.data as { status?: string }).status ?? '?';
      resumed = { status, scope: context.identityScope };
      log(`owner resumed: the task is ${status}`);
      return { status };
    })
    .build();

  const runtime = eventRuntime({
    sources: [source, app],
    allowVolatile: true,
    onError: (error, report) =>
      log(`${report.phase} error: ${error instanceof Error ? error.message : error}`),
    routes: [
      // Includes the task route: input_required and terminal statuses resume the owner of mcp.task.
      ...axMCPEventRoutes({ client }),
      eventRoute('reindex-started').types('app.task.started').authenticated().wake(owner).build(),
    ],
  });
  try {
    await runtime.start();
    const outcome = await client.callToolOutcome('start_reindex', { scope: 'all' });
    if (outcome.kind !== 'task') throw new Error('start_reindex did not create a task');
    const { task } = outcome;
    const taskKey = mcpTaskKey(client.namespace, task.taskId);
    log(`start_reindex created task ${task.taskId} (${task.status})`);

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

    const deadline = Date.now() + timeoutMs;
    while (resumed === undefined) {
      if (Date.now() > deadline) throw new Error(`Task ${task.taskId} did not finish within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await runtime.waitForIdle({ timeoutMs: 5_000 });
    return { taskId: task.taskId, taskKey, status: resumed.status, wokenScope, resumedScope: resumed.scope };
  } finally {
    await runtime.close();
    await client.close();
  }
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  main(process.env.AX_MCP_URL ?? 'http://127.0.0.1:3000/mcp').catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
