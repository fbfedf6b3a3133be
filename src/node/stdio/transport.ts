/**
 * The stdio transport: spawns an MCP server as a child process and speaks
 * newline-delimited JSON-RPC over its stdin and stdout.
 *
 * The child is its own process group (POSIX), so `close()` can end the whole tree that
 * `npx`, `uvx` or a shell wrapper leaves behind, not just the direct child. Spawning is
 * `spawn.ts`, the pipes of one process `connection.ts`, ending its tree `process-group.ts`.
 */
import type { ChildProcess } from 'node:child_process';
import { raceAbort } from '../../protocol/abort.js';
import {
  type AxMCPError,
  type AxMCPProtocolError,
  AxMCPTransportError,
  assertMCPOptions,
} from '../../protocol/errors.js';
import type {
  JSONRPCMessage,
  JSONRPCNotification,
  JSONRPCRequest,
  JSONRPCResponse,
} from '../../protocol/jsonrpc.js';
import { SessionLoss, streamUntilEnded } from '../../transport/session-loss.js';
import type {
  AxMCPEventStream,
  AxMCPSendOptions,
  AxMCPTransport,
  AxMCPTransportHandlers,
} from '../../transport/types.js';
import { attachConnection, type Connection } from './connection.js';
import {
  type AxMCPStdioTransportOptions,
  DEFAULT_KILL_GRACE_MS,
  DEFAULT_MAX_MESSAGE_BYTES,
  STDIO_OPTIONS,
} from './options.js';
import { AxMCPProcessExitError } from './process-exit-error.js';
import { killProcessTree, trackChild, untrackChild, within } from './process-group.js';
import { commandLineOf, spawnServer } from './spawn.js';

/** After the process group is gone, how long an unexpected end waits for stdout to drain. */
const DRAIN_MS = 250;

/**
 * An {@link AxMCPTransport} that runs an MCP server as a child process (`kind: 'stdio'`).
 *
 * `start()` spawns the server (requests made before it start it too); `close()` closes its
 * stdin, then sends `SIGTERM` and, after `killGraceMs`, `SIGKILL` to its whole process group,
 * so grandchildren started by `npx`/`uvx`/shell wrappers end with it. If the server ends on
 * its own, `onClose` receives an {@link AxMCPProcessExitError} and pending requests reject
 * with code `closed`; `start()` may then spawn a fresh process. A server that held a
 * 2025-11-25 session (it was sent `initialize`) lost it with its process: like a WebSocket or
 * an HTTP+SSE stream that dropped, the transport reports the session lost (`session_expired`,
 * safe requests in flight included) until `initialize` succeeded again, so the client's
 * recovery spawns a fresh server (with capped, jittered backoff), re-initializes, restores its
 * subscriptions and retries safe requests; a `tools/call` in flight is never sent again. A
 * server without a session (2026-07-28) is only spawned again by `start()`.
 *
 * Limitation: if this Node process exits normally (or through `process.exit`, or an uncaught
 * exception), every live server group gets `SIGTERM`. If it is killed by a signal it does not
 * handle (`SIGKILL`, or `SIGINT`/`SIGTERM` with no handler), no code runs: the servers only see
 * EOF on stdin, which well-behaved servers treat as the end, and do not get the terminal's
 * Ctrl-C because they run in their own process group. Call `close()` from your signal handlers.
 * A server that moves itself to another session or group (`setsid`) escapes the group kill.
 *
 * @example
 * ```ts
 * const transport = new AxMCPStdioTransport({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] });
 * await transport.start();
 * // … hand it to AxMCPClient …
 * await transport.close();
 * ```
 */
export class AxMCPStdioTransport implements AxMCPTransport {
  readonly kind = 'stdio' as const;
  /** The command line, for errors: no environment values, arguments over 200 characters cut. */
  readonly endpoint: string;
  /** `stdio:` followed by the whole command line (arguments quoted where needed). */
  readonly endpointKey: string;

