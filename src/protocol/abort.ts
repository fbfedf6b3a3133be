/**
 * Abort plumbing that never piles listeners on long-lived signals: every link
 * returns a disposer, and callers dispose as soon as their operation ends.
 */
import { AxMCPError, AxMCPTimeoutError } from './errors.js';

/** A child controller aborted when any parent aborts; `dispose()` detaches it from the parents. */
export interface LinkedAbort {
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
  dispose(): void;
}

export function linkAbort(...parents: (AbortSignal | undefined)[]): LinkedAbort {
  const controller = new AbortController();
  const detach: (() => void)[] = [];
  for (const parent of parents) {
    if (!parent) continue;
    if (parent.aborted) {
      controller.abort(parent.reason);
      break;
    }
    detach.push(follow(parent, controller));
  }
  return {
    signal: controller.signal,
    abort: (reason) => controller.abort(reason),
    dispose() {
      for (const undo of detach.splice(0)) undo();
    },
  };
}

/**
 * Children of each parent signal. A parent carries ONE listener however many operations follow
 * it at once (no pile-up on a long-lived signal), and none once the last follower is gone.
 */
const followers = new WeakMap<AbortSignal, { children: Set<AbortController>; onAbort: () => void }>();

function follow(parent: AbortSignal, child: AbortController): () => void {
  let entry = followers.get(parent);
  if (!entry) {
    const children = new Set<AbortController>();
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
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The error to throw for an aborted signal: its reason when that is an Error. */
export function abortReason(signal: AbortSignal): unknown {
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
