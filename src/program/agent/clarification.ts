/**
 * Clarifications: when the actor calls `askClarification(question)`, the run is parked in
 * the agent's state. Outside the event runtime that is an {@link AxAgentClarificationError};
 * under it the run registers an `ax.clarification` continuation, and the event that answers
 * resumes the parked run where it stopped.
 */
import type { AxEventContext } from '../../events/target.js';
import { AxProgramError } from '../errors.js';
import type { AxAgentActionLogEntry, AxAgentParkedRun } from './state.js';

/** The continuation kind a clarification registers with the event runtime. */
export const CLARIFICATION_KIND = 'ax.clarification';

/** What a run parked on a clarification returns when the event runtime runs it. */
export interface AxAgentParked {
  clarification: { question: string; kind: typeof CLARIFICATION_KIND; value: string };
}

/** The actor asked a question; the run is parked in the agent's state under `runId`. */
export class AxAgentClarificationError extends AxProgramError {
  readonly question: string;
  readonly runId: string;

  constructor(question: string, runId: string) {
    super('clarification_needed', `The agent needs a clarification: ${question.slice(0, 500)}`);
    this.question = question;
    this.runId = runId;
  }
}

/** Where a run starts: its inputs, the action log so far, its first turn, notes for the log. */
export interface RunStart {
  values: Record<string, unknown>;
  log: AxAgentActionLogEntry[];
  firstTurn: number;
  notes: string[];
}

/** Whether this run answers a clarification (its continuation is an `ax.clarification`). */
export function answersClarification(eventContext: AxEventContext | undefined): boolean {
  return eventContext?.continuation?.kind === CLARIFICATION_KIND;
}

/**
 * The start of a run that answers the clarification `parked` asked: the answer and the lost
 * variables are noted in the log, and the turns go on counting.
 */
export function resumeParked(
  parked: AxAgentParkedRun | undefined,
  inputs: Record<string, unknown>,
  eventContext: AxEventContext,
): RunStart {
  const value = eventContext.continuation?.value;
  if (!parked || parked.runId !== value) {
    throw new AxProgramError(
      'invalid_state',
      `No run of this agent is parked as ${CLARIFICATION_KIND}:${value}`,
    );
  }
  const event = eventContext.event;
  const answer = JSON.stringify(inputs).slice(0, 20_000);
  const from = event
    ? ` (event "${event.type}" from ${event.source}; its sender is ${eventContext.trust})`
    : '';
  const notes = [
    `You asked: ${parked.question}\nThe answer arrived${from}: ${answer}`,
    'The runtime restarted while waiting: variables from earlier steps are gone.',
  ];
  const log = [...parked.log, ...notes.map((text): AxAgentActionLogEntry => ({ kind: 'note', text }))];
  return { values: parked.inputs, log, firstTurn: parked.turns + 1, notes };
}

/**
 * Tells the caller about a parked run: throws {@link AxAgentClarificationError} outside the
 * event runtime; under it registers the continuation the answer resumes.
 */
export async function announceParked(
  parked: AxAgentParkedRun,
  eventContext: AxEventContext | undefined,
): Promise<AxAgentParked> {
  const { runId, question } = parked;
  if (!eventContext) throw new AxAgentClarificationError(question, runId);
  await eventContext.registerContinuation({
    correlation: { kind: CLARIFICATION_KIND, value: runId },
    metadata: { question, inputs: parked.inputs },
  });
  return { clarification: { question, kind: CLARIFICATION_KIND, value: runId } };
}
