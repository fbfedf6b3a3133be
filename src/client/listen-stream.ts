import { backoffDelayMs } from '../backoff/backoff.js';
import { delay, linkAbort } from '../protocol/abort.js';
import { AxMCPUnsupportedError } from '../protocol/errors.js';
import { isObject } from '../protocol/json.js';
import type { JSONRPCNotification } from '../protocol/jsonrpc.js';
import { META } from '../protocol/meta.js';
import type { AxMCPLifecycleState } from './events.js';
import type { SendRequest } from './in-flight.js';
import type { AxMCPListenOptions } from './listening.js';

/** What a 2026-07-28 listen stream asks the server for. */
export interface ListenFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
  taskIds?: string[];
}

interface OpenStream {
  id: number | undefined;
  filter: ListenFilter;
  key: string;
  acked: Promise<ListenFilter>;
  ack(honoured: ListenFilter): void;
  fail(error: unknown): void;
  controller: AbortController;
  /** Settles when the stream ends: `true` when the server ended it gracefully. */
  ended: Promise<boolean>;
}

export interface ListenStreamDeps {
  /** Sends a request through the modern wire (it adds `_meta` and headers). */
  send(request: SendRequest): Promise<Record<string, unknown>>;
  /** The filter the client wants right now. */
  filter(): ListenFilter;
  lifecycle(state: AxMCPLifecycleState, error?: unknown, resumed?: boolean): void;
}

/** How long a replaced stream keeps delivering while its successor takes over. */
const OVERLAP_MS = 250;

/**
 * The 2026-07-28 `subscriptions/listen` stream. A change of interest opens the new
 * stream before closing the old one, so nothing falls in the gap; what both deliver
 * during the overlap is passed on once. A stream the server drops is reopened with
 * capped, jittered backoff; the server keeps no state, so the filter is simply sent again.
 */
export class ListenStream {
  readonly #deps: ListenStreamDeps;
  readonly #options: AxMCPListenOptions;
  readonly #life: ReturnType<typeof linkAbort>;
  #current: OpenStream | undefined;
  readonly #retiring = new Map<number, OpenStream>();
  /** During an overlap: copies of each notification delivered per stream. */
  #overlap: Map<string, Map<OpenStream, number>> | undefined;
  readonly #retireTimers = new Set<ReturnType<typeof setTimeout>>();
  #changing: Promise<ListenFilter> | undefined;
  /** The one re-evaluation shared by every `update()` that arrived during `#changing`. */
  #next: Promise<ListenFilter> | undefined;
  #everConnected = false;
  readonly ready: Promise<void>;
  readonly done: Promise<void>;
  #markReady!: () => void;

  constructor(deps: ListenStreamDeps, options: AxMCPListenOptions = {}) {
    this.#deps = deps;
    this.#options = options;
    this.#life = linkAbort(options.signal);
    this.ready = new Promise((resolve) => {
      this.#markReady = resolve;
    });
    this.done = this.#run();
  }

  get closed(): boolean {
    return this.#life.signal.aborted;
  }

  /** Stops listening; every stream is closed. */
  close(): void {
    this.#life.abort();
  }

  /**
   * Brings the server in line with the current filter; resolves with what the server
   * honoured once the stream carrying it is acknowledged.
   */
  update(): Promise<ListenFilter> {
    // A closed stream carries nothing: every interest is already off the wire.
    if (this.closed) return Promise.resolve({});
    if (this.#changing) {
      // Whatever the change under way ends in, the filter is evaluated afresh after it — once
      // for every caller that arrived meanwhile (10,000 concurrent subscriptions make one
      // more change, not 10,000 filter comparisons).
      if (!this.#next) {
        const again = () => {
          this.#next = undefined;
          return this.update();
        };
        this.#next = this.#changing.then(again, again);
      }
      return this.#next;
    }
    // Read the filter a microtask later: interests changed together (many owners acquiring
    // at once) then make one change of stream, not one each.
    this.#changing = Promise.resolve()
      .then(() => {
        const wanted = this.#deps.filter();
        const current = this.#current;
        if (current && current.key === filterKey(wanted)) return current.acked;
        return this.#replace(wanted);
      })
      .finally(() => {
        this.#changing = undefined;
      });
    return this.#changing;
  }

