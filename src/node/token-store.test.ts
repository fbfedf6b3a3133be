import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AxMCPOAuthRecord } from '../auth/oauth/token-store.js';
import { AxMCPFileTokenStore } from './token-store.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function file(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ax-mcp-tokens-'));
  dirs.push(dir);
  return join(dir, 'nested', 'tokens.json');
}

function record(token: string, resource: string): AxMCPOAuthRecord {
  return {
    tokens: {
      accessToken: token,
      tokenType: 'Bearer',
      expiresAt: 1_900_000_000_000,
      refreshToken: `${token}-refresh`,
      scopes: ['read'],
      requestedScopes: ['read'],
      issuer: 'https://as.example.com',
      resource,
    },
    clients: [{ issuer: 'https://as.example.com', clientId: 'client-1', source: 'dcr' }],
  };
}

describe('AxMCPFileTokenStore', () => {
  it('keeps one record per endpoint, across store instances, in a 0600 file', async () => {
    const path = await file();
    const store = new AxMCPFileTokenStore(path);
    await store.set('https://a.example.com/mcp', record('token-a', 'https://a.example.com/mcp'));
    await store.set('https://a.example.com/other', record('token-b', 'https://a.example.com/other'));
    const reopened = new AxMCPFileTokenStore(path);
    expect((await reopened.get('https://a.example.com/mcp'))?.tokens?.accessToken).toBe('token-a');
    expect((await reopened.get('https://a.example.com/other'))?.tokens?.accessToken).toBe('token-b');
    expect(await reopened.get('https://b.example.com/mcp')).toBeUndefined();
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    await reopened.delete('https://a.example.com/mcp');
    expect(await new AxMCPFileTokenStore(path).get('https://a.example.com/mcp')).toBeUndefined();
  });

  it('returns copies, and shows no secret when serialized', async () => {
    const store = new AxMCPFileTokenStore(await file());
    await store.set('k', record('secret-token', 'https://a.example.com/mcp'));
    const copy = await store.get('k');
    copy!.tokens!.accessToken = 'changed';
    expect((await store.get('k'))?.tokens?.accessToken).toBe('secret-token');
    expect(JSON.stringify(store)).not.toContain('secret-token');
  });

  it('treats a damaged file as empty and drops malformed records', async () => {
    const path = await file();
    const store = new AxMCPFileTokenStore(path);
    await store.set('seed', record('t', 'https://a.example.com/mcp'));
    await writeFile(path, '{ not json');
    expect(await new AxMCPFileTokenStore(path).get('seed')).toBeUndefined();
    await writeFile(
      path,
      JSON.stringify({
        version: 1,
        entries: [['good', record('t2', 'r')], ['bad', { tokens: { accessToken: 1 } }], 7],
      }),
    );
    const reread = new AxMCPFileTokenStore(path);
    expect((await reread.get('good'))?.tokens?.accessToken).toBe('t2');
    expect((await reread.get('bad'))?.tokens).toBeUndefined();
    expect(JSON.parse(await readFile(path, 'utf8')).version).toBe(1);
  });
});
