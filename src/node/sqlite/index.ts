/** The SQLite event store. */
export {
  AxSQLiteEventStore,
  type AxSQLiteEventStoreOpenOptions,
  type AxSQLiteEventStoreOptions,
} from './event-store.js';
