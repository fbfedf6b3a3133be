// @ts-check
import { AxMCPClient, AxMCPStreamableHTTPTransport } from 'ax-mcp';

// The demo server from `npx ax-mcp demo --serve`; any Streamable HTTP endpoint works the same way.
const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';

// SSRF protection is on by default: a server on this machine must be allowed explicitly.
const transport = new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } });
const client = new AxMCPClient(transport, { namespace: 'inventory' });

// The first call connects: it classifies the server's protocol era and remembers it.
const result = await client.callTool('get_stock', { sku: 'widget-a' });
console.log(`era: ${client.getEra()}`);
console.log('text:', result.content[0]?.type === 'text' ? result.content[0].text : result.content[0]);
console.log('structured:', result.structuredContent);

await client.close();
