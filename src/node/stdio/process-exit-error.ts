import { AxMCPTransportError } from '../../protocol/errors.js';

/** The MCP server process ended (or closed its stdout) without being asked to. */
export class AxMCPProcessExitError extends AxMCPTransportError {
  /** The exit code, or `null` if it was killed by a signal or is still running. */
  readonly exitCode: number | null;
  /** The signal that killed it, if any. */
  readonly signal: NodeJS.Signals | null;

  constructor(
    message: string,
    exit: { exitCode: number | null; signal: NodeJS.Signals | null },
    context: { endpoint?: string } = {},
  ) {
    super('transport_error', message, context);
    this.exitCode = exit.exitCode;
    this.signal = exit.signal;
  }
}