  /**
   * Decides what happens to a notification from the transport: handles acknowledgements,
   * drops those of foreign or finished streams and overlap duplicates. True = pass it on.
   */
  accept(message: JSONRPCNotification): boolean {
    const meta = isObject(message.params?._meta) ? message.params._meta : undefined;
    const subscriptionId = meta?.[META.subscriptionId];
    if (message.method === 'notifications/cancelled') {
      // The server tore a listen stream down (it must say so by the request's id): end it here,
      // so the stream in use is reopened with the current filter. Other cancellations pass on.
      const stream = this.#byId(message.params?.requestId);
      if (!stream) return true;
      stream.controller.abort();
      return false;
    }
    if (message.method === 'notifications/subscriptions/acknowledged') {
      const stream = this.#byId(subscriptionId);
      const honoured = message.params?.notifications;
      stream?.ack(isObject(honoured) ? (honoured as ListenFilter) : {});
      return false;
    }
    if (subscriptionId === undefined) return true;
    const stream = this.#byId(subscriptionId);
    if (!stream) return false;
    if (!this.#overlap) return true;
    // Both streams are acknowledged: an event after that may come on both. Pair copies
    // across the two streams: a copy is dropped when the other stream already delivered it.
    const key = `${message.method}\u0000${JSON.stringify({ ...message.params, _meta: undefined })}`;
    let counts = this.#overlap.get(key);
    if (!counts) this.#overlap.set(key, (counts = new Map()));
    const mine = counts.get(stream) ?? 0;
    const others = Math.max(0, ...[...counts].filter(([other]) => other !== stream).map(([, n]) => n));
    counts.set(stream, mine + 1);
    return others <= mine;
  }

  #byId(id: unknown): OpenStream | undefined {
    if (typeof id !== 'number' && typeof id !== 'string') return undefined;
    if (this.#current && this.#current.id === id) return this.#current;
    return typeof id === 'number' ? this.#retiring.get(id) : undefined;
  }

  async #replace(wanted: ListenFilter): Promise<ListenFilter> {
    const previous = this.#current;
    const next = this.#open(wanted);
    this.#current = next;
    // The old stream keeps delivering until the new one is acknowledged, and a little after.
    // Copies are paired from now on: once the server holds the new stream it sends an event on
    // both, and the old stream's copy may be read before the new stream's acknowledgement.
    if (previous?.id !== undefined) {
      this.#retiring.set(previous.id, previous);
      this.#overlap ??= new Map();
    }
    try {
      const honoured = await next.acked;
      this.#markReady();
      if (previous) this.#retire(previous);
      return honoured;
    } catch (error) {
      if (this.#current === next) {
        this.#current = previous;
        if (previous?.id !== undefined) this.#retiring.delete(previous.id);
        if (this.#retiring.size === 0) this.#overlap = undefined;
      } else if (previous) this.#retire(previous);
      next.controller.abort();
      throw error;
    }
  }

  /** Ends a replaced stream after the overlap in which both deliver. */
  #retire(stream: OpenStream): void {
    if (stream.id === undefined) {
      stream.controller.abort();
      return;
    }
    const id = stream.id;
    this.#overlap ??= new Map();
    const timer = setTimeout(() => {
      this.#retireTimers.delete(timer);
      stream.controller.abort();
      this.#retiring.delete(id);
      if (this.#retiring.size === 0) this.#overlap = undefined;
    }, OVERLAP_MS);
    this.#retireTimers.add(timer);
  }

  #open(filter: ListenFilter): OpenStream {
    const controller = new AbortController();
    const life = this.#life.signal;
    const onLifeEnd = () => controller.abort();
    if (life.aborted) controller.abort();
    else life.addEventListener('abort', onLifeEnd, { once: true });
    let ack!: (honoured: ListenFilter) => void;
    let fail!: (error: unknown) => void;
    const acked = new Promise<ListenFilter>((resolve, reject) => {
      ack = resolve;
      fail = reject;
    });
    acked.catch(() => {});
    const stream: OpenStream = {
      id: undefined,
      filter,
      key: filterKey(filter),
      acked,
      ack,
      fail,
      controller,
      ended: Promise.resolve(false),
    };
    stream.ended = this.#deps
      .send({
        method: 'subscriptions/listen',
        params: { notifications: filter },
        signal: controller.signal,
        timeoutMs: 0,
        progress: false,
        onId: (id) => {
          stream.id = id;
        },
      })
      .then(
        () => true,
        (error) => {
          fail(error);
          return false;
        },
      )
      .finally(() => {
        life.removeEventListener('abort', onLifeEnd);
        fail(new AxMCPUnsupportedError('The listen stream ended before the server acknowledged it'));
      });
    return stream;
  }

  /** Keeps a stream open until closed: reopens after drops with capped, jittered backoff. */
  async #run(): Promise<void> {
    const signal = this.#life.signal;
    const base = this.#options.retryDelayMs ?? 1000;
    const ceiling = this.#options.maxRetryDelayMs ?? 30_000;
    let failures = 0;
    while (!signal.aborted) {
      try {
        await this.update();
        if (this.#everConnected) this.#deps.lifecycle('reconnected', undefined, false);
        else this.#deps.lifecycle('connected');
        this.#everConnected = true;
        failures = 0;
        // Wait for the stream in use to end; replacements swap #current under us.
        for (;;) {
          const stream = this.#current as OpenStream;
          await stream.ended;
          if (signal.aborted || this.#current === stream) break;
        }
        if (signal.aborted) break;
        this.#current = undefined;
        this.#deps.lifecycle('disconnected');
      } catch (error) {
        if (signal.aborted) break;
        this.#options.onError?.(error);
        failures++;
      }
      const wait = backoffDelayMs(Math.max(1, failures), { baseMs: base, maxMs: ceiling, jitter: 0.5 });
      await delay(wait, signal).catch(() => {});
    }
    for (const timer of this.#retireTimers) clearTimeout(timer);
    this.#retireTimers.clear();
    for (const stream of this.#retiring.values()) stream.controller.abort();
    this.#current?.controller.abort();
    this.#life.dispose();
  }
}

/** A filter's identity: the same interests in any order are the same filter. */
function filterKey(filter: ListenFilter): string {
  return JSON.stringify([
    filter.toolsListChanged === true,
    filter.promptsListChanged === true,
    filter.resourcesListChanged === true,
    [...(filter.resourceSubscriptions ?? [])].sort(),
    [...(filter.taskIds ?? [])].sort(),
  ]);
}
