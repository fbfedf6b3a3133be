/**
 * The studio's JSON API: read-only views of the clients' catalogs and subscriptions, the
 * runtime's runs and dead letters, and the few actions the page can take (call a tool through
 * the client — so `authorizeToolCall` decides — redrive, cancel). Lists are paged here, so a
 * catalog of 10,000 tools never travels to the page at once.
 */

import type {
  AxEventDeadLetter,
  AxEventRuntime,
  AxEventStore,
  AxMCPCatalogSnapshot,
  AxMCPClient,
} from '../../index.js';
import { StudioCatalogHistory } from './catalog-history.js';
import type { AxStudioElicitation } from './elicitation.js';
import { errorOf, type StudioObserver } from './observe.js';
import { StudioRecordings } from './recordings.js';
import { StudioRuns } from './runs-api.js';
import { StudioTry } from './try-api.js';

/** What the API answers: a status and a JSON body. */
export interface StudioReply {
  status: number;
  body: unknown;
  /** More response headers (a download's `content-disposition`). */
  headers?: Record<string, string>;
}

const KINDS = ['tools', 'prompts', 'resources', 'resourceTemplates'] as const;
type Kind = (typeof KINDS)[number];
const MAX_PAGE = 200;

const ok = (body: unknown): StudioReply => ({ status: 200, body });
const fail = (status: number, message: string): StudioReply => ({ status, body: { error: { message } } });

function int(value: string | null, fallback: number, max: number): number {
  const n = value === null ? fallback : Number(value);
  return Number.isInteger(n) && n >= 0 ? Math.min(n, max) : fallback;
}

/** The item's name (tools, prompts) or URI (resources) or URI template, for filtering and lookup. */
function keyOf(kind: Kind, item: Record<string, unknown>): string {
  const key = kind === 'resources' ? item.uri : kind === 'resourceTemplates' ? item.uriTemplate : item.name;
  return typeof key === 'string' ? key : '';
}

export interface StudioAPIOptions {
  clients: readonly AxMCPClient[];
  runtime: AxEventRuntime | undefined;
  store: AxEventStore | undefined;
  observer: StudioObserver;
  elicitation?: AxStudioElicitation | undefined;
}

export class StudioAPI {
  readonly #clients = new Map<string, AxMCPClient>();
  readonly #runtime: AxEventRuntime | undefined;
  readonly #store: AxEventStore | undefined;
  readonly #observer: StudioObserver;
  /** The last snapshot of each client, kept while its catalog revision stays the same. */
  readonly #snapshots = new Map<string, { revision: number; snapshot: AxMCPCatalogSnapshot }>();
  readonly #closing = new AbortController();
  readonly #try: StudioTry;
  readonly #history: StudioCatalogHistory;
  readonly #recordings: StudioRecordings;
  readonly #runs: StudioRuns;

