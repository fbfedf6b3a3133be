/**
 * The stdio transport: spawns an MCP server as a child process and speaks
 * newline-delimited JSON-RPC over its stdin and stdout.
 *
 * The child is its own process group (POSIX), so `close()` can end the whole tree that
 * `npx`, `uvx` or a shell wrapper leaves behind, not just the direct child.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import process from 'node:process';
import { array, func, instance, number, object, record, required, string } from '../options/check.js';
import { raceAbort } from '../protocol/abort.js';
import {
  type AxMCPError,
  AxMCPProtocolError,
  AxMCPTransportError,
  assertMCPOptions,
  RPC,
} from '../protocol/errors.js';
import type {
  JSONRPCMessage,
  JSONRPCNotification,
  JSONRPCRequest,
  JSONRPCResponse,
} from '../protocol/jsonrpc.js';
import { AxMCPMessageChannel, OVERSIZED_PREFIX_BYTES } from '../transport/message-channel.js';
import {
  type AxMCPReconnectOptions,
  RECONNECT_OPTIONS,
  type SessionEnd,
  SessionLoss,
  streamUntilEnded,
} from '../transport/session-loss.js';
import type {
  AxMCPEventStream,
  AxMCPSendOptions,
  AxMCPTransport,
  AxMCPTransportHandlers,
} from '../transport/types.js';

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
   * (code `message_too_large`), responses nobody waits for. Must not throw.
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
const STDIO_OPTIONS = object(
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

const DEFAULT_KILL_GRACE_MS = 2000;
const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
const MAX_STDERR_LINE_BYTES = 64 * 1024;
/** After the process group is gone, how long an unexpected end waits for stdout to drain. */
const DRAIN_MS = 250;
const POLL_MS = 50;
const IS_WINDOWS = process.platform === 'win32';
const INHERITED_ENV = IS_WINDOWS
  ? [
      'APPDATA',
      'HOMEDRIVE',
      'HOMEPATH',
      'LOCALAPPDATA',
      'PATH',
      'PROCESSOR_ARCHITECTURE',
      'SYSTEMDRIVE',
      'SYSTEMROOT',
      'TEMP',
      'USERNAME',
      'USERPROFILE',
      'PROGRAMFILES',
    ]
  : ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];

interface Connection {
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
    const commandLine = [options.command, ...(options.args ?? [])].map(quoteArg);
    this.endpoint = commandLine.map(clipArg).join(' ');
    this.endpointKey = `stdio:${commandLine.join(' ')}`;
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
    const { command, args = [], cwd } = this.#options;
    let child: ChildProcess;
    try {
      child = spawn(command, [...args], {
        cwd,
        env: childEnvironment(this.#options.env),
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: !IS_WINDOWS,
        windowsHide: true,
        shell: false,
      });
    } catch (error) {
      throw this.#spawnError(error);
    }
    try {
      await new Promise<void>((resolve, reject) => {
        const onSpawn = () => {
          child.off('error', onError);
          resolve();
        };
        const onError = (error: Error) => {
          child.off('spawn', onSpawn);
          reject(error);
        };
        child.once('spawn', onSpawn);
        child.once('error', onError);
      });
    } catch (error) {
      // Node still closes the failed child's pipes and handle; let it, so nothing lingers.
      const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
      for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.destroy();
      await within(closed, 1000);
      throw this.#spawnError(error);
    }
    const connection = this.#attach(child);
    this.#connections.add(connection);
    this.#current = connection;
    this.#everStarted = true;
    this.#lastEnd = undefined;
    trackChild(child);
    return connection;
  }

