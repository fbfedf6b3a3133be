export type { AxMCPRetryOptions } from './http/retry.js';
export {
  AxMCPStreamableHTTPTransport,
  type AxMCPStreamableHTTPTransportOptions,
} from './http/streamable-http.js';
export type { AxMCPReconnectOptions } from './session-loss.js';
export {
  AxMCPHTTPFallbackTransport,
  type AxMCPHTTPTransportOptions,
  axMCPHTTPTransport,
} from './sse/fallback.js';
export { AxMCPHTTPSSETransport, type AxMCPHTTPSSETransportOptions } from './sse/http-sse.js';
export type {
  AxMCPEventStream,
  AxMCPMessageContext,
  AxMCPSendOptions,
  AxMCPStreamMessage,
  AxMCPTransport,
  AxMCPTransportHandlers,
} from './types.js';
export {
  type AxMCPWebSocketConstructor,
  type AxMCPWebSocketLike,
  AxMCPWebSocketTransport,
  type AxMCPWebSocketTransportOptions,
} from './websocket/websocket.js';
export { AxMCPWrappingTransport } from './wrapping-transport.js';
