/**
 * Running the tool calls a model asked for. MCP calls go through the client (so
 * `authorizeToolCall`, concurrency, tasks and cancellation apply) and keep the raw result;
 * UCP operations go through their client (`authorizeOperation`, idempotency keys) and return
 * the business's response as JSON, payment credentials redacted. A denial or an argument the
 * server rejects goes back to the model as an error it can act on; anything uncertain ends the
 * run, and a call is never replayed.
 */
import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { AxAIService, AxAIToolCall, AxAIToolMessage } from '../ai/types.js';
import type { AxMCPTask } from '../client/tasks/task.js';
import type { AxEventContext } from '../events/target.js';
import { AxMCPError, AxMCPProtocolError, RPC } from '../protocol/errors.js';
import type { AxMCPProgress } from '../protocol/messages.js';
import { AxFunctionError } from './functions.js';
import type { AxMCPExecutionContext } from './mcp-context.js';
import type {
  AxFunctionBinding,
  AxMCPToolBinding,
  AxToolset,
  AxUCPOperationBinding,
} from './tool-bindings.js';
import { runUCPOperation } from './ucp-context.js';

/** What an MCP tool call reports while it runs: on its own channel, never in the outputs. */
export type AxMCPProgramEvent =
  | {
      type: 'progress';
      namespace: string;
      tool: string;
      componentId: string;
      toolCallId: string;
      progress: AxMCPProgress;
    }
  | {
      type: 'task';
      namespace: string;
      tool: string;
      componentId: string;
      toolCallId: string;
      task: AxMCPTask;
    }
  /**
   * The host refused a call (`authorizeToolCall`, or for a UCP operation `authorizeOperation`:
   * then `tool` is the operation and `componentId` is `ucp:<namespace>:<operation>`).
   */
  | {
      type: 'refused';
      namespace: string;
      tool: string;
      componentId: string;
      toolCallId: string;
      reason: string;
    };

/** What running tool calls needs from the run. */
export interface ToolCallEnvironment {
  ai: AxAIService;
  context: AxMCPExecutionContext;
  signal: AbortSignal;
  emit: (event: AxMCPProgramEvent) => void;
  eventContext: AxEventContext | undefined;
}

/**
 * Runs one step's tool calls concurrently and returns their messages in call order. A
 * call that fails fatally aborts its siblings, and the first such error is thrown.
 */
export async function runToolCalls(
  calls: readonly AxAIToolCall[],
  toolset: AxToolset,
  env: ToolCallEnvironment,
): Promise<AxAIToolMessage[]> {
  const batch = new AbortController();
  const onAbort = () => batch.abort(env.signal.reason);
  if (env.signal.aborted) batch.abort(env.signal.reason);
  else env.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const settled = await Promise.allSettled(
      calls.map((call) =>
        runToolCall(call, toolset, { ...env, signal: batch.signal }).catch((error: unknown) => {
          batch.abort(error);
          throw error;
        }),
      ),
    );
    const failure = settled.find((result) => result.status === 'rejected');
    if (failure) throw env.signal.aborted ? env.signal.reason : (failure as PromiseRejectedResult).reason;
    return settled.map((result) => (result as PromiseFulfilledResult<AxAIToolMessage>).value);
  } finally {
    env.signal.removeEventListener('abort', onAbort);
  }
}

const tracer = trace.getTracer('ax-mcp');

/** One tool call in an `ax.program.tool_call` span (names and ids only: never arguments or results). */
function runToolCall(
  call: AxAIToolCall,
  toolset: AxToolset,
  env: ToolCallEnvironment,
): Promise<AxAIToolMessage> {
  const binding = toolset.byName.get(call.name);
  const attributes = {
    'ax.tool.name': call.name.slice(0, 80),
    'ax.tool.component_id': binding?.componentId ?? 'unknown',
    ...(binding?.kind === 'mcp' ? { 'ax.mcp.namespace': binding.namespace } : {}),
    ...(binding?.kind === 'ucp'
      ? { 'ax.ucp.namespace': binding.namespace, 'ax.ucp.operation': binding.operation }
      : {}),
  };
  return tracer.startActiveSpan('ax.program.tool_call', { attributes }, async (span) => {
    try {
      const message = await runBoundCall(call, toolset, env);
      span.setAttribute('ax.tool.is_error', message.isError === true);
      return message;
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });
      throw error;
    } finally {
      span.end();
    }
  });
}

async function runBoundCall(
  call: AxAIToolCall,
  toolset: AxToolset,
  env: ToolCallEnvironment,
): Promise<AxAIToolMessage> {
  const reply = (content: string, isError = true): AxAIToolMessage => ({
    role: 'tool',
    toolCallId: call.id,
    name: call.name,
    content,
    ...(isError ? { isError: true } : {}),
  });
  const binding = toolset.byName.get(call.name);
  if (!binding) return reply(unknownTool(call.name, toolset));
  const args = parseArguments(call.arguments);
  if (typeof args === 'string') return reply(`The arguments of ${call.name} are not valid: ${args}`);
  if (binding.kind === 'function') return runFunction(binding, args, call, env, reply);
  if (binding.kind === 'ucp') return runUCP(binding, args, call, env, reply);
  return runMCPTool(binding, args, call, env, reply);
}

