/**
 * The one tool loop: ask the model, run the tool calls it makes, repeat until it answers
 * or `maxSteps` is reached. `AxGen` (streaming or not) and `axMCPChat` all run this loop.
 * Tools are rebuilt before a step only when a catalog revision changed.
 */
import type {
  AxAIChatRequest,
  AxAIChatResponse,
  AxAIMessage,
  AxAIResponseFormat,
  AxAIToolChoice,
  AxAIUsage,
} from '../ai/types.js';
import { number, string } from '../options/check.js';
import { AxProgramError } from './errors.js';
import type { AxToolsetBuilder } from './tool-bindings.js';
import { runToolCalls, type ToolCallEnvironment } from './tool-calls.js';

/** Model settings passed through to every request of a run. */
export interface AxModelSettings {
  model?: string;
  temperature?: number;
  maxTokens?: number;
}

/** The keys of {@link AxModelSettings} and their shapes, for the options schemas that extend it. */
export const MODEL_SETTINGS_KEYS = {
  model: string({ nonEmpty: true }),
  temperature: number({ min: 0 }),
  maxTokens: number({ integer: true, min: 1 }),
} as const;

/** `maxSteps` of programs and chats. */
export const MAX_STEPS = number({ integer: true, min: 1 });

/** The settings of one run: those given to the run win over the program's defaults. */
export function modelSettings(defaults: AxModelSettings, options: AxModelSettings): AxModelSettings {
  const settings: AxModelSettings = {};
  const model = options.model ?? defaults.model;
  const temperature = options.temperature ?? defaults.temperature;
  const maxTokens = options.maxTokens ?? defaults.maxTokens;
  if (model !== undefined) settings.model = model;
  if (temperature !== undefined) settings.temperature = temperature;
  if (maxTokens !== undefined) settings.maxTokens = maxTokens;
  return settings;
}

/** What the loop runs. `messages` is appended to in place. */
export interface ToolLoopRun extends ToolCallEnvironment {
  messages: AxAIMessage[];
  tools: AxToolsetBuilder;
  maxSteps: number;
  toolChoice?: AxAIToolChoice;
  responseFormat?: AxAIResponseFormat;
  settings?: AxModelSettings;
  /** Stream the model's answers; text deltas go to `onText`. */
  streaming?: boolean;
  onText?: (delta: string) => void;
  /** Called before each model call. */
  onStep?: (step: number) => void;
  /**
   * Judges an answer without tool calls: `undefined` accepts it, a message is appended and
   * the loop goes on (a correction). May throw to end the run.
   */
  judge?: (response: AxAIChatResponse) => AxAIMessage | undefined;
}

/** How a loop ended. */
export interface ToolLoopResult {
  /** The accepted final answer. */
  response: AxAIChatResponse;
  /** Model calls made. */
  steps: number;
  /** Token usage summed over the steps, when the provider reported it. */
  usage?: AxAIUsage;
}

/** Default bound on model calls per run. */
export const DEFAULT_MAX_STEPS = 10;

/** Runs the loop (`maxSteps` was checked with the options); an abort ends it with `AxProgramError('aborted')`. */
export async function runToolLoop(run: ToolLoopRun): Promise<ToolLoopResult> {
  let usage: AxAIUsage | undefined;
  try {
    for (let step = 1; step <= run.maxSteps; step++) {
      run.signal.throwIfAborted();
      const toolset = await run.tools.build(run.signal);
      run.onStep?.(step);
      const request: AxAIChatRequest = {
        messages: [...run.messages],
        signal: run.signal,
        ...run.settings,
        ...(run.responseFormat ? { responseFormat: run.responseFormat } : {}),
      };
      if (toolset.tools.length > 0) {
        const limit = run.ai.capabilities.maxTools;
        if (limit !== undefined && toolset.tools.length > limit) {
          // Before the provider refuses it with a 400 that names no tool source.
          throw new AxProgramError(
            'too_many_tools',
            `The program offers ${toolset.tools.length} tools; ${run.ai.name} takes at most ${limit} in one request. ` +
              'Narrow them (fewer clients, or mcpInheritance for child programs), or use agent(), ' +
              'whose discover() keeps large catalogs out of the prompt.',
          );
        }
        request.tools = toolset.tools;
        if (run.toolChoice !== undefined) request.toolChoice = run.toolChoice;
      }
      const response = run.streaming ? await streamed(run, request) : await run.ai.chat(request);
      usage = addUsage(usage, response.usage);
      run.messages.push(response.message);
      const calls = response.message.toolCalls ?? [];
      if (calls.length > 0) {
        run.messages.push(...(await runToolCalls(calls, toolset, run)));
        continue;
      }
      const correction = run.judge?.(response);
      if (correction === undefined) return { response, steps: step, ...(usage ? { usage } : {}) };
      run.messages.push(correction);
    }
  } catch (error) {
    if (run.signal.aborted && !(error instanceof AxProgramError && error.code === 'aborted')) {
      throw new AxProgramError('aborted', 'The run was aborted', { cause: run.signal.reason ?? error });
    }
    throw error;
  }
  throw new AxProgramError('max_steps', `No final answer within maxSteps (${run.maxSteps}) model calls`);
}

async function streamed(run: ToolLoopRun, request: AxAIChatRequest): Promise<AxAIChatResponse> {
  for await (const event of run.ai.streamingChat(request)) {
    if (event.type === 'text') run.onText?.(event.delta);
    else if (event.type === 'finish') return event.response;
  }
  throw new AxProgramError('invalid_output', `${run.ai.name} ended its stream without a final response`);
}

function addUsage(total: AxAIUsage | undefined, more: AxAIUsage | undefined): AxAIUsage | undefined {
  if (!more) return total;
  if (!total) return { ...more };
  return {
    promptTokens: total.promptTokens + more.promptTokens,
    completionTokens: total.completionTokens + more.completionTokens,
    totalTokens: total.totalTokens + more.totalTokens,
  };
}
