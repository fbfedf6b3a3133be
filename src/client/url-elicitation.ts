/**
 * URL-mode elicitation end to end (2025-11-25): a request refused with `-32042` is shown to the
 * `elicitation.url` handler, one elicitation at a time. The handler resolves when the user is
 * done (it opened the URL and came back); the client then waits a moment for the server's
 * optional `notifications/elicitation/complete` and retries the request once. The server did
 * nothing with the refused request, so the retry replays nothing — `tools/call` included; a
 * second `-32042` reaches the caller.
 */
import { delay } from '../protocol/abort.js';
import type { AxMCPURLElicitationRequiredError } from '../protocol/errors.js';
import type { AxMCPElicitParams } from '../protocol/messages.js';
import type { AxMCPElicitationHandlers, AxMCPServerRequestContext } from './server-requests.js';

/** Completions remembered for a waiter that has not started yet (the server may be quick). */
const REMEMBERED = 256;

/** `notifications/elicitation/complete` by elicitation id, with waiters. */
export class ElicitationCompletions {
  readonly #completed = new Set<string>();
  readonly #waiters = new Map<string, Set<() => void>>();

  complete(elicitationId: string): void {
    this.#completed.add(elicitationId);
    if (this.#completed.size > REMEMBERED)
      this.#completed.delete(this.#completed.values().next().value as string);
    for (const wake of this.#waiters.get(elicitationId) ?? []) wake();
    this.#waiters.delete(elicitationId);
  }

  /** True when the completion came within `timeoutMs`. */
  async wait(elicitationId: string, timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    if (this.#completed.has(elicitationId)) return true;
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    let waiters = this.#waiters.get(elicitationId);
    if (!waiters) this.#waiters.set(elicitationId, (waiters = new Set()));
    let done = false;
    const wake = () => {
      done = true;
      stop.abort();
    };
    waiters.add(wake);
    try {
      await delay(timeoutMs, stop.signal).catch(() => {});
      return done || this.#completed.has(elicitationId);
    } finally {
      waiters.delete(wake);
      if (waiters.size === 0) this.#waiters.delete(elicitationId);
      signal.removeEventListener('abort', onAbort);
    }
  }
}

/**
 * Lets the user complete what `error` asks for; resolves when the request may be retried, or
 * throws `error` (with the reason) when it may not.
 */
export async function completeURLElicitations(
  error: AxMCPURLElicitationRequiredError,
  handlers: AxMCPElicitationHandlers | undefined,
  completions: ElicitationCompletions,
  context: AxMCPServerRequestContext,
  timeoutMs: number,
): Promise<void> {
  const handler = handlers?.url;
  if (!handler) throw error;
  for (const elicitation of error.elicitations) {
    const params: Extract<AxMCPElicitParams, { mode: 'url' }> = { mode: 'url', ...elicitation };
    const answer = await handler(params, context);
    if (answer.action !== 'accept') throw error;
    // The completion notification is optional: it makes the retry immediate, its absence only delays it.
    await completions.wait(elicitation.elicitationId, timeoutMs, context.signal);
    if (context.signal.aborted) throw error;
  }
}
