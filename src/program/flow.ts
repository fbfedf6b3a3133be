/**
 * Flows: programs as nodes of a directed acyclic graph. A node runs once its predecessors
 * have; independent nodes run in parallel (up to `maxConcurrency`), sharing the flow's MCP
 * clients and abort signal. Nested programs inherit the flow's execution context unless
 * `mcpInheritance` restricts it. When a node fails the flow aborts its other branches and
 * cancels the MCP tasks every branch still has open.
 */

import type { AxAIService } from '../ai/types.js';
import { UnheardErrors } from '../errors/unheard.js';
import type { AxEventContext } from '../events/target.js';
import { ABORT_SIGNAL, func, kindOf, number, object } from '../options/check.js';
import { linkAbort } from '../protocol/abort.js';
import { AxProgramError, assertProgramOptions, programOptionsError } from './errors.js';
import {
  type AxMCPClients,
  type AxMCPExecutionContext,
  type AxMCPInheritance,
  EXECUTION_CONTEXT,
  MCP_CLIENTS,
  MCP_INHERITANCE,
  runContext,
} from './mcp-context.js';
import { checkService, EVENT_CONTEXT } from './shapes.js';
import { type AxUCPClients, UCP_CLIENTS } from './ucp-context.js';

/** Options a flow hands to the programs of its nodes. */
export interface AxFlowNodeForwardOptions {
  mcpParent: AxMCPExecutionContext;
  mcpInheritance?: AxMCPInheritance;
  abortSignal: AbortSignal;
  eventContext?: AxEventContext;
}

/** Anything with `forward`: an `AxGen`, another flow, or your own program. */
export interface AxFlowProgram {
  forward(
    ai: AxAIService,
    input: Record<string, unknown>,
    options: AxFlowNodeForwardOptions,
  ): Promise<unknown>;
  /** Declared input fields; a node without an `input` mapping is given these by name. */
  readonly inputFields?: readonly { name: string }[];
}

/** What node input mappings and the flow's output mapping see. */
export interface AxFlowState {
  /** The flow's inputs. */
  readonly input: Readonly<Record<string, unknown>>;
  /** The outputs of the nodes that have run, by node id. */
  readonly outputs: Readonly<Record<string, Record<string, unknown>>>;
}

/** Options of one node. */
export interface AxFlowNodeOptions {
  /** Builds the node's input (default: its declared fields, from predecessors' outputs, then the flow's input). */
  input?: (state: AxFlowState) => Record<string, unknown>;
  /** What the node's program inherits from the flow's context (default `'all'`). */
  mcpInheritance?: AxMCPInheritance;
}

/** What {@link AxFlow.node} accepts as a node's options; checked once per node. */
const FLOW_NODE_OPTIONS = object(
  {
    input: func('a function (state) => input'),
    mcpInheritance: MCP_INHERITANCE,
  },
  { expected: 'node options { input?, mcpInheritance? }', aliases: { inputs: 'input', map: 'input' } },
);

/** Options of {@link flow}. */
export interface AxFlowOptions {
  /** Clients every node inherits (unless restricted). */
  mcp?: AxMCPClients;
  /** UCP clients every node inherits (unless restricted by `mcpInheritance`). */
  ucp?: AxUCPClients;
  /** What the flow inherits from a parent context. */
  mcpInheritance?: AxMCPInheritance;
  /** Nodes running at once (default 4). */
  maxConcurrency?: number;
  /**
   * Reported failures to cancel a task (cancellation is best effort). Without it, the first
   * failure of each kind is written to the console.
   */
  onError?: (error: unknown) => void;
}

/** What {@link flow} accepts; checked once in the constructor. */
const FLOW_OPTIONS = object(
  {
    mcp: MCP_CLIENTS,
    ucp: UCP_CLIENTS,
    mcpInheritance: MCP_INHERITANCE,
    maxConcurrency: number({ integer: true, min: 1 }),
    onError: func('a function (error) => void'),
  },
  {
    expected: 'an options object { mcp?, mcpInheritance?, maxConcurrency?, onError? }',
    aliases: { concurrency: 'maxConcurrency', parallelism: 'maxConcurrency', clients: 'mcp' },
  },
);

