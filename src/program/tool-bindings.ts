/**
 * Tool bindings: MCP tools, UCP operations and functions as the provider sees them. An MCP
 * binding keeps the client's identity (namespace, tool, `mcp:<namespace>:<tool>`), a UCP
 * binding its client's (namespace, operation, `ucp:<namespace>:<operation>`). Bindings are
 * cached per client and catalog revision, and the provider tool list per set of revisions, so
 * a step does no schema work unless a catalog changed. A UCP client's operations are those its
 * negotiation allows, read once (the first build connects it).
 */
import type { AxAITool } from '../ai/types.js';
import type { AxMCPTool, AxMCPToolAnnotations } from '../protocol/messages.js';
import type { AxUCPOperation } from '../ucp/operations.js';
import { AxProgramError } from './errors.js';
import type { AxFunction } from './functions.js';
import type { AxMCPExecutionContext, AxProgramMCPClient } from './mcp-context.js';
import { type AxProgramUCPClient, offeredOperations, operationInfo } from './ucp-context.js';

/** How MCP tools are named at the provider: the bare tool name, or `<namespace>__<tool>`. */
export type AxMCPToolNaming = 'bare' | 'namespaced';

/** An MCP tool bound to the client that serves it. */
export interface AxMCPToolBinding {
  readonly kind: 'mcp';
  /** The name the provider sees. */
  readonly name: string;
  readonly namespace: string;
  /** The tool's name on its server. */
  readonly tool: string;
  /** `mcp:<namespace>:<tool>`. */
  readonly componentId: string;
  readonly client: AxProgramMCPClient;
  readonly definition: AxMCPTool;
}

/** A function bound under its own name. */
export interface AxFunctionBinding {
  readonly kind: 'function';
  readonly name: string;
  readonly componentId: string;
  readonly fn: AxFunction;
}

/**
 * A UCP operation bound to the client that runs it. The provider sees it as
 * `<namespace>__<operation>` with dots as underscores (`shop__checkout_complete`), whatever
 * `mcpToolNames` says: operation names are the same at every business.
 */
export interface AxUCPOperationBinding {
  readonly kind: 'ucp';
  /** The name the provider sees. */
  readonly name: string;
  readonly namespace: string;
  /** The UCP operation (`checkout.complete`). */
  readonly operation: AxUCPOperation;
  /** `ucp:<namespace>:<operation>`. */
  readonly componentId: string;
  readonly client: AxProgramUCPClient;
}

/** A tool the model may call. */
export type AxToolBinding = AxMCPToolBinding | AxUCPOperationBinding | AxFunctionBinding;

/** The tools of one step: provider definitions and the binding behind each name. */
export interface AxToolset {
  /** Changes whenever any catalog revision behind it changes. */
  readonly key: string;
  readonly tools: readonly AxAITool[];
  readonly byName: ReadonlyMap<string, AxToolBinding>;
}

interface ClientTools {
  revision: number;
  tools: readonly AxMCPTool[];
}

/** Visible tools per client, for the catalog revision they were read at. */
const catalogCache = new WeakMap<AxProgramMCPClient, ClientTools>();

async function clientTools(
  client: AxProgramMCPClient,
  signal: AbortSignal | undefined,
): Promise<ClientTools> {
  const cached = catalogCache.get(client);
  if (cached && cached.revision === client.catalogRevision) return cached;
  const snapshot = await client.inspectCatalog(signal ? { signal } : {});
  const entry: ClientTools = {
    revision: snapshot.revision,
    tools: Object.freeze(snapshot.tools.filter(modelVisible)),
  };
  catalogCache.set(client, entry);
  return entry;
}

/** MCP Apps may hide a tool from the model (`_meta.ui.visibility` without `model`). */
export function modelVisible(tool: AxMCPTool): boolean {
  const ui = tool._meta?.ui;
  if (typeof ui !== 'object' || ui === null) return true;
  const visibility = (ui as { visibility?: unknown }).visibility;
  return !Array.isArray(visibility) || visibility.includes('model');
}

/** Builds toolsets for one run; rebuilds only when a catalog revision changed. */
export class AxToolsetBuilder {
  readonly #context: AxMCPExecutionContext;
  readonly #functions: readonly AxFunction[];
  readonly #naming: AxMCPToolNaming;
  #current: AxToolset | undefined;

  constructor(context: AxMCPExecutionContext, functions: readonly AxFunction[], naming: AxMCPToolNaming) {
    this.#context = context;
    this.#functions = functions;
    this.#naming = naming;
  }

