/**
 * Abort plumbing that never piles listeners on long-lived signals: every link
 * returns a disposer, and callers dispose as soon as their operation ends.
 */

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
 * Children of each parent signal. A parent gets ONE listener however many operations follow
 * it, so a long-lived signal shared by thousands of calls never piles up listeners.
 */
const followers = new WeakMap<AbortSignal, Set<AbortController>>();

function follow(parent: AbortSignal, child: AbortController): () => void {
  let children = followers.get(parent);
  if (!children) {
    const set = new Set<AbortController>();
    children = set;
    followers.set(parent, set);
    parent.addEventListener(
      'abort',
      () => {
        for (const follower of [...set]) follower.abort(parent.reason);
        set.clear();
      },
      { once: true },
    );
  }
  children.add(child);
  const set = children;
  return () => {
    set.delete(child);
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