/** Options of one flow run. */
export interface AxFlowForwardOptions {
  mcp?: AxMCPClients;
  /** UCP clients of this run (instead of the flow's). */
  ucp?: AxUCPClients;
  mcpInheritance?: AxMCPInheritance;
  mcpParent?: AxMCPExecutionContext;
  abortSignal?: AbortSignal;
  eventContext?: AxEventContext;
}

/** What {@link AxFlow.forward} accepts; checked once per run. */
const FLOW_FORWARD_OPTIONS = object(
  {
    mcp: MCP_CLIENTS,
    ucp: UCP_CLIENTS,
    mcpInheritance: MCP_INHERITANCE,
    mcpParent: EXECUTION_CONTEXT,
    abortSignal: ABORT_SIGNAL,
    eventContext: EVENT_CONTEXT,
  },
  {
    expected: 'run options { abortSignal?, mcp?, mcpInheritance?, mcpParent?, eventContext? }',
    aliases: { signal: 'abortSignal', clients: 'mcp' },
  },
);

interface FlowNode {
  id: string;
  program: AxFlowProgram;
  options: AxFlowNodeOptions;
  after: string[];
}

const UNSAFE_IDS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * A flow of programs.
 *
 * @example
 * ```ts
 * const pipeline = flow({ mcp: [docs, tickets] })
 *   .node('research', ax('question:string -> notes:string'), { mcpInheritance: ['docs'] })
 *   .node('reply', ax('question:string, notes:string -> reply:string'))
 *   .edge('research', 'reply');
 * const { reply } = (await pipeline.forward(llm, { question })).reply;
 * ```
 */
export class AxFlow<Out = Record<string, Record<string, unknown>>> {
  readonly #nodes = new Map<string, FlowNode>();
  readonly #options: AxFlowOptions;
  /** Failed cancellations: `onError`, else the first of each kind to the console. */
  readonly #report: (error: unknown) => void;
  #output: ((state: AxFlowState) => unknown) | undefined;

