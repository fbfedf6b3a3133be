import { number, object } from '../options/check.js';
import { assertMCPOptions } from '../protocol/errors.js';
import type { AxMCPEra } from '../protocol/versions.js';

/** What a client learned about an endpoint's era, worth remembering across clients. */
export interface AxMCPEraVerdict {
  era: AxMCPEra;
  /** The protocol version agreed on. */
  protocolVersion: string;
  /** When the verdict was reached (ms since the epoch). */
  decidedAt: number;
  /** The `server/discover` result of a modern endpoint, reused while fresh. */
  discover?: Record<string, unknown>;
}

/**
 * Where era verdicts are kept, keyed by the full endpoint URL (two servers may share
 * an origin). Memory by default; `ax-mcp/node` has a file-backed store.
 */
export interface AxMCPEraStore {
  get(endpointKey: string): AxMCPEraVerdict | undefined | Promise<AxMCPEraVerdict | undefined>;
  set(endpointKey: string, verdict: AxMCPEraVerdict): void | Promise<void>;
  /** Forgets a verdict that turned out wrong (the server changed era). */
  delete?(endpointKey: string): void | Promise<void>;
}

/** Options of {@link AxMCPMemoryEraStore}. */
export interface AxMCPMemoryEraStoreOptions {
  /** The most endpoints kept; the least recently written go first (default 1000). */
  maxEntries?: number;
}

/** The shape of {@link AxMCPMemoryEraStoreOptions}. */
const MEMORY_ERA_STORE_OPTIONS = object(
  { maxEntries: number({ integer: true, min: 1 }) },
  { aliases: { max: 'maxEntries', size: 'maxEntries', limit: 'maxEntries' } },
);

/** An in-memory era store, bounded to the most recent `maxEntries` endpoints. */
export class AxMCPMemoryEraStore implements AxMCPEraStore {
  readonly #entries = new Map<string, AxMCPEraVerdict>();
  readonly #maxEntries: number;

  constructor(options: AxMCPMemoryEraStoreOptions = {}) {
    assertMCPOptions(MEMORY_ERA_STORE_OPTIONS, options, 'AxMCPMemoryEraStore options');
    this.#maxEntries = options.maxEntries ?? 1000;
  }

  get(endpointKey: string): AxMCPEraVerdict | undefined {
    const verdict = this.#entries.get(endpointKey);
    return verdict ? structuredClone(verdict) : undefined;
  }

  set(endpointKey: string, verdict: AxMCPEraVerdict): void {
    this.#entries.delete(endpointKey);
    this.#entries.set(endpointKey, structuredClone(verdict));
    if (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  delete(endpointKey: string): void {
    this.#entries.delete(endpointKey);
  }
}

/** The process-wide default, so a second client for a known endpoint sends no probe. */
export const defaultEraStore: AxMCPEraStore = new AxMCPMemoryEraStore();