/** One UCP operation; the `refused` event carries the operation as `tool`. */
async function runUCP(
  binding: AxUCPOperationBinding,
  args: Record<string, unknown>,
  call: AxAIToolCall,
  env: ToolCallEnvironment,
  reply: (content: string, isError?: boolean) => AxAIToolMessage,
): Promise<AxAIToolMessage> {
  const outcome = await runUCPOperation(binding.client, binding.operation, args, env.signal);
  if (outcome.kind === 'result') return reply(JSON.stringify(outcome.value) ?? 'null', false);
  if (outcome.kind === 'refused') {
    env.emit({
      type: 'refused',
      namespace: binding.namespace,
      tool: binding.operation,
      componentId: binding.componentId,
      toolCallId: call.id,
      reason: outcome.reason,
    });
    return reply(outcome.reason);
  }
  return reply(outcome.message);
}

/** What the model is told of a name no tool has; a UCP namespace's prefix gets its operations listed. */
function unknownTool(name: string, toolset: AxToolset): string {
  const shown = `There is no tool named "${name.slice(0, 80)}".`;
  for (const binding of toolset.byName.values()) {
    if (binding.kind !== 'ucp' || !name.startsWith(`${binding.name.split('__')[0]}__`)) continue;
    const offered = [...toolset.byName.values()]
      .filter((other) => other.kind === 'ucp' && other.namespace === binding.namespace)
      .map((other) => other.name);
    return `${shown} The UCP business "${binding.namespace}" offers: ${offered.join(', ')}.`;
  }
  return `${shown} Use one of the listed tools.`;
}

function parseArguments(text: string): Record<string, unknown> | string {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'they are not JSON';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'they must be a JSON object';
  return value as Record<string, unknown>;
}

async function runMCPTool(
  binding: AxMCPToolBinding,
  args: Record<string, unknown>,
  call: AxAIToolCall,
  env: ToolCallEnvironment,
  reply: (content: string) => AxAIToolMessage,
): Promise<AxAIToolMessage> {
  const { client, namespace, tool, componentId } = binding;
  const where = { namespace, tool, componentId, toolCallId: call.id };
  try {
    const outcome = await client.callToolOutcome(tool, args, {
      signal: env.signal,
      onProgress: (progress) => env.emit({ type: 'progress', ...where, progress }),
    });
    let result = outcome.kind === 'complete' ? outcome.result : undefined;
    if (outcome.kind === 'task') {
      env.emit({ type: 'task', ...where, task: outcome.task });
      const forget = env.context.trackTask(client, outcome.task);
      try {
        result = await client.waitForTask(outcome.task, {
          signal: env.signal,
          onStatus: (task) => env.emit({ type: 'task', ...where, task }),
        });
        forget();
      } catch (error) {
        // An aborted wait leaves the task open for the owner to cancel; a finished one is done.
        if (!env.signal.aborted) forget();
        throw error;
      }
    }
    return {
      role: 'tool',
      toolCallId: call.id,
      name: call.name,
      content: {
        type: 'mcp_tool_result',
        namespace,
        tool,
        componentId,
        result: result as NonNullable<typeof result>,
      },
      ...(result?.isError === true ? { isError: true } : {}),
    };
  } catch (error) {
    if (env.signal.aborted) throw error;
    if (error instanceof AxMCPError && error.code === 'authorization_denied') {
      const reason = `The host refused the call to ${componentId}; it was not run. Do not retry it.`;
      env.emit({ type: 'refused', ...where, reason });
      return reply(reason);
    }
    if (rejectedArguments(error)) {
      const detail = (error as Error).message.slice(0, 300);
      return reply(`${componentId} rejected the call without running it: ${detail}`);
    }
    throw error;
  }
}

/** The server refused the request as invalid (nothing ran), so the model may fix and retry. */
function rejectedArguments(error: unknown): boolean {
  if (error instanceof AxMCPProtocolError) {
    return (
      error.code === 'protocol_error' &&
      (error.rpcCode === RPC.invalidParams || error.rpcCode === RPC.methodNotFound)
    );
  }
  return error instanceof AxMCPError && error.code === 'invalid_argument';
}

async function runFunction(
  binding: AxFunctionBinding,
  args: Record<string, unknown>,
  call: AxAIToolCall,
  env: ToolCallEnvironment,
  reply: (content: string, isError?: boolean) => AxAIToolMessage,
): Promise<AxAIToolMessage> {
  try {
    const value = await binding.fn.func(args, {
      signal: env.signal,
      ai: env.ai,
      mcp: env.context,
      toolCallId: call.id,
      ...(env.eventContext ? { eventContext: env.eventContext } : {}),
    });
    return reply(typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null'), false);
  } catch (error) {
    if (error instanceof AxFunctionError && !env.signal.aborted)
      return reply(`${binding.name} failed: ${error.message}`);
    throw error;
  }
}
