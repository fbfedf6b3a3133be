// @ts-check
// requires: postgres
// What a fleet shares besides events: era verdicts (each endpoint is classified once, for every
// process) and credentials, sealed with AES-GCM under a key you keep outside the database.
// Needs PostgreSQL: DATABASE_URL=postgres://… (a database it may write to; without it, exit 78),
// and the demo server: npx ax-mcp demo --serve (AX_MCP_ENDPOINT overrides the URL).
import { AxMCPClient, AxMCPStreamableHTTPTransport } from 'ax-mcp';
import { AxMCPPostgresEraStore, AxMCPPostgresTokenStore } from 'ax-mcp/node';
import pg from 'pg';

const url = process.env.DATABASE_URL ?? process.env.AX_MCP_TEST_POSTGRES_URL;
if (!url) {
  console.log('skipped: set DATABASE_URL to a PostgreSQL database this example may write to');
  process.exit(78);
}
const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const schema = `ax_example_${process.pid}`; // the example's own schema, dropped at the end
const pool = new pg.Pool({ connectionString: url, max: 4 });

// #region eras
const eraStore = await AxMCPPostgresEraStore.open({ pool, schema });
const client = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  { namespace: 'inventory', eraStore },
);
await client.callTool('get_stock', { sku: 'widget-a' }); // classifies the endpoint, stores the verdict
await client.close();
for (const key of await eraStore.keys()) console.log(key, '→', (await eraStore.get(key))?.era);
// #endregion eras

// #region tokens
const keyOf = (/** @type {string} */ id) => ({ id, key: crypto.getRandomValues(new Uint8Array(32)) });
const oldKey = keyOf('2025-07'); // in practice: 32 bytes from your secret store
const newKey = keyOf('2026-01');
const before = await AxMCPPostgresTokenStore.open({ pool, schema, key: oldKey });
await before.set('oauth:https://mcp.example.com/:alice', { access_token: 'at-1', expires_at: 1767225600 });

// Rotation: the new key writes, the old one still reads (a value is re-sealed when next set).
const tokens = await AxMCPPostgresTokenStore.open({ pool, schema, key: newKey, previousKeys: [oldKey] });
console.log(await tokens.get('oauth:https://mcp.example.com/:alice'));

const stranger = await AxMCPPostgresTokenStore.open({ pool, schema, key: keyOf('other') });
await stranger
  .get('oauth:https://mcp.example.com/:alice')
  .catch((/** @type {Error & { code?: string }} */ error) => console.log(error.code, '-', error.message));
// #endregion tokens

await Promise.all([eraStore.close(), before.close(), tokens.close(), stranger.close()]);
await pool.query(`DROP SCHEMA ${schema} CASCADE`);
await pool.end();
