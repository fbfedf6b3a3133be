/** OAuth 2.1 for MCP: the public face of `src/auth/oauth`. */
export type { AxMCPAuthorizationDetail } from './authorization-details.js';
export {
  type AxMCPClientMetadataDocumentOptions,
  type AxMCPOAuthClientCredentials,
  type AxMCPOAuthClientMetadata,
  type AxMCPTokenEndpointAuthMethod,
  axMCPClientMetadataDocument,
} from './client-identity.js';
export { type AxMCPProtectedResource, canonicalResource, resourceMatches } from './discovery.js';
export { AxMCPOAuthError, type AxMCPOAuthErrorCode } from './errors.js';
export type {
  AxMCPAuthorizationCallback,
  AxMCPAuthorizationCodeHandler,
  AxMCPAuthorizationRequestContext,
  AxMCPCrossAppAccessIdP,
} from './grants.js';
export type { AxMCPTokenIntrospection } from './introspection.js';
export { axMCPFetchWithClientCertificate } from './mtls.js';
export {
  type AxMCPOAuthAuthentication,
  type AxMCPOAuthGrant,
  type AxMCPOAuthOptions,
  type AxMCPOAuthSecretSource,
  axMCPOAuth,
} from './oauth.js';
export {
  AxMCPMemoryTokenStore,
  type AxMCPMemoryTokenStoreOptions,
  type AxMCPOAuthRecord,
  type AxMCPStoredClient,
  type AxMCPStoredTokens,
  type AxMCPTokenStore,
  parseOAuthRecord,
} from './token-store.js';
export { type AxMCPAuthChallenge, parseWWWAuthenticate } from './www-authenticate.js';
