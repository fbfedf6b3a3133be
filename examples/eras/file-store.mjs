// @ts-check
/**
 * A durable era store: verdicts kept in a JSON file survive a restart of the process.
 * Run: `node examples/eras/file-store.mjs` against `npx ax-mcp demo --serve`.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AxMCPClient, AxMCPStreamableHTTPTransport } from 'ax-mcp';
import { AxMCPFileEraStore } from 'ax-mcp/node';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const directory = await mkdtemp(join(tmpdir(), 'ax-mcp-eras-'));

// #region file
const eraStore = new AxMCPFileEraStore(join(directory, 'eras.json'));
const client = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  {
    namespace: 'inventory',
    eraStore,
  },
);
await client.inspectCatalog();
await client.close();
const saved = JSON.parse(await readFile(join(directory, 'eras.json'), 'utf8'));
console.log(JSON.stringify(saved, (key, value) => (key === 'discover' ? '…' : value), 2));
// #endregion file

await rm(directory, { recursive: true, force: true });
