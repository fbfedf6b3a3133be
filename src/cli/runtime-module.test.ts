/**
 * A runtime module's exports, as `ax-mcp worker --module`, `watch --routes` and `studio --routes`
 * read them: a near miss of a key the module leaves out (`source` for `sources`) is refused,
 * naming the key, rather than left unread; the module's own helpers are its business.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRuntimeModule, RuntimeModuleError } from './runtime-module.js';

const dir = mkdtempSync(join(tmpdir(), 'ax-mcp-runtime-module-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function moduleFile(source: string): string {
  const file = join(dir, `m${n++}.mjs`);
  writeFileSync(file, source);
  return file;
}

describe('loadRuntimeModule', () => {
  it.each([
    ['export const route = [];', 'route', 'routes'],
    ['export const routes = []; export const source = [];', 'source', 'sources'],
    ['export const routes = []; export const target = [];', 'target', 'targets'],
    ['export const routes = []; export const option = {};', 'option', 'options'],
    ['export const routes = []; export const Sources = [];', 'Sources', 'sources'],
    ['export default () => ({ routes: [], soures: [] });', 'soures', 'sources'],
  ])('refuses %s, naming %s as a near miss of %s', async (source, name, meant) => {
    const file = moduleFile(source);
    const loading = loadRuntimeModule(file, {});
    await expect(loading).rejects.toBeInstanceOf(RuntimeModuleError);
    await expect(loading).rejects.toThrow(
      `${file} exports ${name}, which is not read: did you mean ${meant}?`,
    );
  });

  it("takes the module's own helpers, and a near miss of a key it does export", async () => {
    const file = moduleFile(
      'export const routes = []; export const sources = []; export const source = "app://x";' +
        ' export const closeAll = () => {}; export const targetsOf = () => []; export const restock = {};',
    );
    const loaded = await loadRuntimeModule(file, {});
    expect(loaded.routes).toEqual([]);
    expect(loaded.sources).toEqual([]);
  });
});
