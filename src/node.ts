/**
 * ax-mcp/node: what needs Node — the stdio transport, the DNS-checked keep-alive
 * fetch, durable stores.
 */

export { AxMCPNodeHTTPTransport, type AxMCPNodeHTTPTransportOptions } from './node/fast-transport.js';
export { AxMCPFileEraStore } from './node/file-era-store.js';
export { type AxMCPNodeFetch, type AxMCPNodeFetchOptions, createNodeFetch } from './node/node-fetch.js';
export { AxPostgresEraStore, type AxPostgresEraStoreOptions } from './node/postgres-era-store.js';
export { AxPostgresEventStore, type AxPostgresEventStoreOptions } from './node/postgres-event-store.js';
export type { AxPostgresConnectionOptions } from './node/postgres-event-store-connection.js';
export {
  AxPostgresEventWorker,
  type AxPostgresEventWorkerCloseOptions,
  type AxPostgresEventWorkerOptions,
} from './node/postgres-event-store-worker.js';
export {
  AxPostgresTokenStore,
  type AxPostgresTokenStoreOptions,
  type AxTokenEncryptionKey,
} from './node/postgres-token-store.js';
export {
  AxSQLiteEventStore,
  type AxSQLiteEventStoreOpenOptions,
  type AxSQLiteEventStoreOptions,
} from './node/sqlite-event-store.js';
export {
  AxMCPProcessExitError,
  AxMCPStdioTransport,
  type AxMCPStdioTransportOptions,
} from './node/stdio-transport.js';
export { AxMCPFileTokenStore } from './node/token-store.js';
