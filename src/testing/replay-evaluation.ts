/**
 * Evaluation runs programs many times; over a live MCP server every run would repeat its side
 * effects (orders placed, mails sent). These helpers make replay the default and live MCP an
 * explicit choice. Isomorphic: no `node:` imports.
 */
import type { AxMCPEvaluationMode } from '../program/mcp-context.js';
import { AxMCPError } from '../protocol/errors.js';
import type { AxMCPTransport } from '../transport/types.js';
import type { AxMCPRecording } from './recording-format.js';
import { type AxMCPReplayOptions, AxMCPReplayTransport } from './replay.js';

export type { AxMCPEvaluationMode } from '../program/mcp-context.js';

/** True for an {@link AxMCPReplayTransport} (directly, or as the `inner` of a wrapping transport). */
export function isAxMCPReplayTransport(transport: AxMCPTransport): boolean {
  if (transport.replaysRecording === true) return true;
  let current: unknown = transport;
  for (let depth = 0; depth < 8 && current; depth++) {
    if (current instanceof AxMCPReplayTransport) return true;
    current = (current as { inner?: unknown }).inner;
  }
  return false;
}

/**
 * Refuses a live transport during evaluation unless `evaluationMode` is `'live'` (for code that
 * evaluates without `axEvaluate`, which checks every client itself). Throws
 * `AxMCPError('invalid_argument')` naming the endpoint.
 */
export function assertAxMCPEvaluationTransport(
  transport: AxMCPTransport,
  options: { evaluationMode?: AxMCPEvaluationMode } = {},
): void {
  if ((options.evaluationMode ?? 'replay') === 'live' || isAxMCPReplayTransport(transport)) return;
  throw new AxMCPError(
    'invalid_argument',
    `Evaluation uses recorded MCP sessions: ${transport.endpoint} is live, and every run would repeat its side effects. ` +
      "Replay a recording (AxMCPReplayTransport), or pass evaluationMode: 'live' to evaluate against the server on purpose.",
    { endpoint: transport.endpoint },
  );
}

/**
 * The transport an evaluation should use: a replay of `recording` by default; `live` only with
 * `evaluationMode: 'live'`. Without a recording and without `live` it throws.
 */
export function axMCPEvaluationTransport(options: {
  recording?: AxMCPRecording;
  live?: () => AxMCPTransport;
  evaluationMode?: AxMCPEvaluationMode;
  replay?: AxMCPReplayOptions;
}): AxMCPTransport {
  const mode = options.evaluationMode ?? 'replay';
  if (mode === 'live') {
    if (!options.live)
      throw new AxMCPError('invalid_argument', "evaluationMode 'live' needs a live transport");
    return options.live();
  }
  if (!options.recording) {
    throw new AxMCPError(
      'invalid_argument',
      "Evaluation needs a recording to replay (record one with `ax-mcp record`), or evaluationMode: 'live'",
    );
  }
  return new AxMCPReplayTransport(options.recording, options.replay);
}
