/**
 * The inventory as MCP, on the official SDK's `McpServer`: resources, the resource template,
 * tools, the prompt and the hand-written task methods, for one era. Modern instances are built
 * per request (by `createMcpHandler`), legacy ones per session.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import {
  type CacheHint,
  type CallToolResult,
  completable,
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type RegisteredResource,
  ResourceNotFoundError,
  ResourceTemplate,
} from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { ParamHeaderTable } from './headers.js';
import { type AxMCPDemoResource, type Inventory, isWarehouseId, WAREHOUSE_TEMPLATE } from './inventory.js';
import { CLIENT_CAPABILITIES_KEY, isRecord, TASKS_EXTENSION } from './rpc.js';
import { registerLegacyTaskMethods, registerModernTaskMethods } from './task-methods.js';
import { modernCreateResult, type TaskStore } from './tasks.js';

/** Name and version the demo reports as `serverInfo`. */
export const DEMO_SERVER_INFO = { name: 'ax-mcp-demo', version: '0.1.0' } as const;
/** The task-returning tool. */
export const START_REINDEX = 'start_reindex';
/** Arguments mirrored into `Mcp-Param-*` headers (`scope` → `Mcp-Param-Scope`). */
export const PARAM_HEADERS: ParamHeaderTable = new Map([
  [START_REINDEX, [{ header: 'Scope', argument: 'scope' }]],
]);

/** Cacheable 2026-07-28 operations the demo gives hints for. */
export type DemoCacheHints = Partial<
  Record<
    | 'server/discover'
    | 'tools/list'
    | 'prompts/list'
    | 'resources/list'
    | 'resources/templates/list'
    | 'resources/read',
    CacheHint
  >
>;

/** Default cache hints: lists for a minute (list_changed invalidates), reads always fresh. */
export const DEFAULT_CACHE_HINTS: DemoCacheHints = {
  'server/discover': { ttlMs: 60_000, cacheScope: 'public' },
  'tools/list': { ttlMs: 60_000, cacheScope: 'public' },
  'prompts/list': { ttlMs: 60_000, cacheScope: 'public' },
  'resources/templates/list': { ttlMs: 60_000, cacheScope: 'public' },
  'resources/list': { ttlMs: 10_000, cacheScope: 'public' },
  'resources/read': { ttlMs: 0, cacheScope: 'public' },
};

const INSTRUCTIONS =
  'ax-mcp demo inventory server. Read inventory://warehouse/current for stock levels; adjust_stock changes ' +
  'them (subscribers get notifications/resources/updated); start_reindex runs as a task.';

/** What the surface needs from the server around it. */
export interface SurfaceDeps {
  readonly inventory: Inventory;
  readonly tasks: TaskStore;
  readonly cacheHints: DemoCacheHints;
  /** Emits `notifications/resources/updated` for `uris` in both eras. */
  resourcesUpdated(uris: readonly string[]): void;
}

/** Per-session state a legacy surface reads and writes. */
export interface LegacySurfaceSession {
  readonly subscriptions: Set<string>;
  readonly resources: Map<string, RegisteredResource>;
}

function text(value: string, isError = false): CallToolResult {
  return { content: [{ type: 'text', text: value }], ...(isError ? { isError: true } : {}) };
}

/** Registers one concrete catalog resource on `mcp`. */
export function registerCatalogResource(
  mcp: McpServer,
  inventory: Inventory,
  resource: AxMCPDemoResource,
): RegisteredResource {
  return mcp.registerResource(
    resource.name,
    resource.uri,
    {
      mimeType: resource.mimeType,
      ...(resource.description === undefined ? {} : { description: resource.description }),
    },
    (uri) => {
      const document = inventory.catalogDocument(resource.uri);
      if (document === undefined) throw new ResourceNotFoundError(uri.href);
      return { contents: [{ uri: resource.uri, mimeType: resource.mimeType, text: document }] };
    },
  );
}

