/**
 * The public surface is a deliberate list. Every entry point names what it exports (no
 * `export *`), and this test keeps the list: a name added or removed fails here until
 * `test/exports.snapshot.json` is updated in the same change — the visible decision.
 * Regenerate with `AX_MCP_UPDATE_EXPORTS=1 npx vitest run test/exports.test.ts`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ENTRIES = {
  'ax-mcp': 'index.ts',
  'ax-mcp/node': 'node.ts',
  'ax-mcp/testing': 'testing.ts',
  'ax-mcp/demo': 'demo.ts',
};
const SNAPSHOT = resolve(import.meta.dirname, 'exports.snapshot.json');

/** The names an entry file exports, `type ` before type-only ones, sorted. */
function declaredExports(file: string): string[] {
  const text = readFileSync(resolve(import.meta.dirname, '../src', file), 'utf8');
  const names: string[] = [];
  for (const match of text.matchAll(/export (type )?\{([^}]*)\}/g)) {
    for (const raw of (match[2] ?? '').split(',')) {
      const part = raw.trim();
      if (part === '') continue;
      const isType = match[1] !== undefined || part.startsWith('type ');
      const name =
        part
          .replace(/^type /, '')
          .split(/\s+as\s+/)
          .at(-1)
          ?.trim() ?? '';
      names.push(`${isType ? 'type ' : ''}${name}`);
    }
  }
  return names.sort((a, b) => a.replace(/^type /, '').localeCompare(b.replace(/^type /, '')));
}

describe('the public surface', () => {
  it('no entry point re-exports a whole module', () => {
    for (const file of Object.values(ENTRIES)) {
      const text = readFileSync(resolve(import.meta.dirname, '../src', file), 'utf8');
      expect(text, file).not.toMatch(/export \*/);
    }
  });

  it('every entry point exports exactly the recorded names', async () => {
    const current: Record<string, string[]> = {};
    for (const [entry, file] of Object.entries(ENTRIES)) current[entry] = declaredExports(file);
    if (process.env.AX_MCP_UPDATE_EXPORTS === '1')
      writeFileSync(SNAPSHOT, `${JSON.stringify(current, null, 2)}\n`);
    const recorded = JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as Record<string, string[]>;
    expect(current).toEqual(recorded);
  });

  it('the runtime values of each entry are the recorded value names', async () => {
    const recorded = JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as Record<string, string[]>;
    for (const [entry, file] of Object.entries(ENTRIES)) {
      const module = (await import(`../src/${file.replace(/\.ts$/, '.js')}`)) as Record<string, unknown>;
      const values = (recorded[entry] ?? []).filter((name) => !name.startsWith('type ')).sort();
      expect(Object.keys(module).sort(), entry).toEqual(values);
    }
  });
});
