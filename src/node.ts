/**
 * ax-mcp/node: what needs Node — the stdio transport, the DNS-checked keep-alive
 * fetch, durable stores, the `http` adapter of the UCP webhook source, the studio.
 */

export { AxMCPNodeHTTPTransport, type AxMCPNodeHTTPTransportOptions } from './node/fast-transport.js';
export { AxMCPFileEraStore } from './node/file-era-store.js';
export { type AxMCPNodeFetch, type AxMCPNodeFetchOptions, createNodeFetch } from './node/node-fetch.js';
export {
  AxMCPPostgresEraStore,
  type AxMCPPostgresEraStoreOptions,
  AxMCPPostgresTokenStore,
  type AxMCPPostgresTokenStoreOptions,
  type AxPostgresConnectionOptions,
  AxPostgresEraStore,
  type AxPostgresEraStoreOptions,
  AxPostgresEventStore,
  type AxPostgresEventStoreOptions,
  AxPostgresEventWorker,
  type AxPostgresEventWorkerCloseOptions,
  type AxPostgresEventWorkerOptions,
  AxPostgresTokenStore,
  type AxPostgresTokenStoreOptions,
  type AxTokenEncryptionKey,
} from './node/postgres/index.js';
export {
  AxSQLiteEventStore,
  type AxSQLiteEventStoreOpenOptions,
  type AxSQLiteEventStoreOptions,
} from './node/sqlite/index.js';
export {
  AxMCPProcessExitError,
  AxMCPStdioTransport,
  type AxMCPStdioTransportOptions,
} from './node/stdio/index.js';
export {
  type AxStudio,
  type AxStudioElicitation,
  type AxStudioElicitationChange,
  type AxStudioElicitationEnd,
  type AxStudioElicitationOptions,
  type AxStudioOptions,
  type AxStudioPendingElicitation,
  type AxStudioRecording,
  type AxStudioRecordingOptions,
  AxStudioRecordingTransport,
  axStudioElicitation,
  startStudio,
} from './node/studio/index.js';
export { AxMCPFileTokenStore } from './node/token-store.js';
export {
  type AxUCPWebhookHandlerOptions,
  type AxUCPWebhookListener,
  type AxUCPWebhookListenerOptions,
  type AxUCPWebhookReceiver,
  type AxUCPWebhookRequestHandler,
  axUCPWebhookHandler,
  axUCPWebhookListener,
} from './node/ucp/index.js';
