/**
 * Tasks through AxMCPClient against real peers: the 2026-07-28 Tasks extension on the demo
 * server (modern-only and dual-era endpoints; `start_reindex` returns a task), the 2025-11-25
 * task draft on the demo's legacy leg, and the draft's `simulate-research-query` tool of
 * `@modelcontextprotocol/server-everything`. The demo's controls drive each task through its
 * statuses (working → input_required → working → completed | failed | cancelled).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AxMCPDemoEra, AxMCPDemoServer, type AxMCPDemoTask } from '../src/demo/index.js';
import {
  type AxMCPClient,
  type AxMCPElicitParams,
  AxMCPError,
  AxMCPProtocolError,
  type AxMCPTask,
  type AxMCPTaskStatus,
  AxMCPUnsupportedError,
  RPC,
} from '../src/index.js';
import { eventually, httpClient } from './helpers/clients.js';
import { type EverythingServer, startEverythingServer } from './servers/everything.js';

const REINDEX = 'start_reindex';

function texts(result: { content: ReadonlyArray<{ type: string; [key: string]: unknown }> }): string {
  return result.content
    .filter((block) => block.type === 'text')
    .map((block) => String(block.text))
    .join('\n');
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

function demoTask(server: AxMCPDemoServer, taskId: string): AxMCPDemoTask {
  const task = server.state().tasks.find((candidate) => candidate.taskId === taskId);
  if (!task) throw new Error(`the demo has no task ${taskId}`);
  return task;
}

/** Waits for the demo's newest task created after `known` tasks existed. */
async function newTask(server: AxMCPDemoServer, known: number): Promise<AxMCPDemoTask> {
  await eventually(() => server.state().tasks.length > known, 5_000, 'the task to be created');
  return server.state().tasks.at(-1) as AxMCPDemoTask;
}

/** A demo server (tasks polled every 50 ms) and a client that accepts every elicitation, recording it. */
async function demoWithClient(
  era: AxMCPDemoEra,
  clientEra: 'auto' | 'legacy',
  elicited: AxMCPElicitParams[],
) {
  const server = new AxMCPDemoServer({ era, taskPollIntervalMs: 50, keepAliveMs: 0 });
  await server.start();
  const client = httpClient(server.url, {
    era: clientEra,
    timeoutMs: 10_000,
    elicitation: {
      form: (params) => {
        elicited.push(params);
        return { action: 'accept', content: { confirm: true } };
      },
    },
  });
  await client.init();
  return { server, client };
}

/** A client whose `tools/call` answers arrive 300 ms late: the caller can give up while the server answers. */
function slowToolCallClient(url: string, era: 'auto' | 'legacy') {
  return httpClient(
    url,
    { era, timeoutMs: 10_000 },
    {
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        const body = typeof init?.body === 'string' ? init.body : '';
        if (body.includes('"method":"tools/call"')) await new Promise((resolve) => setTimeout(resolve, 300));
        return response;
      },
    },
  );
}

/** Collapses consecutive repeats: the statuses a waiter went through. */
function transitions(statuses: AxMCPTaskStatus[]): AxMCPTaskStatus[] {
  return statuses.filter((status, i) => i === 0 || statuses[i - 1] !== status);
}

