/**
 * Code-acting agents: `agent(signature, options)` runs an actor that writes JavaScript in a
 * QuickJS sandbox (MCP reachable only as `mcp.<namespace>.…`) and a responder that writes
 * the outputs from the evidence. Discovery, child agents, state and event targets.
 */
export type { AxAgentEvent } from './actor.js';
export {
  AxAgent,
  AxAgentClarificationError,
  type AxAgentForwardOptions,
  type AxAgentOptions,
  type AxAgentParked,
  type AxAgentStreamChunk,
  agent,
  CLARIFICATION_KIND,
} from './agent.js';
export type { AxAgentSandboxLimits } from './sandbox.js';
export type { AxAgentActionLogEntry, AxAgentClientState, AxAgentParkedRun, AxAgentState } from './state.js';
