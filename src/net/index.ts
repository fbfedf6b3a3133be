/** The guarded network layer: the public face of `src/net`. */
export {
  type AxMCPFetch,
  type AxMCPGuardedFetchOptions,
  type AxMCPReadLimitOptions,
  createGuardedFetch,
  DEFAULT_SENSITIVE_HEADERS,
  readBodyLimited,
  readTextLimited,
} from './guarded-fetch.js';
export {
  type AxMCPSSRFOptions,
  type AxMCPSSRFPolicy,
  type AxMCPSSRFProtection,
  assertAddressAllowed,
  assertURLAllowed,
  redactURL,
  resolveSSRFPolicy,
} from './ssrf.js';
