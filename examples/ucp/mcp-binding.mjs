// @ts-check
/**
 * The same shop over the UCP MCP binding: every operation is a `tools/call` through an
 * AxMCPClient made for the business's MCP endpoint, signed with axUCPSigningAuthentication.
 * Run: `node examples/ucp/mcp-binding.mjs` against `npx ax-mcp demo --serve`.
 */
import {
  AxMCPClient,
  AxMCPStreamableHTTPTransport,
  AxUCPClient,
  axUCPSigningAuthentication,
  generateUCPSigningKey,
} from 'ax-mcp';

const origin = new URL(process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp').origin;
const key = await generateUCPSigningKey('platform-2026');
const ssrfProtection = { allowLoopback: true }; // the demo runs on this machine

// #region mcp
const profile = 'https://agent.example/.well-known/ucp';
const discovery = new AxUCPClient(origin, { namespace: 'shop', profile, ssrfProtection });
const { mcpEndpoint } = await discovery.connect();
discovery.close();
if (mcpEndpoint === undefined) throw new Error('the business offers no MCP binding');

const transport = new AxMCPStreamableHTTPTransport(mcpEndpoint, {
  ssrfProtection,
  authentication: axUCPSigningAuthentication({
    signing: { keyId: 'platform-2026', privateKey: key.privateKey },
    profile,
  }),
});
const mcp = new AxMCPClient(transport, { namespace: 'shop-mcp' });
const shop = new AxUCPClient(origin, {
  namespace: 'shop',
  profile,
  ssrfProtection,
  mcp,
  authorizeOperation: ({ operation }) => operation === 'checkout.complete',
});

const found = await shop.catalog.search({ query: 'widget b' }); // tools/call search_catalog
console.log('over MCP:', /** @type {{ id: string }[]} */ (found.products).map((p) => p.id).join(', '));
// #endregion mcp

shop.close();
await mcp.close();
