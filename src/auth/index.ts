/** Authentication strategies: the public face of `src/auth`. */
export {
  type AxMCPAuthentication,
  type AxMCPAuthenticationChallenge,
  type AxMCPAuthenticationInput,
  type AxMCPAuthenticationRequest,
  type AxMCPAuthenticationResponse,
  type AxMCPAuthenticationResult,
  type AxMCPReadonlyHeaders,
  applyAuthentication,
  authenticationSensitiveHeaders,
} from './authentication.js';
export { type AxMCPHMACOptions, axMCPHMACAuthentication } from './hmac.js';
export * from './oauth/index.js';
export {
  type AxMCPAPIKeyOptions,
  type AxMCPBasicCredentials,
  type AxMCPRedactedAuthentication,
  type AxMCPSecret,
  axMCPAPIKeyAuthentication,
  axMCPBasicAuthentication,
  axMCPBearerAuthentication,
} from './strategies.js';
