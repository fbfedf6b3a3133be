/**
 * The SQLite event store's schema, as versioned migrations. Internal to
 * `AxSQLiteEventStore`.
 */

/** The schema version this library writes. */
export const SCHEMA_VERSION = 1;

/** The statements that bring a database from `fromVersion` to {@link SCHEMA_VERSION}. */
export function schemaStatements(t: (name: string) => string, fromVersion: number): string[] {
  if (fromVersion >= 1) return [];
  const pending = "('queued','failed','claimed','running')";
  return [
    `CREATE TABLE IF NOT EXISTS ${t('events')} (
       key TEXT PRIMARY KEY,
       scope TEXT NOT NULL,
       ingress TEXT NOT NULL,
       bytes INTEGER NOT NULL,
       received_at INTEGER NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${t('dedupe')} (
       scope TEXT NOT NULL,
       source TEXT NOT NULL,
       event_id TEXT NOT NULL,
       delivery_ids TEXT NOT NULL,
       created_at INTEGER NOT NULL,
       PRIMARY KEY (scope, source, event_id)) WITHOUT ROWID`,
    `CREATE INDEX IF NOT EXISTS ${t('dedupe_created')} ON ${t('dedupe')} (created_at)`,
    `CREATE TABLE IF NOT EXISTS ${t('deliveries')} (
       seq INTEGER PRIMARY KEY AUTOINCREMENT,
       id TEXT NOT NULL UNIQUE,
       run_id TEXT NOT NULL,
       kind TEXT NOT NULL CHECK (kind IN ('event','sink')),
       sink_id TEXT,
       event_key TEXT,
       route_id TEXT NOT NULL,
       action TEXT NOT NULL,
       target_id TEXT,
       instance_key TEXT NOT NULL,
       ordering_key TEXT,
       due_at INTEGER NOT NULL,
       coalesce_key TEXT,
       correlation TEXT,
       plan_error TEXT,
       status TEXT NOT NULL,
       attempt INTEGER NOT NULL DEFAULT 0,
       lease_owner TEXT,
       lease_until INTEGER,
       fencing INTEGER NOT NULL DEFAULT 0,
       cancel_requested INTEGER NOT NULL DEFAULT 0,
       created_at INTEGER NOT NULL,
       started_at INTEGER,
       finished_at INTEGER,
       output TEXT,
       error TEXT,
       continuation_ids TEXT NOT NULL DEFAULT '[]')`,
    `CREATE UNIQUE INDEX IF NOT EXISTS ${t('deliveries_run')} ON ${t('deliveries')} (run_id) WHERE kind = 'event'`,
    `CREATE INDEX IF NOT EXISTS ${t('deliveries_run_all')} ON ${t('deliveries')} (run_id, kind)`,
    // Claim scans this in (due_at, seq) order and stops at its limit.
    `CREATE INDEX IF NOT EXISTS ${t('deliveries_claimable')} ON ${t('deliveries')} (due_at, seq)
       WHERE status IN ('queued','failed')`,
    `CREATE INDEX IF NOT EXISTS ${t('deliveries_leased')} ON ${t('deliveries')} (lease_until)
       WHERE status IN ('claimed','running')`,
    `CREATE INDEX IF NOT EXISTS ${t('deliveries_pending')} ON ${t('deliveries')} (status) WHERE status IN ${pending}`,
    `CREATE INDEX IF NOT EXISTS ${t('deliveries_order')} ON ${t('deliveries')} (ordering_key, seq)
       WHERE status IN ${pending}`,
    `CREATE INDEX IF NOT EXISTS ${t('deliveries_coalesce')} ON ${t('deliveries')} (coalesce_key)
       WHERE coalesce_key IS NOT NULL`,
    `CREATE INDEX IF NOT EXISTS ${t('deliveries_event')} ON ${t('deliveries')} (event_key)`,
    `CREATE INDEX IF NOT EXISTS ${t('deliveries_finished')} ON ${t('deliveries')} (finished_at)`,
    // The pending-delivery count, kept exact by triggers so append need not count rows.
    `CREATE TABLE IF NOT EXISTS ${t('counters')} (name TEXT PRIMARY KEY, value INTEGER NOT NULL)`,
    `INSERT OR IGNORE INTO ${t('counters')} (name, value) VALUES ('pending', 0)`,
    `CREATE TRIGGER IF NOT EXISTS ${t('pending_insert')} AFTER INSERT ON ${t('deliveries')}
       WHEN NEW.status IN ${pending}
       BEGIN UPDATE ${t('counters')} SET value = value + 1 WHERE name = 'pending'; END`,
    `CREATE TRIGGER IF NOT EXISTS ${t('pending_delete')} AFTER DELETE ON ${t('deliveries')}
       WHEN OLD.status IN ${pending}
       BEGIN UPDATE ${t('counters')} SET value = value - 1 WHERE name = 'pending'; END`,
    `CREATE TRIGGER IF NOT EXISTS ${t('pending_update')} AFTER UPDATE OF status ON ${t('deliveries')}
       WHEN (OLD.status IN ${pending}) <> (NEW.status IN ${pending})
       BEGIN UPDATE ${t('counters')} SET value = value + (CASE WHEN NEW.status IN ${pending} THEN 1 ELSE -1 END)
         WHERE name = 'pending'; END`,
    `CREATE TABLE IF NOT EXISTS ${t('continuations')} (
       id TEXT PRIMARY KEY,
       scope TEXT NOT NULL,
       kind TEXT NOT NULL,
       value TEXT NOT NULL,
       target_id TEXT NOT NULL,
       instance_key TEXT NOT NULL,
       run_id TEXT NOT NULL,
       delivery_id TEXT NOT NULL,
       expires_at INTEGER,
       metadata TEXT,
       created_at INTEGER NOT NULL,
       UNIQUE (scope, kind, value))`,
    `CREATE INDEX IF NOT EXISTS ${t('continuations_delivery')} ON ${t('continuations')} (delivery_id)`,
    `CREATE INDEX IF NOT EXISTS ${t('continuations_expiry')} ON ${t('continuations')} (expires_at)`,
    `CREATE TABLE IF NOT EXISTS ${t('dead_letters')} (
       id TEXT PRIMARY KEY,
       kind TEXT NOT NULL,
       delivery_id TEXT NOT NULL,
       run_id TEXT NOT NULL,
       sink_id TEXT,
       reason TEXT NOT NULL,
       error TEXT,
       created_at INTEGER NOT NULL)`,
    `CREATE INDEX IF NOT EXISTS ${t('dead_letters_run')} ON ${t('dead_letters')} (run_id)`,
    `CREATE INDEX IF NOT EXISTS ${t('dead_letters_created')} ON ${t('dead_letters')} (created_at)`,
  ];
}
