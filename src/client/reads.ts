import {
  type AxMCPCompleteResult,
  type AxMCPGetPromptResult,
  type AxMCPPrompt,
  type AxMCPReadResourceResult,
  type AxMCPResource,
  type AxMCPResourceTemplate,
  type AxMCPTool,
  parseCompleteResult,
  parseGetPromptResult,
  parseReadResourceResult,
} from '../protocol/messages.js';
import { assertPromptArguments } from './call-arguments.js';
import { type AxMCPListKind, type Catalog, LIST_METHODS } from './catalog.js';
import type { Connection } from './connection.js';
import { type AxMCPCallOptions, callOptions } from './in-flight.js';
import type { ReadCache } from './read-cache.js';
import type { Wire } from './wire.js';

/** A completion reference: a prompt argument or a resource template variable. */
export type AxMCPCompletionReference =
  | { type: 'ref/prompt'; name: string }
  | { type: 'ref/resource'; uri: string };

/** What each list holds. */
interface ListItems {
  tools: AxMCPTool;
  prompts: AxMCPPrompt;
  resources: AxMCPResource;
  resourceTemplates: AxMCPResourceTemplate;
}

/** One page of a list: `{ tools: [...], nextCursor? }` and so on. */
export type AxMCPListPage<K extends AxMCPListKind> = { [P in K]: ListItems[P][] } & { nextCursor?: string };

/**
 * The safe reads: list pages, prompts, resources (through the read cache) and completions. Each
 * is idempotent, so the wire may send it again after a lost connection.
 */
export class Reads {
  readonly #connection: Connection;
  readonly #cache: ReadCache;
  readonly #catalog: Catalog;

  constructor(connection: Connection, cache: ReadCache, catalog: Catalog) {
    this.#connection = connection;
    this.#cache = cache;
    this.#catalog = catalog;
  }

  /** One page of a list, as `{ [kind]: items, nextCursor? }`. */
  async page<K extends AxMCPListKind>(
    kind: K,
    cursor: string | undefined,
    options: AxMCPCallOptions = {},
  ): Promise<AxMCPListPage<K>> {
    const connection = this.#connection;
    await connection.init(options.signal);
    const { method, parse } = LIST_METHODS[kind];
    const params = cursor === undefined ? undefined : { cursor };
    const page = parse(
      await connection.send({
        method,
        ...(params ? { params } : {}),
        idempotent: true,
        ...callOptions(options),
      }),
    );
    let items = page.items;
    // The same tools the catalog admits: a tool with invalid header annotations cannot be called.
    if (kind === 'tools') items = (connection.wire as Wire).callableTools(items as AxMCPTool[]);
    return (
      page.nextCursor === undefined ? { [kind]: items } : { [kind]: items, nextCursor: page.nextCursor }
    ) as AxMCPListPage<K>;
  }

  async prompt(
    name: string,
    args: Record<string, string>,
    options: AxMCPCallOptions,
  ): Promise<AxMCPGetPromptResult> {
    await this.#connection.init(options.signal);
    assertPromptArguments(name, await this.#listedPrompt(name), args, this.#connection.where());
    return parseGetPromptResult(
      await this.#connection.send({
        method: 'prompts/get',
        params: { name, arguments: args },
        idempotent: true,
        ...callOptions(options),
      }),
    );
  }

  /** The prompt as the catalog lists it (the list loaded once for this); `undefined` when it cannot say. */
  async #listedPrompt(name: string): Promise<AxMCPPrompt | undefined> {
    const catalog = this.#catalog;
    if (!catalog.offers('prompts')) return undefined;
    try {
      if (!catalog.isLoaded('prompts')) await catalog.load(['prompts']);
    } catch {
      // A list that fails to load leaves the arguments to the server.
      return undefined;
    }
    return (catalog.items('prompts') as AxMCPPrompt[]).find((candidate) => candidate.name === name);
  }

  async resource(uri: string, options: AxMCPCallOptions): Promise<AxMCPReadResourceResult> {
    const connection = this.#connection;
    await connection.init(options.signal);
    const cached = this.#cache.get(uri);
    if (cached) return cached;
    let askedForInput = false;
    const result = parseReadResourceResult(
      await connection.send({
        method: 'resources/read',
        params: { uri },
        idempotent: true,
        onInputRound: () => {
          askedForInput = true;
        },
        ...callOptions(options),
      }),
    );
    // Reads that needed input rounds are never cached (the answer depended on that input).
    if (connection.options.readCache === true && connection.wire?.cachesReads === true && !askedForInput) {
      this.#cache.keep(uri, result);
    }
    return result;
  }

  async complete(
    ref: AxMCPCompletionReference,
    argument: { name: string; value: string },
    context: { arguments?: Record<string, string> } | undefined,
    options: AxMCPCallOptions,
  ): Promise<AxMCPCompleteResult> {
    await this.#connection.init(options.signal);
    const params: Record<string, unknown> = { ref, argument };
    if (context) params.context = context;
    return parseCompleteResult(
      await this.#connection.send({
        method: 'completion/complete',
        params,
        idempotent: true,
        ...callOptions(options),
      }),
    );
  }
}