  #attach(child: ChildProcess): Connection {
    const { stdin, stdout, stderr } = child;
    if (!stdin || !stdout || !stderr)
      throw new AxMCPTransportError('transport_error', 'Child has no stdio pipes');
    const report = (error: AxMCPError) => {
      try {
        this.#options.onProtocolError?.(error);
      } catch {
        // A reporting callback must not take the transport down.
      }
    };
    let stop!: () => void;
    const connection: Connection = {
      child,
      channel: new AxMCPMessageChannel({
        endpoint: this.endpoint,
        send: (message) => this.#write(connection, message),
        onProtocolError: report,
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
    if (this.#handlers) connection.channel.setHandlers(this.#handlers);

    child.once('exit', (exitCode, signal) => {
      connection.exit = { exitCode, signal };
      void this.#end(connection, this.#exitError(connection));
    });
    // After a successful spawn, 'error' means a failed kill or similar; the exit path handles the rest.
    child.on('error', (error) => report(this.#transportError('The server process reported an error', error)));
    stdin.on('error', () => undefined); // EPIPE after the server exits: the exit path reports it.

    const decoder = new TextDecoder('utf-8', { fatal: true });
    const prefixDecoder = new TextDecoder('utf-8');
    const lines = new LineSplitter(
      this.#maxMessageBytes,
      (line) => {
        let text: string;
        try {
          text = decoder.decode(line);
        } catch (error) {
          report(
            new AxMCPProtocolError(RPC.parseError, 'Server sent a line that is not UTF-8', undefined, {
              code: 'invalid_message',
              endpoint: this.endpoint,
              cause: error,
            }),
          );
          return;
        }
        if (text.trim() === '') return;
        connection.channel.receiveText(text);
      },
      (head) =>
        // Only the line's start is read: enough to tell whose answer it was.
        connection.channel.dropOversized(
          prefixDecoder.decode(head(OVERSIZED_PREFIX_BYTES)),
          new AxMCPTransportError(
            'message_too_large',
            `Dropped a message line over ${this.#maxMessageBytes} bytes (the maxMessageBytes option) from ${this.endpoint}`,
            { endpoint: this.endpoint },
          ),
        ),
    );
    stdout.on('data', (chunk: Buffer) => lines.push(chunk));
    stdout.on('end', () => {
      lines.flush();
      void this.#end(connection, this.#exitError(connection));
    });
    stdout.on('error', () => undefined);

    stderr.on('error', () => undefined);
    const onStderr = this.#options.onStderr;
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
      if (IS_WINDOWS) {
        if (child.exitCode === null && child.signalCode === null)
          await killWindowsTree(child, this.#killGraceMs);
      } else if (child.pid !== undefined) {
        const group = child.pid;
        if (await groupAlive(group)) {
          signalGroup(group, 'SIGTERM');
          await pollUntilGone(group, this.#killGraceMs);
          if (await groupAlive(group)) {
            signalGroup(group, 'SIGKILL');
            await pollUntilGone(group, 1000);
          }
        }
      }
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

  #spawnError(error: unknown): AxMCPTransportError {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    const hint =
      code === 'ENOENT'
        ? this.#options.cwd
          ? ` (command not found, or working directory ${JSON.stringify(this.#options.cwd)} missing)`
          : ' (command not found)'
        : code === 'EACCES'
          ? ' (not executable)'
          : '';
    return this.#transportError(
      `Could not start the MCP server command ${JSON.stringify(this.#options.command)}: ${code ?? String(error)}${hint}`,
      error,
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

/**
 * Splits a byte stream at `\n` without holding more than `maxBytes` of one line: a longer
 * line is dropped (the overflow callback gets its head on demand) up to its newline.
 */
class LineSplitter {
  #parts: Buffer[] = [];
  #size = 0;
  #discarding = false;

  constructor(
    readonly maxBytes: number,
    readonly onLine: (line: Buffer) => void,
    /** `head(limit)`: at most `limit` bytes of the line's start (at most `maxBytes`), copied on demand. */
    readonly onOverflow: (head: (limit: number) => Buffer) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const piece = chunk.subarray(start, newline === -1 ? chunk.length : newline);
      start = newline === -1 ? chunk.length : newline + 1;
      if (this.#discarding) {
        // The rest of an oversized line: skip it up to the newline.
        if (newline !== -1) this.#discarding = false;
        continue;
      }
      if (this.#size + piece.length > this.maxBytes) {
        this.#overflow(piece);
        this.#discarding = newline === -1;
        continue;
      }
      if (newline === -1) {
        // Copy: a subarray would pin the whole chunk until the line completes.
        this.#parts.push(Buffer.from(piece));
        this.#size += piece.length;
        continue;
      }
      const line = this.#size === 0 ? piece : Buffer.concat([...this.#parts, piece]);
      this.#parts = [];
      this.#size = 0;
      this.onLine(stripCR(line));
    }
  }

  /** Delivers a last line that had no newline (the stream ended). */
  flush(): void {
    if (!this.#discarding && this.#size > 0) {
      const line = Buffer.concat(this.#parts);
      this.#parts = [];
      this.#size = 0;
      this.onLine(stripCR(line));
    }
    this.#discarding = false;
  }

  #overflow(piece: Buffer): void {
    const parts = this.#parts;
    const room = Math.max(0, this.maxBytes - this.#size);
    this.#parts = [];
    this.#size = 0;
    this.onOverflow((limit) => {
      const head: Buffer[] = [];
      let left = Math.min(limit, this.maxBytes);
      for (const part of [...parts, piece.subarray(0, room)]) {
        if (left <= 0) break;
        head.push(part.length > left ? part.subarray(0, left) : part);
        left -= part.length;
      }
      return Buffer.concat(head);
    });
  }
}

function stripCR(line: Buffer): Buffer {
  return line.length > 0 && line[line.length - 1] === 0x0d ? line.subarray(0, line.length - 1) : line;
}

function childEnvironment(extra: Record<string, string> | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of INHERITED_ENV) {
    const value = process.env[key];
    // Exported shell functions (`() { …`) are a known injection vector; never pass them on.
    if (value !== undefined && !value.startsWith('()')) env[key] = value;
  }
  return { ...env, ...extra };
}

function quoteArg(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : JSON.stringify(arg);
}

function clipArg(arg: string): string {
  return arg.length > 200 ? `${arg.slice(0, 200)}…` : arg;
}

/** Waits for `promise` at most `ms`; the timer never outlives the wait. */
async function within(promise: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function signalGroup(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-group, signal);
  } catch {
    // ESRCH: already gone.
  }
}

async function pollUntilGone(group: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    await sleep(Math.min(POLL_MS, Math.max(0, deadline - Date.now())));
    if (!(await groupAlive(group))) return;
  }
}

/**
 * Whether any process of the group still runs. Zombies do not count: where nothing reaps
 * orphans (a container whose init does not), they would otherwise look alive forever.
 */
async function groupAlive(group: number): Promise<boolean> {
  try {
    process.kill(-group, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  if (process.platform !== 'linux') return true;
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return true;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = await readFile(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // Gone meanwhile.
    }
    // "pid (comm) state ppid pgrp …"; comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === group && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}

async function killWindowsTree(child: ChildProcess, graceMs: number): Promise<void> {
  const killer = spawn('taskkill', ['/T', '/F', '/PID', String(child.pid)], {
    stdio: 'ignore',
    windowsHide: true,
  });
  await within(
    new Promise<void>((resolve) => {
      killer.once('exit', () => resolve());
      killer.once('error', () => resolve());
    }),
    graceMs,
  );
  killer.unref();
}

// Process groups still running, signalled if this process exits without closing them.
const liveChildren = new Set<ChildProcess>();

function onParentExit(): void {
  for (const child of liveChildren) {
    if (child.pid === undefined) continue;
    try {
      if (IS_WINDOWS) {
        spawnSync('taskkill', ['/T', '/F', '/PID', String(child.pid)], {
          stdio: 'ignore',
          windowsHide: true,
        });
      } else {
        process.kill(-child.pid, 'SIGTERM');
      }
    } catch {
      // Already gone.
    }
  }
}

function trackChild(child: ChildProcess): void {
  if (liveChildren.size === 0) process.on('exit', onParentExit);
  liveChildren.add(child);
}

function untrackChild(child: ChildProcess): void {
  if (!liveChildren.delete(child)) return;
  if (liveChildren.size === 0) process.off('exit', onParentExit);
}
