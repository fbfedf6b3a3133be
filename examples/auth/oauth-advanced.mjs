// @ts-check
/**
 * Signed request objects (RFC 9101), rich authorization requests (RFC 9396), and what a strategy
 * reports about its grant. The strategies are built and checked here; their flows run against
 * your authorization server. Run: `node examples/auth/oauth-advanced.mjs`.
 */
import { axMCPOAuth } from 'ax-mcp';

const endpoint = 'https://mcp.example.com/mcp';
const redirectUri = 'http://127.0.0.1:8976/callback';
/** @type {import('ax-mcp').AxMCPAuthorizationCodeHandler} */
const onAuthCode = async () => {
  throw new Error('not in this example');
};

// #region signed
// A pre-registered client's WebCrypto key signs the request object (and private_key_jwt).
const { privateKey } = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, [
  'sign',
  'verify',
]);
const signed = axMCPOAuth({
  redirectUri,
  onAuthCode,
  client: { clientId: 'app', privateKey: { key: privateKey, kid: 'k1' } },
  signedRequestObject: true, // optional: automatic where the server requires it
});
// #endregion signed

// #region details
const detailed = axMCPOAuth({
  redirectUri,
  onAuthCode,
  authorizationDetails: [{ type: 'mcp_tools', actions: ['read'], locations: [endpoint] }],
});
// Before the first call there is no token, so nothing is granted yet.
console.log(await detailed.granted(endpoint)); // later: { issuer, resource, scopes, authorizationDetails, … }
// #endregion details

console.log(JSON.stringify(signed), JSON.stringify(detailed));