function registerInventory(
  mcp: McpServer,
  deps: SurfaceDeps,
  era: 'modern' | 'legacy',
): Map<string, RegisteredResource> {
  const { inventory, tasks } = deps;
  const resources = new Map<string, RegisteredResource>();
  for (const resource of inventory.resources()) {
    resources.set(resource.uri, registerCatalogResource(mcp, inventory, resource));
  }
  mcp.registerResource(
    'warehouse',
    new ResourceTemplate(WAREHOUSE_TEMPLATE, {
      list: undefined,
      complete: { warehouseId: (value) => inventory.warehouses().filter((id) => id.startsWith(value)) },
    }),
    { mimeType: 'application/json', description: 'Stock levels of one warehouse.' },
    (uri, variables) => {
      const id = String(variables.warehouseId);
      const document = inventory.warehouseDocument(id) ?? inventory.catalogDocument(uri.href);
      if (document === undefined) throw new ResourceNotFoundError(uri.href);
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: document }] };
    },
  );

  mcp.registerTool(
    'get_stock',
    {
      title: 'Get stock',
      description: 'Stock of one SKU in every warehouse, with the total.',
      inputSchema: z.object({ sku: z.string().min(1).max(64).describe('The SKU, e.g. widget-a') }),
      outputSchema: z.object({
        sku: z.string(),
        warehouses: z.record(z.string(), z.number()),
        total: z.number(),
      }),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ sku }) => {
      const stock = inventory.stockOf(sku);
      return { ...text(JSON.stringify(stock)), structuredContent: stock };
    },
  );
  mcp.registerTool(
    'adjust_stock',
    {
      title: 'Adjust stock',
      description: 'Adds (positive delta) or removes (negative delta) stock of a SKU in a warehouse.',
      inputSchema: z.object({
        warehouseId: z.string().min(1).max(32),
        sku: z.string().min(1).max(64),
        delta: z.number().int().min(-1_000_000).max(1_000_000),
      }),
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    ({ warehouseId, sku, delta }) => {
      const change = inventory.adjust(warehouseId, sku, delta);
      deps.resourcesUpdated(change.affectedUris);
      return {
        ...text(`${sku} in ${warehouseId}: ${change.before} → ${change.after}`),
        structuredContent: { ...change },
      };
    },
  );
  const reindex = mcp.registerTool(
    START_REINDEX,
    {
      title: 'Start reindex',
      description: 'Reindexes the search index of a scope; runs as a task (poll tasks/get).',
      inputSchema: z.object({
        scope: z.string().min(1).max(200).describe('What to reindex, e.g. "berlin" or "all"').meta({
          'x-mcp-header': 'Scope',
        }),
      }),
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    ({ scope }, ctx) => {
      // Legacy calls never get here (the server answers them before the SDK); modern calls
      // without the tasks extension were answered -32021 before dispatch.
      if (era === 'legacy') return text('start_reindex must be called as a task', true);
      const envelope: Record<string, unknown> = ctx.mcpReq.envelope ?? {};
      const capabilities = envelope[CLIENT_CAPABILITIES_KEY];
      if (
        !isRecord(capabilities) ||
        !isRecord(capabilities.extensions) ||
        !(TASKS_EXTENSION in capabilities.extensions)
      ) {
        return text('start_reindex needs the io.modelcontextprotocol/tasks extension', true);
      }
      // The SDK adds `content: []` to this flat CreateTaskResult (it has no `task` key).
      return modernCreateResult(tasks.create({ era: 'modern', scope })) as unknown as CallToolResult;
    },
  );
  if (era === 'legacy') reindex.execution = { taskSupport: 'required' };
  mcp.registerTool(
    'count_stock',
    {
      title: 'Count stock',
      description:
        'Counts the stock of one SKU warehouse by warehouse, reporting progress after each (notifications/progress).',
      inputSchema: z.object({
        sku: z.string().min(1).max(64).describe('The SKU, e.g. widget-a'),
        delayMs: z.number().int().min(0).max(1_000).default(100).describe('The pause per warehouse'),
      }),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ sku, delayMs }, ctx) => {
      const stock = inventory.stockOf(sku);
      const warehouses = Object.keys(stock.warehouses);
      const token = ctx.mcpReq._meta?.progressToken;
      for (const [i, warehouse] of warehouses.entries()) {
        await sleep(delayMs, undefined, { signal: ctx.mcpReq.signal });
        if (token !== undefined) {
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: {
              progressToken: token,
              progress: i + 1,
              total: warehouses.length,
              message: `counted ${warehouse}`,
            },
          });
        }
      }
      return { ...text(JSON.stringify(stock)), structuredContent: stock };
    },
  );

  mcp.registerPrompt(
    'restock_plan',
    {
      title: 'Restock plan',
      description: 'Asks for a restock plan for one warehouse, with its low-stock SKUs and current levels.',
      argsSchema: z.object({
        warehouseId: completable(z.string().describe('The warehouse, e.g. berlin'), (value) =>
          inventory.warehouses().filter((id) => id.startsWith(value)),
        ),
      }),
    },
    ({ warehouseId }) => {
      const low = isWarehouseId(warehouseId) ? inventory.lowStock(warehouseId) : undefined;
      const document = inventory.warehouseDocument(warehouseId);
      if (low === undefined || document === undefined) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `Unknown warehouse ${warehouseId.slice(0, 80)}`,
        );
      }
      const lowText = low.length === 0 ? 'none' : low.map((s) => `${s.sku} (${s.quantity})`).join(', ');
      return {
        description: `Restock plan for ${warehouseId}`,
        messages: [
          {
            role: 'user',
            content: {
              type: 'text',
              text: `Plan a restock for the ${warehouseId} warehouse. Low stock: ${lowText}.`,
            },
          },
          {
            role: 'user',
            content: {
              type: 'resource',
              resource: {
                uri: `inventory://warehouse/${warehouseId}`,
                mimeType: 'application/json',
                text: document,
              },
            },
          },
        ],
      };
    },
  );
  return resources;
}

/** A per-request 2026-07-28 instance (tasks via the extension methods). */
export function buildModernServer(deps: SurfaceDeps): McpServer {
  const mcp = new McpServer(DEMO_SERVER_INFO, {
    capabilities: {
      tools: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: false },
      completions: {},
      extensions: { [TASKS_EXTENSION]: {} },
    },
    instructions: INSTRUCTIONS,
    cacheHints: deps.cacheHints,
  });
  registerInventory(mcp, deps, 'modern');
  registerModernTaskMethods(mcp, deps.tasks);
  return mcp;
}

/** A per-session 2025-11-25 instance (subscriptions and the draft task methods). */
export function buildLegacyServer(
  deps: SurfaceDeps,
  session: LegacySurfaceSession,
  sessionId: () => string | undefined,
): McpServer {
  const mcp = new McpServer(DEMO_SERVER_INFO, {
    capabilities: {
      tools: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: false },
      completions: {},
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    },
    instructions: INSTRUCTIONS,
  });
  for (const [uri, registered] of registerInventory(mcp, deps, 'legacy'))
    session.resources.set(uri, registered);
  mcp.server.setRequestHandler('resources/subscribe', (request) => {
    if (session.subscriptions.size >= 1_000) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Too many subscriptions');
    }
    session.subscriptions.add(request.params.uri);
    return {};
  });
  mcp.server.setRequestHandler('resources/unsubscribe', (request) => {
    session.subscriptions.delete(request.params.uri);
    return {};
  });

  registerLegacyTaskMethods(mcp, deps.tasks, sessionId);
  return mcp;
}
