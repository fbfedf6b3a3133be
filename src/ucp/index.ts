/** The UCP client: the public face of `src/ucp`. */
export {
  type AxUCPAuthorizationDecision,
  type AxUCPCallOptions,
  AxUCPClient,
  type AxUCPClientOptions,
  type AxUCPOperationAuthorizationRequest,
  type AxUCPPaymentRequest,
  type AxUCPResource,
  type AxUCPRetryOptions,
  type AxUCPSigningOptions,
} from './client.js';
export type { AxUCPNegotiation, AxUCPPlatformProfile, AxUCPProfile } from './discovery.js';
export {
  AxUCPAuthorizationError,
  AxUCPError,
  type AxUCPErrorCode,
  type AxUCPErrorCodes,
  type AxUCPErrorContext,
  type AxUCPMessage,
  AxUCPOutcomeUnknownError,
  AxUCPResponseError,
  AxUCPSchemaError,
  type AxUCPSchemaIssue,
  AxUCPSignatureError,
  redactCredentials as redactUCPCredentials,
} from './errors.js';
export { axUCPSigningAuthentication, ucpToolName } from './mcp-binding.js';
export {
  type AxUCPCapabilityEntry,
  type AxUCPNegotiatedCapability,
  type AxUCPRejectedCapability,
  UCP_SUPPORTED_VERSIONS,
} from './negotiation.js';
export { type AxUCPOperation, UCP_OPERATIONS } from './operations.js';
export {
  type AxUCPMessageParts,
  type AxUCPPublicKey,
  type AxUCPSigner,
  type AxUCPSigningKeyOptions,
  type AxUCPVerifiedSignature,
  type AxUCPVerifyOptions,
  axUCPSigner,
  contentDigest as ucpContentDigest,
  generateUCPSigningKey,
  signMessage as signUCPMessage,
  verifyMessage as verifyUCPMessage,
} from './signatures.js';
export {
  type AxUCPWebhookBusiness,
  AxUCPWebhookEventSource,
  type AxUCPWebhookEventSourceOptions,
  type AxUCPWebhookRefusal,
  UCP_CHECKOUT_CORRELATION,
  UCP_ORDER_CORRELATION,
  UCP_ORDER_UPDATED,
} from './webhook-source.js';
