import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { AxMCPEraStore, AxMCPEraVerdict } from '../client/era-store.js';
import { string } from '../options/check.js';
import { assertMCPOptions } from '../protocol/errors.js';

/** The shape of the store's one argument: the path of its file. */
const PATH = string({ nonEmpty: true });

/**
 * Era verdicts kept in one JSON file, so a restarted process sends no probe to an
 * endpoint it already classified. Writes are atomic (temporary file, then rename) and
 * serialized; a missing or unreadable file counts as empty.
 */
export class AxMCPFileEraStore implements AxMCPEraStore {
  readonly #path: string;
  #entries: Map<string, AxMCPEraVerdict> | undefined;
  #writing: Promise<void> = Promise.resolve();

  /** Checks that `path` is a non-empty string (`invalid_options`); reads nothing yet. */
  constructor(path: string) {
    assertMCPOptions(PATH, path, 'AxMCPFileEraStore path');
    this.#path = path;
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
    try {
      const parsed: unknown = JSON.parse(await readFile(this.#path, 'utf8'));
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
        for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
          if (isVerdict(value)) entries.set(key, value);
        }
      }
    } catch {
      // No file yet, or a damaged one: start empty; the next save replaces it.
    }
    this.#entries ??= entries;
    return this.#entries;
  }

  #save(): Promise<void> {
    const snapshot = JSON.stringify(Object.fromEntries(this.#entries ?? []), null, 2);
    this.#writing = this.#writing.then(async () => {
      await mkdir(dirname(this.#path), { recursive: true });
      const temporary = `${this.#path}.${process.pid}.tmp`;
      await writeFile(temporary, snapshot, { mode: 0o600 });
      await rename(temporary, this.#path);
    });
    return this.#writing;
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