  constructor(options: AxFlowOptions = {}) {
    assertProgramOptions(FLOW_OPTIONS, options, 'flow options');
    runContext(options.mcp, undefined, undefined, options.ucp);
    this.#options = { ...options };
    this.#report = new UnheardErrors('flow', 'onError to flow()', (message) =>
      console.warn(message),
    ).reporter(options.onError);
  }

  /** Adds a node. Ids are unique. */
  node(id: string, program: AxFlowProgram, options: AxFlowNodeOptions = {}): this {
    if (typeof id !== 'string' || id === '' || UNSAFE_IDS.has(id)) {
      throw new AxProgramError('invalid_flow', `"${String(id)}" cannot be a node id`);
    }
    if (this.#nodes.has(id)) throw new AxProgramError('invalid_flow', `The node "${id}" is added twice`);
    const label = `flow node "${id}"`;
    if (typeof (program as Partial<AxFlowProgram> | null)?.forward !== 'function') {
      throw programOptionsError(label, {
        path: 'program',
        expected: 'a program with forward() (ax(), agent(), a flow, or your own)',
        received: kindOf(program),
      });
    }
    assertProgramOptions(FLOW_NODE_OPTIONS, options, `${label} options`);
    this.#nodes.set(id, { id, program, options: { ...options }, after: [] });
    return this;
  }

  /** Runs `to` after `from` (and gives it `from`'s outputs). Edges may not form a cycle. */
  edge(from: string, to: string): this {
    const source = this.#nodes.get(from);
    const target = this.#nodes.get(to);
    if (!source || !target)
      throw new AxProgramError('invalid_flow', `The edge ${from} → ${to} names an unknown node`);
    if (from === to || this.#dependsOn(from, to)) {
      throw new AxProgramError('invalid_flow', `The edge ${from} → ${to} would make a cycle`);
    }
    if (!target.after.includes(from)) target.after.push(from);
    return this;
  }

  /** Maps the final state to the flow's result (default: every node's outputs by id). */
  output<T>(map: (state: AxFlowState) => T): AxFlow<T> {
    this.#output = map;
    return this as unknown as AxFlow<T>;
  }

  /** Runs the flow. A failing node aborts the others and cancels the branches' open MCP tasks. */
  async forward(
    ai: AxAIService,
    input: Record<string, unknown>,
    options: AxFlowForwardOptions = {},
  ): Promise<Out> {
    assertProgramOptions(FLOW_FORWARD_OPTIONS, options, 'flow forward options');
    checkService(ai, 'flow forward');
    if (this.#nodes.size === 0) throw new AxProgramError('invalid_flow', 'The flow has no nodes');
    const context = runContext(
      options.mcp ?? this.#options.mcp,
      options.mcpParent,
      options.mcpInheritance ?? this.#options.mcpInheritance,
      options.ucp ?? this.#options.ucp,
    );
    for (const node of this.#nodes.values()) context.derive(node.options.mcpInheritance ?? 'all');
    const link = linkAbort(options.abortSignal, options.eventContext?.abortSignal);
    const outputs: Record<string, Record<string, unknown>> = Object.create(null);
    const state: AxFlowState = { input: { ...input }, outputs };
    const branches = new Set<AxMCPExecutionContext>();
    const running = new Map<string, Promise<void>>();
    const done = new Set<string>();
    const limit = this.#options.maxConcurrency ?? 4;
    let failure: { error: unknown } | undefined;
    try {
      while (done.size < this.#nodes.size && !failure) {
        for (const node of this.#nodes.values()) {
          if (running.size >= limit || failure) break;
          if (done.has(node.id) || running.has(node.id) || !node.after.every((id) => done.has(id))) continue;
          const branch = context.derive('all');
          branches.add(branch);
          const run = this.#runNode(node, ai, state, branch, link.signal, options.eventContext).then(
            (result) => {
              outputs[node.id] = result;
              done.add(node.id);
              branches.delete(branch);
            },
            async (error: unknown) => {
              failure ??= { error };
              link.abort(error);
            },
          );
          running.set(
            node.id,
            run.finally(() => running.delete(node.id)),
          );
        }
        if (running.size === 0) break;
        await Promise.race(running.values());
      }
      await Promise.allSettled(running.values());
      if (failure) {
        await Promise.all([...branches].map((branch) => branch.cancelOpenTasks(this.#report)));
        throw failure.error;
      }
      if (link.signal.aborted)
        throw new AxProgramError('aborted', 'The flow was aborted', { cause: link.signal.reason });
      return (this.#output ? this.#output(state) : { ...outputs }) as Out;
    } finally {
      link.dispose();
    }
  }

  async #runNode(
    node: FlowNode,
    ai: AxAIService,
    state: AxFlowState,
    branch: AxMCPExecutionContext,
    signal: AbortSignal,
    eventContext: AxEventContext | undefined,
  ): Promise<Record<string, unknown>> {
    signal.throwIfAborted();
    const input = node.options.input ? node.options.input(state) : this.#defaultInput(node, state);
    const result = await node.program.forward(ai, input, {
      mcpParent: branch,
      abortSignal: signal,
      ...(node.options.mcpInheritance === undefined ? {} : { mcpInheritance: node.options.mcpInheritance }),
      ...(eventContext ? { eventContext } : {}),
    });
    if (typeof result !== 'object' || result === null || Array.isArray(result)) {
      throw new AxProgramError(
        'invalid_output',
        `The node "${node.id}" returned something that is not an object`,
      );
    }
    return result as Record<string, unknown>;
  }

  #defaultInput(node: FlowNode, state: AxFlowState): Record<string, unknown> {
    const available = new Map<string, unknown>(Object.entries(state.input));
    for (const id of node.after)
      for (const [key, value] of Object.entries(state.outputs[id] ?? {})) available.set(key, value);
    const names = node.program.inputFields?.map((field) => field.name) ?? [...available.keys()];
    const input: Record<string, unknown> = {};
    for (const name of names) {
      if (!UNSAFE_IDS.has(name) && available.has(name)) input[name] = available.get(name);
    }
    return input;
  }

  /** Whether `node` runs after `other`, directly or not. */
  #dependsOn(node: string, other: string): boolean {
    const stack = [...(this.#nodes.get(node)?.after ?? [])];
    const seen = new Set<string>();
    while (stack.length > 0) {
      const id = stack.pop() as string;
      if (id === other) return true;
      if (seen.has(id)) continue;
      seen.add(id);
      stack.push(...(this.#nodes.get(id)?.after ?? []));
    }
    return false;
  }
}

/** Starts a flow. */
export function flow(options: AxFlowOptions = {}): AxFlow {
  return new AxFlow(options);
}
