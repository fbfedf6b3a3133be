/**
 * The task methods, hand-written on the SDK's custom-method handlers (the SDK has no task
 * runtime): the 2026-07-28 extension's `tasks/get|update|cancel`, and the 2025-11-25 draft's
 * `tasks/get|list|cancel|result`.
 */
import { type McpServer, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { RELATED_TASK_KEY } from './rpc.js';
import { isTerminal, legacyTaskView, modernTaskView, type TaskStore } from './tasks.js';

const byId = { params: z.looseObject({ taskId: z.string().min(1).max(200) }) };

function unknownTask(taskId: string): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `Unknown task ${JSON.stringify(taskId.slice(0, 100))}`,
  );
}

/** `tasks/get` (DetailedTask, counts a poll), `tasks/update` and `tasks/cancel` (empty acks). */
export function registerModernTaskMethods(mcp: McpServer, tasks: TaskStore): void {
  const find = (taskId: string) => {
    const task = tasks.lookup(taskId, 'modern');
    if (task === undefined) throw unknownTask(taskId);
    return task;
  };
  mcp.server.setRequestHandler('tasks/get', byId, ({ taskId }) => {
    const task = find(taskId);
    tasks.poll(task);
    return modernTaskView(task);
  });
  // The SDK lifts `inputResponses` out of every request's params into `ctx.mcpReq.inputResponses`
  // (dropping entries that are not bare responses), so the handler reads them there.
  mcp.server.setRequestHandler('tasks/update', byId, ({ taskId }, ctx) => {
    const task = find(taskId);
    const responses = ctx.mcpReq.inputResponses;
    if (responses === undefined) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'tasks/update needs inputResponses');
    }
    tasks.provideInput(task, responses);
    return {};
  });
  mcp.server.setRequestHandler('tasks/cancel', byId, ({ taskId }) => {
    tasks.cancel(find(taskId));
    return {};
  });
}

/**
 * The draft's `tasks/get` (flat Task), `tasks/list`, `tasks/cancel` (Task; `-32602` when already
 * terminal) and `tasks/result`, which blocks until the task ends and returns its CallToolResult
 * (or its error). While it waits on an `input_required` task, the pending elicitations go to the
 * client as real `elicitation/create` requests tagged with the related-task `_meta`.
 */
export function registerLegacyTaskMethods(
  mcp: McpServer,
  tasks: TaskStore,
  sessionId: () => string | undefined,
): void {
  const find = (taskId: string) => {
    const task = tasks.lookup(taskId, 'legacy', sessionId());
    if (task === undefined) throw unknownTask(taskId);
    return task;
  };
  mcp.server.setRequestHandler('tasks/get', byId, ({ taskId }) => {
    const task = find(taskId);
    tasks.poll(task);
    return legacyTaskView(task);
  });
  mcp.server.setRequestHandler(
    'tasks/list',
    { params: z.looseObject({ cursor: z.string().optional() }) },
    ({ cursor }) => {
      if (cursor !== undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid cursor');
      const id = sessionId();
      return { tasks: (id === undefined ? [] : tasks.listSession(id)).map(legacyTaskView) };
    },
  );
  mcp.server.setRequestHandler('tasks/cancel', byId, ({ taskId }) => {
    const task = find(taskId);
    if (!tasks.cancel(task)) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Task ${task.taskId} is already ${task.status}`,
      );
    }
    return legacyTaskView(task);
  });
  mcp.server.setRequestHandler('tasks/result', byId, async ({ taskId }, ctx) => {
    const task = find(taskId);
    const related = { [RELATED_TASK_KEY]: { taskId: task.taskId } };
    while (!isTerminal(task.status)) {
      if (ctx.mcpReq.signal.aborted || tasks.closed) {
        throw new ProtocolError(ProtocolErrorCode.InternalError, 'The server stopped waiting for the task');
      }
      const pending = [...task.pendingInput];
      const canElicit = mcp.server.getClientCapabilities()?.elicitation !== undefined;
      if (task.status === 'input_required' && pending.length > 0 && canElicit) {
        for (const [key, input] of pending) {
          const answer = await ctx.mcpReq.send({
            method: 'elicitation/create',
            params: { ...input.params, _meta: related },
          });
          tasks.provideInput(task, { [key]: answer });
        }
        continue;
      }
      await tasks.nextChange(task, ctx.mcpReq.signal);
    }
    if (task.status === 'completed' && task.result) return { ...task.result, _meta: related };
    const error = task.error ?? { code: ProtocolErrorCode.InternalError, message: `Task ${task.status}` };
    throw new ProtocolError(error.code, error.message, { taskId: task.taskId, status: task.status });
  });
}
