// @ts-check
import { AxMCPClient, AxMCPStreamableHTTPTransport } from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const client = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  {
    namespace: 'inventory',
  },
);

// Discovery only looks: it never subscribes to anything and never calls a tool.
const catalog = await client.inspectCatalog();
console.log(`${catalog.serverInfo?.name} speaks ${catalog.protocolVersion} (${catalog.era})`);
for (const tool of catalog.tools) {
  const hints = tool.annotations?.readOnlyHint
    ? 'read-only'
    : tool.annotations?.destructiveHint
      ? 'destructive'
      : '';
  console.log(`tool      ${tool.name}${hints ? ` (${hints})` : ''}`);
}
for (const resource of catalog.resources) console.log(`resource  ${resource.uri}`);
for (const template of catalog.resourceTemplates)
  console.log(`template  ${template.uriTemplate} (never expanded)`);
console.log(`resource subscriptions offered: ${catalog.capabilities.resources?.subscribe === true}`);

await client.close();
