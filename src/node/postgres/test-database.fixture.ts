/**
 * The PostgreSQL the tests use: `AX_MCP_TEST_POSTGRES_URL`, said plainly when it is unset;
 * a fresh schema per store, every one dropped when the file's tests end. Not built into the
 * package (`*.fixture.ts`).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll } from 'vitest';

export function testDatabase(file: string, what: string, maxConnections = 2) {
  const url = process.env.AX_MCP_TEST_POSTGRES_URL;
  if (!url) {
    console.warn(
      `[${file}] SKIPPED: AX_MCP_TEST_POSTGRES_URL is not set, so ${what} did not run. ` +
        'Set it to a database you can write to, e.g. postgres://postgres@127.0.0.1:5432/test',
    );
  }
  const schemas = new Set<string>();
  let pool: pg.Pool | null = null;
  const admin = () => (pool ??= new pg.Pool({ connectionString: url, max: maxConnections }));
  const freshSchema = () => {
    const schema = `ax_test_${randomBytes(6).toString('hex')}`;
    schemas.add(schema);
    return schema;
  };
  const dropSchema = async (schema: string) => {
    await admin().query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    schemas.delete(schema);
  };
  afterAll(async () => {
    if (!url) return;
    for (const schema of [...schemas]) await dropSchema(schema);
    await pool?.end();
  });
  return { url, admin, freshSchema, dropSchema };
}
