/**
 * Options of an agent and of its runs, their shapes, and their defaults.
 *
 * They stay flat on purpose. `mcp`, `mcpInheritance`, `functionDiscovery` and `eventContext`
 * are the specification's names; `model`, `temperature`, `maxTokens` and `maxCorrections` are
 * the ones `ax()` takes too; `maxTurns` is also a per-run option; and what belongs together
 * is already one object (`limits` for the sandbox, `functionDiscovery: { maxResults }`).
 * Nesting what is left (`name`, `description`, `id`, `agents`, `functions`, …) would only
 * rename options that each stand alone.
 */
import { AI_SERVICE, type AxAIService } from '../../ai/types.js';
import type { AxEventContext } from '../../events/target.js';
import {
  ABORT_SIGNAL,
  anyOf,
  array,
  boolean,
  func,
  instance,
  matching,
  number,
  object,
  string,
} from '../../options/check.js';
import { type AxFunction, FUNCTIONS } from '../functions.js';
import {
  type AxMCPClients,
  type AxMCPExecutionContext,
  type AxMCPInheritance,
  EXECUTION_CONTEXT,
  MCP_CLIENTS,
  MCP_INHERITANCE,
} from '../mcp-context.js';
import { EVENT_CONTEXT } from '../shapes.js';
import type { AxMCPProgramEvent } from '../tool-calls.js';
import { type AxModelSettings, MODEL_SETTINGS_KEYS } from '../tool-loop.js';
import { type AxUCPClients, UCP_CLIENTS } from '../ucp-context.js';
import type { AxAgentEvent } from './actor.js';
import type { AxAgent } from './agent.js';
import {
  type AxAgentSandboxLimits,
  DEFAULT_LIMITS,
  SANDBOX_LIMITS,
  type SandboxLimits,
} from './sandbox-limits.js';

/** Options of {@link agent}. */
export interface AxAgentOptions extends AxModelSettings {
  /** The agent's own AI service: used when `forward` gets none, and when a parent calls it. */
  ai?: AxAIService;
  /** The name a parent calls it by (`agents.<name>`): `[A-Za-z_][A-Za-z0-9_]{0,63}`. */
  name?: string;
  /** What it does, for a parent's actor. */
  description?: string;
  /** A stable id: subscriptions are owned by `ax-agent:<id>` (default: the name, else random). */
  id?: string;
  /** MCP clients the actor reaches as `mcp.<namespace>` (one or an array). */
  mcp?: AxMCPClients;
  /**
   * UCP clients the actor reaches as `ucp.<namespace>.<operation>(args)`
   * (`ucp.shop.checkout.complete({ id, payment })`), one or an array. A namespace is used by
   * one client only, MCP or UCP.
   */
  ucp?: AxUCPClients;
  /** What it inherits from a parent's context (default `'all'`). */
  mcpInheritance?: AxMCPInheritance;
  /**
   * List only namespaces and let the actor `discover(query)` callables (default off);
   * `maxResults` bounds one search (default 8, at most 50).
   */
  functionDiscovery?: boolean | { maxResults?: number };
  /** Child agents, callable as `agents.<name>(inputs)`. */
  agents?: readonly AxAgent[];
  /** Host functions, callable as `functions.<name>(args)`. */
  functions?: readonly AxFunction[];
  /** Input fields kept out of the prompt: the actor reads them as `inputs.<field>` in code. */
  contextFields?: readonly string[];
  /** Actor turns per run (default 8). */
  maxTurns?: number;
  /** Extra instructions for the actor and the responder. */
  instructions?: string;
  /** Limits of the sandbox: one step's time, the runtime's memory and stack, console output kept. */
  limits?: AxAgentSandboxLimits;
  /** Times the responder is asked to fix outputs that do not match (default 2). */
  maxCorrections?: number;
  /**
   * Failures of best-effort work: restoring state, releasing subscriptions on close. Without it,
   * the first failure of each kind is written to the console.
   */
  onError?: (error: unknown) => void;
}