  constructor(options: StudioAPIOptions) {
    for (const client of options.clients) {
      if (this.#clients.has(client.namespace))
        throw new TypeError(`startStudio: two clients share the namespace "${client.namespace}"`);
      this.#clients.set(client.namespace, client);
    }
    this.#runtime = options.runtime;
    this.#store = options.store ?? options.runtime?.store;
    this.#observer = options.observer;
    this.#try = new StudioTry({
      observer: this.#observer,
      elicitation: options.elicitation,
      snapshot: (client) => this.#snapshot(client),
      closing: this.#closing.signal,
    });
    this.#history = new StudioCatalogHistory(this.#clients, (namespace, revision) =>
      this.#observer.note({ kind: 'revision', namespace, revision }),
    );
    this.#recordings = new StudioRecordings(this.#clients);
    this.#runs = new StudioRuns({ store: this.#store, runtime: this.#runtime, observer: this.#observer });
  }

  close(): void {
    this.#closing.abort();
    this.#try.close();
    this.#history.close();
  }

  async handle(method: string, path: string[], query: URLSearchParams, body: unknown): Promise<StudioReply> {
    const [first, second, third, fourth] = path;
    if (method === 'GET' && first === 'servers' && second === undefined) return this.#servers();
    if (first === 'servers' && second !== undefined) {
      const client = this.#clients.get(second);
      if (!client) return fail(404, 'no such client');
      if (method === 'GET' && (KINDS as readonly string[]).includes(third ?? '') && fourth === undefined)
        return this.#list(client, third as Kind, query);
      if (method === 'GET' && third === 'tool' && fourth === undefined)
        return this.#tool(client, query.get('name') ?? '');
      if (method === 'GET' && third === 'revisions' && fourth === undefined) {
        const revisions = await this.#history.revisions(second);
        return ok({ revisions: revisions ?? [] });
      }
      const tried = await this.#try.server(client, method, path.slice(2), query, body);
      if (tried) return tried;
    }
    const other = this.#recordings.handle(method, path) ?? this.#try.elicitations(method, path, body);
    if (other) return other;
    if (method === 'GET' && first === 'subscriptions' && second === undefined) return this.#subscriptions();
    if (method === 'GET' && first === 'runs' && second === undefined) return this.#runs.runs(query);
    if (method === 'GET' && first === 'continuations' && second === undefined)
      return this.#runs.continuations(query);
    if (first === 'runs' && second !== undefined) {
      if (method === 'GET' && third === undefined) return this.#run(second);
      if (method === 'POST' && third === 'cancel' && fourth === undefined) return this.#cancel(second);
    }
    if (method === 'GET' && first === 'dead-letters' && second === undefined) return this.#deadLetters();
    if (method === 'POST' && first === 'dead-letters' && second !== undefined && third === 'redrive')
      return this.#redrive(second);
    if (method === 'GET' && first === 'recent-events' && second === undefined)
      return ok({ events: this.#observer.events });
    return fail(404, 'not found');
  }

  async #snapshot(client: AxMCPClient): Promise<AxMCPCatalogSnapshot> {
    const known = this.#snapshots.get(client.namespace);
    if (known && known.revision === client.catalogRevision) return known.snapshot;
    const snapshot = await client.inspectCatalog({ signal: this.#closing.signal });
    this.#snapshots.set(client.namespace, { revision: snapshot.revision, snapshot });
    return snapshot;
  }

  async #servers(): Promise<StudioReply> {
    const servers = await Promise.all(
      [...this.#clients.values()].map(async (client) => {
        try {
          const s = await this.#snapshot(client);
          return {
            namespace: client.namespace,
            era: s.era,
            protocolVersion: s.protocolVersion,
            serverInfo: s.serverInfo ?? null,
            capabilities: s.capabilities,
            instructions: s.instructions ?? null,
            revision: s.revision,
            counts: {
              tools: s.tools.length,
              prompts: s.prompts.length,
              resources: s.resources.length,
              resourceTemplates: s.resourceTemplates.length,
            },
            cache: s.cache,
            replaysRecording: client.replaysRecording,
          };
        } catch (error) {
          return { namespace: client.namespace, error: errorOf(error) };
        }
      }),
    );
    return ok({ servers, runtime: this.#runtime !== undefined, store: this.#store !== undefined });
  }

  async #list(client: AxMCPClient, kind: Kind, query: URLSearchParams): Promise<StudioReply> {
    const snapshot = await this.#snapshot(client);
    const all = snapshot[kind] as unknown as Record<string, unknown>[];
    const filter = (query.get('q') ?? '').toLowerCase();
    const matching =
      filter === ''
        ? all
        : all.filter(
            (item) =>
              keyOf(kind, item).toLowerCase().includes(filter) ||
              (typeof item.description === 'string' && item.description.toLowerCase().includes(filter)),
          );
    const offset = int(query.get('offset'), 0, Number.MAX_SAFE_INTEGER);
    const limit = int(query.get('limit'), 50, MAX_PAGE);
    return ok({ total: matching.length, offset, items: matching.slice(offset, offset + limit) });
  }

  async #tool(client: AxMCPClient, name: string): Promise<StudioReply> {
    const snapshot = await this.#snapshot(client);
    const tool = snapshot.tools.find((candidate) => candidate.name === name);
    return tool ? ok({ tool }) : fail(404, 'no such tool');
  }

  #subscriptions(): StudioReply {
    const clients = [...this.#clients.values()].map((client) => ({
      namespace: client.namespace,
      subscriptions: client.subscriptions.map(({ uri, owners }) => ({
        uri,
        owners,
        updates: this.#observer.updatesOf(client.namespace, uri),
      })),
    }));
    return ok({ clients, lifecycle: this.#observer.lifecycle });
  }

  async #run(id: string): Promise<StudioReply> {
    if (!this.#store) return fail(404, 'no store');
    const run = await this.#store.getRun(id);
    return run ? ok({ run }) : fail(404, 'no such run');
  }

  async #cancel(id: string): Promise<StudioReply> {
    const run = this.#runtime
      ? await this.#runtime.cancelRun(id)
      : await this.#store?.cancel({ id, now: Date.now() });
    return run ? ok({ run }) : fail(404, 'no such run');
  }

  async #deadLetters(): Promise<StudioReply> {
    if (!this.#store) return ok({ deadLetters: [], available: false });
    const deadLetters: AxEventDeadLetter[] = await this.#store.listDeadLetters({ limit: 200 });
    return ok({ deadLetters, available: true });
  }

  async #redrive(id: string): Promise<StudioReply> {
    const deliveryId = this.#runtime
      ? await this.#runtime.redrive(id)
      : await this.#store?.redrive({ deadLetterId: id, now: Date.now() });
    return deliveryId ? ok({ deliveryId }) : fail(404, 'no such dead letter');
  }
}
