/** The PostgreSQL stores: events (with their worker), eras and tokens, sharing one connection layer. */
export type { AxPostgresConnectionOptions } from './connection.js';
export {
  AxMCPPostgresEraStore,
  type AxMCPPostgresEraStoreOptions,
  AxPostgresEraStore,
  type AxPostgresEraStoreOptions,
} from './era-store.js';
export { AxPostgresEventStore } from './event-store.js';
export type { AxPostgresEventStoreOptions } from './event-store-options.js';
export {
  AxPostgresEventWorker,
  type AxPostgresEventWorkerCloseOptions,
  type AxPostgresEventWorkerOptions,
} from './event-store-worker.js';
export {
  AxMCPPostgresTokenStore,
  type AxMCPPostgresTokenStoreOptions,
  AxPostgresTokenStore,
  type AxPostgresTokenStoreOptions,
  type AxTokenEncryptionKey,
} from './token-store.js';
