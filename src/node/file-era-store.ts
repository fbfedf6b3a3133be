import type { AxMCPEraStore, AxMCPEraVerdict } from '../client/era-store.js';
import { string } from '../options/check.js';
import { assertMCPOptions } from '../protocol/errors.js';
import { JSONFile } from './json-file.js';

/** The shape of the store's one argument: the path of its file. */
const PATH = string({ nonEmpty: true });

/**
 * Era verdicts kept in one JSON file, so a restarted process sends no probe to an
 * endpoint it already classified. Writes are atomic (temporary file, then rename) and
 * serialized; a missing or unreadable file counts as empty.
 */
export class AxMCPFileEraStore implements AxMCPEraStore {
  readonly #file: JSONFile;
  #entries: Map<string, AxMCPEraVerdict> | undefined;

  /** Checks that `path` is a non-empty string (`invalid_options`); reads nothing yet. */
  constructor(path: string) {
    assertMCPOptions(PATH, path, 'AxMCPFileEraStore path');
    this.#file = new JSONFile(path);
  }

  async get(endpointKey: string): Promise<AxMCPEraVerdict | undefined> {
    const verdict = (await this.#load()).get(endpointKey);
    return verdict ? structuredClone(verdict) : undefined;
  }

  async set(endpointKey: string, verdict: AxMCPEraVerdict): Promise<void> {
    (await this.#load()).set(endpointKey, structuredClone(verdict));
    await this.#save();
  }

  async delete(endpointKey: string): Promise<void> {
    if ((await this.#load()).delete(endpointKey)) await this.#save();
  }

  async #load(): Promise<Map<string, AxMCPEraVerdict>> {
    if (this.#entries) return this.#entries;
    const entries = new Map<string, AxMCPEraVerdict>();
    // No file yet, or a damaged one: start empty; the next save replaces it.
    const parsed = await this.#file.read();
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
        if (isVerdict(value)) entries.set(key, value);
      }
    }
    this.#entries ??= entries;
    return this.#entries;
  }

  #save(): Promise<void> {
    return this.#file.write(JSON.stringify(Object.fromEntries(this.#entries ?? []), null, 2));
  }
}

function isVerdict(value: unknown): value is AxMCPEraVerdict {
  if (!value || typeof value !== 'object') return false;
  const verdict = value as Record<string, unknown>;
  return (
    (verdict.era === 'legacy' || verdict.era === 'modern') &&
    typeof verdict.protocolVersion === 'string' &&
    typeof verdict.decidedAt === 'number'
  );
}
