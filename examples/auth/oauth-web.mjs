// @ts-check
/**
 * OAuth in a web application where each user authorizes the app: one strategy per user with a
 * token store keyed to that user; `/connect` starts the authorization, `/oauth/callback` hands
 * the redirect to the parked flow. Plain node:http here; any framework works the same way.
 * This example starts the server on a free port and stops it again.
 * Run: `node examples/auth/oauth-web.mjs`.
 */
import { createServer } from 'node:http';
import { AxMCPMemoryTokenStore, AxMCPStreamableHTTPTransport, axMCPOAuth } from 'ax-mcp';

// #region web
const ENDPOINT = 'https://mcp.example.com/mcp';
/** @type {Map<string, (redirect: URL) => void>} state → the parked flow */
const waiting = new Map();
/** @type {Map<string, { oauth: import('ax-mcp').AxMCPOAuthAuthentication, show?: (url: URL) => void }>} */
const strategies = new Map();

/** @param {string} userId */
function oauthFor(userId) {
  let entry = strategies.get(userId);
  if (!entry) {
    /** @type {{ oauth: import('ax-mcp').AxMCPOAuthAuthentication, show?: (url: URL) => void }} */
    const created = {
      oauth: axMCPOAuth({
        redirectUri: 'https://app.example.com/oauth/callback',
        clientMetadataUrl: 'https://app.example.com/oauth/client.json',
        clientMetadata: { clientName: 'Example App', applicationType: 'web' },
        tokenStore: new AxMCPMemoryTokenStore(), // yours: keyed to this user, encrypted at rest
        onAuthCode: (url, { state }) =>
          new Promise((resume) => {
            waiting.set(state, resume);
            created.show?.(url); // the /connect request redirects the browser there
          }),
      }),
    };
    entry = created;
    strategies.set(userId, entry);
  }
  return entry;
}

const app = createServer((request, response) => {
  const url = new URL(request.url ?? '/', 'https://app.example.com');
  const userId = 'alice'; // from your session
  if (url.pathname === '/connect') {
    // Send the user to the authorization server.
    const entry = oauthFor(userId);
    entry.show = (authorization) => response.writeHead(302, { location: authorization.href }).end();
    entry.oauth.authorize(ENDPOINT).then(
      () => console.log(`${userId} connected`),
      (error) => console.log(`${userId} not connected: ${error.code}`),
    );
  } else if (url.pathname === '/oauth/callback') {
    // ?code=…&state=…&iss=…: hand the redirect to the parked flow (ax-mcp checks state and iss).
    const state = url.searchParams.get('state') ?? '';
    waiting.get(state)?.(url);
    waiting.delete(state);
    response.writeHead(302, { location: '/connected' }).end();
  } else response.writeHead(404).end();
});

// Later, anywhere: that user's strategy sends their token (and refreshes it).
const transport = new AxMCPStreamableHTTPTransport(ENDPOINT, { authentication: oauthFor('alice').oauth });
// #endregion web

await new Promise((resolve) => app.listen(0, '127.0.0.1', () => resolve(undefined)));
console.log(`app listening; ${strategies.size} strategy, transport for ${transport.endpoint}`);
await transport.close();
app.close();
