import { describe, expect, it } from 'vitest';
import { capabilitiesFor, fulfilServerRequest, ServerRequestError } from './server-requests.js';
import { ServerTasks } from './server-tasks.js';

const context = { namespace: 'ns', signal: new AbortController().signal };
const reply = { role: 'assistant' as const, content: { type: 'text', text: 'ok' }, model: 'm' };
const ask = { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 };

describe('server requests', () => {
  it('declares what each handler supports', () => {
    expect(capabilitiesFor({ sampling: () => reply })).toEqual({ sampling: {} });
    expect(capabilitiesFor({ sampling: { createMessage: () => reply, tools: true, context: true } })).toEqual(
      {
        sampling: { context: {}, tools: {} },
      },
    );
    expect(capabilitiesFor({ roots: [] }).roots).toEqual({ listChanged: false });
    expect(capabilitiesFor({ roots: () => [] }).roots).toEqual({ listChanged: true });
    expect(
      capabilitiesFor({
        sampling: { createMessage: () => reply, tasks: true },
        elicitation: { form: () => ({ action: 'cancel' }), tasks: true },
      }).tasks,
    ).toEqual({
      list: {},
      cancel: {},
      requests: { sampling: { createMessage: {} }, elicitation: { create: {} } },
    });
  });

  it('refuses tools to a handler that did not declare them, and takes them when it did', async () => {
    const withTools = {
      ...ask,
      tools: [{ name: 'x', inputSchema: { type: 'object' } }],
      toolChoice: { mode: 'auto' },
    };
    await expect(
      fulfilServerRequest({ sampling: () => reply }, 'sampling/createMessage', withTools, context),
    ).rejects.toBeInstanceOf(ServerRequestError);
    const seen: unknown[] = [];
    const handler = {
      createMessage: (params: unknown) => {
        seen.push(params);
        return reply;
      },
      tools: true,
    };
    await fulfilServerRequest({ sampling: handler }, 'sampling/createMessage', withTools, context);
    expect(seen[0]).toMatchObject({ tools: [{ name: 'x' }], toolChoice: { mode: 'auto' } });
  });

  it('refuses a task-augmented request the handler did not opt into', async () => {
    const tasks = new ServerTasks(() => {});
    await expect(
      fulfilServerRequest(
        { sampling: () => reply },
        'sampling/createMessage',
        { ...ask, task: { ttl: 1000 } },
        context,
        tasks,
      ),
    ).rejects.toMatchObject({ rpcCode: -32602 });
  });

  it('runs an opted-in task in the background: get, result with the related task, list, cancel', async () => {
    const statuses: unknown[] = [];
    const tasks = new ServerTasks((task) => statuses.push(task.status));
    let release = () => {};
    const handlers = {
      sampling: {
        createMessage: () => new Promise<typeof reply>((resolve) => (release = () => resolve(reply))),
        tasks: true,
      },
    };
    const created = await fulfilServerRequest(
      handlers,
      'sampling/createMessage',
      { ...ask, task: { ttl: 5000 } },
      context,
      tasks,
    );
    const taskId = (created.task as { taskId: string }).taskId;
    expect(created.task).toMatchObject({ status: 'working', ttl: 5000 });
    expect(await fulfilServerRequest(handlers, 'tasks/get', { taskId }, context, tasks)).toMatchObject({
      status: 'working',
    });
    const result = fulfilServerRequest(handlers, 'tasks/result', { taskId }, context, tasks);
    release();
    expect(await result).toMatchObject({
      model: 'm',
      _meta: { 'io.modelcontextprotocol/related-task': { taskId } },
    });
    expect(statuses).toEqual(['completed']);
    expect((await fulfilServerRequest(handlers, 'tasks/list', {}, context, tasks)).tasks).toHaveLength(1);
    await expect(
      fulfilServerRequest(handlers, 'tasks/cancel', { taskId }, context, tasks),
    ).rejects.toMatchObject({
      rpcCode: -32602,
    });
    await expect(
      fulfilServerRequest(handlers, 'tasks/get', { taskId: 'nope' }, context, tasks),
    ).rejects.toMatchObject({
      rpcCode: -32602,
    });

    const second = await fulfilServerRequest(
      handlers,
      'sampling/createMessage',
      { ...ask, task: {} },
      context,
      tasks,
    );
    const secondId = (second.task as { taskId: string }).taskId;
    expect(
      await fulfilServerRequest(handlers, 'tasks/cancel', { taskId: secondId }, context, tasks),
    ).toMatchObject({
      status: 'cancelled',
    });
    await expect(
      fulfilServerRequest(handlers, 'tasks/result', { taskId: secondId }, context, tasks),
    ).rejects.toBeInstanceOf(ServerRequestError);
    tasks.close();
  });
});
