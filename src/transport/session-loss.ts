/**
 * What the transports whose connection is the session (WebSocket, HTTP+SSE, stdio) do when
 * that connection ends on its own. They do not recover by themselves: they report the loss
 * the way Streamable HTTP reports a 404 on its session, so that the client's one recovery
 * (`LegacyWire.recover()`: re-`initialize` once for every waiter, restore subscriptions, retry
 * safe requests, never replay `tools/call`) runs unchanged over every transport:
 *
 * - Once a connection that carried `initialize` ended, every message except a new `initialize`
 *   fails with {@link AxMCPSessionExpiredError} naming the lost session, and the transport's
 *   `sessionId` keeps naming it, until an `initialize` over a new connection succeeded. A failed
 *   recovery therefore leaves the loss in place: the next request (or the listener) tries again.
 * - A safe request in flight when its session's connection ended fails with the same error, so
 *   the client retries it on the restored session; any other request fails with code `closed`
 *   (its outcome is unknown, and it is never sent again).
 * - Reconnects are spaced by capped exponential backoff with jitter: the first one after a
 *   drop waits `baseDelayMs` (½ to 1 ×), each failed attempt doubles it up to `maxDelayMs`; a
 *   completed exchange resets it.
 *
 * Isomorphic: no `node:` imports.
 */
import { backoffDelayMs } from '../backoff/backoff.js';
import { number, object } from '../options/check.js';
import { delay } from '../protocol/abort.js';
import { AxMCPError, AxMCPSessionExpiredError, AxMCPTransportError } from '../protocol/errors.js';
import type { AxMCPEventStream, AxMCPStreamMessage } from './types.js';

/** How a transport whose connection is the session spaces its reconnects (stdio: respawns). */
export interface AxMCPReconnectOptions {
  /** The wait before the first reconnect after a drop, in ms (default 100); each failed attempt doubles it. */
  baseDelayMs?: number;
  /** The longest wait between two attempts, in ms (default 10 000). */
  maxDelayMs?: number;
}

/** The shape of {@link AxMCPReconnectOptions}. */
export const RECONNECT_OPTIONS = object(
  { baseDelayMs: number({ min: 0 }), maxDelayMs: number({ min: 0 }) },
  {
    expected: 'an object { baseDelayMs?, maxDelayMs? }',
    aliases: { delayMs: 'baseDelayMs', baseDelay: 'baseDelayMs', maxDelay: 'maxDelayMs' },
  },
);

const DEFAULT_BASE_DELAY_MS = 100;
const DEFAULT_MAX_DELAY_MS = 10_000;

/** Why a connection stopped carrying its session. */
export type SessionEnd = 'dropped' | 'reset';

/** See the module comment. One per transport. */
export class SessionLoss {
  readonly #endpoint: string;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  #lost: string | undefined;
  #failures = 0;
  #retryAt = 0;

  constructor(endpoint: string, options: AxMCPReconnectOptions = {}) {
    this.#endpoint = endpoint;
    this.#baseDelayMs = Math.max(0, options.baseDelayMs ?? DEFAULT_BASE_DELAY_MS);
    this.#maxDelayMs = Math.max(this.#baseDelayMs, options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS);
  }

  /** The session that was lost and is not restored yet. */
  get lost(): string | undefined {
    return this.#lost;
  }

  /**
   * A connection ended on its own. `session` names what it carried (undefined: no session,
   * as in the stateless 2026-07-28 era). The next connection waits for the backoff.
   */
  dropped(session: string | undefined): void {
    if (session !== undefined) this.#lost = session;
    this.#backOff();
  }

  /** The transport gave up a session that still lived (`resetSession()`): lost too, but no backoff. */
  forget(session: string): void {
    this.#lost = session;
  }

  /** Opening a connection failed: the next attempt waits longer. */
  openFailed(): void {
    this.#backOff();
  }

  /** An exchange completed: the peer works, so the next drop starts the backoff afresh. */
  succeeded(): void {
    this.#failures = 0;
  }

  /** An `initialize` over a new connection succeeded: the session is back. */
  restored(): void {
    this.#lost = undefined;
  }

  /** Waits until the backoff lets the next connection attempt go; rejects when `signal` aborts. */
  async turn(signal: AbortSignal): Promise<void> {
    const wait = this.#retryAt - Date.now();
    if (wait > 0) await delay(wait, signal);
  }

  /** What a message other than `initialize` fails with while the session is lost. */
  expired(what: string): AxMCPSessionExpiredError {
    return new AxMCPSessionExpiredError(
      `The connection to ${this.#endpoint} ended, and its session with it (${clip(what)} was not sent)`,
      { endpoint: this.#endpoint, sessionId: this.#lost },
    );
  }

  /**
   * What a request that was in flight over a connection fails with. `end` says whether (and
   * how) that connection stopped carrying its session; `session` names it when it carried one.
   * A safe request (`idempotent`) whose connection ended becomes
   * {@link AxMCPSessionExpiredError}, which the client answers by restoring the session and
   * sending it again; everything else keeps its error.
   */
  inFlightError(
    error: unknown,
    request: { method: string; idempotent: boolean | undefined },
    connection: { session: string | undefined; end: SessionEnd | undefined },
  ): unknown {
    if (
      connection.session === undefined ||
      connection.end === undefined ||
      request.method === 'initialize' ||
      !request.idempotent ||
      !(error instanceof AxMCPTransportError) ||
      (error.code !== 'closed' && error.code !== 'stream_ended' && error.code !== 'transport_error')
    ) {
      return error;
    }
    return new AxMCPSessionExpiredError(
      `The connection to ${this.#endpoint} ended during "${clip(request.method)}", and its session with it`,
      { endpoint: this.#endpoint, sessionId: connection.session, cause: error },
    );
  }

  #backOff(): void {
    this.#failures++;
    const wait = backoffDelayMs(this.#failures, {
      baseMs: this.#baseDelayMs,
      maxMs: this.#maxDelayMs,
      jitter: 0.5,
    });
    this.#retryAt = Math.max(this.#retryAt, Date.now() + wait);
  }
}

/** True for the error a channel rejects its pending requests with when the peer ended the connection. */
export function endedByPeer(error: unknown): boolean {
  return error instanceof AxMCPTransportError && error.code === 'closed' && error.cause instanceof AxMCPError;
}

/**
 * The standalone stream of a transport whose server messages reach the handlers directly: it
 * carries nothing and ends when the connection ends (or `signal`, or `closing`, aborts), which
 * is the client listener's cue to restore the session. `retryMs` is 0: the transport's own
 * backoff spaces the reconnect.
 */
export function streamUntilEnded(
  ended: Promise<void>,
  signal: AbortSignal,
  closing: AbortSignal,
): AxMCPEventStream {
  async function* watch(): AsyncGenerator<AxMCPStreamMessage> {
    await new Promise<void>((resolve) => {
      const done = () => {
        signal.removeEventListener('abort', done);
        closing.removeEventListener('abort', done);
        resolve();
      };
      if (signal.aborted || closing.aborted) {
        resolve();
        return;
      }
      signal.addEventListener('abort', done, { once: true });
      closing.addEventListener('abort', done, { once: true });
      ended.then(done, done);
    });
  }
  return { messages: watch(), retryMs: 0, lastEventId: undefined };
}

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}
