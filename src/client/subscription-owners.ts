import { AxMCPError } from '../protocol/errors.js';

/** How ownership transitions reach the wire. */
export interface SubscriptionWire {
  /** `restoring` is true when the server lost its state and the URI is put back. */
  subscribe(uri: string, restoring?: boolean): Promise<void>;
  unsubscribe(uri: string): Promise<void>;
}

/**
 * Logical owners of resource subscriptions. The first owner of a URI puts it on the
 * wire, the last release takes it off, and nothing in between touches the wire.
 * Changes to one URI are serialized; a failed wire call leaves ownership unchanged.
 */
export class SubscriptionOwners {
  readonly #owners = new Map<string, Set<string>>();
  readonly #tails = new Map<string, Promise<unknown>>();
  readonly #wire: SubscriptionWire;
  /**
   * Since the session was replaced and until the restore: the URIs a first owner already put
   * on the new session, which the restore leaves be. `null`: no replacement pending.
   */
  #sinceReplaced: Set<string> | null = null;

  constructor(wire: SubscriptionWire) {
    this.#wire = wire;
  }

  /** Adds `owner` to `uri`; subscribes on the wire when it is the first. */
  acquire(uri: string, owner: string): Promise<void> {
    checkArguments(uri, owner);
    // Many servers accept any URI: a template subscribed literally gets no update, ever.
    if (/\{[^}]*\}/.test(uri)) {
      throw new AxMCPError(
        'invalid_argument',
        `${uri.slice(0, 200)} is a URI template: templates are never expanded, so no resource has that URI; subscribe to a concrete URI`,
      );
    }
    return this.#serialize(uri, async () => {
      const owners = this.#owners.get(uri);
      if (owners?.has(owner)) return;
      if (!owners || owners.size === 0) {
        await this.#wire.subscribe(uri);
        this.#owners.set(uri, new Set([owner]));
        this.#sinceReplaced?.add(uri);
        return;
      }
      owners.add(owner);
    });
  }

  /** Removes `owner` from `uri`; unsubscribes on the wire when it was the last. */
  release(uri: string, owner: string): Promise<void> {
    checkArguments(uri, owner);
    return this.#serialize(uri, async () => {
      const owners = this.#owners.get(uri);
      if (!owners?.has(owner)) return;
      if (owners.size === 1) await this.#wire.unsubscribe(uri);
      owners.delete(owner);
      if (owners.size === 0) {
        this.#owners.delete(uri);
        this.#sinceReplaced?.delete(uri);
      }
    });
  }

  /** URIs with at least one owner, sorted. */
  uris(): string[] {
    return [...this.#owners.keys()].sort();
  }

  owners(uri: string): string[] {
    return [...(this.#owners.get(uri) ?? [])].sort();
  }

  /** URIs held by `owner`. */
  ownedBy(owner: string): string[] {
    return this.uris().filter((uri) => this.#owners.get(uri)?.has(owner));
  }

  /** The server lost its state: every owned URI needs putting back (see {@link restore}). */
  sessionReplaced(): void {
    this.#sinceReplaced = new Set();
  }

  /**
   * Puts every owned URI on the wire again, once each (after the server lost its state),
   * but those already put on the new session by their first owner.
   */
  async restore(): Promise<{ uri: string; error: unknown }[]> {
    const failures: { uri: string; error: unknown }[] = [];
    const already = this.#sinceReplaced;
    this.#sinceReplaced = null;
    await Promise.all(
      this.uris().map((uri) =>
        this.#serialize(uri, async () => {
          if (!this.#owners.has(uri) || already?.has(uri)) return;
          try {
            await this.#wire.subscribe(uri, true);
          } catch (error) {
            failures.push({ uri, error });
          }
        }),
      ),
    );
    return failures;
  }

  /** Releases every URI of every owner on the wire, then forgets them. */
  async releaseAll(): Promise<void> {
    await Promise.all(
      this.uris().map((uri) =>
        this.#serialize(uri, async () => {
          if (!this.#owners.has(uri)) return;
          this.#owners.delete(uri);
          await this.#wire.unsubscribe(uri).catch(() => {});
        }),
      ),
    );
  }

  /** Forgets every owner without touching the wire. */
  clear(): void {
    this.#owners.clear();
    this.#sinceReplaced = null;
  }

  #serialize<T>(uri: string, change: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(uri) ?? Promise.resolve();
    const next = previous.then(change, change);
    const tail = next.catch(() => {});
    this.#tails.set(uri, tail);
    tail.then(() => {
      if (this.#tails.get(uri) === tail) this.#tails.delete(uri);
    });
    return next;
  }
}

function checkArguments(uri: string, owner: string): void {
  if (typeof uri !== 'string' || uri === '')
    throw new AxMCPError('invalid_argument', 'A resource URI is required');
  if (typeof owner !== 'string' || owner === '')
    throw new AxMCPError('invalid_argument', 'An owner id is required');
}
