import { linkAbort, whenAborted } from '../protocol/abort.js';
import {
  AxMCPError,
  AxMCPSessionExpiredError,
  AxMCPTransportError,
  AxMCPUnsupportedError,
} from '../protocol/errors.js';
import type { JSONRPCNotification, JSONRPCRequest } from '../protocol/jsonrpc.js';
import type { AxMCPMessageContext } from '../transport/types.js';
import type { Connection } from './connection.js';
import type { AxMCPLifecycleState } from './events.js';
import type { ListenFilter } from './listen-stream.js';
import type { AxMCPListening, AxMCPListenOptions } from './listening.js';
import { SubscriptionOwners } from './subscription-owners.js';
import type { TaskWakers } from './tasks/task.js';
import type { NotificationStream, Wire } from './wire.js';

/** The owner name `subscribeResource` and `unsubscribeResource` use. */
export const MANUAL_OWNER = 'manual';

/** How long after a reconnect the client looks at the lists again. */
const RECONNECT_LOOK_DELAY_MS = 500;

/** What the stream hands back to the rest of the client. */
export interface ServerStreamParts {
  connection: Connection;
  taskWakers: TaskWakers;
  /** Puts a server message into the client's inbox. */
  dispatch(message: JSONRPCRequest | JSONRPCNotification, context: AxMCPMessageContext): void;
  /** Looks at the lists again after a reconnect (a change announced while down is lost). */
  lookAfterReconnect(): void;
}

/**
 * Subscriptions and listening: the one notification stream this client keeps (the legacy GET
 * stream or the modern listen stream, whichever the wire opens), who holds it, and the owned
 * resource URIs it carries. The stream runs while a listening handle, an owned URI or a server
 * request handler needs it, and stops when none does.
 */
export class ServerStream {
  readonly #parts: ServerStreamParts;
  readonly #connection: Connection;
  readonly #owners: SubscriptionOwners;
  #stream: NotificationStream | undefined;
  #holds = 0;
  #keepForServerRequests = false;
  #sessionLostWhileReleasing = false;
  /** Resource URIs subscribed on the wire (in the 2026-07-28 era: in the listen filter). */
  readonly #wiredUris = new Set<string>();
  /** The pending look after reconnects (see `#lookSoon`). */
  #look: { timer: ReturnType<typeof setTimeout>; stop: () => void } | undefined;

