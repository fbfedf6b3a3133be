/**
 * The actor loop of one agent run: each turn the model writes a JavaScript step, the
 * sandbox session runs it, and the result joins the action log the next turn sees. The
 * loop ends when the code calls `final(...)` or `askClarification(...)`, or at the turn
 * limit. Catalog revisions are checked before every turn: a changed catalog refreshes
 * what is callable in the sandbox and what the prompt lists.
 */
import type { AxAIService } from '../../ai/types.js';
import type { AxEventContext } from '../../events/target.js';
import type { AxSignature } from '../signature.js';
import type { AxModelSettings } from '../tool-loop.js';
import { actorMessages, extractCode } from './actor-prompt.js';
import type { AgentCallable, CallableIndex } from './callables.js';
import type { SandboxLimits, SandboxSession } from './sandbox.js';
import type { AxAgentActionLogEntry } from './state.js';

/** What the agent reports while it runs (the `agent` channel of `streamingForward`). */
export type AxAgentEvent =
  /** The actor wrote the code of a step. */
  | { type: 'step'; turn: number; code: string }
  /** The step ran. */
  | { type: 'observation'; turn: number; entry: Extract<AxAgentActionLogEntry, { kind: 'step' }> }
  /** `discover(query)` found these paths. */
  | { type: 'discovered'; turn: number; paths: string[] }
  /** A note the host added to the action log (catalog change, turn limit, clarification answer). */
  | { type: 'note'; text: string }
  /** The actor called `final(task, evidence)`. */
  | { type: 'final'; turn: number; task: unknown; evidence: unknown }
  /** The actor asked a question. */
  | { type: 'clarification'; turn: number; question: string };

/** How the actor loop ended. */
export type ActorOutcome =
  | { kind: 'final'; task: unknown; evidence: unknown }
  | { kind: 'clarification'; question: string }
  | { kind: 'turn_limit' };

/** What the loop runs with. `log` is appended to in place. */
export interface ActorLoop {
  ai: AxAIService;
  settings: AxModelSettings;
  signature: AxSignature;
  instructions: string | undefined;
  index: CallableIndex;
  session: SandboxSession;
  discovery: boolean;
  discovered: Map<string, AgentCallable>;
  contextFields: ReadonlySet<string>;
  inputs: Record<string, unknown>;
  limits: SandboxLimits;
  /** The number of the first turn this loop takes: 1, or after a resume the turns already taken + 1. */
  firstTurn: number;
  /** Turns of the whole run, those taken before a clarification included. */
  maxTurns: number;
  log: AxAgentActionLogEntry[];
  eventContext: AxEventContext | undefined;
  signal: AbortSignal;
  onEvent: (event: AxAgentEvent) => void;
  /** The turn the current step belongs to, for `discover` events. */
  currentTurn: { value: number };
}

/** Runs turns until the actor is done or the turn limit is reached. */
export async function runActor(loop: ActorLoop): Promise<ActorOutcome> {
  const note = (text: string) => {
    loop.log.push({ kind: 'note', text });
    loop.onEvent({ type: 'note', text });
  };
  // A resumed run goes on counting: its turns before the clarification count against maxTurns.
  const last = loop.maxTurns;
  for (let turn = loop.firstTurn; turn <= last; turn++) {
    loop.signal.throwIfAborted();
    loop.currentTurn.value = turn;
    if ((await loop.index.refresh(loop.signal)) && turn > loop.firstTurn) {
      loop.session.setTools(loop.index.toolNames());
      for (const path of loop.discovered.keys()) if (!loop.index.has(path)) loop.discovered.delete(path);
      note('A server changed its catalog: the callables listed in the instructions are up to date.');
    }
    const response = await loop.ai.chat({
      messages: actorMessages({ ...loop, turn, log: loop.log }),
      signal: loop.signal,
      ...loop.settings,
    });
    const code = extractCode(response.message.content);
    loop.onEvent({ type: 'step', turn, code });
    const result =
      code === ''
        ? { output: '', error: 'The reply had no code: reply with one ```js block.', kept: [] }
        : await loop.session.run(code, loop.signal);
    const entry: Extract<AxAgentActionLogEntry, { kind: 'step' }> = {
      kind: 'step',
      turn,
      code,
      output: result.output,
    };
    if (result.error !== undefined) entry.error = result.error;
    if ('limit' in result && result.limit !== undefined) entry.limit = result.limit;
    if ('reset' in result && result.reset) entry.reset = true;
    loop.log.push(entry);
    loop.onEvent({ type: 'observation', turn, entry });
    if ('clarification' in result && result.clarification) {
      loop.onEvent({ type: 'clarification', turn, question: result.clarification.question });
      return { kind: 'clarification', question: result.clarification.question };
    }
    if ('final' in result && result.final) {
      loop.onEvent({ type: 'final', turn, ...result.final });
      return { kind: 'final', ...result.final };
    }
  }
  note(`The turn limit (${loop.maxTurns}) was reached before final() was called.`);
  return { kind: 'turn_limit' };
}
