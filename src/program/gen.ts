/**
 * `ax(signature, options)` / {@link AxGen}: a program that turns typed inputs into typed
 * outputs with a model, calling MCP tools and functions on the way.
 */
import { type AxAIContentPart, type AxAIService, CONTENT_PART } from '../ai/types.js';
import type { AxEventInputField } from '../events/input.js';
import type { AxEventContext } from '../events/target.js';
import { ABORT_SIGNAL, array, func, number, object, oneOf, string } from '../options/check.js';
import { linkAbort } from '../protocol/abort.js';
import { AsyncChannel } from './channel.js';
import { type AxMCPContextEntry, MCP_CONTEXT, resolveContextEntries } from './context-entries.js';
import { AxProgramError, assertProgramOptions } from './errors.js';
import { eventInputFields, readOutputs, validateInputs } from './fields.js';
import { type AxFunction, FUNCTIONS, functionList } from './functions.js';
import { JSONObjectStream } from './json-stream.js';
import {
  type AxMCPClients,
  type AxMCPExecutionContext,
  type AxMCPInheritance,
  EXECUTION_CONTEXT,
  MCP_CLIENTS,
  MCP_INHERITANCE,
  runContext,
} from './mcp-context.js';
import { correctionMessage, inputMessage, outputFormat, systemMessage } from './prompt.js';
import { checkService, EVENT_CONTEXT } from './shapes.js';
import { AxSignature } from './signature.js';
import type { AxSignatureInputs, AxSignatureOutputs } from './signature-types.js';
import { type AxMCPToolNaming, AxToolsetBuilder } from './tool-bindings.js';
import type { AxMCPProgramEvent } from './tool-calls.js';
import {
  type AxModelSettings,
  DEFAULT_MAX_STEPS,
  MAX_STEPS,
  MODEL_SETTINGS_KEYS,
  modelSettings,
  runToolLoop,
} from './tool-loop.js';
import { type AxUCPClients, UCP_CLIENTS } from './ucp-context.js';

/** Options of {@link ax} and {@link AxGen}. */
export interface AxGenOptions extends AxModelSettings {
  /** MCP clients whose tools the program may call (one or an array). */
  mcp?: AxMCPClients;
  /**
   * UCP clients whose operations the program may call (one or an array), offered to the
   * provider as `<namespace>__<operation>` (`shop__checkout_complete`). Their namespaces may
   * not be used by another client of the run.
   */
  ucp?: AxUCPClients;
  /** Tools implemented in code. MCP clients do not go here. */
  functions?: readonly AxFunction[];
  /** Extra instructions for the system message. */
  instructions?: string;
  /** Prompts and resources fetched as untrusted context before the first model call. */
  mcpContext?: readonly AxMCPContextEntry[];
  /** What this program inherits from a parent context (default `'all'`). */
  mcpInheritance?: AxMCPInheritance;
  /** Provider names of MCP tools: bare (default) or `<namespace>__<tool>`. */
  mcpToolNames?: AxMCPToolNaming;
  /** Model calls per run (default 10). */
  maxSteps?: number;
  /** Times the model is asked to fix an answer that does not match the outputs (default 2). */
  maxCorrections?: number;
}

/** Names users reach for, in the options of programs and of their runs. */
const RUN_ALIASES = {
  maxTurns: 'maxSteps',
  steps: 'maxSteps',
  context: 'mcpContext',
  inheritance: 'mcpInheritance',
  clients: 'mcp',
} as const;

/** What {@link AxGen} accepts; checked once in the constructor. */
const GEN_OPTIONS = object(
  {
    ...MODEL_SETTINGS_KEYS,
    mcp: MCP_CLIENTS,
    ucp: UCP_CLIENTS,
    functions: FUNCTIONS,
    instructions: string(),
    mcpContext: MCP_CONTEXT,
    mcpInheritance: MCP_INHERITANCE,
    mcpToolNames: oneOf('bare', 'namespaced'),
    maxSteps: MAX_STEPS,
    maxCorrections: number({ integer: true, min: 0 }),
  },
  {
    expected: 'an options object { mcp?, functions?, instructions?, mcpContext?, … }',
    aliases: {
      ...RUN_ALIASES,
      system: 'instructions',
      systemPrompt: 'instructions',
      prompt: 'instructions',
      toolNames: 'mcpToolNames',
    },
  },
);

/** Options of one run. Where they overlap with {@link AxGenOptions}, these win. */
export interface AxGenForwardOptions extends AxModelSettings {
  mcp?: AxMCPClients;
  /** UCP clients of this run (instead of the program's). */
  ucp?: AxUCPClients;
  mcpContext?: readonly AxMCPContextEntry[];
  mcpInheritance?: AxMCPInheritance;
  /** The context of the program this run is nested in (flows and functions pass it). */
  mcpParent?: AxMCPExecutionContext;
  abortSignal?: AbortSignal;
  maxSteps?: number;
  /** Set by the event runtime when an event wakes or resumes the program. */
  eventContext?: AxEventContext;
  /** MCP progress, task and refusal events of this run. */
  onMCPEvent?: (event: AxMCPProgramEvent) => void;
  /**
   * Parts given to the model with the inputs, in the same message: an image to describe, a
   * file to read. A service that cannot take a kind of media describes it to the model instead.
   */
  attachments?: readonly AxAIContentPart[];
}

