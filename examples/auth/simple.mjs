// @ts-check
/**
 * Simple authentication: the strategies, composed as an array, and what they show of their
 * secrets (nothing). A `fetch` wrapper prints the header names each request carried.
 * Run: `node examples/auth/simple.mjs` against `npx ax-mcp demo --serve` (it ignores them).
 */
import {
  AxMCPClient,
  AxMCPStreamableHTTPTransport,
  axMCPAPIKeyAuthentication,
  axMCPBasicAuthentication,
  axMCPBearerAuthentication,
  axMCPHMACAuthentication,
} from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';

// #region strategies
const bearer = axMCPBearerAuthentication('mcp-token-123'); // or () => token, called per request
const basic = axMCPBasicAuthentication({ username: 'svc', password: 's3cret' });
const apiKey = axMCPAPIKeyAuthentication({ key: 'key-456', header: 'X-API-Key' }); // or { key, query: 'api_key' }
const hmac = axMCPHMACAuthentication({ keyId: 'k1', secret: 'shared-secret' }); // signs each request
console.log(JSON.stringify([bearer, basic, apiKey, hmac])); // no secret in there
// #endregion strategies

// #region compose
/** @type {Set<string>} */
const sent = new Set();
const transport = new AxMCPStreamableHTTPTransport(endpoint, {
  ssrfProtection: { allowLoopback: true },
  authentication: [bearer, apiKey], // applied in order to every HTTP request
  fetch: (input, init) => {
    for (const name of new Headers(init?.headers).keys()) sent.add(name);
    return fetch(input, init);
  },
});
const client = new AxMCPClient(transport, { namespace: 'inventory' });
await client.callTool('get_stock', { sku: 'widget-a' });
await client.close();
console.log([...sent].filter((name) => name === 'authorization' || name.startsWith('x-')).join(', '));
// #endregion compose