  readonly #options: AxMCPStdioTransportOptions;
  readonly #killGraceMs: number;
  readonly #maxMessageBytes: number;
  readonly #connections = new Set<Connection>();
  /** A server's non-JSON stdout was warned about (once per transport). */
  #warnedNotJSON = false;
  #current: Connection | undefined;
  #starting: Promise<Connection> | undefined;
  #handlers: AxMCPTransportHandlers | undefined;
  #everStarted = false;
  #lastEnd: AxMCPError | undefined;
  #closing: Promise<void> | undefined;
  /** Aborted by `terminate()`: ends a respawn's backoff wait. */
  readonly #terminating = new AbortController();
  readonly #loss: SessionLoss;

  /** Checks `options` (`invalid_options` for an unknown key or a wrong type); spawns nothing. */
  constructor(options: AxMCPStdioTransportOptions) {
    assertMCPOptions(STDIO_OPTIONS, options, 'AxMCPStdioTransport options');
    this.#options = options;
    this.#killGraceMs = Math.max(0, options.killGraceMs ?? DEFAULT_KILL_GRACE_MS);
    this.#maxMessageBytes = Math.max(1, options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES);
    const { endpoint, endpointKey } = commandLineOf(options);
    this.endpoint = endpoint;
    this.endpointKey = endpointKey;
    this.#loss = new SessionLoss(this.endpoint, options.reconnect);
  }

  /** The server's process id while it runs. */
  get pid(): number | undefined {
    return this.#current?.child.pid;
  }

  /**
   * `stdio-<pid>` while the server holds a 2025-11-25 session; after it ended on its own, the
   * lost session's name until `initialize` succeeded again. Undefined otherwise.
   */
  get sessionId(): string | undefined {
    const lost = this.#loss.lost;
    if (lost !== undefined) return lost;
    const current = this.#current;
    return current?.session && !current.end ? current.sessionId : undefined;
  }

  setHandlers(handlers: AxMCPTransportHandlers): void {
    this.#handlers = handlers;
    this.#current?.channel.setHandlers(handlers);
  }

  /**
   * Spawns the server, once: concurrent calls share one spawn. Rejects with an
   * {@link AxMCPTransportError} naming the command if it cannot be started. Aborting stops
   * the wait, not the spawn (`close()` ends it).
   */
  async start(signal?: AbortSignal): Promise<void> {
    await this.#connect(signal);
  }

  async request(message: JSONRPCRequest, options: AxMCPSendOptions = {}): Promise<JSONRPCResponse> {
    const initialize = message.method === 'initialize';
    const connection = await this.#ready(options.signal, initialize ? undefined : message.method);
    if (initialize) connection.session = true;
    let response: JSONRPCResponse;
    try {
      response = await connection.channel.request(message, { signal: options.signal });
    } catch (error) {
      if (this.#closing) throw error;
      throw this.#loss.inFlightError(
        error,
        { method: message.method, idempotent: options.idempotent },
        { session: connection.session ? connection.sessionId : undefined, end: connection.end },
      );
    }
    this.#loss.succeeded();
    if (initialize && !('error' in response) && !connection.end) this.#loss.restored();
    return response;
  }

  async notify(message: JSONRPCNotification, options: AxMCPSendOptions = {}): Promise<void> {
    const connection = await this.#ready(options.signal, message.method);
    await connection.channel.notify(message, { signal: options.signal });
  }

  async respond(message: JSONRPCResponse, options: AxMCPSendOptions = {}): Promise<void> {
    const connection = await this.#ready(options.signal, 'response');
    await connection.channel.respond(message, { signal: options.signal });
  }

  /**
   * Gives up the server's 2025-11-25 session: a server that holds one is ended (as by
   * `close()`, pending requests reject with `closed`), and the next `start()` spawns a fresh one.
   * Until `initialize` succeeded again, other messages fail with `session_expired`.
   */
  resetSession(): void {
    const current = this.#current;
    if (!current?.session || current.end || current.ending) return;
    current.end = 'reset';
    this.#current = undefined;
    this.#loss.forget(current.sessionId);
    void this.#end(current, undefined);
  }

