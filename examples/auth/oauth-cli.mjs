// @ts-check
/**
 * OAuth from a CLI: a loopback listener for the redirect, the authorization page shown to the
 * user, and tokens kept in a private file so the next run needs no browser. The flow starts on
 * the server's first 401: the demo server asks for no authorization, so against it this runs
 * without a browser. Run: `node examples/auth/oauth-cli.mjs` (it needs `npx ax-mcp demo --serve`).
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AxMCPClient, AxMCPStreamableHTTPTransport } from 'ax-mcp';
import { AxMCPFileTokenStore } from 'ax-mcp/node';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const configDirectory = await mkdtemp(join(tmpdir(), 'example-cli-')); // e.g. ~/.config/example-cli

// #region oauth
// 1. A loopback listener for the redirect (any free port; the URL is registered for you).
const callback = createServer();
await new Promise((resolve) => callback.listen(0, '127.0.0.1', () => resolve(undefined)));
const address = callback.address();
const redirectUri = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/callback`;

/**
 * Shows the authorization page and resolves with the redirect's URL.
 * @param {URL} url
 * @returns {Promise<URL>}
 */
function authorizeInBrowser(url) {
  console.error(`Open this page to authorize:\n  ${url}`); // or spawn `xdg-open` / `open`
  return new Promise((resolve) => {
    callback.on('request', (request, response) => {
      const received = new URL(request.url ?? '/', redirectUri);
      if (received.pathname !== '/callback') return void response.writeHead(404).end();
      response.end('You can close this window.');
      resolve(received); // ax-mcp checks state and iss, then exchanges the code
    });
  });
}

const transport = new AxMCPStreamableHTTPTransport(endpoint, {
  ssrfProtection: { allowLoopback: true }, // only because the demo runs on this machine
  oauth: {
    redirectUri,
    onAuthCode: authorizeInBrowser,
    // Used where the authorization server supports Client ID Metadata Documents;
    // elsewhere ax-mcp registers dynamically (application_type "native").
    clientMetadataUrl: 'https://cli.example.com/oauth/client.json',
    clientMetadata: { clientName: 'example-cli' },
    tokenStore: new AxMCPFileTokenStore(join(configDirectory, 'mcp-tokens.json')),
  },
});
const client = new AxMCPClient(transport, { namespace: 'example' });
try {
  const { tools } = await client.listTools();
  console.log(tools.map((tool) => tool.name).join(', '));
} finally {
  await client.close();
  callback.close();
}
// #endregion oauth

await rm(configDirectory, { recursive: true, force: true });