  /**
   * The toolset for the next step: initializes clients (once per context), reads catalogs
   * that changed, and rejects names that would collide at the provider.
   */
  async build(signal?: AbortSignal): Promise<AxToolset> {
    const clients = this.#context.clients;
    const ucpClients = this.#context.ucpClients;
    await Promise.all(clients.map((client) => this.#context.initialize(client, signal)));
    const current = this.#current;
    if (current && current.key === this.#key()) return current;
    const [perClient, perUCPClient] = await Promise.all([
      Promise.all(clients.map((client) => clientTools(client, signal))),
      Promise.all(ucpClients.map((client) => offeredOperations(client, signal))),
    ]);
    const key = [
      ...clients.map((client, i) => `${client.namespace}@${perClient[i]?.revision}`),
      ...ucpClients.map((client) => `ucp:${client.namespace}`),
    ].join('|');
    if (current && current.key === key) return current;
    const ucp = ucpClients.map((client, i) => ({ client, operations: perUCPClient[i] ?? [] }));
    this.#current = assemble(key, clients, perClient, ucp, this.#functions, this.#naming);
    return this.#current;
  }

  #key(): string {
    return [
      ...this.#context.clients.map((client) => `${client.namespace}@${client.catalogRevision}`),
      ...this.#context.ucpClients.map((client) => `ucp:${client.namespace}`),
    ].join('|');
  }
}

function assemble(
  key: string,
  clients: readonly AxProgramMCPClient[],
  perClient: readonly ClientTools[],
  ucp: readonly { client: AxProgramUCPClient; operations: readonly AxUCPOperation[] }[],
  functions: readonly AxFunction[],
  naming: AxMCPToolNaming,
): AxToolset {
  const byName = new Map<string, AxToolBinding>();
  const tools: AxAITool[] = [];
  const add = (binding: AxToolBinding, tool: AxAITool) => {
    const existing = byName.get(binding.name);
    if (existing) {
      throw new AxProgramError(
        'tool_name_collision',
        `${existing.componentId} and ${binding.componentId} would both reach the provider as "${binding.name}"` +
          (naming === 'bare' ? "; use mcpToolNames: 'namespaced' or restrict the clients" : ''),
      );
    }
    byName.set(binding.name, binding);
    tools.push(tool);
  };
  for (const fn of functions) {
    add(
      { kind: 'function', name: fn.name, componentId: `function:${fn.name}`, fn },
      {
        name: fn.name,
        description: fn.description,
        parameters: fn.parameters ?? { type: 'object', properties: {} },
      },
    );
  }
  clients.forEach((client, index) => {
    for (const definition of perClient[index]?.tools ?? []) {
      const binding: AxMCPToolBinding = {
        kind: 'mcp',
        name: providerName(client.namespace, definition.name, naming),
        namespace: client.namespace,
        tool: definition.name,
        componentId: `mcp:${client.namespace}:${definition.name}`,
        client,
        definition,
      };
      add(binding, providerTool(binding));
    }
  });
  for (const { client, operations } of ucp) {
    for (const operation of operations) {
      const binding: AxUCPOperationBinding = {
        kind: 'ucp',
        name: providerName(client.namespace, operation, 'namespaced'),
        namespace: client.namespace,
        operation,
        componentId: `ucp:${client.namespace}:${operation}`,
        client,
      };
      const info = operationInfo(operation, client);
      add(binding, {
        name: binding.name,
        description: `${info.description} (UCP operation ${binding.componentId})`,
        parameters: info.parameters,
      });
    }
  }
  return Object.freeze({ key, tools: Object.freeze(tools), byName });
}

/** A provider-safe name: `[A-Za-z0-9_-]`, at most 64 characters. */
export function providerName(namespace: string, tool: string, naming: AxMCPToolNaming): string {
  const raw = naming === 'namespaced' ? `${namespace}__${tool}` : tool;
  const clean = raw.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  return clean === '' ? '_' : clean;
}

function providerTool(binding: AxMCPToolBinding): AxAITool {
  const { definition } = binding;
  const description = [definition.title, definition.description].filter(Boolean).join(': ');
  const hints = annotationHints(definition.annotations);
  const text = [description, hints].filter(Boolean).join(' ');
  return {
    name: binding.name,
    description: `${text ? `${text} ` : ''}(MCP tool ${binding.componentId})`.slice(0, 1024),
    parameters: parameters(definition.inputSchema),
  };
}

/** The input schema as the provider expects it: an object schema. */
function parameters(schema: Record<string, unknown>): Record<string, unknown> {
  if (schema.type === 'object') return schema;
  return { ...schema, type: 'object' };
}

function annotationHints(annotations: AxMCPToolAnnotations | undefined): string {
  if (!annotations) return '';
  const hints: string[] = [];
  if (annotations.readOnlyHint === true) hints.push('read-only');
  if (annotations.destructiveHint === true && annotations.readOnlyHint !== true) hints.push('destructive');
  return hints.length > 0 ? `[${hints.join(', ')}]` : '';
}
