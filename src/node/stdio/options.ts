/** The options of the stdio transport, and their schema. */
import { array, func, instance, number, object, record, required, string } from '../../options/check.js';
import type { AxMCPError } from '../../protocol/errors.js';
import { type AxMCPReconnectOptions, RECONNECT_OPTIONS } from '../../transport/session-loss.js';

/** Options of {@link AxMCPStdioTransport}. */
export interface AxMCPStdioTransportOptions {
  /** The program to run, found on `PATH` (`npx`, `uvx`, `node`, an absolute path). No shell is involved. */
  command: string;
  /** Its arguments. */
  args?: readonly string[];
  /**
   * Environment variables for the server, on top of a minimal inherited set (`HOME`, `LOGNAME`,
   * `PATH`, `SHELL`, `TERM`, `USER`; the usual equivalents on Windows), so secrets in this
   * process's environment do not leak to the server. Pass `{ ...process.env, … }` to inherit everything.
   */
  env?: Record<string, string>;
  /** The server's working directory (default: this process's). */
  cwd?: string;
  /**
   * Receives the server's stderr, one line at a time (lines over 64 KiB are cut and marked `…`).
   * Default: ignored, but always drained so the server never blocks on a full pipe.
   */
  onStderr?(line: string): void;
  /**
   * Receives what the transport drops: lines that are not JSON-RPC, lines over `maxMessageBytes`
   * (code `message_too_large`), responses nobody waits for. Must not throw. Without it, the
   * client's `onError` is told; with neither, the first line that is not JSON at all (a server
   * logging to stdout) is written once to the console with what it began with.
   */
  onProtocolError?(error: AxMCPError): void;
  /**
   * How long `close()` waits after closing stdin for the server to exit, and again after
   * `SIGTERM`, before `SIGKILL` ends the process group. Default 2000.
   */
  killGraceMs?: number;
  /**
   * The longest message line accepted from the server, in bytes without the newline, and the
   * longest one sent. A longer incoming line is dropped unread; the request whose answer it
   * was fails at once with code `message_too_large` (its id is read from the line's start; when
   * it cannot be, the answer is attributed only where that is certain, as when one request
   * alone was waiting). Default 16 MiB.
   */
  maxMessageBytes?: number;
  /**
   * The backoff between respawns of a server that ended on its own while it held a 2025-11-25
   * session (the client's recovery spawns a fresh one): from 100 ms (`baseDelayMs`), doubling
   * with each failure, up to 10 s (`maxDelayMs`).
   */
  reconnect?: AxMCPReconnectOptions;
}

/** The shape of {@link AxMCPStdioTransportOptions}, every key of it; checked once in the constructor. */
export const STDIO_OPTIONS = object(
  {
    command: required(string({ nonEmpty: true })),
    args: array(string()),
    // Node leaves out a variable whose value is undefined (`{ TOKEN: process.env.TOKEN }`).
    env: record(
      instance('a string', (value) => value === undefined || typeof value === 'string'),
      'an object of environment variables (strings), by name',
    ),
    cwd: string({ nonEmpty: true }),
    onStderr: func('a function (line) => void'),
    onProtocolError: func('a function (error) => void'),
    killGraceMs: number({ min: 0 }),
    maxMessageBytes: number({ integer: true, min: 1 }),
    reconnect: RECONNECT_OPTIONS,
  },
  {
    expected: 'an options object { command, args?, env?, cwd?, … }',
    aliases: {
      cmd: 'command',
      program: 'command',
      arguments: 'args',
      argv: 'args',
      environment: 'env',
      workingDirectory: 'cwd',
      dir: 'cwd',
      stderr: 'onStderr',
      onError: 'onProtocolError',
      timeoutMs: 'killGraceMs',
      maxBytes: 'maxMessageBytes',
      respawn: 'reconnect',
      restart: 'reconnect',
      backoff: 'reconnect',
    },
  },
);

export const DEFAULT_KILL_GRACE_MS = 2000;
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
