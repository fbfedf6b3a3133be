/** OAuth 2.1 for MCP: the public face of `src/auth/oauth`. */

export type {
  AxMCPAuthorizationCallback,
  AxMCPAuthorizationCodeHandler,
  AxMCPAuthorizationRequestContext,
} from './authorization-code.js';
export type { AxMCPAuthorizationDetail } from './authorization-details.js';
export type { AxMCPOAuthClientCredentials, AxMCPTokenEndpointAuthMethod } from './client-identity.js';
export {
  type AxMCPClientMetadataDocumentOptions,
  type AxMCPOAuthClientMetadata,
  axMCPClientMetadataDocument,
} from './client-metadata.js';
export { type AxMCPProtectedResource, canonicalResource, resourceMatches } from './discovery.js';
export { AxMCPOAuthError, type AxMCPOAuthErrorCode } from './errors.js';
export type { AxMCPCrossAppAccessIdP } from './grants.js';
export type { AxMCPTokenIntrospection } from './introspection.js';
export { axMCPFetchWithClientCertificate } from './mtls.js';
export { axMCPOAuth } from './oauth.js';
export type {
  AxMCPOAuthAuthentication,
  AxMCPOAuthGrant,
  AxMCPOAuthOptions,
  AxMCPOAuthSecretSource,
} from './options.js';
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
