/**
 * `agent(signature, options)` / {@link AxAgent}: a code-acting agent. An actor loop writes
 * JavaScript steps that run in a QuickJS sandbox where MCP is reachable only through
 * `mcp.<namespace>.…` and UCP only through `ucp.<namespace>.<operation>(args)`; a responder
 * then turns the evidence into the signature's outputs.
 */

import type { AxAIContentPart, AxAIService } from '../../ai/types.js';
import { UnheardErrors } from '../../errors/unheard.js';
import type { AxEventInputField } from '../../events/input.js';
import type { AxEventContext } from '../../events/target.js';
import { linkAbort } from '../../protocol/abort.js';
import { AsyncChannel } from '../channel.js';
import { AxProgramError, assertProgramOptions, programOptionsError, shownValue } from '../errors.js';
import { eventInputFields, validateInputs } from '../fields.js';
import { type AxFunction, functionList } from '../functions.js';
import type { AxGenStreamChunk } from '../gen.js';
import { AxMCPExecutionContext, type AxProgramMCPClient, runContext } from '../mcp-context.js';
import { checkService } from '../shapes.js';
import { AxSignature } from '../signature.js';
import type { AxSignatureInputs, AxSignatureOutputs } from '../signature-types.js';
import type { AxMCPProgramEvent } from '../tool-calls.js';
import { modelSettings } from '../tool-loop.js';
import { type AxAgentEvent, runActor } from './actor.js';
import {
  AGENT_FORWARD_OPTIONS,
  AGENT_OPTIONS,
  type AxAgentForwardOptions,
  type AxAgentOptions,
  discoveryLimit,
  FORWARD_LABEL,
  LABEL,
  markAgent,
  maxTurnsOf,
  resolveLimits,
} from './agent-options.js';
import { type AgentCallable, CallableIndex } from './callables.js';
import {
  type AxAgentParked,
  announceParked,
  answersClarification,
  type RunStart,
  resumeParked,
} from './clarification.js';
import { AgentHost } from './host-api.js';
import { EVIDENCE_FIELD, responderInputs, responderMedia, responderProgram } from './responder.js';
import { type SandboxLimits, SandboxSession } from './sandbox.js';
import {
  AgentLedger,
  type AxAgentActionLogEntry,
  type AxAgentParkedRun,
  type AxAgentState,
  parseState,
} from './state.js';

export type { AxAgentForwardOptions, AxAgentOptions } from './agent-options.js';
export { AxAgentClarificationError, type AxAgentParked, CLARIFICATION_KIND } from './clarification.js';

/** What {@link AxAgent.streamingForward} yields: agent steps, MCP events and the responder's outputs. */
export type AxAgentStreamChunk<Out> =
  | { channel: 'agent'; event: AxAgentEvent }
  | { channel: 'mcp'; event: AxMCPProgramEvent }
  | Extract<AxGenStreamChunk<Out>, { channel: 'output' }>;

interface RunHooks {
  emitAgent: (event: AxAgentEvent) => void;
  emitMCP: (event: AxMCPProgramEvent) => void;
  onOutput?: (chunk: Extract<AxGenStreamChunk<Record<string, unknown>>, { channel: 'output' }>) => void;
}

/**
 * A code-acting agent. Satisfies the event runtime's program interface (with state), so
 * `eventTarget(id).program(agent).ai(llm)` runs it on events; a clarification then parks
 * the run as `waiting_event` with an `ax.clarification` continuation.
 *
 * @example
 * ```ts
 * const analyst = agent('question:string -> answer:string', { mcp: [docs, tickets], functionDiscovery: true });
 * const { answer } = await analyst.forward(llm, { question: 'Which open tickets mention reindexing?' });
 * await analyst.close();
 * ```
 */
export class AxAgent<
  In extends Record<string, unknown> = Record<string, unknown>,
  Out extends Record<string, unknown> = Record<string, unknown>,
