/**
 * What the actor can call, with compact documentation: MCP tools and prompts per client
 * (read from each catalog and re-read only when its revision changes), UCP operations per
 * client (those its negotiation allows, read once), host functions and child agents. Without
 * discovery the actor's prompt lists every path; with it, only the namespaces, and
 * `discover(query)` searches this index.
 */
import type { AxMCPTool } from '../../protocol/messages.js';
import type { AxUCPOperation } from '../../ucp/operations.js';
import type { AxFunction } from '../functions.js';
import type { AxMCPExecutionContext, AxProgramMCPClient } from '../mcp-context.js';
import type { AxField } from '../signature.js';
import { modelVisible } from '../tool-bindings.js';
import { type AxProgramUCPClient, offeredOperations, operationInfo } from '../ucp-context.js';

/** One callable path and its documentation. */
export interface AgentCallable {
  /**
   * `mcp.docs.tools.echo`, `mcp.docs.prompts.get:greeting`, `ucp.shop.checkout.complete`,
   * `functions.lookup`, `agents.researcher`.
   */
  readonly path: string;
  readonly kind: 'tool' | 'prompt' | 'ucp' | 'function' | 'agent';
  /** The MCP or UCP namespace, or `functions` / `agents`. */
  readonly namespace: string;
  readonly name: string;
  /** How to call it, with compact argument types. */
  readonly usage: string;
  readonly description: string;
  /** Documentation written by an MCP server (untrusted) rather than by the host. */
  readonly untrusted: boolean;
}

/** What the index needs of a child agent. */
export interface AgentChildInfo {
  readonly name: string;
  readonly description: string;
  readonly inputs: readonly AxField[];
  readonly outputs: readonly AxField[];
}

/** One client's catalog as the actor sees it. */
export interface NamespaceSummary {
  namespace: string;
  server: string | undefined;
  tools: number;
  prompts: number;
  resources: number;
  resourceTemplates: number;
}

interface ClientEntry {
  revision: number;
  summary: NamespaceSummary;
  tools: Map<string, AxMCPTool>;
  callables: AgentCallable[];
}

const UNSAFE = new Set(['__proto__', 'constructor', 'prototype']);

/** The callables of one run; {@link CallableIndex.refresh} follows catalog revisions. */
export class CallableIndex {
  readonly #context: AxMCPExecutionContext;
  readonly #host: AgentCallable[];
  readonly #clients = new Map<AxProgramMCPClient, ClientEntry>();
  readonly #ucp = new Map<
    AxProgramUCPClient,
    { operations: readonly AxUCPOperation[]; callables: AgentCallable[] }
  >();

