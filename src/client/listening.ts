import { backoffDelayMs } from '../backoff/backoff.js';
import { delay, linkAbort } from '../protocol/abort.js';
import { AxMCPHTTPStatusError, AxMCPSessionExpiredError } from '../protocol/errors.js';
import type { AxMCPMessageContext, AxMCPStreamMessage, AxMCPTransport } from '../transport/types.js';
import type { AxMCPLifecycleState } from './events.js';

/** The context of a message that came without an event id: shared, nobody writes to it. */
const NO_EVENT_ID: AxMCPMessageContext = Object.freeze({});

/** Options of `startListening`. */
export interface AxMCPListenOptions {
  /** Stops listening when aborted. */
  signal?: AbortSignal;
  /** First reconnect delay in ms when the server gives no `retry:` hint (default 1000). */
  retryDelayMs?: number;
  /** Ceiling of the reconnect backoff in ms (default 30 000). */
  maxRetryDelayMs?: number;
  /**
   * Every failure of the stream, before the next reconnect. The shared stream takes the first
   * handle's; without one, failures go to the client's `onError`.
   */
  onError?: (error: unknown) => void;
}

/** A running listener. */
export interface AxMCPListening {
  /** Resolves once the stream is open (or the server has none), rejects if it never opened before close. */
  readonly ready: Promise<void>;
  /** Resolves when listening stopped through `close()` or the signal. */
  readonly done: Promise<void>;
  close(): void;
}

export interface StandaloneStreamDeps {
  transport: AxMCPTransport;
  connect(signal: AbortSignal): Promise<void>;
  /** Re-initializes a lost session (restoring subscriptions) before the stream reopens. */
  recover(): Promise<void>;
  dispatch(message: AxMCPStreamMessage['message'], context: AxMCPMessageContext): void;
  lifecycle(state: AxMCPLifecycleState, error?: unknown, resumed?: boolean): void;
  /** The stream is open (on the transport's current session), before its first message. */
  opened?(): void;
  /**
   * Registers a callback that cuts a reconnect wait short (a recovery elsewhere replaced the
   * session: the stream should reopen on it now); returns its removal.
   */
  onSessionReplaced?(reopen: () => void): () => void;
}

/**
 * The legacy standalone stream (HTTP GET): reopened after every drop with
 * `Last-Event-ID`, so the server replays what was missed; after a lost session it is
 * reopened fresh once the session was restored. Backoff is capped and jittered.
 */
export function listenStandalone(
  deps: StandaloneStreamDeps,
  options: AxMCPListenOptions = {},
): AxMCPListening {
  const link = linkAbort(options.signal);
  const signal = link.signal;
  const base = options.retryDelayMs ?? 1000;
  const ceiling = options.maxRetryDelayMs ?? 30_000;
  let markReady!: () => void;
  let failReady!: (error: unknown) => void;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    failReady = reject;
  });
  ready.catch(() => {});

  const run = async () => {
    let lastEventId: string | undefined;
    let resumeSession: string | undefined;
    let failures = 0;
    let opened = false;
    while (!signal.aborted) {
      let serverRetry: number | undefined;
      try {
        await deps.connect(signal);
        // A resume point belongs to its session: after a re-initialization it means nothing.
        if (deps.transport.sessionId !== resumeSession) lastEventId = undefined;
        const stream = await deps.transport.openEventStream?.({
          signal,
          ...(lastEventId !== undefined ? { lastEventId } : {}),
        });
        if (!stream) {
          // No standalone stream: notifications only ride on request streams.
          markReady();
          await new Promise<void>((resolve) =>
            signal.addEventListener('abort', () => resolve(), { once: true }),
          );
          return;
        }
        if (opened) deps.lifecycle('reconnected', undefined, lastEventId !== undefined);
        else deps.lifecycle('connected');
        opened = true;
        markReady();
        deps.opened?.();
        failures = 0;
        const take = (message: AxMCPStreamMessage['message'], eventId: string | undefined) => {
          if (eventId !== undefined) {
            lastEventId = eventId;
            resumeSession = deps.transport.sessionId;
          }
          deps.dispatch(message, eventId === undefined ? NO_EVENT_ID : { eventId });
        };
        try {
          if (stream.consume) await stream.consume(take);
          else for await (const { message, eventId } of stream.messages) take(message, eventId);
        } finally {
          lastEventId = stream.lastEventId ?? lastEventId;
          serverRetry = stream.retryMs;
        }
        if (signal.aborted) return;
        deps.lifecycle('disconnected');
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof AxMCPSessionExpiredError) {
          lastEventId = undefined;
          try {
            await deps.recover();
            continue;
          } catch (recoverError) {
            options.onError?.(recoverError);
          }
        } else if (lastEventId !== undefined && evictedResumePoint(error)) {
          // The server no longer holds the resume point: reopen fresh now; the gap is reported.
          options.onError?.(error);
          lastEventId = undefined;
          continue;
        } else {
          options.onError?.(error);
        }
        if (opened) deps.lifecycle('disconnected', error);
        failures++;
      }
      const wait =
        serverRetry ?? backoffDelayMs(Math.max(1, failures), { baseMs: base, maxMs: ceiling, jitter: 0.5 });
      const cut = new AbortController();
      const stopWaiting = () => cut.abort();
      signal.addEventListener('abort', stopWaiting, { once: true });
      const unregister = deps.onSessionReplaced?.(stopWaiting);
      await delay(wait, cut.signal).catch(() => {});
      unregister?.();
      signal.removeEventListener('abort', stopWaiting);
    }
  };

  const done = run()
    .catch((error) => options.onError?.(error))
    .finally(() => {
      failReady(new Error('Listening stopped before the stream opened'));
      link.dispose();
    });

  return { ready, done, close: () => link.abort() };
}

/** A refused resume (a 4xx other than rate limiting) means the server forgot that event id. */
function evictedResumePoint(error: unknown): boolean {
  return (
    error instanceof AxMCPHTTPStatusError && error.status >= 400 && error.status < 500 && error.status !== 429
  );
}
