import { type AxMCPOAuthRecord, type AxMCPTokenStore, parseOAuthRecord } from '../auth/oauth/token-store.js';
import { string } from '../options/check.js';
import { assertMCPOptions } from '../protocol/errors.js';
import { JSONFile } from './json-file.js';

/** The shape of the store's one argument: the path of its file. */
const PATH = string({ nonEmpty: true });

/**
 * OAuth tokens and client registrations kept in one JSON file (mode 0600), one record per
 * endpoint, so a CLI run after another needs no new authorization. Writes are atomic
 * (temporary file, then rename) and serialized; a missing or unreadable file counts as
 * empty. The file holds secrets: keep it in the user's private configuration directory.
 *
 * @example
 * ```ts
 * import { AxMCPFileTokenStore } from 'ax-mcp/node';
 * const tokenStore = new AxMCPFileTokenStore(`${os.homedir()}/.config/my-cli/mcp-tokens.json`);
 * new AxMCPStreamableHTTPTransport(url, { oauth: { tokenStore, redirectUri, onAuthCode } });
 * ```
 */
export class AxMCPFileTokenStore implements AxMCPTokenStore {
  readonly #file: JSONFile;
  #entries: Map<string, AxMCPOAuthRecord> | undefined;
  #loading: Promise<Map<string, AxMCPOAuthRecord>> | undefined;

  /** Checks that `path` is a non-empty string (`invalid_options`); reads nothing yet. */
  constructor(path: string) {
    assertMCPOptions(PATH, path, 'AxMCPFileTokenStore path');
    this.#file = new JSONFile(path);
  }

  async get(endpointKey: string): Promise<AxMCPOAuthRecord | undefined> {
    const record = (await this.#load()).get(endpointKey);
    return record ? structuredClone(record) : undefined;
  }

  async set(endpointKey: string, record: AxMCPOAuthRecord): Promise<void> {
    (await this.#load()).set(endpointKey, structuredClone(record));
    await this.#save();
  }

  async delete(endpointKey: string): Promise<void> {
    if ((await this.#load()).delete(endpointKey)) await this.#save();
  }

  /** Redacted: the file holds secrets; only its path is shown. */
  toJSON(): Record<string, unknown> {
    return { kind: 'file-token-store', path: this.#file.path };
  }

  #load(): Promise<Map<string, AxMCPOAuthRecord>> {
    if (this.#entries) return Promise.resolve(this.#entries);
    this.#loading ??= (async () => {
      const entries = new Map<string, AxMCPOAuthRecord>();
      // No file yet, or a damaged one: start empty; the next save replaces it.
      const parsed = await this.#file.read();
      // Stored as [key, record] pairs: endpoint URLs never become object keys.
      if (parsed && typeof parsed === 'object' && Array.isArray((parsed as { entries?: unknown }).entries)) {
        for (const pair of (parsed as { entries: unknown[] }).entries) {
          if (!Array.isArray(pair) || typeof pair[0] !== 'string') continue;
          const record = parseOAuthRecord(pair[1]);
          if (record) entries.set(pair[0], record);
        }
      }
      this.#entries ??= entries;
      return this.#entries;
    })();
    return this.#loading;
  }

  #save(): Promise<void> {
    return this.#file.write(JSON.stringify({ version: 1, entries: [...(this.#entries ?? [])] }, null, 2));
  }
}
