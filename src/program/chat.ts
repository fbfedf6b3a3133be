/**
 * `axMCPChat`: a chat request with MCP tools, run through the same tool loop as programs,
 * without a signature.
 */
import type { AxAIChatRequest, AxAIChatResponse, AxAIMessage, AxAIService, AxAIUsage } from '../ai/types.js';
import { isAIService } from '../ai/types.js';
import { linkAbort } from '../protocol/abort.js';
import { type AxMCPContextEntry, checkContextEntries, resolveContextEntries } from './context-entries.js';
import { AxProgramError } from './errors.js';
import { type AxFunction, checkFunctions } from './functions.js';
import {
  type AxMCPClients,
  type AxMCPExecutionContext,
  type AxMCPInheritance,
  runContext,
} from './mcp-context.js';
import { UNTRUSTED_CONTENT_RULE } from './prompt.js';
import { type AxMCPToolNaming, AxToolsetBuilder } from './tool-bindings.js';
import type { AxMCPProgramEvent } from './tool-calls.js';
import { DEFAULT_MAX_STEPS, runToolLoop } from './tool-loop.js';

/** Options of {@link axMCPChat}. */
export interface AxMCPChatOptions {
  /** MCP clients whose tools the model may call. */
  mcp?: AxMCPClients;
  /** Tools implemented in code. */
  functions?: readonly AxFunction[];
  /** Prompts and resources added as untrusted context after the system messages. */
  mcpContext?: readonly AxMCPContextEntry[];
  mcpInheritance?: AxMCPInheritance;
  mcpParent?: AxMCPExecutionContext;
  mcpToolNames?: AxMCPToolNaming;
  /** Model calls (default 10). */
  maxSteps?: number;
  /** MCP progress, task and refusal events. */
  onMCPEvent?: (event: AxMCPProgramEvent) => void;
}

/** The outcome of {@link axMCPChat}. */
export interface AxMCPChatResult {
  /** The model's final answer (no tool calls). */
  response: AxAIChatResponse;
  /** The whole conversation: the request's messages, MCP context, and every step's messages. */
  messages: AxAIMessage[];
  /** Model calls made. */
  steps: number;
  /** Token usage summed over the steps. */
  usage?: AxAIUsage;
}

/**
 * Runs a chat request with MCP tools until the model answers without calling a tool.
 * Tool results stay raw in `messages` (see `AxAIMCPToolResult`).
 *
 * @example
 * ```ts
 * const { response, messages } = await axMCPChat(
 *   llm,
 *   { messages: [{ role: 'user', content: 'What is in stock?' }] },
 *   { mcp: inventory, maxSteps: 5 },
 * );
 * ```
 */
export async function axMCPChat(
  ai: AxAIService,
  request: Omit<AxAIChatRequest, 'tools'>,
  options: AxMCPChatOptions = {},
): Promise<AxMCPChatResult> {
  if (!isAIService(ai)) throw new AxProgramError('invalid_options', 'axMCPChat needs an AI service');
  if (!Array.isArray(request?.messages))
    throw new AxProgramError('invalid_options', 'The request needs messages');
  if ((request as AxAIChatRequest).tools?.length) {
    throw new AxProgramError(
      'invalid_options',
      'axMCPChat takes tools from mcp and functions, not request.tools',
    );
  }
  const functions = checkFunctions(options.functions);
  const entries = checkContextEntries(options.mcpContext);
  const link = linkAbort(request.signal);
  try {
    const context = runContext(options.mcp, options.mcpParent, options.mcpInheritance);
    const tools = new AxToolsetBuilder(context, functions, options.mcpToolNames ?? 'bare');
    const messages = [...request.messages];
    const contextMessage = await resolveContextEntries(entries, context, link.signal);
    if (contextMessage) {
      const firstOther = messages.findIndex((message) => message.role !== 'system');
      const at = firstOther < 0 ? messages.length : firstOther;
      messages.splice(at, 0, { role: 'system', content: UNTRUSTED_CONTENT_RULE }, contextMessage);
    }
    const { signal: _signal, messages: _messages, toolChoice, responseFormat, ...settings } = request;
    const result = await runToolLoop({
      ai,
      context,
      signal: link.signal,
      emit: (event) => options.onMCPEvent?.(event),
      eventContext: undefined,
      messages,
      tools,
      maxSteps: options.maxSteps ?? DEFAULT_MAX_STEPS,
      settings,
      ...(toolChoice === undefined ? {} : { toolChoice }),
      ...(responseFormat === undefined ? {} : { responseFormat }),
    });
    return {
      response: result.response,
      messages,
      steps: result.steps,
      ...(result.usage ? { usage: result.usage } : {}),
    };
  } finally {
    link.dispose();
  }
}