  constructor(parts: ServerStreamParts) {
    this.#parts = parts;
    this.#connection = parts.connection;
    this.#owners = new SubscriptionOwners({
      subscribe: (uri, restoring) => this.#putOnWire(uri, restoring === true),
      unsubscribe: (uri) => this.#takeOffWire(uri),
    });
    parts.taskWakers.onChange = () => {
      if (this.#connection.tasksNegotiated())
        this.#stream?.update().catch((error) => isOwnAbort(error) || this.#connection.report(error));
    };
  }

  /** Owned URIs, sorted as the owners keep them. */
  uris(): string[] {
    return this.#owners.uris();
  }

  /** URIs this client holds subscriptions for, and their owners. */
  subscriptions(): { uri: string; owners: string[] }[] {
    return this.#owners.uris().map((uri) => ({ uri, owners: this.#owners.owners(uri) }));
  }

  /**
   * Adds an owner (see {@link AxMCPClient.acquireResourceSubscription}). Not `async`: the owner's
   * wire change must join the changes of the other acquisitions started in the same turn.
   */
  acquire(uri: string, owner: string): Promise<void> {
    if (!this.#connection.identity?.capabilities.resources?.subscribe) {
      throw new AxMCPUnsupportedError(
        'The server does not offer resource subscriptions',
        this.#connection.where(),
      );
    }
    return this.#owners.acquire(uri, owner);
  }

  async release(uri: string, owner: string): Promise<void> {
    await this.#owners.release(uri, owner);
    if (this.#sessionLostWhileReleasing) {
      // The release itself needed no session; the other owners' subscriptions do: restore them now.
      this.#sessionLostWhileReleasing = false;
      await this.#connection.wire?.recover();
    }
  }

  /** The server lost its session: what is on the wire now is only what goes on after this. */
  sessionReplaced(): void {
    this.#owners.sessionReplaced();
  }

  /** Puts every owned URI back on a restored session, reporting the ones that failed. */
  async restore(): Promise<void> {
    const failures = await this.#owners.restore();
    for (const failure of failures) this.#connection.report(failure.error);
  }

  /** See {@link AxMCPClient.startListening}. */
  listen(options: AxMCPListenOptions = {}): AxMCPListening {
    const connection = this.#connection;
    connection.assertOpen();
    const link = linkAbort(options.signal, connection.lifetime.signal);
    let release: (() => void) | undefined;
    const done = new Promise<void>((resolve) => {
      link.signal.addEventListener(
        'abort',
        () => {
          release?.();
          link.dispose();
          resolve();
        },
        { once: true },
      );
    });
    const ready = (async () => {
      await connection.init(link.signal);
      if (link.signal.aborted)
        throw new AxMCPTransportError('closed', 'Listening was stopped', connection.where());
      release = this.#hold(options);
      await this.#stream?.ready;
    })();
    ready.catch(() => {});
    return { ready, done, close: () => link.abort() };
  }

  /** The wire sends its server requests on the stream alone: keep it open for them. */
  keepOpenForServerRequests(): void {
    this.#keepForServerRequests = true;
    this.#ensure();
  }

  /** Whether a notification from the transport is for the client (see {@link NotificationStream.accept}). */
  accept(message: JSONRPCNotification): boolean {
    return this.#stream ? this.#stream.accept(message) : true;
  }

  /** Releases every subscription (bounded by `timeoutMs`), then ends the stream. */
  async close(timeoutMs: number): Promise<void> {
    if (this.#connection.wire && this.#owners.uris().length > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        this.#owners.releaseAll().finally(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    this.#owners.clear();
    const stream = this.#stream;
    this.#stream = undefined;
    stream?.close();
    await stream?.done;
  }

  /** Keeps the shared stream running until the returned function is called. */
  #hold(options: AxMCPListenOptions = {}): () => void {
    this.#ensure(options);
    this.#holds++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#holds--;
      this.#stopIfUnused();
    };
  }

  #ensure(options: AxMCPListenOptions = {}): NotificationStream {
    if (!this.#stream) {
      const { signal: _ignored, ...shared } = options;
      // A stream held by subscriptions alone has no listener's onError: a stream refused for
      // ever (a 401, a gone endpoint) left the updates missing without a word.
      // A stream the client itself stopped (replaced by a new filter, torn down by the server) is
      // aborted by its own hand: not a failure to tell.
      if (!shared.onError) shared.onError = (error) => isOwnAbort(error) || this.#connection.report(error);
      this.#stream = (this.#connection.wire as Wire).openNotifications(
        {
          connect: (signal) => this.#connection.init(signal),
          dispatch: (message, context) => this.#parts.dispatch(message, context),
          lifecycle: (state, error, resumed) => this.#lifecycle(state, error, resumed),
          filter: () => this.#filter(),
        },
        shared,
      );
    }
    return this.#stream;
  }

  /** Subscriptions need the stream their updates arrive on; without them and without handles it stops. */
  #stopIfUnused(): void {
    if (this.#holds > 0 || this.#wiredUris.size > 0 || this.#keepForServerRequests || !this.#stream) return;
    this.#stream.close();
    this.#stream = undefined;
  }

  /** What the stream should carry: list changes the server offers, owned URIs, awaited tasks. */
  #filter(): ListenFilter {
    const capabilities = this.#connection.identity?.capabilities ?? {};
    const filter: ListenFilter = {};
    if (capabilities.tools?.listChanged) filter.toolsListChanged = true;
    if (capabilities.prompts?.listChanged) filter.promptsListChanged = true;
    if (capabilities.resources?.listChanged) filter.resourcesListChanged = true;
    if (this.#wiredUris.size > 0) filter.resourceSubscriptions = [...this.#wiredUris].sort();
    const tasks = this.#parts.taskWakers.ids();
    if (tasks.length > 0 && this.#connection.tasksNegotiated()) filter.taskIds = tasks.sort();
    return filter;
  }

  #lifecycle(state: AxMCPLifecycleState, error?: unknown, resumed?: boolean): void {
    const connection = this.#connection;
    connection.events.emit({
      type: 'lifecycle',
      namespace: connection.namespace,
      state,
      ...(error ? { error } : {}),
      ...(resumed !== undefined ? { resumed } : {}),
    });
    // A change announced while the stream was down is lost (2026-07-28 listen streams keep no
    // state; a legacy stream with no event id has nothing to resume from): look again — a moment
    // later, so what the server replays on reconnect (Last-Event-ID) is counted first.
    if (state === 'reconnected') this.#lookSoon();
  }

  /**
   * One look after a run of reconnects, a moment after the last: a stream that drops twenty
   * times in a few seconds lists the catalog once more, not twenty times, and leaves one timer
   * and one listener on the client's lifetime, not one per reconnect.
   */
  #lookSoon(): void {
    const lifetime = this.#connection.lifetime.signal;
    if (lifetime.aborted) return;
    if (this.#look) clearTimeout(this.#look.timer);
    const stop = this.#look?.stop ?? whenAborted(lifetime, () => this.#cancelLook());
    const timer = setTimeout(() => {
      this.#cancelLook();
      this.#parts.lookAfterReconnect();
    }, RECONNECT_LOOK_DELAY_MS);
    this.#look = { timer, stop };
  }

  #cancelLook(): void {
    if (!this.#look) return;
    clearTimeout(this.#look.timer);
    this.#look.stop();
    this.#look = undefined;
  }

  /**
   * An ownership transition reaches the server in the era's way (a `resources/subscribe`, or
   * the URI in the notification stream's filter); the stream then carries its updates.
   */
  async #putOnWire(uri: string, restoring: boolean): Promise<void> {
    await this.#connection.onWire((wire) => wire.subscribe(uri, restoring));
    this.#wiredUris.add(uri);
    if (this.#connection.closing) return;
    try {
      const honoured = await this.#ensure().update();
      if (honoured && !honouredURIs(honoured).has(uri)) {
        throw new AxMCPUnsupportedError(
          `The server did not accept a subscription to ${uri}`,
          this.#connection.where(),
        );
      }
    } catch (error) {
      this.#wiredUris.delete(uri);
      this.#stream?.update().catch(() => {});
      this.#stopIfUnused();
      throw error;
    }
  }

  async #takeOffWire(uri: string): Promise<void> {
    try {
      await this.#connection.onWire((wire) => wire.unsubscribe(uri));
    } catch (error) {
      // A lost session holds no subscriptions, which is what was asked.
      if (!(error instanceof AxMCPSessionExpiredError)) throw error;
      this.#sessionLostWhileReleasing = true;
    }
    this.#wiredUris.delete(uri);
    // When closing, the stream's end is the unsubscription.
    if (!this.#connection.closing) await this.#stream?.update();
    this.#stopIfUnused();
  }
}

/** The URIs a listen acknowledgement honoured, as a set built once per acknowledgement. */
const honouredSets = new WeakMap<ListenFilter, ReadonlySet<string>>();
function honouredURIs(honoured: ListenFilter): ReadonlySet<string> {
  let set = honouredSets.get(honoured);
  if (!set) honouredSets.set(honoured, (set = new Set(honoured.resourceSubscriptions ?? [])));
  return set;
}

function isOwnAbort(error: unknown): boolean {
  return error instanceof AxMCPError && error.code === 'aborted';
}
