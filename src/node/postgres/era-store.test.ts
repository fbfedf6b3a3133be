import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { AxMCPEraStore, AxMCPEraVerdict } from '../../client/era-store.js';
import { AxMCPPostgresEraStore } from './era-store.js';
import { testDatabase } from './test-database.fixture.js';

const { url, admin, freshSchema } = testDatabase('postgres/era-store.test', 'the PostgreSQL era store tests');

const modern: AxMCPEraVerdict = {
  era: 'modern',
  protocolVersion: '2026-07-28',
  decidedAt: 1_700_000_000_000,
  discover: { serverInfo: { name: 'demo', version: '1' }, capabilities: { tools: {} } },
};
const legacy: AxMCPEraVerdict = {
  era: 'legacy',
  protocolVersion: '2025-11-25',
  decidedAt: 1_700_000_000_001,
};

describe.skipIf(!url)('AxMCPPostgresEraStore', () => {
  it('shares verdicts between processes: what one sets, another reads, replaces and forgets', async () => {
    const schema = freshSchema();
    const one: AxMCPEraStore = await AxMCPPostgresEraStore.open({
      connectionString: url,
      schema,
      poolSize: 2,
    });
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    const two = new AxMCPPostgresEraStore({ pool, schema });
    const endpoint = 'https://mcp.example.com/mcp';
    expect(await two.get(endpoint)).toBeUndefined();
    await one.set(endpoint, modern);
    expect(await two.get(endpoint)).toEqual(modern);
    // Same origin, another path: another endpoint.
    expect(await two.get('https://mcp.example.com/other')).toBeUndefined();
    await two.set(endpoint, legacy);
    expect(await one.get(endpoint)).toEqual(legacy);
    await one.delete?.(endpoint);
    expect(await two.get(endpoint)).toBeUndefined();
    await two.set('stdio:odd\u0000name', modern);
    expect(await two.keys()).toEqual(['stdio:odd\u0000name']);
    expect(await one.get('stdio:odd\u0000name')).toEqual(modern);
    await (one as AxMCPPostgresEraStore).close();
    await two.close();
    // A pool you pass stays yours.
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await pool.end();
  });

  it('treats a damaged row as unknown, refuses non-verdicts, and says when it is closed', async () => {
    const schema = freshSchema();
    const store = await AxMCPPostgresEraStore.open({ connectionString: url, schema, poolSize: 2 });
    await admin().query(
      `INSERT INTO "${schema}".ax_era_verdicts (endpoint_key, verdict) VALUES ('a', '{oops'), ('b', '{"era":"future"}')`,
    );
    expect(await store.get('a')).toBeUndefined();
    expect(await store.get('b')).toBeUndefined();
    await expect(store.set('c', { era: 'modern' } as unknown as AxMCPEraVerdict)).rejects.toMatchObject({
      code: 'invalid_argument',
    });
    await store.close();
    await expect(store.get('a')).rejects.toMatchObject({ code: 'closed' });
    expect(
      () => new AxMCPPostgresEraStore({ connectionString: url, schema: 'Robert"); DROP TABLE x;--' }),
    ).toThrow(expect.objectContaining({ code: 'invalid_options', path: 'schema' }));
  });

  it('reports an unreachable database as a typed error without the password', async () => {
    const store = new AxMCPPostgresEraStore({
      connectionString: 'postgres://someone:s3cret-pass@127.0.0.1:1/none',
      schema: freshSchema(),
    });
    const error = await store.get('x').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'transport_error' });
    expect(String((error as Error).message)).not.toContain('s3cret-pass');
    await store.close();
  });
});
