// @ts-check
/**
 * Catalog discovery: connect to an MCP server, classify its era, and print what it offers —
 * tools, concrete resources, resource templates (listed, never expanded) — with the cache hints
 * (`ttlMs`, `cacheScope`) of every list. The last line is the summary as JSON.
 *
 * Run: `node examples/client/catalog-discovery.mjs` with the demo server up (`npx ax-mcp demo --serve`).
 */
import { AxMCPClient, AxMCPStreamableHTTPTransport } from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
// SSRF protection stays on; allowLoopback lets this one client reach a server on this machine.
const client = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  {
    namespace: 'inventory',
  },
);

// #region catalog
// The first call connects; the era is classified once and remembered.
const catalog = await client.inspectCatalog();
console.log(`era ${catalog.era} (${catalog.protocolVersion}), server ${catalog.serverInfo?.name ?? '?'}`);
console.log(`tools: ${catalog.tools.map((tool) => tool.name).join(', ')}`);
console.log(`resources: ${catalog.resources.map((resource) => resource.uri).join(', ')}`);
console.log(`templates (never expanded): ${catalog.resourceTemplates.map((t) => t.uriTemplate).join(', ')}`);
for (const [kind, info] of Object.entries(catalog.cache)) {
  if (!info) continue;
  const ttl = info.ttlMs === undefined ? 'no TTL (refetched when needed)' : `TTL ${info.ttlMs} ms`;
  console.log(`cache ${kind}: ${ttl}, scope ${info.cacheScope ?? 'unspecified'}`);
}
// #endregion catalog

await client.close();
console.log(
  JSON.stringify({
    era: catalog.era,
    protocolVersion: catalog.protocolVersion,
    server: catalog.serverInfo?.name,
    tools: catalog.tools.map((tool) => tool.name),
    resources: catalog.resources.map((resource) => resource.uri),
    templates: catalog.resourceTemplates.map((template) => template.uriTemplate),
    cache: catalog.cache,
  }),
);
