import { cloneJSON } from '../protocol/json.js';
import {
  type AxMCPImplementation,
  type AxMCPPage,
  type AxMCPPrompt,
  type AxMCPResource,
  type AxMCPResourceTemplate,
  type AxMCPServerCapabilities,
  type AxMCPTool,
  parsePromptsPage,
  parseResourcesPage,
  parseResourceTemplatesPage,
  parseToolsPage,
} from '../protocol/messages.js';
import type { AxMCPEra } from '../protocol/versions.js';
import { type AxMCPCacheInfo, collectPages } from './pagination.js';

/** The four lists a server can publish. */
export type AxMCPListKind = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

export const LIST_KINDS: readonly AxMCPListKind[] = ['tools', 'prompts', 'resources', 'resourceTemplates'];

/** The wire method and page parser of each list. */
export const LIST_METHODS = {
  tools: { method: 'tools/list', parse: parseToolsPage },
  prompts: { method: 'prompts/list', parse: parsePromptsPage },
  resources: { method: 'resources/list', parse: parseResourcesPage },
  resourceTemplates: { method: 'resources/templates/list', parse: parseResourceTemplatesPage },
} as const;

/**
 * An isolated copy of what a server offers. Changing it never changes the client.
 * Templates are listed as the server gave them; the library never expands them.
 */
export interface AxMCPCatalogSnapshot {
  namespace: string;
  era: AxMCPEra;
  protocolVersion: string;
  /** Increases every time a list is replaced. */
  revision: number;
  serverInfo: AxMCPImplementation | undefined;
  capabilities: AxMCPServerCapabilities;
  instructions: string | undefined;
  tools: AxMCPTool[];
  prompts: AxMCPPrompt[];
  resources: AxMCPResource[];
  resourceTemplates: AxMCPResourceTemplate[];
  /** Resource URIs this client holds a subscription for. */
  subscriptions: string[];
  /** Cache hints per list that was fetched. */
  cache: Partial<Record<AxMCPListKind, AxMCPCacheInfo>>;
}

const NO_TOOLS: ReadonlyMap<string, AxMCPTool> = new Map();

type ListItem = AxMCPTool | AxMCPPrompt | AxMCPResource | AxMCPResourceTemplate;

interface ListState {
  items: ListItem[];
  cache: AxMCPCacheInfo | undefined;
  loading: Promise<void> | undefined;
  /** A change was announced while a fetch was under way: fetch again after it. */
  dirty: boolean;
}

export interface CatalogOptions {
  maxPages: number;
  fetchPage: (method: string, cursor: string | undefined) => Promise<Record<string, unknown>>;
  /** Drops or rewrites tools the era forbids (2026-07-28: invalid `x-mcp-header`). */
  filterTools?: (tools: AxMCPTool[], revision: number) => AxMCPTool[];
  now?: () => number;
}

/**
 * The client's knowledge of the server's lists. Fetches lazily, follows pages with
 * bounds, serializes refreshes per list, and counts revisions.
 */
export class Catalog {
  readonly #options: CatalogOptions;
  readonly #lists = new Map<AxMCPListKind, ListState>();
  #capabilities: AxMCPServerCapabilities = {};
  /** Replaced whole on every fetch; until the first, the shared empty map (an idle client holds none). */
  #toolsByName: ReadonlyMap<string, AxMCPTool> = NO_TOOLS;
  #revision = 0;

  constructor(options: CatalogOptions) {
    this.#options = options;
  }

  get revision(): number {
    return this.#revision;
  }

  /** A (re)connected server: its lists must be fetched again. */
  reset(capabilities: AxMCPServerCapabilities): void {
    this.#capabilities = capabilities;
    // Keep each list's state object: a fetch under way (retried after a lost session) fills it in.
    for (const state of this.#lists.values()) {
      if (!state.loading) state.cache = undefined;
    }
  }

  /** Whether the server publishes this list at all. */
  offers(kind: AxMCPListKind): boolean {
    const capability = kind === 'resourceTemplates' ? 'resources' : kind;
    return this.#capabilities[capability] !== undefined;
  }

  isLoaded(kind: AxMCPListKind): boolean {
    return this.#lists.get(kind)?.cache !== undefined;
  }

  /** Fetches the lists not yet known, or, with `force`, all of them; `stale` refetches only expired ones. */
  async load(kinds: readonly AxMCPListKind[] = LIST_KINDS, mode: 'missing' | 'stale' | 'force' = 'missing') {
    const now = (this.#options.now ?? Date.now)();
    await Promise.all(
      kinds
        .filter((kind) => this.offers(kind))
        .filter((kind) => {
          const cache = this.#lists.get(kind)?.cache;
          if (mode === 'force' || cache === undefined) return true;
          return mode === 'stale' && (cache.expiresAt === undefined || cache.expiresAt <= now);
        })
        .map((kind) => this.refresh(kind)),
    );
  }

  /** Refetches one list. A refresh asked for during a fetch runs once more after it. */
  refresh(kind: AxMCPListKind): Promise<void> {
    let state = this.#lists.get(kind);
    if (!state) {
      state = { items: [], cache: undefined, loading: undefined, dirty: false };
      this.#lists.set(kind, state);
    }
    if (state.loading) {
      state.dirty = true;
      return state.loading;
    }
    const current = state;
    current.loading = (async () => {
      try {
        do {
          current.dirty = false;
          await this.#fetch(kind, current);
        } while (current.dirty);
      } finally {
        current.loading = undefined;
      }
    })();
    return current.loading;
  }

  tool(name: string): AxMCPTool | undefined {
    return this.#toolsByName.get(name);
  }

  items<K extends AxMCPListKind>(kind: K): readonly ListItem[] {
    return this.#lists.get(kind)?.items ?? [];
  }

  /** A deep copy of everything known, plus the identity the caller supplies. */
  snapshot(
    identity: Omit<AxMCPCatalogSnapshot, 'revision' | AxMCPListKind | 'cache' | 'subscriptions'>,
    subscriptions: string[],
  ): AxMCPCatalogSnapshot {
    const cache: AxMCPCatalogSnapshot['cache'] = {};
    for (const [kind, state] of this.#lists) if (state.cache) cache[kind] = { ...state.cache };
    return {
      ...cloneJSON(identity),
      revision: this.#revision,
      tools: cloneJSON(this.items('tools') as AxMCPTool[]),
      prompts: cloneJSON(this.items('prompts') as AxMCPPrompt[]),
      resources: cloneJSON(this.items('resources') as AxMCPResource[]),
      resourceTemplates: cloneJSON(this.items('resourceTemplates') as AxMCPResourceTemplate[]),
      subscriptions: [...subscriptions],
      cache,
    };
  }

  async #fetch(kind: AxMCPListKind, state: ListState): Promise<void> {
    const { method, parse } = LIST_METHODS[kind];
    const collected = await collectPages<ListItem>(
      method,
      this.#options.maxPages,
      async (cursor) => parse(await this.#options.fetchPage(method, cursor)) as AxMCPPage<ListItem>,
      this.#options.now,
    );
    this.#revision++;
    let items = collected.items;
    if (kind === 'tools') {
      if (this.#options.filterTools) items = this.#options.filterTools(items as AxMCPTool[], this.#revision);
      this.#toolsByName = new Map((items as AxMCPTool[]).map((tool) => [tool.name, tool]));
    }
    state.items = items;
    state.cache = collected.cache;
  }
}