  constructor(
    context: AxMCPExecutionContext,
    functions: readonly AxFunction[],
    agents: readonly AgentChildInfo[],
  ) {
    this.#context = context;
    this.#host = [
      ...functions.map((fn) => hostCallable('function', fn.name, fn.description, argsType(fn.parameters))),
      ...agents.map((child) =>
        hostCallable(
          'agent',
          child.name,
          child.description,
          fieldsType(child.inputs),
          ` → ${fieldsType(child.outputs)}`,
        ),
      ),
    ];
  }

  /** Initializes the clients and re-reads catalogs whose revision changed; true if any did. */
  async refresh(signal: AbortSignal): Promise<boolean> {
    const fresh = this.#context.ucpClients.filter((client) => !this.#ucp.has(client));
    await Promise.all(
      fresh.map(async (client) => {
        const operations = await offeredOperations(client, signal);
        this.#ucp.set(client, {
          operations,
          callables: operations.map((operation) => ucpCallable(client, operation)),
        });
      }),
    );
    const clients = this.#context.clients;
    await Promise.all(clients.map((client) => this.#context.initialize(client, signal)));
    const stale = clients.filter((client) => this.#clients.get(client)?.revision !== client.catalogRevision);
    await Promise.all(
      stale.map(async (client) => {
        const snapshot = await client.inspectCatalog({ signal });
        const tools = new Map<string, AxMCPTool>();
        for (const tool of snapshot.tools)
          if (modelVisible(tool) && !UNSAFE.has(tool.name)) tools.set(tool.name, tool);
        const ns = client.namespace;
        this.#clients.set(client, {
          revision: snapshot.revision,
          tools,
          summary: {
            namespace: ns,
            server: snapshot.serverInfo?.name,
            tools: tools.size,
            prompts: snapshot.prompts.length,
            resources: snapshot.resources.length,
            resourceTemplates: snapshot.resourceTemplates.length,
          },
          callables: [
            ...[...tools.values()].map((tool) => toolCallable(ns, tool)),
            ...snapshot.prompts
              .filter((prompt) => !UNSAFE.has(prompt.name))
              .map((prompt) => ({
                path: `mcp.${ns}.prompts.get:${prompt.name}`,
                kind: 'prompt' as const,
                namespace: ns,
                name: prompt.name,
                usage: `mcp.${ns}.prompts.get(${JSON.stringify(prompt.name)}, { ${(prompt.arguments ?? [])
                  .map((arg) => `${arg.name}${arg.required ? '' : '?'}: string`)
                  .join(', ')} })`,
                description: [prompt.title, prompt.description].filter(Boolean).join(': '),
                untrusted: true,
              })),
          ],
        });
      }),
    );
    return stale.length > 0;
  }

  /** Per client: namespace, server and catalog sizes. */
  get namespaces(): NamespaceSummary[] {
    return this.#entries().map((entry) => entry.summary);
  }

  /** Tool names per namespace, for the sandbox's `mcp.<namespace>.tools`. */
  toolNames(): Record<string, string[]> {
    const names: Record<string, string[]> = Object.create(null);
    for (const entry of this.#entries()) names[entry.summary.namespace] = [...entry.tools.keys()];
    return names;
  }

  /** Operations per UCP namespace, for the sandbox's `ucp.<namespace>.<operation>`. */
  ucpOperations(): Record<string, string[]> {
    const names: Record<string, string[]> = Object.create(null);
    for (const client of this.#context.ucpClients)
      names[client.namespace] = [...(this.#ucp.get(client)?.operations ?? [])];
    return names;
  }

  /** The operations a UCP namespace offers (`undefined`: no such UCP client in this run). */
  ucpOffered(namespace: string): readonly AxUCPOperation[] | undefined {
    const client = this.#context.ucpClient(namespace);
    return client ? (this.#ucp.get(client)?.operations ?? []) : undefined;
  }

  /** The tool definition behind `mcp.<namespace>.tools.<name>`, if the catalog has it. */
  tool(namespace: string, name: string): AxMCPTool | undefined {
    const client = this.#context.client(namespace);
    return client ? this.#clients.get(client)?.tools.get(name) : undefined;
  }

  /** Every callable: MCP tools and prompts, UCP operations, functions, child agents. */
  all(): AgentCallable[] {
    const ucp = this.#context.ucpClients.flatMap((client) => this.#ucp.get(client)?.callables ?? []);
    return [...this.#entries().flatMap((entry) => entry.callables), ...ucp, ...this.#host];
  }

  /** Whether a path is still callable (after a catalog change). */
  has(path: string): boolean {
    return this.all().some((callable) => callable.path === path);
  }

  /** The callables matching a query best: names weigh more than descriptions. */
  search(query: string | readonly string[], limit: number): AgentCallable[] {
    const text = Array.isArray(query) ? query.join(' ') : String(query);
    const terms = tokens(text);
    if (terms.length === 0) return [];
    const scored: { callable: AgentCallable; score: number; order: number }[] = [];
    this.all().forEach((callable, order) => {
      const nameTokens = new Set(tokens(callable.name));
      const descriptionTokens = new Set(tokens(`${callable.namespace} ${callable.description}`));
      const name = callable.name.toLowerCase();
      let score = name === text.trim().toLowerCase() ? 10 : 0;
      for (const term of terms) {
        if (nameTokens.has(term)) score += 3;
        else if (term.length > 2 && name.includes(term)) score += 2;
        if (descriptionTokens.has(term)) score += 1;
      }
      if (score > 0) scored.push({ callable, score, order });
    });
    scored.sort((a, b) => b.score - a.score || a.order - b.order);
    return scored.slice(0, limit).map((entry) => entry.callable);
  }

  #entries(): ClientEntry[] {
    return this.#context.clients
      .map((client) => this.#clients.get(client))
      .filter((entry): entry is ClientEntry => entry !== undefined);
  }
}

function hostCallable(
  kind: 'function' | 'agent',
  name: string,
  description: string,
  args: string,
  returns = '',
): AgentCallable {
  const namespace = kind === 'function' ? 'functions' : 'agents';
  return {
    path: `${namespace}.${name}`,
    kind,
    namespace,
    name,
    usage: `${namespace}.${name}(${args})${returns}`,
    description,
    untrusted: false,
  };
}

function ucpCallable(client: AxProgramUCPClient, operation: AxUCPOperation): AgentCallable {
  const namespace = client.namespace;
  const info = operationInfo(operation, client);
  return {
    path: `ucp.${namespace}.${operation}`,
    kind: 'ucp',
    namespace,
    name: operation,
    usage: `ucp.${namespace}.${operation}(${argsType(info.parameters)})`,
    description: `${info.description} (UCP)`,
    untrusted: false,
  };
}

function toolCallable(namespace: string, tool: AxMCPTool): AgentCallable {
  const hints: string[] = [];
  if (tool.annotations?.readOnlyHint === true) hints.push('read-only');
  else if (tool.annotations?.destructiveHint === true) hints.push('destructive');
  if (tool.execution?.taskSupport === 'required') hints.push('runs as a task');
  const text = [tool.title, tool.description].filter(Boolean).join(': ');
  return {
    path: `mcp.${namespace}.tools.${tool.name}`,
    kind: 'tool',
    namespace,
    name: tool.name,
    usage: `mcp.${namespace}.tools${accessor(tool.name)}(${argsType(tool.inputSchema)})`,
    description: hints.length > 0 ? `${text} [${hints.join(', ')}]` : text,
    untrusted: true,
  };
}

function accessor(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
}

/** A JSON Schema as a compact TypeScript-like type. */
export function schemaType(schema: unknown, depth = 0): string {
  if (typeof schema !== 'object' || schema === null) return 'any';
  const node = schema as Record<string, unknown>;
  if (Array.isArray(node.enum))
    return node.enum
      .slice(0, 8)
      .map((value) => JSON.stringify(value))
      .join(' | ');
  if ('const' in node) return JSON.stringify(node.const);
  const union = (node.anyOf ?? node.oneOf) as unknown;
  if (Array.isArray(union))
    return union
      .slice(0, 4)
      .map((part) => schemaType(part, depth))
      .join(' | ');
  const type = Array.isArray(node.type) ? node.type.find((t) => t !== 'null') : node.type;
  switch (type) {
    case 'string':
    case 'boolean':
    case 'null':
      return type;
    case 'number':
    case 'integer':
      return 'number';
    case 'array':
      return `${wrap(schemaType(node.items, depth + 1))}[]`;
    case 'object':
    case undefined:
      return node.properties && depth < 2 ? argsType(node) : 'object';
    default:
      return 'any';
  }
}

function wrap(type: string): string {
  return type.includes(' ') && !type.startsWith('{') ? `(${type})` : type;
}

/** An object schema as `{ a: string, b?: number }`. */
export function argsType(schema: unknown): string {
  if (typeof schema !== 'object' || schema === null) return '{}';
  const node = schema as { properties?: unknown; required?: unknown };
  if (typeof node.properties !== 'object' || node.properties === null) return '{}';
  const required = new Set(Array.isArray(node.required) ? node.required : []);
  const entries = Object.entries(node.properties as Record<string, unknown>).slice(0, 24);
  if (entries.length === 0) return '{}';
  const parts = entries.map(
    ([key, value]) => `${key}${required.has(key) ? '' : '?'}: ${schemaType(value, 1)}`,
  );
  return `{ ${parts.join(', ')} }`;
}

function fieldsType(fields: readonly AxField[]): string {
  const parts = fields.map((field) => {
    const base =
      field.type === 'class' ? (field.options ?? []).map((o) => JSON.stringify(o)).join(' | ') : field.type;
    const type = field.type === 'json' ? 'any' : base;
    return `${field.name}${field.optional ? '?' : ''}: ${field.isArray ? `${wrap(type)}[]` : type}`;
  });
  return `{ ${parts.join(', ')} }`;
}

/** Lower-case words of a text; `snake_case`, `camelCase` and digits split apart. */
export function tokens(text: string): string[] {
  return text
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((token) => token.length > 0);
}
