export type { AxMCPRetryOptions } from './http/retry.js';
export {
  AxMCPStreamableHTTPTransport,
  type AxMCPStreamableHTTPTransportOptions,
} from './http/streamable-http.js';
export type {
  AxMCPEventStream,
  AxMCPMessageContext,
  AxMCPSendOptions,
  AxMCPStreamMessage,
  AxMCPTransport,
  AxMCPTransportHandlers,
} from './types.js';