describe.each<AxMCPDemoEra>(['modern', 'dual'])('2026-07-28 Tasks extension on the %s demo', (era) => {
  let server: AxMCPDemoServer;
  let client: AxMCPClient;
  const elicited: AxMCPElicitParams[] = [];

  beforeAll(async () => {
    ({ server, client } = await demoWithClient(era, 'auto', elicited));
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it('callToolOutcome returns the task; the Mcp-Param-Scope header matched', async () => {
    expect(client.getEra()).toBe('modern');
    const outcome = await client.callToolOutcome(REINDEX, { scope: 'berlin' });
    expect(outcome.kind).toBe('task');
    if (outcome.kind !== 'task') return;
    const task = outcome.task;
    expect(task).toMatchObject({ status: 'working', pollIntervalMs: 50, ttlMs: 3_600_000 });
    expect(typeof task.createdAt).toBe('string');
    expect(demoTask(server, task.taskId)).toMatchObject({
      era: 'modern',
      scope: 'berlin',
      status: 'working',
    });
    expect(server.state().headerViolations).toEqual([]);
    const polled = await client.getTask(task.taskId);
    expect(polled).toMatchObject({ taskId: task.taskId, status: 'working' });
    expect(demoTask(server, task.taskId).polls).toBe(1);
    server.completeTask(task.taskId);
  });

  it("callTool with taskHandling: 'expose' returns the task in the result's place", async () => {
    const result = await client.callTool(REINDEX, { scope: 'lisbon' }, { taskHandling: 'expose' });
    const task = (result as { task?: AxMCPTask }).task;
    expect(result.content).toEqual([]);
    expect(task).toMatchObject({ status: 'working' });
    expect(demoTask(server, task?.taskId as string).scope).toBe('lisbon');
    server.completeTask(task?.taskId);
  });

  it('working → input_required → provideTaskInput → working → completed, then waitForTask', async () => {
    const outcome = await client.callToolOutcome(REINDEX, { scope: 'porto' });
    if (outcome.kind !== 'task') throw new Error('expected a task');
    const { taskId } = outcome.task;
    server.requestTaskInput(taskId);
    const asking = await client.getTask(taskId);
    expect(asking.status).toBe('input_required');
    expect(Object.keys(asking.inputRequests ?? {})).toEqual(['confirm-1']);
    expect(asking.inputRequests?.['confirm-1']).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'form', message: 'Confirm reindexing scope "porto"' },
    });
    await client.provideTaskInput(taskId, { 'confirm-1': { action: 'accept', content: { confirm: true } } });
    expect(demoTask(server, taskId)).toMatchObject({
      status: 'working',
      pendingInputKeys: [],
      inputResponses: { 'confirm-1': { action: 'accept', content: { confirm: true } } },
    });
    expect((await client.getTask(taskId)).status).toBe('working');
    server.completeTask(taskId);
    const done = await client.getTask(taskId);
    expect(done.status).toBe('completed');
    expect(done.result?.structuredContent).toEqual({
      scope: 'porto',
      documents: 1_000 + 'porto'.length * 37,
    });
    const result = await client.waitForTask(taskId);
    expect(texts(result)).toBe(`Reindexed scope "porto": ${1_000 + 'porto'.length * 37} documents.`);
  });

  it('callTool awaits the task and answers its input through the elicitation handler', async () => {
    const known = server.state().tasks.length;
    const asked = elicited.length;
    const statuses: AxMCPTaskStatus[] = [];
    const call = client.callTool(
      REINDEX,
      { scope: 'all' },
      { onStatus: (task) => statuses.push(task.status), timeoutMs: 10_000 },
    );
    const task = await newTask(server, known);
    await eventually(() => demoTask(server, task.taskId).polls >= 1, 5_000, 'a first poll');
    server.requestTaskInput(task.taskId);
    await eventually(
      () => demoTask(server, task.taskId).inputResponses['confirm-1'] !== undefined,
      5_000,
      'the client to answer the input request',
    );
    expect(demoTask(server, task.taskId).status).toBe('working');
    expect(elicited.length - asked).toBe(1);
    expect(elicited.at(-1)).toMatchObject({ message: 'Confirm reindexing scope "all"' });
    // Let a few more polls pass: an answered key is never answered twice.
    const polls = demoTask(server, task.taskId).polls;
    await eventually(() => demoTask(server, task.taskId).polls >= polls + 2, 5_000, 'more polls');
    server.completeTask(task.taskId);
    const result = await call;
    expect(result.structuredContent).toEqual({ scope: 'all', documents: 1_000 + 3 * 37 });
    expect(elicited.length - asked).toBe(1);
    expect(transitions(statuses)).toEqual(['working', 'input_required', 'working', 'completed']);
  });

  it('cancelTask cancels on the server; waiting on it is a task_cancelled error', async () => {
    const outcome = await client.callToolOutcome(REINDEX, { scope: 'cancel-me' });
    if (outcome.kind !== 'task') throw new Error('expected a task');
    const { taskId } = outcome.task;
    await client.cancelTask(taskId);
    expect(demoTask(server, taskId).status).toBe('cancelled');
    expect((await client.getTask(taskId)).status).toBe('cancelled');
    const error = await rejection(client.waitForTask(taskId));
    expect(error).toBeInstanceOf(AxMCPError);
    expect(error).toMatchObject({ code: 'task_cancelled' });
  });

  it('a failed task rejects the awaiting callTool with task_failed and the server error', async () => {
    const known = server.state().tasks.length;
    const call = client.callTool(REINDEX, { scope: 'doomed' });
    const task = await newTask(server, known);
    server.failTask(task.taskId, 'disk full');
    const error = await rejection(call);
    expect(error).toBeInstanceOf(AxMCPProtocolError);
    expect(error).toMatchObject({ code: 'task_failed', rpcCode: RPC.internalError });
    expect((error as Error).message).toContain('disk full');
  });

  it('aborting the wait cancels the task on the server', async () => {
    const known = server.state().tasks.length;
    const controller = new AbortController();
    const call = client.callTool(REINDEX, { scope: 'abandoned' }, { signal: controller.signal });
    const task = await newTask(server, known);
    await eventually(() => demoTask(server, task.taskId).polls >= 1, 5_000, 'a first poll');
    controller.abort();
    const error = await rejection(call);
    expect(error).toBeInstanceOf(AxMCPError);
    await eventually(() => demoTask(server, task.taskId).status === 'cancelled', 5_000, 'tasks/cancel');
  });

  it('aborting while the server is still answering that the call became a task cancels that task', async () => {
    const slow = slowToolCallClient(server.url, 'auto');
    try {
      await slow.init();
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('gave up')), 50);
      const error = await rejection(
        slow.callTool(REINDEX, { scope: 'abandoned-modern' }, { signal: controller.signal }),
      );
      expect(error).toMatchObject({ code: 'aborted' });
      await eventually(
        () =>
          server
            .state()
            .tasks.some((task) => task.scope === 'abandoned-modern' && task.status === 'cancelled'),
        5_000,
        'the abandoned task to be cancelled',
      );
    } finally {
      await slow.close();
    }
  });

  it('an unknown task id is a typed -32602', async () => {
    const error = await rejection(client.getTask('no-such-task'));
    expect(error).toBeInstanceOf(AxMCPProtocolError);
    expect(error).toMatchObject({ rpcCode: RPC.invalidParams });
    await expect(client.waitForTask('no-such-task')).rejects.toMatchObject({ rpcCode: RPC.invalidParams });
  });

  it('a non-ASCII Mcp-Param-Scope is base64-encoded and matches the body (checked by the demo)', async () => {
    const outcome = await client.callToolOutcome(REINDEX, { scope: 'Zürich Süd' });
    if (outcome.kind !== 'task') throw new Error('expected a task');
    expect(demoTask(server, outcome.task.taskId).scope).toBe('Zürich Süd');
    expect(server.state().headerViolations).toEqual([]);
    server.completeTask(outcome.task.taskId);
  });

  it('the deprecated draft methods refuse a 2026-07-28 endpoint', async () => {
    await expect(client.callToolTask(REINDEX, { scope: 'x' })).rejects.toBeInstanceOf(AxMCPUnsupportedError);
    await expect(client.listTasks()).rejects.toBeInstanceOf(AxMCPUnsupportedError);
    await expect(client.getTaskResult('nope')).rejects.toBeInstanceOf(AxMCPUnsupportedError);
  });

  it('without the tasks extension, the task-only tool is a typed -32021', async () => {
    const plain = httpClient(server.url, { era: 'auto', timeoutMs: 10_000, tasksExtension: false });
    try {
      const known = server.state().tasks.length;
      const error = await rejection(plain.callTool(REINDEX, { scope: 'nope' }));
      expect(error).toBeInstanceOf(AxMCPProtocolError);
      expect(error).toMatchObject({
        rpcCode: RPC.missingCapability,
        data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
      });
      expect(server.state().tasks).toHaveLength(known);
    } finally {
      await plain.close();
    }
  });

  it('every task request carried headers the demo accepted (Mcp-Name = taskId, Mcp-Param-Scope)', () => {
    const counts = server.state().methodCounts.modern;
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel', 'tools/call']) {
      expect(counts[method] ?? 0, method).toBeGreaterThan(0);
    }
    expect(server.state().headerViolations).toEqual([]);
  });
});

