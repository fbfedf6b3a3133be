import { nearest } from '../options/check.js';
import { AxMCPError } from '../protocol/errors.js';
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
    await this.#checkPromptArguments(name, args);
    return parseGetPromptResult(
      await this.#connection.send({
        method: 'prompts/get',
        params: { name, arguments: args },
        idempotent: true,
        ...callOptions(options),
      }),
    );
  }

  /**
   * A prompt's arguments against the protocol (strings only) and, when the catalog lists the
   * prompt, against what it declares. Servers drop an argument they do not declare without a
   * word, so a misspelt optional one (`tone` as `tnoe`) changed nothing and said nothing.
   */
  async #checkPromptArguments(name: string, args: Record<string, string>): Promise<void> {
    const where = this.#connection.where();
    const refuse = (message: string) => new AxMCPError('invalid_argument', message, where);
    if (typeof args !== 'object' || args === null || Array.isArray(args))
      throw refuse(`The arguments of prompt "${name}" are an object of strings`);
    for (const [key, value] of Object.entries(args)) {
      if (typeof value !== 'string')
        throw refuse(
          `Argument "${key}" of prompt "${name}" is a string (the protocol carries prompt arguments as strings)`,
        );
    }
    const catalog = this.#catalog;
    if (!catalog.offers('prompts')) return;
    if (!catalog.isLoaded('prompts')) {
      // The check needs the list; a list that fails to load leaves the arguments to the server.
      if (
        !(await catalog.load(['prompts']).then(
          () => true,
          () => false,
        ))
      )
        return;
    }
    const prompt = (catalog.items('prompts') as AxMCPPrompt[]).find((candidate) => candidate.name === name);
    if (!prompt) return;
    const declared = (prompt.arguments ?? []).map((argument) => argument.name);
    for (const key of Object.keys(args)) {
      if (declared.includes(key)) continue;
      const meant = nearest(key, declared);
      const takes = declared.length > 0 ? `it takes ${declared.join(', ')}` : 'it takes no arguments';
      throw refuse(
        `"${key}" is not an argument of prompt "${name}" (${takes})${meant ? `: did you mean ${meant}?` : ''}`,
      );
    }
    for (const argument of prompt.arguments ?? []) {
      if (argument.required && args[argument.name] === undefined)
        throw refuse(`Prompt "${name}" needs the argument "${argument.name}"`);
    }
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
