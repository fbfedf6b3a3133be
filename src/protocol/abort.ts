/**
 * Abort plumbing that never piles listeners on long-lived signals: every link
 * returns a disposer, and callers dispose as soon as their operation ends. A link
 * makes its web signal only when something reads it, so a chain of links on the
 * request path (client, transport, socket) costs plain callbacks, not EventTargets.
 */
import { AxMCPError, AxMCPTimeoutError } from './errors.js';

/**
 * A child of its parents, aborted when any of them aborts; `dispose()` detaches it from them.
 * Its web `signal` is made on first use: a request that is never aborted (most are) then costs
 * no `AbortController` and no `EventTarget` listener, which on Node cost several microseconds
 * each per request. Links follow each other through plain callbacks (`onAbort`).
 */
export interface LinkedAbort {
  /** The web signal of this link, made (and kept in step) the first time it is read. */
  readonly signal: AbortSignal;
  readonly aborted: boolean;
  /** Why it aborted: the reason given, or the runtime's `AbortError` when none was. */
  readonly reason: unknown;
  abort(reason?: unknown): void;
  /**
   * Calls `listener` once when this link aborts (at once when it has); returns the function
   * that stops listening. No `EventTarget` is involved.
   */
  onAbort(listener: (reason: unknown) => void): () => void;
  dispose(): void;
}

/** What an operation can be aborted through: a web signal or a {@link LinkedAbort}. */
export type AbortSource = AbortSignal | LinkedAbort;

const NOTHING_TO_UNDO = () => {};

class Link implements LinkedAbort {
  aborted = false;
  reason: unknown;
  #controller: AbortController | undefined;
  #listeners: Set<(reason: unknown) => void> | undefined;
  readonly #detach: (() => void)[] = [];

  get signal(): AbortSignal {
    let controller = this.#controller;
    if (controller === undefined) {
      controller = this.#controller = new AbortController();
      if (this.aborted) controller.abort(this.reason);
    }
    return controller.signal;
  }

  // Fields, not methods: callers hand `abort` and `dispose` on as callbacks.
  readonly abort = (reason?: unknown): void => {
    if (this.aborted) return;
    if (reason === undefined) {
      // The runtime's own default reason (a DOMException named AbortError), as a signal would have it.
      const controller = new AbortController();
      controller.abort();
      reason = controller.signal.reason;
    }
    this.aborted = true;
    this.reason = reason;
    this.#controller?.abort(reason);
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners === undefined) return;
    for (const listener of listeners) {
      try {
        listener(reason);
      } catch (error) {
        // As an EventTarget does: one failing listener neither stops the others nor the aborter.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  };

  onAbort(listener: (reason: unknown) => void): () => void {
    if (this.aborted) {
      listener(this.reason);
      return NOTHING_TO_UNDO;
    }
    const listeners = (this.#listeners ??= new Set());
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  }

  readonly dispose = (): void => {
    for (const undo of this.#detach.splice(0)) undo();
  };

  follow(parent: AbortSource): boolean {
    if (parent.aborted) {
      this.abort(parent.reason);
      return false;
    }
    this.#detach.push(
      isLink(parent) ? parent.onAbort((reason) => this.abort(reason)) : followSignal(parent, this),
    );
    return true;
  }
}

export function linkAbort(...parents: (AbortSource | undefined)[]): LinkedAbort {
  const link = new Link();
  for (const parent of parents) {
    if (parent !== undefined && !link.follow(parent)) break;
  }
  return link;
}

/** Calls `listener` once `source` aborts; returns the function that stops listening. */
export function whenAborted(source: AbortSource, listener: () => void): () => void {
  if (isLink(source)) return source.onAbort(listener);
  source.addEventListener('abort', listener, { once: true });
  return () => source.removeEventListener('abort', listener);
}

function isLink(source: AbortSource): source is LinkedAbort {
  return typeof (source as Partial<LinkedAbort>).onAbort === 'function';
}

/** Where a request's options carry the link behind their `signal` (see {@link linkedSignalOptions}). */
const SEND_LINK = Symbol('ax-mcp.sendLink');

/**
 * Options whose `signal` is `link`'s, made only when something reads it: a transport of
 * ax-mcp's own follows the link itself ({@link abortSourceOf}), a transport of anyone else
 * reads `signal` as always. A spread copies both.
 */
export function linkedSignalOptions(link: LinkedAbort): { readonly signal: AbortSignal } {
  // A literal with an accessor keeps one fast shape; defineProperty would not.
  return {
    get signal() {
      return link.signal;
    },
    [SEND_LINK]: link,
  } as { readonly signal: AbortSignal };
}

/** What aborts a request: the link behind its options' `signal` when there is one, else the signal. */
export function abortSourceOf(options: {
  readonly signal?: AbortSignal | undefined;
}): AbortSource | undefined {
  return (options as { [SEND_LINK]?: LinkedAbort })[SEND_LINK] ?? options.signal;
}

/**
 * Children of each parent signal. A parent carries ONE listener however many operations follow
 * it at once (no pile-up on a long-lived signal), and none once the last follower is gone.
 */
const followers = new WeakMap<AbortSignal, { children: Set<Link>; onAbort: () => void }>();

function followSignal(parent: AbortSignal, child: Link): () => void {
  let entry = followers.get(parent);
  if (!entry) {
    const children = new Set<Link>();
    const onAbort = () => {
      followers.delete(parent);
      for (const follower of [...children]) follower.abort(parent.reason);
      children.clear();
    };
    entry = { children, onAbort };
    followers.set(parent, entry);
    parent.addEventListener('abort', onAbort, { once: true });
  }
  const { children, onAbort } = entry;
  children.add(child);
  return () => {
    if (!children.delete(child) || children.size > 0) return;
    if (followers.get(parent)?.children === children) followers.delete(parent);
    parent.removeEventListener('abort', onAbort);
  };
}

/** Resolves after `ms`, or rejects with the signal's reason; leaves no timer or listener behind. */
export function delay(ms: number, signal?: AbortSource): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    let unlisten = NOTHING_TO_UNDO;
    const timer = setTimeout(() => {
      unlisten();
      resolve();
    }, ms);
    if (signal)
      unlisten = whenAborted(signal, () => {
        clearTimeout(timer);
        reject(signal.reason);
      });
  });
}

/** The error to throw for an aborted signal: its reason when that is an Error. */
export function abortReason(signal: AbortSource): unknown {
  return signal.reason ?? new DOMException('The operation was aborted', 'AbortError');
}

/**
 * `promise`, or, as soon as `signal` aborts, a rejection: the signal's reason when it is an
 * `AxMCPError`, else an `AxMCPTimeoutError` saying that `what` (e.g. "Connecting to X") was timed
 * out or aborted. The listener is removed either way.
 */
export function raceAbort<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  what: string,
  endpoint: string,
): Promise<T> {
  if (!signal) return promise;
  const abortError = (): AxMCPError => {
    const reason: unknown = signal.reason;
    if (reason instanceof AxMCPError) return reason;
    const timedOut = (reason as { name?: unknown } | undefined)?.name === 'TimeoutError';
    return new AxMCPTimeoutError(`${what} was ${timedOut ? 'timed out' : 'aborted'}`, {
      aborted: !timedOut,
      endpoint,
      cause: reason,
    });
  };
  if (signal.aborted) return Promise.reject(abortError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
