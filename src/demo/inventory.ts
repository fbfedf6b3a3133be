/**
 * The demo's domain: stock levels per warehouse and the catalog of concrete resources.
 * Era-neutral and I/O-free; the MCP surfaces in `mcp-surface.ts` read and change it.
 */
import { AxMCPError } from '../protocol/errors.js';

/** URI of the all-warehouses stock document. */
export const CURRENT_URI = 'inventory://warehouse/current';
/** URI template of one warehouse's stock document. */
export const WAREHOUSE_TEMPLATE = 'inventory://warehouse/{warehouseId}';
/** Stock below this is "low" (the `restock_plan` prompt lists it). */
export const LOW_STOCK_THRESHOLD = 10;

const WAREHOUSE_ID = /^[a-z][a-z0-9-]{0,31}$/;
const SKU = /^[a-z0-9][a-z0-9-]{0,63}$/;
const MAX_RESOURCES = 1_000;
const MAX_SKUS_PER_WAREHOUSE = 1_000;

/** A concrete resource the demo lists in `resources/list`. */
export interface AxMCPDemoResource {
  readonly uri: string;
  readonly name: string;
  readonly mimeType: string;
  readonly description?: string;
}

/** The URI of a warehouse's stock document. */
export function warehouseUri(warehouseId: string): string {
  return `inventory://warehouse/${warehouseId}`;
}

/** True for a well-formed warehouse id (`berlin`, `porto-2`). */
export function isWarehouseId(value: string): boolean {
  return WAREHOUSE_ID.test(value) && value !== 'current';
}

/** True for a well-formed SKU (`widget-a`). */
export function isSku(value: string): boolean {
  return SKU.test(value);
}

function invalid(message: string): AxMCPError {
  return new AxMCPError('invalid_argument', message);
}

/** What `adjust` changed. */
export interface StockAdjustment {
  readonly warehouseId: string;
  readonly sku: string;
  readonly before: number;
  readonly after: number;
  /** Resource URIs whose content changed. */
  readonly affectedUris: readonly string[];
}

/** Stock levels and the resource catalog. */
export class Inventory {
  readonly #stock = new Map<string, Map<string, number>>();
  readonly #catalog = new Map<string, AxMCPDemoResource>();
  #updatedAt = new Date().toISOString();

