/**
 * `axMCPChat`: a chat request with MCP tools, run through the same tool loop as programs,
 * without a signature.
 */
import {
  CHAT_REQUEST as AI_CHAT_REQUEST,
  type AxAIChatRequest,
  type AxAIChatResponse,
  type AxAIMessage,
  type AxAIService,
  type AxAIUsage,
  CHAT_REQUEST_ALIASES,
} from '../ai/types.js';
import { extend, func, object, oneOf, type Shape } from '../options/check.js';
import { linkAbort } from '../protocol/abort.js';
import { type AxMCPContextEntry, MCP_CONTEXT, resolveContextEntries } from './context-entries.js';
import { assertProgramOptions } from './errors.js';
import { type AxFunction, FUNCTIONS, functionList } from './functions.js';
import {
  type AxMCPClients,
  type AxMCPExecutionContext,
  type AxMCPInheritance,
  EXECUTION_CONTEXT,
  MCP_CLIENTS,
  MCP_INHERITANCE,
  runContext,
} from './mcp-context.js';
import { UNTRUSTED_CONTENT_RULE } from './prompt.js';
import { checkService } from './shapes.js';
import { type AxMCPToolNaming, AxToolsetBuilder } from './tool-bindings.js';
import type { AxMCPProgramEvent } from './tool-calls.js';
import { DEFAULT_MAX_STEPS, MAX_STEPS, runToolLoop } from './tool-loop.js';
import { type AxUCPClients, UCP_CLIENTS } from './ucp-context.js';

/** Options of {@link axMCPChat}. */
export interface AxMCPChatOptions {
  /** MCP clients whose tools the model may call. */
  mcp?: AxMCPClients;
  /** UCP clients whose operations the model may call (`<namespace>__<operation>`). */
  ucp?: AxUCPClients;
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

/** What {@link axMCPChat} accepts as options; checked once per call. */
const CHAT_OPTIONS = object(
  {
    mcp: MCP_CLIENTS,
    ucp: UCP_CLIENTS,
    functions: FUNCTIONS,
    mcpContext: MCP_CONTEXT,
    mcpInheritance: MCP_INHERITANCE,
    mcpParent: EXECUTION_CONTEXT,
    mcpToolNames: oneOf('bare', 'namespaced'),
    maxSteps: MAX_STEPS,
    onMCPEvent: func('a function (event) => void'),
  },
  {
    expected: 'an options object { mcp?, functions?, mcpContext?, maxSteps?, … }',
    aliases: {
      maxTurns: 'maxSteps',
      steps: 'maxSteps',
      context: 'mcpContext',
      clients: 'mcp',
      tools: 'functions',
    },
  },
);

/** `request.tools`: tools come from `mcp` and `functions` (an empty list is let through). */
const NO_TOOLS: Shape = {
  expected: 'no tools: axMCPChat takes tools from mcp and functions, not request.tools',
  optional: true,
  check(value, path, issues) {
    if (Array.isArray(value) && value.length === 0) return;
    issues.push({
      path,
      expected: NO_TOOLS.expected,
      received: Array.isArray(value) ? `${value.length} tool(s)` : 'a value',
    });
  },
};

/** What {@link axMCPChat} accepts as the request; checked once per call. */
const CHAT_REQUEST = extend(
  AI_CHAT_REQUEST,
  { tools: NO_TOOLS },
  { expected: 'a chat request { messages, … }', aliases: CHAT_REQUEST_ALIASES },
);

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
  checkService(ai, 'axMCPChat');
  assertProgramOptions(CHAT_REQUEST, request, 'axMCPChat request');
  assertProgramOptions(CHAT_OPTIONS, options, 'axMCPChat options');
  const functions = functionList(options.functions);
  const link = linkAbort(request.signal);
  try {
    const context = runContext(options.mcp, options.mcpParent, options.mcpInheritance, options.ucp);
    const tools = new AxToolsetBuilder(context, functions, options.mcpToolNames ?? 'bare');
    const messages = [...request.messages];
    const contextMessage = await resolveContextEntries(options.mcpContext, context, link.signal, 'axMCPChat');
    if (contextMessage) {
      const firstOther = messages.findIndex((message) => message.role !== 'system');
      const at = firstOther < 0 ? messages.length : firstOther;
      messages.splice(at, 0, { role: 'system', content: UNTRUSTED_CONTENT_RULE }, contextMessage);
    }
    const {
      signal: _signal,
      messages: _messages,
      tools: _tools,
      toolChoice,
      responseFormat,
      ...settings
    } = request as AxAIChatRequest;
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