/** Options of one run. Where they overlap with {@link AxAgentOptions}, these win. */
export interface AxAgentForwardOptions extends AxModelSettings {
  mcp?: AxMCPClients;
  /** UCP clients of this run (instead of the agent's). */
  ucp?: AxUCPClients;
  mcpInheritance?: AxMCPInheritance;
  /** The context of the program this run is nested in (parent agents and flows pass it). */
  mcpParent?: AxMCPExecutionContext;
  abortSignal?: AbortSignal;
  maxTurns?: number;
  /** Set by the event runtime. */
  eventContext?: AxEventContext;
  onMCPEvent?: (event: AxMCPProgramEvent) => void;
  onAgentEvent?: (event: AxAgentEvent) => void;
}

export const LABEL = 'AxAgent options';
export const FORWARD_LABEL = 'AxAgent forward options';

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/**
 * The objects `new AxAgent()` made. `agents` is checked against it rather than with
 * `instanceof`, because the class imports this file.
 */
const AGENTS = new WeakSet<object>();

/** Records an agent as made by the class (its constructor calls it first). */
export function markAgent(agent: object): void {
  AGENTS.add(agent);
}

/** Names users reach for, in the options of agents and of their runs. */
const RUN_ALIASES = {
  maxSteps: 'maxTurns',
  turns: 'maxTurns',
  inheritance: 'mcpInheritance',
  clients: 'mcp',
} as const;

/** What {@link AxAgent} accepts; checked once in the constructor. */
export const AGENT_OPTIONS = object(
  {
    ...MODEL_SETTINGS_KEYS,
    ai: AI_SERVICE,
    name: matching(NAME, `a name matching ${NAME.source}`),
    description: string(),
    id: string({ nonEmpty: true }),
    mcp: MCP_CLIENTS,
    ucp: UCP_CLIENTS,
    mcpInheritance: MCP_INHERITANCE,
    functionDiscovery: anyOf(
      boolean(),
      object(
        { maxResults: number({ integer: true, min: 1, max: 50 }) },
        { expected: 'an object { maxResults? }' },
      ),
    ),
    agents: array(
      instance(
        'an agent created with agent()',
        (value) => typeof value === 'object' && value !== null && AGENTS.has(value),
      ),
      { expected: 'an array of agents created with agent()' },
    ),
    functions: FUNCTIONS,
    contextFields: array(string({ nonEmpty: true })),
    maxTurns: number({ integer: true, min: 1 }),
    instructions: string(),
    limits: SANDBOX_LIMITS,
    maxCorrections: number({ integer: true, min: 0 }),
    onError: func('a function (error) => void'),
  },
  {
    expected: 'an options object { mcp?, functions?, agents?, maxTurns?, … }',
    aliases: {
      ...RUN_ALIASES,
      discovery: 'functionDiscovery',
      children: 'agents',
      subAgents: 'agents',
      system: 'instructions',
      sandbox: 'limits',
    },
  },
);

/** What {@link AxAgent.forward} and {@link AxAgent.streamingForward} accept; checked once per run. */
export const AGENT_FORWARD_OPTIONS = object(
  {
    ...MODEL_SETTINGS_KEYS,
    mcp: MCP_CLIENTS,
    ucp: UCP_CLIENTS,
    mcpInheritance: MCP_INHERITANCE,
    mcpParent: EXECUTION_CONTEXT,
    abortSignal: ABORT_SIGNAL,
    maxTurns: number({ integer: true, min: 1 }),
    eventContext: EVENT_CONTEXT,
    onMCPEvent: func('a function (event) => void'),
    onAgentEvent: func('a function (event) => void'),
  },
  {
    expected: 'run options { abortSignal?, mcp?, maxTurns?, … }',
    aliases: { ...RUN_ALIASES, signal: 'abortSignal' },
  },
);

/** Actor turns of a run: the run's, else the agent's, else 8. */
export function maxTurnsOf(run: AxAgentForwardOptions, agent: AxAgentOptions): number {
  return run.maxTurns ?? agent.maxTurns ?? 8;
}

/** The limits with defaults (their shapes were checked with the options). */
export function resolveLimits(limits: AxAgentSandboxLimits | undefined): SandboxLimits {
  const resolved: Record<string, number> = { ...DEFAULT_LIMITS };
  for (const [key, value] of Object.entries(limits ?? {})) if (value !== undefined) resolved[key] = value;
  return Object.freeze(resolved as SandboxLimits);
}

/** How many callables one `discover(query)` returns. */
export function discoveryLimit(option: AxAgentOptions['functionDiscovery']): number {
  const max = typeof option === 'object' ? option.maxResults : undefined;
  return max ?? 8;
}