> {
  readonly signature: AxSignature;
  readonly name: string | undefined;
  readonly description: string | undefined;
  /** The id behind the subscription owner `ax-agent:<id>`. */
  readonly id: string;
  readonly #options: AxAgentOptions;
  readonly #functions: readonly AxFunction[];
  readonly #agents: ReadonlyMap<string, AxAgent>;
  readonly #contextFields: ReadonlySet<string>;
  readonly #limits: SandboxLimits;
  readonly #responder: ReturnType<typeof responderProgram>;
  readonly #ledger: AgentLedger;
  /** Failures of best-effort work: `onError`, else the first of each kind to the console. */
  readonly #report: (error: unknown) => void;
  readonly #sessions = new Set<SandboxSession>();
  /** Clients seen by runs, by namespace: where owned subscriptions are released on close. */
  readonly #clients = new Map<string, AxProgramMCPClient>();
  #parked: AxAgentParkedRun | undefined;
  #closed = false;
  /** Aborted by `close()`: running runs end. */
  readonly #stop = new AbortController();

  constructor(signature: string | AxSignature, options: AxAgentOptions = {}) {
    markAgent(this);
    this.signature = signature instanceof AxSignature ? signature : new AxSignature(signature);
    assertProgramOptions(AGENT_OPTIONS, options, LABEL);
    this.name = options.name;
    this.description = options.description;
    this.id = options.id ?? options.name ?? crypto.randomUUID();
    this.#functions = functionList(options.functions);
    this.#agents = childIndex(options.agents, this);
    const inputNames = this.signature.inputs.map((field) => field.name);
    (options.contextFields ?? []).forEach((field, index) => {
      if (inputNames.includes(field)) return;
      throw programOptionsError(LABEL, {
        path: `contextFields[${index}]`,
        expected: `the name of an input field (${inputNames.join(', ')})`,
        received: shownValue(field),
      });
    });
    this.#contextFields = new Set(options.contextFields ?? []);
    this.#limits = resolveLimits(options.limits);
    runContext(options.mcp, undefined, undefined, options.ucp);
    this.#responder = responderProgram(
      this.signature,
      this.#contextFields,
      options.instructions,
      options.maxCorrections,
    );
    this.#ledger = new AgentLedger(`ax-agent:${this.id}`);
    this.#options = { ...options };
    // A subscription not re-acquired after setState was lost from the agent's state in silence.
    this.#report = new UnheardErrors(`agent ${this.id}`, 'onError to agent()', (message) =>
      console.warn(message),
    ).reporter(options.onError);
  }

  /** The input fields, as the event runtime validates mapped event input against them. */
  get inputFields(): readonly AxEventInputField[] {
    return eventInputFields(this.signature.inputs);
  }

  /**
   * Runs the agent: the actor loop, then the responder. An actor's clarification throws
   * {@link AxAgentClarificationError}; under the event runtime (`eventContext`) it registers
   * an `ax.clarification` continuation and returns {@link AxAgentParked} instead.
   */
  forward(
    ai: AxAIService | undefined,
    inputs: In,
    options: AxAgentForwardOptions & { eventContext: AxEventContext },
  ): Promise<Out | AxAgentParked>;
  forward(ai: AxAIService | undefined, inputs: In, options?: AxAgentForwardOptions): Promise<Out>;
  forward(
    ai: AxAIService | undefined,
    inputs: In,
    options: AxAgentForwardOptions = {},
  ): Promise<Out | AxAgentParked> {
    try {
      assertProgramOptions(AGENT_FORWARD_OPTIONS, options, FORWARD_LABEL);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#run(ai, inputs, options, {
      emitAgent: (event) => options.onAgentEvent?.(event),
      emitMCP: (event) => options.onMCPEvent?.(event),
    }) as Promise<Out | AxAgentParked>;
  }

  /** Runs the agent streaming: steps on `agent`, MCP events on `mcp`, the responder's outputs on `output`. */
  async *streamingForward(
    ai: AxAIService | undefined,
    inputs: In,
    options: AxAgentForwardOptions = {},
  ): AsyncGenerator<AxAgentStreamChunk<Out>, void, undefined> {
    assertProgramOptions(AGENT_FORWARD_OPTIONS, options, FORWARD_LABEL);
    const channel = new AsyncChannel<AxAgentStreamChunk<Out>>();
    const stop = new AbortController();
    const link = linkAbort(options.abortSignal, stop.signal);
    let finished = false;
    this.#run(
      ai,
      inputs,
      { ...options, abortSignal: link.signal },
      {
        emitAgent: (event) => {
          options.onAgentEvent?.(event);
          channel.push({ channel: 'agent', event });
        },
        emitMCP: (event) => {
          options.onMCPEvent?.(event);
          channel.push({ channel: 'mcp', event });
        },
        onOutput: (chunk) => channel.push(chunk as AxAgentStreamChunk<Out>),
      },
    ).then(
      () => {
        finished = true;
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

  /** The agent's state: per namespace its subscriptions and tasks, and a parked run. No credentials. */
  getState(): AxAgentState {
    const state: AxAgentState = { schema: 1, mcp: { clients: this.#ledger.snapshot() } };
    if (this.#parked) state.parked = structuredClone(this.#parked);
    return state;
  }

  /**
   * Restores a state: tasks are revalidated with their servers and subscriptions re-acquired,
   * now for the agent's own clients, at the next run for clients it inherits.
   */
  async setState(state: unknown): Promise<void> {
    const parsed = parseState(state);
    this.#ledger.load(parsed.mcp.clients);
    this.#parked = parsed.parked;
    if (this.#options.mcp !== undefined) {
      const context = AxMCPExecutionContext.create(this.#options.mcp);
      for (const client of context.clients) this.#clients.set(client.namespace, client);
      await this.#ledger.restore(context, undefined, this.#report);
    }
  }

  /** Closes running sandbox sessions and releases the subscriptions the agent owns. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stop.abort(new AxProgramError('closed', 'The agent was closed'));
    for (const session of this.#sessions) session.close();
    this.#sessions.clear();
    await this.#ledger.release((namespace) => this.#clients.get(namespace), this.#report);
  }

  /** Runs this agent for a parent agent's actor (`agents.<name>(inputs)`). @internal */
  async runAsChild(
    ai: AxAIService,
    inputs: Record<string, unknown>,
    options: {
      mcpParent: AxMCPExecutionContext;
      abortSignal: AbortSignal;
      onMCPEvent: (e: AxMCPProgramEvent) => void;
    },
  ): Promise<unknown> {
    return this.forward(this.#options.ai ?? ai, inputs as In, options);
  }

  async #run(
    ai: AxAIService | undefined,
    inputs: In,
    options: AxAgentForwardOptions,
    hooks: RunHooks,
  ): Promise<Out | AxAgentParked> {
    if (this.#closed) throw new AxProgramError('closed', 'The agent is closed');
    const service = ai ?? this.#options.ai;
    checkService(service, "AxAgent forward (or the agent's ai option)");
    const defaults = this.#options;
    const maxTurns = maxTurnsOf(options, defaults);
    const link = linkAbort(options.abortSignal, options.eventContext?.abortSignal, this.#stop.signal);
    const signal = link.signal;
    let session: SandboxSession | undefined;
    try {
      const context = runContext(
        options.mcp ?? defaults.mcp,
        options.mcpParent,
        options.mcpInheritance ?? defaults.mcpInheritance,
        options.ucp ?? defaults.ucp,
      );
      for (const child of this.#agents.values()) child.#checkInheritance(context);
      for (const client of context.clients) this.#clients.set(client.namespace, client);
      const start = this.#start(inputs, options.eventContext);
      await this.#ledger.restore(context, signal, this.#report);
      const index = new CallableIndex(context, this.#functions, [...this.#agents.values()].map(childInfo));
      await index.refresh(signal);
      const discovered = new Map<string, AgentCallable>();
      const currentTurn = { value: start.firstTurn };
      const host = new AgentHost({
        context,
        index,
        ledger: this.#ledger,
        functions: new Map(this.#functions.map((fn) => [fn.name, fn])),
        agents: this.#agents,
        ai: service,
        eventContext: options.eventContext,
        emit: hooks.emitMCP,
        onDiscover: (found) => {
          for (const callable of found) discovered.set(callable.path, callable);
          hooks.emitAgent({ type: 'discovered', turn: currentTurn.value, paths: found.map((c) => c.path) });
        },
        discoverLimit: discoveryLimit(defaults.functionDiscovery),
      });
      session = await SandboxSession.open(host, this.#limits, {
        namespaces: index.toolNames(),
        ucp: index.ucpOperations(),
        agents: [...this.#agents.keys()],
        functions: this.#functions.map((fn) => fn.name),
        inputs: JSON.stringify(start.values),
      });
      this.#sessions.add(session);
      if (this.#closed) throw new AxProgramError('closed', 'The agent is closed');
      for (const entry of start.notes) hooks.emitAgent({ type: 'note', text: entry });
      const outcome = await runActor({
        ai: service,
        settings: modelSettings(defaults, options),
        signature: this.signature,
        instructions: defaults.instructions,
        index,
        session,
        discovery: defaults.functionDiscovery !== undefined && defaults.functionDiscovery !== false,
        discovered,
        contextFields: this.#contextFields,
        inputs: start.values,
        limits: this.#limits,
        firstTurn: start.firstTurn,
        maxTurns,
        log: start.log,
        eventContext: options.eventContext,
        signal,
        onEvent: hooks.emitAgent,
        currentTurn,
      });
      session.close();
      if (outcome.kind === 'clarification') {
        return await this.#park(outcome.question, start, currentTurn.value, options.eventContext);
      }
      const responderIn = responderInputs(
        start.values,
        this.#contextFields,
        outcome.kind === 'final' ? outcome : { log: start.log },
      );
      // The media the evidence refers to reaches the responder as media, not as a reference.
      const media = responderMedia(responderIn[EVIDENCE_FIELD], host.media);
      return (await this.#respond(service, responderIn, options, signal, hooks, media)) as Out;
    } catch (error) {
      if (signal.aborted && !(error instanceof AxProgramError && error.code === 'aborted')) {
        throw new AxProgramError('aborted', 'The run was aborted', { cause: signal.reason ?? error });
      }
      throw error;
    } finally {
      if (session) {
        session.close();
        this.#sessions.delete(session);
      }
      link.dispose();
    }
  }

  /** A fresh run, or the parked run an `ax.clarification` continuation resumes. */
  #start(inputs: In, eventContext: AxEventContext | undefined): RunStart {
    if (!eventContext || !answersClarification(eventContext)) {
      return { values: validateInputs(this.signature.inputs, inputs), log: [], firstTurn: 1, notes: [] };
    }
    const start = resumeParked(this.#parked, inputs, eventContext);
    this.#parked = undefined;
    return start;
  }

  #park(
    question: string,
    start: { values: Record<string, unknown>; log: AxAgentActionLogEntry[] },
    turn: number,
    eventContext: AxEventContext | undefined,
  ): Promise<AxAgentParked> {
    const runId = eventContext?.runId ?? crypto.randomUUID();
    this.#parked = { runId, question, inputs: start.values, log: start.log, turns: turn };
    return announceParked(this.#parked, eventContext);
  }

  async #respond(
    ai: AxAIService,
    inputs: Record<string, unknown>,
    options: AxAgentForwardOptions,
    signal: AbortSignal,
    hooks: RunHooks,
    attachments: readonly AxAIContentPart[],
  ): Promise<Record<string, unknown>> {
    const runOptions = {
      ...modelSettings(this.#options, options),
      abortSignal: signal,
      mcpInheritance: 'none' as const,
      ...(options.eventContext ? { eventContext: options.eventContext } : {}),
      ...(attachments.length > 0 ? { attachments } : {}),
    };
    if (!hooks.onOutput) return this.#responder.forward(ai, inputs, runOptions);
    let output: Record<string, unknown> | undefined;
    for await (const chunk of this.#responder.streamingForward(ai, inputs, runOptions)) {
      if (chunk.channel !== 'output') continue;
      hooks.onOutput(chunk);
      if (chunk.type === 'final') output = chunk.output;
    }
    if (!output) throw new AxProgramError('invalid_output', 'The responder ended without outputs');
    return output;
  }

  #checkInheritance(parent: AxMCPExecutionContext): void {
    parent.derive(this.#options.mcpInheritance ?? 'all', this.#options.mcp, this.#options.ucp);
  }
}

function childIndex(agents: readonly AxAgent[] | undefined, self: AxAgent): ReadonlyMap<string, AxAgent> {
  const index = new Map<string, AxAgent>();
  (agents ?? []).forEach((child, at) => {
    const path = `agents[${at}]`;
    if (child === self) {
      throw programOptionsError(LABEL, { path, expected: 'another agent', received: 'the agent itself' });
    }
    if (!child.name || !child.description) {
      throw programOptionsError(
        LABEL,
        { path, expected: 'an agent with a name and a description', received: 'an agent without them' },
        `${path}: a child agent needs a name and a description (its parent's actor calls it by name)`,
      );
    }
    if (index.has(child.name)) {
      throw programOptionsError(LABEL, {
        path: `${path}.name`,
        expected: 'a name no other child agent has',
        received: shownValue(child.name),
      });
    }
    index.set(child.name, child);
  });
  return index;
}

function childInfo(child: AxAgent) {
  return {
    name: child.name as string,
    description: child.description as string,
    inputs: child.signature.inputs,
    outputs: child.signature.outputs,
  };
}

/**
 * Creates a code-acting agent; a signature literal types its inputs and outputs.
 *
 * @example
 * ```ts
 * const researcher = agent('"Finds facts" topic:string -> facts:string[]', {
 *   name: 'researcher',
 *   description: 'Looks a topic up in the docs server',
 *   mcpInheritance: ['docs'],
 * });
 * const lead = agent('question:string -> answer:string', { mcp: [docs, tickets], agents: [researcher] });
 * ```
 */
export function agent<const S extends string>(
  signature: S,
  options?: AxAgentOptions,
): AxAgent<AxSignatureInputs<S>, AxSignatureOutputs<S>>;
export function agent(signature: AxSignature, options?: AxAgentOptions): AxAgent;
export function agent(signature: string | AxSignature, options: AxAgentOptions = {}): AxAgent {
  return new AxAgent(signature, options);
}