/** What {@link AxGen.forward} and {@link AxGen.streamingForward} accept; checked once per run. */
const GEN_FORWARD_OPTIONS = object(
  {
    ...MODEL_SETTINGS_KEYS,
    mcp: MCP_CLIENTS,
    ucp: UCP_CLIENTS,
    mcpContext: MCP_CONTEXT,
    mcpInheritance: MCP_INHERITANCE,
    mcpParent: EXECUTION_CONTEXT,
    abortSignal: ABORT_SIGNAL,
    maxSteps: MAX_STEPS,
    eventContext: EVENT_CONTEXT,
    onMCPEvent: func('a function (event) => void'),
    attachments: array(CONTENT_PART, { expected: 'an array of content parts { type, … }' }),
  },
  {
    expected: 'run options { abortSignal?, mcp?, mcpContext?, maxSteps?, … }',
    aliases: { ...RUN_ALIASES, signal: 'abortSignal' },
  },
);

/** What {@link AxGen.streamingForward} yields: outputs and MCP events on separate channels. */
export type AxGenStreamChunk<Out> =
  | { channel: 'output'; type: 'delta'; delta: Partial<Out> }
  /** The model is asked to answer again: discard the deltas so far. */
  | { channel: 'output'; type: 'retry'; problems: string[] }
  | { channel: 'output'; type: 'final'; output: Out }
  | { channel: 'mcp'; event: AxMCPProgramEvent };

/** The arguments of one run, checked before anything is sent. */
function checkRun(ai: unknown, options: AxGenForwardOptions): void {
  assertProgramOptions(GEN_FORWARD_OPTIONS, options, 'AxGen forward options');
  checkService(ai, 'AxGen forward');
}

interface RunHooks {
  streaming: boolean;
  onStep?: () => void;
  onText?: (delta: string) => void;
  onRetry?: (problems: string[]) => void;
  emit: (event: AxMCPProgramEvent) => void;
}

/**
 * A program with a signature. Satisfies the event runtime's program interface, so
 * `eventTarget(id).program(gen).ai(llm)` runs it on events.
 *
 * @example
 * ```ts
 * const answer = ax('question:string -> answer:string', { mcp: docsClient });
 * const { answer: text } = await answer.forward(llm, { question: 'How do I reindex?' });
 * ```
 */
export class AxGen<
  In extends Record<string, unknown> = Record<string, unknown>,
  Out extends Record<string, unknown> = Record<string, unknown>,