describe('a task the server completes after polling', () => {
  it('callTool polls at the suggested interval until completed', async () => {
    const server = new AxMCPDemoServer({ era: 'modern', taskPollIntervalMs: 30, taskCompletesAfterPolls: 3 });
    await server.start();
    const client = httpClient(server.url, { era: 'auto', timeoutMs: 10_000 });
    try {
      const statuses: AxMCPTaskStatus[] = [];
      const started = Date.now();
      const result = await client.callTool(
        REINDEX,
        { scope: 'polled' },
        { onStatus: (task) => statuses.push(task.status) },
      );
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(result.structuredContent).toMatchObject({ scope: 'polled' });
      const task = server.state().tasks.at(-1);
      expect(task).toMatchObject({ status: 'completed', polls: 3 });
      expect(statuses).toEqual(['working', 'working', 'working', 'completed']);
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe('2025-11-25 task draft on the demo (legacy leg)', () => {
  let server: AxMCPDemoServer;
  let client: AxMCPClient;
  const elicited: AxMCPElicitParams[] = [];

  beforeAll(async () => {
    ({ server, client } = await demoWithClient('dual', 'legacy', elicited));
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it('callTool creates a draft task (params.task), awaits it and returns the result', async () => {
    const known = server.state().tasks.length;
    const call = client.callTool(REINDEX, { scope: 'legacy' });
    const task = await newTask(server, known);
    expect(task).toMatchObject({ era: 'legacy', scope: 'legacy' });
    await eventually(() => demoTask(server, task.taskId).polls >= 1, 5_000, 'a first poll');
    server.completeTask(task.taskId);
    const result = await call;
    expect(texts(result)).toBe(`Reindexed scope "legacy": ${1_000 + 'legacy'.length * 37} documents.`);
  });

  it('input for a draft task arrives as elicitation/create on tasks/result and is answered', async () => {
    const known = server.state().tasks.length;
    const asked = elicited.length;
    const call = client.callTool(REINDEX, { scope: 'ask' });
    const task = await newTask(server, known);
    server.requestTaskInput(task.taskId);
    await eventually(
      () => demoTask(server, task.taskId).inputResponses['confirm-1'] !== undefined,
      5_000,
      'the elicitation answer',
    );
    expect(elicited.length - asked).toBe(1);
    server.completeTask(task.taskId);
    expect((await call).structuredContent).toMatchObject({ scope: 'ask' });
  });

  it('callToolTask, getTask, listTasks and getTaskResult', async () => {
    const task = await client.callToolTask(REINDEX, { scope: 'manual' }, { ttlMs: 60_000 });
    expect(task).toMatchObject({ status: 'working', pollIntervalMs: 50, ttlMs: 60_000 });
    expect((await client.getTask(task.taskId)).status).toBe('working');
    const listed = await client.listTasks();
    expect(listed.tasks.map((t) => t.taskId)).toContain(task.taskId);
    const result = client.getTaskResult(task.taskId);
    server.completeTask(task.taskId);
    expect((await result).structuredContent).toMatchObject({ scope: 'manual' });
  });

  it('cancelTask cancels a draft task; waiting on it is a task_cancelled error', async () => {
    const task = await client.callToolTask(REINDEX, { scope: 'drop-it' });
    await client.cancelTask(task.taskId);
    expect(demoTask(server, task.taskId).status).toBe('cancelled');
    const error = await rejection(client.waitForTask(task.taskId));
    expect(error).toBeInstanceOf(AxMCPError);
    expect(error).toMatchObject({ code: 'task_cancelled' });
  });

  it('aborting a call while its task is being created still cancels that task on the server', async () => {
    // The answer that names the task arrives only after the caller gave up.
    const slow = slowToolCallClient(server.url, 'legacy');
    try {
      await slow.init();
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('gave up')), 50);
      const started = Date.now();
      const error = await rejection(
        slow.callTool(REINDEX, { scope: 'abandoned' }, { signal: controller.signal }),
      );
      expect(error).toMatchObject({ code: 'aborted' });
      // The caller is not kept waiting for the task's id…
      expect(Date.now() - started).toBeLessThan(250);
      // …and the task the call created does not run on orphaned.
      await eventually(
        () => server.state().tasks.some((task) => task.scope === 'abandoned' && task.status === 'cancelled'),
        5_000,
        'the abandoned task to be cancelled',
      );
    } finally {
      await slow.close();
    }
  });

  it('a failed draft task rejects with task_failed', async () => {
    const known = server.state().tasks.length;
    const call = client.callTool(REINDEX, { scope: 'broken' });
    const task = await newTask(server, known);
    server.failTask(task.taskId, 'index corrupt');
    const error = await rejection(call);
    expect(error).toBeInstanceOf(AxMCPProtocolError);
    expect(error).toMatchObject({ code: 'task_failed' });
    expect((error as Error).message).toContain('index corrupt');
  });
});

describe('2025-11-25 task draft: server-everything simulate-research-query', () => {
  let server: EverythingServer;
  let client: AxMCPClient;
  const elicited: AxMCPElicitParams[] = [];

  beforeAll(async () => {
    server = await startEverythingServer({ mode: 'streamableHttp' });
    client = httpClient(server.url, {
      era: 'auto',
      timeoutMs: 20_000,
      elicitation: {
        form: (params) => {
          elicited.push(params);
          return { action: 'accept', content: { interpretation: 'historical' } };
        },
      },
    });
    await client.init();
    // The task tool is registered after `initialized`, for the client's capabilities.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const names = (await client.inspectCatalog({ refresh: true })).tools.map((tool) => tool.name);
      if (names.includes('simulate-research-query')) break;
      if (Date.now() > deadline) throw new Error('simulate-research-query never appeared');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 30_000);

  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it('is a legacy endpoint whose tool requires tasks', async () => {
    expect(client.getEra()).toBe('legacy');
    const tool = (await client.inspectCatalog()).tools.find((t) => t.name === 'simulate-research-query');
    expect(tool?.execution?.taskSupport).toBe('required');
  });

  it('callTool awaits the research task and returns its report', { timeout: 30_000 }, async () => {
    const statuses: AxMCPTaskStatus[] = [];
    const result = await client.callTool(
      'simulate-research-query',
      { topic: 'tides' },
      { onStatus: (task) => statuses.push(task.status) },
    );
    expect(texts(result)).toContain('# Research Report: tides');
    expect(statuses[0]).toBe('working');
  });

  it('callToolTask + getTask + getTaskResult', { timeout: 30_000 }, async () => {
    const task = await client.callToolTask('simulate-research-query', { topic: 'glaciers' });
    expect(task).toMatchObject({ status: 'working', pollIntervalMs: 1_000, ttlMs: 300_000 });
    expect((await client.getTask(task.taskId)).taskId).toBe(task.taskId);
    const result = await client.getTaskResult(task.taskId);
    expect(texts(result)).toContain('# Research Report: glaciers');
    expect((await client.getTask(task.taskId)).status).toBe('completed');
  });

  it('an ambiguous query asks for clarification through the elicitation handler', {
    timeout: 30_000,
  }, async () => {
    const asked = elicited.length;
    const result = await client.callTool('simulate-research-query', { topic: 'python', ambiguous: true });
    expect(elicited.length - asked).toBe(1);
    expect(elicited.at(-1)?.message).toContain('python');
    expect(texts(result)).toContain('# Research Report: python (historical)');
  });
});
