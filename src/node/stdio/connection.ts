/**
 * One running server process as the transport sees it: its message channel, the framing of
 * its stdout into JSON-RPC lines, its stderr lines, and how it ends.
 */
import type { ChildProcess } from 'node:child_process';
import { type AxMCPError, AxMCPProtocolError, AxMCPTransportError, RPC } from '../../protocol/errors.js';
import type { JSONRPCMessage } from '../../protocol/jsonrpc.js';
import { AxMCPMessageChannel, OVERSIZED_PREFIX_BYTES } from '../../transport/message-channel.js';
import type { SessionEnd } from '../../transport/session-loss.js';
import type { AxMCPTransportHandlers } from '../../transport/types.js';
import { LineSplitter } from './line-splitter.js';

const MAX_STDERR_LINE_BYTES = 64 * 1024;

export interface Connection {
  child: ChildProcess;
  channel: AxMCPMessageChannel;
  /** `initialize` went over it: the process holds a 2025-11-25 session, named `sessionId`. */
  session: boolean;
  sessionId: string;
  /** Set (before pending requests see their rejection) once the process stopped carrying its session. */
  end: SessionEnd | undefined;
  exit: { exitCode: number | null; signal: NodeJS.Signals | null } | undefined;
  exited: Promise<void>;
  stdioClosed: Promise<void>;
  /** Settles as soon as the connection starts ending, for any reason. */
  stopped: Promise<void>;
  stop: () => void;
  ending: Promise<void> | undefined;
}

/** What a connection needs from its transport. */
export interface ConnectionWiring {
  endpoint: string;
  maxMessageBytes: number;
  handlers: AxMCPTransportHandlers | undefined;
  onProtocolError: ((error: AxMCPError) => void) | undefined;
  /**
   * Told of a line on stdout that cannot be JSON-RPC at all (neither an object nor an array of them),
   * before it is dropped: the usual sign of a server that logs to stdout.
   */
  onNotJSON?: ((error: AxMCPProtocolError) => void) | undefined;
  onStderr: ((line: string) => void) | undefined;
  /** Sends one message down the connection's stdin. */
  write(connection: Connection, message: JSONRPCMessage): Promise<void>;
  /** The process exited or closed its stdout on its own. */
  ended(connection: Connection): void;
}

/** Wires a spawned `child`'s pipes into a connection. */
export function attachConnection(child: ChildProcess, wiring: ConnectionWiring): Connection {
  const { stdin, stdout, stderr } = child;
  if (!stdin || !stdout || !stderr)
    throw new AxMCPTransportError('transport_error', 'Child has no stdio pipes');
  const { endpoint, maxMessageBytes } = wiring;
  const onProtocolError = wiring.onProtocolError;
  // Without the option, the channel tells its handlers (the client).
  const report = (error: AxMCPError) => connection.channel.reportDropped(error);
  let stop!: () => void;
  const connection: Connection = {
    child,
    channel: new AxMCPMessageChannel({
      endpoint,
      send: (message) => wiring.write(connection, message),
      ...(onProtocolError ? { onProtocolError } : {}),
    }),
    session: false,
    sessionId: `stdio-${child.pid}`,
    end: undefined,
    stopped: new Promise((resolve) => {
      stop = resolve;
    }),
    stop: () => stop(),
    exit: undefined,
    exited: new Promise((resolve) => child.once('exit', () => resolve())),
    stdioClosed: new Promise((resolve) => child.once('close', () => resolve())),
    ending: undefined,
  };
  if (wiring.handlers) connection.channel.setHandlers(wiring.handlers);

  child.once('exit', (exitCode, signal) => {
    connection.exit = { exitCode, signal };
    wiring.ended(connection);
  });
  // After a successful spawn, 'error' means a failed kill or similar; the exit path handles the rest.
  child.on('error', (error) =>
    report(
      new AxMCPTransportError('transport_error', 'The server process reported an error', {
        endpoint,
        cause: error,
      }),
    ),
  );
  stdin.on('error', () => undefined); // EPIPE after the server exits: the exit path reports it.

  const decoder = new TextDecoder('utf-8', { fatal: true });
  const prefixDecoder = new TextDecoder('utf-8');
  const lines = new LineSplitter(
    maxMessageBytes,
    (line) => {
      let text: string;
      try {
        text = decoder.decode(line);
      } catch (error) {
        report(
          new AxMCPProtocolError(RPC.parseError, 'Server sent a line that is not UTF-8', undefined, {
            code: 'invalid_message',
            endpoint,
            cause: error,
          }),
        );
        return;
      }
      const start = text.trimStart();
      if (start === '') return;
      if (!mayBeJSONRPC(start)) {
        const error = notJSONError(text, endpoint);
        wiring.onNotJSON?.(error);
        report(error);
        return;
      }
      connection.channel.receiveText(text);
    },
    (head) =>
      // Only the line's start is read: enough to tell whose answer it was.
      connection.channel.dropOversized(
        prefixDecoder.decode(head(OVERSIZED_PREFIX_BYTES)),
        new AxMCPTransportError(
          'message_too_large',
          `Dropped a message line over ${maxMessageBytes} bytes (the maxMessageBytes option) from ${endpoint}`,
          { endpoint },
        ),
      ),
  );
  stdout.on('data', (chunk: Buffer) => lines.push(chunk));
  stdout.on('end', () => {
    lines.flush();
    wiring.ended(connection);
  });
  stdout.on('error', () => undefined);

  stderr.on('error', () => undefined);
  const onStderr = wiring.onStderr;
  if (onStderr) {
    const stderrDecoder = new TextDecoder('utf-8');
    const deliver = (text: string) => {
      try {
        onStderr(text);
      } catch {
        // The stderr callback is for diagnostics; its failure must not stop the server.
      }
    };
    const stderrLines = new LineSplitter(
      MAX_STDERR_LINE_BYTES,
      (line) => deliver(stderrDecoder.decode(line)),
      (head) => deliver(`${stderrDecoder.decode(head(MAX_STDERR_LINE_BYTES))}…`),
    );
    stderr.on('data', (chunk: Buffer) => stderrLines.push(chunk));
    stderr.on('end', () => stderrLines.flush());
  } else {
    stderr.resume();
  }
  return connection;
}

/** A stdout line that cannot be JSON-RPC at all: named with what it began with, and where logs belong. */
function notJSONError(line: string, endpoint: string): AxMCPProtocolError {
  const shown = JSON.stringify(line.length > 80 ? `${line.slice(0, 80)}…` : line);
  return new AxMCPProtocolError(
    RPC.parseError,
    `The server wrote a line to stdout that is not JSON-RPC, and it was dropped: ${shown} ` +
      '(a server on stdio writes only MCP messages to stdout; its logs go to stderr)',
    undefined,
    { code: 'invalid_message', endpoint },
  );
}

/**
 * Whether a line could be a JSON-RPC message or batch: an object, or an array of objects. A log
 * line often starts with `[` too (`[info] …`, `[2026-12-07 …]`), and is told apart here.
 */
function mayBeJSONRPC(start: string): boolean {
  if (start[0] === '{') return true;
  if (start[0] !== '[') return false;
  const next = start.slice(1).trimStart()[0];
  return next === undefined || next === '{' || next === ']';
}
