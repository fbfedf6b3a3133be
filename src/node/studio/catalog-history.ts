/**
 * Each client's catalog revisions as the studio saw them: a snapshot when the studio starts
 * (everything "added"), then one after every `catalog_changed`, each compared with the one
 * before per kind — added, removed, and changed (the same key with different JSON). Bounded
 * per client; a change that changed nothing is still an entry (it happened).
 */

import type { AxMCPCatalogSnapshot, AxMCPClient } from '../../index.js';

const KINDS = ['tools', 'prompts', 'resources', 'resourceTemplates'] as const;
type Kind = (typeof KINDS)[number];
const MAX_ENTRIES = 50;
/** Names kept per list of an entry; a catalog of 10,000 tools is summed up, not copied. */
const MAX_NAMES = 1000;
/** How long a look at the history waits for a snapshot under way. */
const WAIT_MS = 15_000;

/** What changed in one kind of list. */
export interface StudioListChange {
  added: string[];
  removed: string[];
  changed: string[];
}

/** One revision of a client's catalog. */
export interface StudioRevision {
  revision: number;
  at: number;
  changes: Record<Kind, StudioListChange>;
  /** Set when a list had more than {@link MAX_NAMES} names of one sort: only the first are listed. */
  truncated?: true;
}

type Keyed = Map<string, string>;

function keyOf(kind: Kind, item: Record<string, unknown>): string {
  const key = kind === 'resources' ? item.uri : kind === 'resourceTemplates' ? item.uriTemplate : item.name;
  return typeof key === 'string' ? key : '';
}

function keyed(snapshot: AxMCPCatalogSnapshot): Record<Kind, Keyed> {
  const out = {} as Record<Kind, Keyed>;
  for (const kind of KINDS) {
    const map: Keyed = new Map();
    for (const item of snapshot[kind] as unknown as Record<string, unknown>[])
      map.set(keyOf(kind, item), JSON.stringify(item));
    out[kind] = map;
  }
  return out;
}

interface ClientHistory {
  last: Record<Kind, Keyed> | undefined;
  entries: StudioRevision[];
  /** Snapshots are taken one after the other, so each is compared with the one before. */
  queue: Promise<void>;
}

/** The revision history of every client, fed by their `catalog_changed` events. */
export class StudioCatalogHistory {
  readonly #clients: ReadonlyMap<string, AxMCPClient>;
  readonly #histories = new Map<string, ClientHistory>();
  readonly #undo: (() => void)[] = [];
  readonly #closing = new AbortController();
  readonly #onRevision: (namespace: string, revision: number) => void;

  constructor(
    clients: ReadonlyMap<string, AxMCPClient>,
    onRevision: (namespace: string, revision: number) => void,
  ) {
    this.#clients = clients;
    this.#onRevision = onRevision;
    for (const [namespace, client] of clients) {
      this.#histories.set(namespace, { last: undefined, entries: [], queue: Promise.resolve() });
      this.#undo.push(
        client.subscribeEvents((event) => {
          if (event.type === 'catalog_changed') this.#take(namespace);
        }),
      );
      // The first entry is the catalog as the studio found it.
      this.#take(namespace);
    }
  }

  /** A client's revisions, newest first; `undefined` for an unknown namespace. */
  async revisions(namespace: string): Promise<StudioRevision[] | undefined> {
    const history = this.#histories.get(namespace);
    if (!history) return undefined;
    // A client that could not be inspected at start gets its first entry now.
    if (history.last === undefined) this.#take(namespace);
    // A server that does not answer delays the answer, never blocks it.
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      history.queue,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    return [...history.entries].reverse();
  }

  close(): void {
    this.#closing.abort();
    for (const undo of this.#undo.splice(0)) undo();
  }

  #take(namespace: string): void {
    const history = this.#histories.get(namespace);
    const client = this.#clients.get(namespace);
    if (!history || !client) return;
    history.queue = history.queue.then(async () => {
      if (this.#closing.signal.aborted) return;
      let snapshot: AxMCPCatalogSnapshot;
      try {
        snapshot = await client.inspectCatalog({ signal: this.#closing.signal });
      } catch {
        // Not reachable now: the next change (or a look at the history) tries again.
        return;
      }
      const now = keyed(snapshot);
      const entry: StudioRevision = {
        revision: snapshot.revision,
        at: Date.now(),
        changes: {} as Record<Kind, StudioListChange>,
      };
      for (const kind of KINDS) {
        const before = history.last?.[kind] ?? new Map<string, string>();
        const after = now[kind];
        const change: StudioListChange = { added: [], removed: [], changed: [] };
        for (const [key, json] of after) {
          const old = before.get(key);
          if (old === undefined) change.added.push(key);
          else if (old !== json) change.changed.push(key);
        }
        for (const key of before.keys()) if (!after.has(key)) change.removed.push(key);
        for (const list of [change.added, change.removed, change.changed]) {
          if (list.length > MAX_NAMES) {
            list.length = MAX_NAMES;
            entry.truncated = true;
          }
        }
        entry.changes[kind] = change;
      }
      history.last = now;
      history.entries.push(entry);
      if (history.entries.length > MAX_ENTRIES) history.entries.shift();
      this.#onRevision(namespace, entry.revision);
    });
  }
}
