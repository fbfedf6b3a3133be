import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AxMCPFileEraStore } from './file-era-store.js';

describe('AxMCPFileEraStore', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a failed write fails its own set only: once the file can be written again, saves go on', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ax-era-'));
    const blocker = join(dir, 'blocked');
    await writeFile(blocker, 'a file where the directory should be');
    const store = new AxMCPFileEraStore(join(blocker, 'eras.json'));
    const verdict = { era: 'modern', protocolVersion: '2026-07-28', decidedAt: 1 } as const;
    await expect(store.set('https://a.example/mcp', verdict)).rejects.toThrow();
    await rm(blocker);
    // Before, the first failure stayed in the write chain: every later save rejected with it.
    await store.set('https://a.example/mcp', verdict);
    expect(JSON.parse(await readFile(join(blocker, 'eras.json'), 'utf8'))).toHaveProperty([
      'https://a.example/mcp',
    ]);
  });

  it('keeps verdicts per endpoint URL across instances', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ax-era-'));
    const path = join(dir, 'nested', 'eras.json');
    const first = new AxMCPFileEraStore(path);
    await first.set('https://a.example/mcp', { era: 'modern', protocolVersion: '2026-07-28', decidedAt: 1 });
    await first.set('https://a.example/other', {
      era: 'legacy',
      protocolVersion: '2025-11-25',
      decidedAt: 2,
    });
    const second = new AxMCPFileEraStore(path);
    expect(await second.get('https://a.example/mcp')).toMatchObject({ era: 'modern' });
    expect(await second.get('https://a.example/other')).toMatchObject({ era: 'legacy' });
    await second.delete('https://a.example/mcp');
    expect(await new AxMCPFileEraStore(path).get('https://a.example/mcp')).toBeUndefined();
    expect(JSON.parse(await readFile(path, 'utf8'))).toHaveProperty(['https://a.example/other']);
  });

  it('treats a damaged file as empty and ignores malformed entries', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ax-era-'));
    const path = join(dir, 'eras.json');
    await writeFile(path, '{"x": {"era": "sideways"}, "y": ');
    const store = new AxMCPFileEraStore(path);
    expect(await store.get('x')).toBeUndefined();
    await writeFile(
      path,
      JSON.stringify({ x: { era: 'sideways' }, y: { era: 'legacy', protocolVersion: 'v', decidedAt: 0 } }),
    );
    const fresh = new AxMCPFileEraStore(path);
    expect(await fresh.get('x')).toBeUndefined();
    expect(await fresh.get('y')).toMatchObject({ era: 'legacy' });
  });
});