  constructor() {
    this.#stock.set(
      'berlin',
      new Map([
        ['widget-a', 120],
        ['widget-b', 8],
        ['gadget-x', 40],
      ]),
    );
    this.#stock.set(
      'lisbon',
      new Map([
        ['widget-a', 35],
        ['widget-b', 60],
        ['gadget-x', 3],
      ]),
    );
    this.#catalog.set(CURRENT_URI, {
      uri: CURRENT_URI,
      name: 'current-stock',
      mimeType: 'application/json',
      description: 'Stock levels of every warehouse, with totals per SKU.',
    });
    for (const id of this.#stock.keys()) {
      this.#catalog.set(warehouseUri(id), {
        uri: warehouseUri(id),
        name: `warehouse-${id}`,
        mimeType: 'application/json',
        description: `Stock levels of the ${id} warehouse.`,
      });
    }
  }

  /** Warehouse ids, in insertion order. */
  warehouses(): string[] {
    return [...this.#stock.keys()];
  }

  /** The quantity of `sku` per warehouse and in total. */
  stockOf(sku: string): { sku: string; warehouses: Record<string, number>; total: number } {
    if (!isSku(sku)) throw invalid(`Invalid SKU ${JSON.stringify(sku.slice(0, 80))}`);
    const warehouses: Array<[string, number]> = [];
    let total = 0;
    for (const [id, levels] of this.#stock) {
      const quantity = levels.get(sku) ?? 0;
      warehouses.push([id, quantity]);
      total += quantity;
    }
    return { sku, warehouses: Object.fromEntries(warehouses), total };
  }

  /** Changes the stock of `sku` in `warehouseId` by `delta` (never below zero). */
  adjust(warehouseId: string, sku: string, delta: number): StockAdjustment {
    const levels = this.#stock.get(warehouseId);
    if (levels === undefined) throw invalid(`Unknown warehouse ${JSON.stringify(warehouseId.slice(0, 80))}`);
    if (!isSku(sku)) throw invalid(`Invalid SKU ${JSON.stringify(sku.slice(0, 80))}`);
    if (!Number.isSafeInteger(delta) || delta === 0) throw invalid('delta must be a non-zero integer');
    const before = levels.get(sku) ?? 0;
    const after = before + delta;
    if (after < 0) throw invalid(`Insufficient stock: ${warehouseId} holds ${before} of ${sku}`);
    if (!levels.has(sku) && levels.size >= MAX_SKUS_PER_WAREHOUSE) throw invalid('Too many SKUs');
    levels.set(sku, after);
    this.#updatedAt = new Date().toISOString();
    return { warehouseId, sku, before, after, affectedUris: [warehouseUri(warehouseId), CURRENT_URI] };
  }

  /** SKUs of `warehouseId` below {@link LOW_STOCK_THRESHOLD}, or `undefined` for an unknown warehouse. */
  lowStock(warehouseId: string): Array<{ sku: string; quantity: number }> | undefined {
    const levels = this.#stock.get(warehouseId);
    if (levels === undefined) return undefined;
    return [...levels]
      .filter(([, quantity]) => quantity < LOW_STOCK_THRESHOLD)
      .map(([sku, quantity]) => ({ sku, quantity }));
  }

  /** The concrete resources, in catalog order. */
  resources(): AxMCPDemoResource[] {
    return [...this.#catalog.values()];
  }

  /** The catalog entry for `uri`. */
  resource(uri: string): AxMCPDemoResource | undefined {
    return this.#catalog.get(uri);
  }

  /** Adds a concrete resource; throws for an invalid, duplicate or excess entry. */
  addResource(input: {
    uri: string;
    name: string;
    mimeType?: string;
    description?: string;
  }): AxMCPDemoResource {
    let canonical: string;
    try {
      canonical = new URL(input.uri).toString();
    } catch {
      throw invalid(`Invalid resource URI ${JSON.stringify(input.uri.slice(0, 200))}`);
    }
    if (canonical !== input.uri || input.uri.length > 2048) {
      throw invalid(`Resource URI must be canonical and at most 2048 characters: ${canonical.slice(0, 200)}`);
    }
    const name = input.name.trim();
    if (name === '' || name.length > 128) throw invalid('Resource name must have 1-128 characters');
    const mimeType = input.mimeType ?? 'application/json';
    if (!/^[\w.+-]+\/[\w.+-]+$/.test(mimeType)) throw invalid(`Invalid MIME type ${mimeType.slice(0, 80)}`);
    if (this.#catalog.has(input.uri)) throw invalid(`Resource ${input.uri} already exists`);
    if (this.#catalog.size >= MAX_RESOURCES) throw invalid('Too many resources');
    const resource: AxMCPDemoResource = {
      uri: input.uri,
      name,
      mimeType,
      ...(input.description === undefined ? {} : { description: input.description.slice(0, 1_000) }),
    };
    this.#catalog.set(resource.uri, resource);
    return resource;
  }

  /** Removes a concrete resource; false when it was not in the catalog. */
  removeResource(uri: string): boolean {
    return this.#catalog.delete(uri);
  }

  /** The stock document of one warehouse, or `undefined` when unknown. */
  warehouseDocument(warehouseId: string): string | undefined {
    const levels = this.#stock.get(warehouseId);
    if (levels === undefined) return undefined;
    return JSON.stringify({ warehouseId, updatedAt: this.#updatedAt, stock: Object.fromEntries(levels) });
  }

  /** The all-warehouses document. */
  currentDocument(): string {
    const totals = new Map<string, number>();
    const warehouses: Array<[string, Record<string, number>]> = [];
    for (const [id, levels] of this.#stock) {
      warehouses.push([id, Object.fromEntries(levels)]);
      for (const [sku, quantity] of levels) totals.set(sku, (totals.get(sku) ?? 0) + quantity);
    }
    return JSON.stringify({
      updatedAt: this.#updatedAt,
      warehouses: Object.fromEntries(warehouses),
      totals: Object.fromEntries(totals),
    });
  }

  /**
   * The text of a concrete catalog resource: stock documents for warehouse URIs (an empty one
   * for a warehouse added only to the catalog), a small description document otherwise.
   */
  catalogDocument(uri: string): string | undefined {
    const entry = this.#catalog.get(uri);
    if (entry === undefined) return undefined;
    if (uri === CURRENT_URI) return this.currentDocument();
    const prefix = 'inventory://warehouse/';
    if (uri.startsWith(prefix)) {
      const id = uri.slice(prefix.length);
      return this.warehouseDocument(id) ?? JSON.stringify({ warehouseId: id, updatedAt: null, stock: {} });
    }
    return JSON.stringify({ uri, name: entry.name, note: 'Added through the demo control endpoint.' });
  }
}