  /**
   * A stream that carries no messages (they reach the handlers directly) and ends when the
   * server process ends: the client's listener then restores a lost session at once. Fails
   * with `session_expired` while a lost session is not restored.
   */
  async openEventStream(options: { signal: AbortSignal }): Promise<AxMCPEventStream> {
    const connection = await this.#ready(options.signal, 'the event stream');
    return streamUntilEnded(connection.stopped, options.signal, this.#terminating.signal);
  }

  /**
   * Rejects pending requests with code `closed`, closes the server's stdin, and ends its
   * process group (`SIGTERM`, then `SIGKILL`), taking at most about `2 × killGraceMs`.
   * Afterwards no stream, timer or listener of this transport keeps the process alive. Idempotent.
   */
  close(): Promise<void> {
    return this.terminate();
  }

  /**
   * Ends the server's whole process tree, as {@link AxMCPStdioTransport.close} does: pending
   * requests reject with code `closed`, stdin is closed, then the process group gets `SIGTERM`
   * and, after `killGraceMs`, `SIGKILL` (`taskkill /T /F` on Windows). Idempotent: a second call
   * (or a `close()`) waits for the same end. Afterwards every request fails with code `closed`,
   * and `start()` does not spawn again.
   *
   * @example
   * ```ts
   * process.once('SIGINT', () => void transport.terminate());
   * ```
   */
  terminate(): Promise<void> {
    if (!this.#closing) this.#terminating.abort(this.#closedErrorOnTerminate());
    this.#closing ??= (async () => {
      await this.#starting?.catch(() => undefined);
      await Promise.all([...this.#connections].map((connection) => this.#end(connection, undefined)));
      this.#current = undefined;
    })();
    return this.#closing;
  }

  #connect(signal: AbortSignal | undefined): Promise<Connection> {
    if (this.#closing) return Promise.reject(this.#closedError());
    const what = `Waiting for ${this.endpoint} to start`;
    // Aborted already: refused before anything is spawned.
    if (signal?.aborted) return raceAbort(new Promise<Connection>(() => {}), signal, what, this.endpoint);
    const current = this.#current;
    if (current && !current.ending) return Promise.resolve(current);
    this.#starting ??= this.#spawn().finally(() => {
      this.#starting = undefined;
    });
    return raceAbort(this.#starting, signal, what, this.endpoint);
  }

  /** The connection for a message; `what` names it, undefined for `initialize` (which may restore a lost session). */
  #ready(signal: AbortSignal | undefined, what: string | undefined): Promise<Connection> {
    if (!this.#closing && what !== undefined && this.#loss.lost !== undefined) {
      return Promise.reject(this.#loss.expired(what));
    }
    const current = this.#current;
    if (!this.#closing && current && !current.ending) return Promise.resolve(current);
    if (!this.#closing && !this.#starting && this.#everStarted) {
      // The server ended on its own: only an explicit start() spawns a new one.
      return Promise.reject(this.#closedError());
    }
    return this.#connect(signal);
  }

  async #spawn(): Promise<Connection> {
    // After an unexpected end, respawns are spaced by the backoff.
    await this.#loss.turn(this.#terminating.signal);
    try {
      return await this.#spawnNow();
    } catch (error) {
      if (!this.#closing) this.#loss.openFailed();
      throw error;
    }
  }

  async #spawnNow(): Promise<Connection> {
    const child = await spawnServer(this.#options, this.endpoint);
    const connection = this.#attach(child);
    this.#connections.add(connection);
    this.#current = connection;
    this.#everStarted = true;
    this.#lastEnd = undefined;
    trackChild(child);
    return connection;
  }

  /** The first line that cannot be JSON-RPC, once, when nobody else hears of it. */
  #warnNotJSON(error: AxMCPProtocolError): void {
    if (this.#warnedNotJSON) return;
    this.#warnedNotJSON = true;
    console.warn(
      `ax-mcp: the MCP server ${this.endpoint}: ${error.message}. Later such lines are dropped without this ` +
        'warning; pass onProtocolError to see each of them.',
    );
  }

  #attach(child: ChildProcess): Connection {
    return attachConnection(child, {
      endpoint: this.endpoint,
      maxMessageBytes: this.#maxMessageBytes,
      handlers: this.#handlers,
      onProtocolError: this.#options.onProtocolError,
      // When nobody hears it, such a drop was silent, and the caller met only a timeout.
      onNotJSON: (error) => {
        if (!this.#options.onProtocolError && !this.#handlers?.onProtocolError) this.#warnNotJSON(error);
      },
      onStderr: this.#options.onStderr,
      write: (connection, message) => this.#write(connection, message),
      ended: (connection) => void this.#end(connection, this.#exitError(connection)),
    });
  }

  #write(connection: Connection, message: JSONRPCMessage): Promise<void> {
    const line = `${JSON.stringify(message)}\n`;
    if (Buffer.byteLength(line) - 1 > this.#maxMessageBytes) {
      throw new AxMCPTransportError(
        'message_too_large',
        `A message to ${this.endpoint} is over ${this.#maxMessageBytes} bytes (the maxMessageBytes option)`,
        { endpoint: this.endpoint },
      );
    }
    const stdin = connection.child.stdin;
    if (connection.ending || !stdin || !stdin.writable) {
      // A stdin that closed is a server that ended, even before its exit is seen.
      if (!connection.ending && !this.#closing) void this.#end(connection, this.#exitError(connection));
      throw this.#closedError();
    }
    return new Promise((resolve, reject) => {
      stdin.write(line, (error) => {
        if (!error) return resolve();
        // A pipe that broke (EPIPE) is a server that ended: the exit path would say so a moment later.
        if (!this.#closing) void this.#end(connection, this.#exitError(connection));
        reject(this.#transportError(`Could not write to ${this.endpoint}`, error));
      });
    });
  }

  /**
   * Ends one connection: local (`reason` undefined, from close()) or because the server
   * ended on its own. Runs once per connection.
   */
  #end(connection: Connection, reason: AxMCPError | undefined): Promise<void> {
    if (!connection.ending && reason && !connection.end) {
      // Ended on its own: from now on the session it held is lost (requests no longer wait for the drain below).
      connection.end = 'dropped';
      if (!this.#closing) this.#loss.dropped(connection.session ? connection.sessionId : undefined);
    }
    connection.stop();
    connection.ending ??= (async () => {
      if (!reason) connection.channel.close();
      const { child } = connection;
      child.stdin?.end();
      await within(connection.exited, this.#killGraceMs);
      const exitBeforeSignals = connection.exit;
      await killProcessTree(child, this.#killGraceMs);
      // Let the last lines the server wrote arrive before the pending requests are failed.
      if (reason) await within(connection.stdioClosed, DRAIN_MS);
      for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.destroy();
      // Last resort for a process that even SIGKILL did not end (uninterruptible sleep).
      if (child.exitCode === null && child.signalCode === null) child.unref();
      untrackChild(child);
      this.#connections.delete(connection);
      if (this.#current === connection) this.#current = undefined;
      if (reason) {
        const final = exitBeforeSignals ? this.#exitError(connection, exitBeforeSignals) : reason;
        this.#lastEnd = final;
        connection.channel.close(final);
      }
    })();
    return connection.ending;
  }

  #exitError(connection: Connection, exit = connection.exit): AxMCPProcessExitError {
    const what = !exit
      ? 'closed its stdout'
      : exit.signal
        ? `was killed by ${exit.signal}`
        : `exited with code ${exit.exitCode}`;
    return new AxMCPProcessExitError(
      `The MCP server process ${this.endpoint} (pid ${connection.child.pid}) ${what}`,
      exit ?? { exitCode: null, signal: null },
      { endpoint: this.endpoint },
    );
  }

  #transportError(message: string, cause: unknown): AxMCPTransportError {
    return new AxMCPTransportError('transport_error', message, { endpoint: this.endpoint, cause });
  }

  #closedErrorOnTerminate(): AxMCPTransportError {
    return new AxMCPTransportError('closed', `${this.endpoint}: the transport is closed`, {
      endpoint: this.endpoint,
    });
  }

  #closedError(): AxMCPTransportError {
    const why = this.#closing
      ? 'the transport is closed'
      : `the server process ended${this.#lastEnd ? ` (${this.#lastEnd.message})` : ''}; call start() to spawn it again`;
    return new AxMCPTransportError('closed', `${this.endpoint}: ${why}`, {
      endpoint: this.endpoint,
      cause: this.#closing ? undefined : this.#lastEnd,
    });
  }
}
