// @ts-check
/**
 * OAuth for a service that acts for itself (no user): client credentials, workload identity
 * federation, and cross-app access. Each strategy is built and checked here, and shows no
 * secret; the grant runs on the MCP server's first 401. Run: `node examples/auth/oauth-service.mjs`.
 */
import { axMCPOAuth } from 'ax-mcp';

const session = { idToken: 'eyJ…the signed-in user ID token' };

// #region grants
// Client credentials (client_secret_basic / _post, or private_key_jwt with a WebCrypto key).
const clientCredentials = axMCPOAuth({
  clientCredentials: true,
  client: { clientId: 'svc', clientSecret: process.env.MCP_CLIENT_SECRET ?? 'dev-secret' },
});

// Workload identity federation: the platform's workload JWT as an RFC 7523 assertion.
const workload = axMCPOAuth({
  client: { clientId: 'svc' },
  workloadIdentity: { assertion: async () => 'eyJ…read from /var/run/secrets/tokens/mcp' },
});

// Cross-app access (enterprise-managed): the signed-in user's ID token is exchanged at the
// IdP (RFC 8693) for an ID-JAG, which the MCP server's authorization server accepts.
const crossApp = axMCPOAuth({
  client: { clientId: 'app', clientSecret: process.env.MCP_CLIENT_SECRET ?? 'dev-secret' },
  crossAppAccess: {
    idp: { tokenEndpoint: 'https://idp.example.com/oauth2/token', clientId: 'app-at-idp' },
    idToken: async () => session.idToken,
  },
});
// #endregion grants

for (const strategy of [clientCredentials, workload, crossApp]) console.log(JSON.stringify(strategy));
