export {
  AxMCPAuthorizationDeniedError,
  AxMCPError,
  type AxMCPErrorCode,
  type AxMCPErrorCodes,
  type AxMCPErrorContext,
  AxMCPHandlerResultError,
  AxMCPHTTPStatusError,
  AxMCPInvalidOptionsError,
  AxMCPProtocolError,
  AxMCPSessionExpiredError,
  type AxMCPSSRFAllowance,
  AxMCPSSRFError,
  AxMCPTimeoutError,
  AxMCPTransportError,
  AxMCPUnsupportedError,
  type AxMCPURLElicitation,
  AxMCPURLElicitationRequiredError,
  RPC,
} from './errors.js';
export type {
  JSONRPCErrorObject,
  JSONRPCErrorResponse,
  JSONRPCId,
  JSONRPCMessage,
  JSONRPCNotification,
  JSONRPCRequest,
  JSONRPCResponse,
  JSONRPCResultResponse,
} from './jsonrpc.js';
export { parseJSONRPCMessage } from './jsonrpc.js';
export type * from './messages.js';
export {
  type AxMCPEra,
  LEGACY_PROTOCOL_VERSION,
  LEGACY_PROTOCOL_VERSIONS,
  MODERN_PROTOCOL_VERSION,
  MODERN_PROTOCOL_VERSIONS,
} from './versions.js';