> {
  readonly signature: AxSignature;
  readonly #options: AxGenOptions;
  readonly #functions: readonly AxFunction[];

  constructor(signature: string | AxSignature, options: AxGenOptions = {}) {
    this.signature = signature instanceof AxSignature ? signature : new AxSignature(signature);
    assertProgramOptions(GEN_OPTIONS, options, 'AxGen options');
    this.#functions = functionList(options.functions);
    runContext(options.mcp, undefined, undefined, options.ucp); // rejects duplicate namespaces now
    this.#options = { ...options };
  }

  /** The input fields, as the event runtime validates mapped event input against them. */
  get inputFields(): readonly AxEventInputField[] {
    return eventInputFields(this.signature.inputs);
  }

  /** Runs the program: the tool loop until the model gives outputs that match the signature. */
  async forward(ai: AxAIService, inputs: In, options: AxGenForwardOptions = {}): Promise<Out> {
    checkRun(ai, options);
    return this.#run(ai, inputs, options, { streaming: false, emit: (event) => options.onMCPEvent?.(event) });
  }

  /**
   * Runs the program streaming: yields output deltas as the model writes them (string
   * fields piece by piece, others whole), MCP progress and task events on the `mcp`
   * channel, and the validated outputs last. Stopping the iteration aborts the run.
   */
  async *streamingForward(
    ai: AxAIService,
    inputs: In,
    options: AxGenForwardOptions = {},
  ): AsyncGenerator<AxGenStreamChunk<Out>, void, undefined> {
    checkRun(ai, options);
    const channel = new AsyncChannel<AxGenStreamChunk<Out>>();
    const stop = new AbortController();
    const names = new Set(this.signature.outputs.map((field) => field.name));
    const handlers = {
      onStringDelta: (key: string, delta: string) => {
        if (names.has(key))
          channel.push({ channel: 'output', type: 'delta', delta: { [key]: delta } as Partial<Out> });
      },
      onValue: (key: string, value: unknown) => {
        if (names.has(key))
          channel.push({ channel: 'output', type: 'delta', delta: { [key]: value } as Partial<Out> });
      },
    };
    let scanner = new JSONObjectStream(handlers);
    const link = linkAbort(options.abortSignal, stop.signal);
    let finished = false;
    this.#run(
      ai,
      inputs,
      { ...options, abortSignal: link.signal },
      {
        streaming: true,
        onStep: () => {
          scanner = new JSONObjectStream(handlers);
        },
        onText: (delta) => scanner.write(delta),
        onRetry: (problems) => {
          channel.push({ channel: 'output', type: 'retry', problems });
        },
        emit: (event) => {
          options.onMCPEvent?.(event);
          channel.push({ channel: 'mcp', event });
        },
      },
    ).then(
      (output) => {
        finished = true;
        channel.push({ channel: 'output', type: 'final', output });
        channel.close();
      },
      (error: unknown) => {
        finished = true;
        channel.close({ error });
      },
    );
    try {
      yield* channel.drain();
    } finally {
      if (!finished) stop.abort(new AxProgramError('aborted', 'The consumer stopped the stream'));
      link.dispose();
    }
  }

  async #run(ai: AxAIService, inputs: In, options: AxGenForwardOptions, hooks: RunHooks): Promise<Out> {
    const defaults = this.#options;
    const values = validateInputs(this.signature.inputs, inputs);
    const link = linkAbort(options.abortSignal, options.eventContext?.abortSignal);
    try {
      const context = runContext(
        options.mcp ?? defaults.mcp,
        options.mcpParent,
        options.mcpInheritance ?? defaults.mcpInheritance,
        options.ucp ?? defaults.ucp,
      );
      const structured = ai.capabilities.structuredOutputs;
      const tools = new AxToolsetBuilder(context, this.#functions, defaults.mcpToolNames ?? 'bare');
      const hasTools =
        this.#functions.length > 0 || context.clients.length > 0 || context.ucpClients.length > 0;
      const contextMessage = await resolveContextEntries(
        options.mcpContext ?? defaults.mcpContext,
        context,
        link.signal,
        'AxGen run',
      );
      const messages = [
        systemMessage(this.signature, defaults.instructions, { structured, hasTools }),
        ...(contextMessage ? [contextMessage] : []),
        inputMessage(this.signature, values, options.eventContext, options.attachments),
      ];
      let output: Record<string, unknown> | undefined;
      let corrections = 0;
      const maxCorrections = defaults.maxCorrections ?? 2;
      const format = outputFormat(this.signature, structured);
      await runToolLoop({
        ai,
        context,
        signal: link.signal,
        emit: hooks.emit,
        eventContext: options.eventContext,
        messages,
        tools,
        maxSteps: options.maxSteps ?? defaults.maxSteps ?? DEFAULT_MAX_STEPS,
        settings: modelSettings(defaults, options),
        ...(format ? { responseFormat: format } : {}),
        streaming: hooks.streaming,
        ...(hooks.onText ? { onText: hooks.onText } : {}),
        ...(hooks.onStep ? { onStep: hooks.onStep } : {}),
        judge: (response) => {
          if (response.message.refusal) {
            throw new AxProgramError(
              'refused',
              `The model refused: ${response.message.refusal.slice(0, 300)}`,
            );
          }
          const reading = readOutputs(this.signature.outputs, response.message.content ?? '');
          if (reading.ok) {
            output = reading.value;
            return undefined;
          }
          if (corrections >= maxCorrections) {
            throw new AxProgramError(
              'invalid_output',
              `The answer does not match the outputs: ${reading.problems.join('; ')}`,
            );
          }
          corrections++;
          hooks.onRetry?.(reading.problems);
          return correctionMessage(reading.problems);
        },
      });
      return output as Out;
    } catch (error) {
      if (link.signal.aborted && !(error instanceof AxProgramError && error.code === 'aborted')) {
        throw new AxProgramError('aborted', 'The run was aborted', { cause: link.signal.reason ?? error });
      }
      throw error;
    } finally {
      link.dispose();
    }
  }
}

/**
 * Creates a program from a signature; a signature literal types its inputs and outputs.
 *
 * @example
 * ```ts
 * const triage = ax('"Sorts support mail" mail:string -> priority:class "low, high", summary:string', {
 *   mcp: [crm, docs],
 * });
 * const { priority, summary } = await triage.forward(llm, { mail });
 * ```
 */
export function ax<const S extends string>(
  signature: S,
  options?: AxGenOptions,
): AxGen<AxSignatureInputs<S>, AxSignatureOutputs<S>>;
export function ax(signature: AxSignature, options?: AxGenOptions): AxGen;
export function ax(signature: string | AxSignature, options: AxGenOptions = {}): AxGen {
  return new AxGen(signature, options);
}
