/**
 * The PostgreSQL event store's schema, as versioned migrations. Internal to
 * `AxPostgresEventStore`.
 *
 * Two things the SQLite store gets from its single writer are kept here by the database:
 *
 * - **Order per ordering key.** A delivery gets its sequence number in a `BEFORE INSERT`
 *   trigger while holding a transaction advisory lock on its ordering key, so sequence order
 *   is commit order within a key. Each pending delivery carries `is_head`: true for the
 *   earliest pending delivery of its key (and for every relaxed one). Triggers move the head
 *   when a delivery leaves or re-enters the pending states, under the same lock. Claims then
 *   only look at heads, which a partial index lists.
 * - **The pending count.** Kept exact by triggers, spread over 16 counter rows (one chosen
 *   per database session) so that concurrent workers do not queue on one hot row.
 *
 * Version 2 cuts the writes of a delivery without ordering key: it takes its sequence
 * number from a column default instead of a trigger and is left out of the ordering index;
 * an insert statement updates the pending count once, not once per row; and the ordering
 * triggers fire before the counting ones, so every statement takes an ordering key's lock
 * before a counter row.
 */

import type { Migration } from './connection.js';

/** The schema version this library writes. */
export const EVENT_STORE_SCHEMA_VERSION = 2;

/** Statuses that are not terminal, as an SQL list. */
export const PENDING_SQL = "('queued','failed','claimed','running')";

const ALL_STATUSES =
  "('queued','claimed','running','waiting_event','succeeded','failed','cancelled','dead_lettered','outcome_unknown')";

/** Counter rows the pending count is spread over. */
export const COUNTER_SLOTS = 16;

/** The event store's migrations. `lockSpace` is the first key of its ordering advisory locks. */
export function eventStoreMigrations(lockSpace: number): Migration[] {
  return [
    {
      version: 1,
      statements: (s) => {
        const d = `${s}.ax_event_deliveries`;
        const pending = PENDING_SQL;
        return [
          `CREATE TABLE ${s}.ax_event_events (
             key text PRIMARY KEY,
             scope text NOT NULL,
             ingress text NOT NULL,
             bytes integer NOT NULL,
             received_at double precision NOT NULL)`,
          `CREATE TABLE ${s}.ax_event_dedupe (
             scope text NOT NULL,
             source text NOT NULL,
             event_id text NOT NULL,
             delivery_ids text NOT NULL,
             created_at double precision NOT NULL,
             PRIMARY KEY (scope, source, event_id))`,
          `CREATE INDEX ax_event_dedupe_created ON ${s}.ax_event_dedupe (created_at)`,
          `CREATE SEQUENCE ${s}.ax_event_delivery_seq`,
          `CREATE TABLE ${d} (
             seq bigint NOT NULL,
             id text PRIMARY KEY,
             run_id text NOT NULL,
             kind text NOT NULL CHECK (kind IN ('event','sink')),
             sink_id text,
             event_key text,
             route_id text NOT NULL,
             action text NOT NULL,
             target_id text,
             instance_key text NOT NULL,
             ordering_key text,
             due_at double precision NOT NULL,
             coalesce_key text,
             correlation text,
             plan_error text,
             status text NOT NULL CHECK (status IN ${ALL_STATUSES}),
             is_head boolean NOT NULL DEFAULT true,
             attempt integer NOT NULL DEFAULT 0,
             lease_owner text,
             lease_until double precision,
             fencing bigint NOT NULL DEFAULT 0,
             cancel_requested boolean NOT NULL DEFAULT false,
             created_at double precision NOT NULL,
             started_at double precision,
             finished_at double precision,
             output text,
             error text,
             continuation_ids text NOT NULL DEFAULT '[]')`,
          // Few indexes: claims and transitions change indexed columns, so every update of a
          // delivery writes an entry into each index whose condition its new version meets.
          `CREATE UNIQUE INDEX ax_event_deliveries_run ON ${d} (run_id) WHERE kind = 'event'`,
          `CREATE INDEX ax_event_deliveries_sinks ON ${d} (run_id) WHERE kind = 'sink'`,
          // Claims scan this in (due_at, seq) order and stop at their limit: heads only.
          `CREATE INDEX ax_event_deliveries_claimable ON ${d} (due_at, seq)
             WHERE status IN ('queued','failed') AND is_head`,
          `CREATE INDEX ax_event_deliveries_leased ON ${d} (lease_until) WHERE status IN ('claimed','running')`,
          `CREATE INDEX ax_event_deliveries_order ON ${d} (ordering_key, seq) WHERE status IN ${pending}`,
          `CREATE INDEX ax_event_deliveries_coalesce ON ${d} (coalesce_key)
             WHERE coalesce_key IS NOT NULL AND status = 'queued'`,
          `CREATE INDEX ax_event_deliveries_event ON ${d} (event_key) WHERE event_key IS NOT NULL`,
          `CREATE INDEX ax_event_deliveries_finished ON ${d} (finished_at)
             WHERE kind = 'event' AND status NOT IN ${pending}`,
          // The pending count.
          `CREATE TABLE ${s}.ax_event_counters (slot integer PRIMARY KEY, pending bigint NOT NULL)`,
          `INSERT INTO ${s}.ax_event_counters (slot, pending)
             SELECT g, 0 FROM generate_series(0, ${COUNTER_SLOTS - 1}) AS g`,
          `CREATE FUNCTION ${s}.ax_event_pending_delta() RETURNS trigger LANGUAGE plpgsql AS $fn$
           BEGIN
             UPDATE ${s}.ax_event_counters SET pending = pending + TG_ARGV[0]::integer
               WHERE slot = pg_backend_pid() % ${COUNTER_SLOTS};
             RETURN NULL;
           END
           $fn$`,
          `CREATE TRIGGER ax_event_pending_insert AFTER INSERT ON ${d} FOR EACH ROW
             WHEN (NEW.status IN ${pending}) EXECUTE FUNCTION ${s}.ax_event_pending_delta('1')`,
          `CREATE TRIGGER ax_event_pending_delete AFTER DELETE ON ${d} FOR EACH ROW
             WHEN (OLD.status IN ${pending}) EXECUTE FUNCTION ${s}.ax_event_pending_delta('-1')`,
          `CREATE TRIGGER ax_event_pending_leave AFTER UPDATE OF status ON ${d} FOR EACH ROW
             WHEN (OLD.status IN ${pending} AND NEW.status NOT IN ${pending})
             EXECUTE FUNCTION ${s}.ax_event_pending_delta('-1')`,
          `CREATE TRIGGER ax_event_pending_enter AFTER UPDATE OF status ON ${d} FOR EACH ROW
             WHEN (OLD.status NOT IN ${pending} AND NEW.status IN ${pending})
             EXECUTE FUNCTION ${s}.ax_event_pending_delta('1')`,
          // Ordering: sequence numbers and heads, under an advisory lock per ordering key.
          `CREATE FUNCTION ${s}.ax_event_place() RETURNS trigger LANGUAGE plpgsql AS $fn$
           BEGIN
             IF NEW.ordering_key IS NOT NULL THEN
               PERFORM pg_advisory_xact_lock(${lockSpace}, hashtext(NEW.ordering_key));
             END IF;
             NEW.seq := nextval('${s}.ax_event_delivery_seq');
             NEW.is_head := NEW.ordering_key IS NULL OR NOT EXISTS (
               SELECT 1 FROM ${d} e
               WHERE e.ordering_key = NEW.ordering_key AND e.status IN ${pending} AND e.seq < NEW.seq);
             RETURN NEW;
           END
           $fn$`,
          `CREATE TRIGGER ax_event_place BEFORE INSERT ON ${d} FOR EACH ROW
             EXECUTE FUNCTION ${s}.ax_event_place()`,
          `CREATE FUNCTION ${s}.ax_event_promote() RETURNS trigger LANGUAGE plpgsql AS $fn$
           BEGIN
             PERFORM pg_advisory_xact_lock(${lockSpace}, hashtext(NEW.ordering_key));
             UPDATE ${d} SET is_head = true
               WHERE id = (SELECT e.id FROM ${d} e
                           WHERE e.ordering_key = NEW.ordering_key AND e.status IN ${pending}
                           ORDER BY e.seq LIMIT 1)
                 AND NOT is_head;
             RETURN NULL;
           END
           $fn$`,
          `CREATE TRIGGER ax_event_promote AFTER UPDATE OF status ON ${d} FOR EACH ROW
             WHEN (NEW.ordering_key IS NOT NULL AND OLD.status IN ${pending} AND NEW.status NOT IN ${pending})
             EXECUTE FUNCTION ${s}.ax_event_promote()`,
          `CREATE FUNCTION ${s}.ax_event_reorder() RETURNS trigger LANGUAGE plpgsql AS $fn$
           BEGIN
             PERFORM pg_advisory_xact_lock(${lockSpace}, hashtext(NEW.ordering_key));
             UPDATE ${d} u SET is_head = (u.seq = m.first)
               FROM (SELECT min(e.seq) AS first FROM ${d} e
                     WHERE e.ordering_key = NEW.ordering_key AND e.status IN ${pending}) m
               WHERE u.ordering_key = NEW.ordering_key AND u.status IN ${pending}
                 AND u.is_head <> (u.seq = m.first);
             RETURN NULL;
           END
           $fn$`,
          `CREATE TRIGGER ax_event_reorder AFTER UPDATE OF status ON ${d} FOR EACH ROW
             WHEN (NEW.ordering_key IS NOT NULL AND OLD.status NOT IN ${pending} AND NEW.status IN ${pending})
             EXECUTE FUNCTION ${s}.ax_event_reorder()`,
          `CREATE TABLE ${s}.ax_event_continuations (
             id text PRIMARY KEY,
             scope text NOT NULL,
             kind text NOT NULL,
             value text NOT NULL,
             target_id text NOT NULL,
             instance_key text NOT NULL,
             run_id text NOT NULL,
             delivery_id text NOT NULL,
             expires_at double precision,
             metadata text,
             created_at double precision NOT NULL,
             UNIQUE (scope, kind, value))`,
          `CREATE INDEX ax_event_continuations_delivery ON ${s}.ax_event_continuations (delivery_id)`,
          `CREATE INDEX ax_event_continuations_expiry ON ${s}.ax_event_continuations (expires_at)`,
          `CREATE TABLE ${s}.ax_event_dead_letters (
             n bigint GENERATED ALWAYS AS IDENTITY,
             id text PRIMARY KEY,
             kind text NOT NULL,
             delivery_id text NOT NULL,
             run_id text NOT NULL,
             sink_id text,
             reason text NOT NULL,
             error text,
             created_at double precision NOT NULL)`,
          `CREATE INDEX ax_event_dead_letters_run ON ${s}.ax_event_dead_letters (run_id)`,
          `CREATE INDEX ax_event_dead_letters_created ON ${s}.ax_event_dead_letters (created_at, n)`,
        ];
      },
    },
    {
      version: 2,
      statements: (s) => {
        const d = `${s}.ax_event_deliveries`;
        return [
          // Every update that is not HOT writes an entry into each index whose condition the
          // new row meets: the ordering index now holds ordered deliveries only.
          `DROP INDEX ${s}.ax_event_deliveries_order`,
          `CREATE INDEX ax_event_deliveries_order ON ${d} (ordering_key, seq)
             WHERE ordering_key IS NOT NULL AND status IN ${PENDING_SQL}`,
          // A delivery without ordering key needs no lock and is its own head: its number
          // comes from the default; the trigger (which numbers again under the lock) runs
          // for ordered ones only.
          `ALTER TABLE ${d} ALTER COLUMN seq SET DEFAULT nextval('${s}.ax_event_delivery_seq')`,
          `DROP TRIGGER ax_event_place ON ${d}`,
          `CREATE TRIGGER ax_event_place BEFORE INSERT ON ${d} FOR EACH ROW
             WHEN (NEW.ordering_key IS NOT NULL) EXECUTE FUNCTION ${s}.ax_event_place()`,
          // Locks in one order everywhere: an ordering key's advisory lock before a counter
          // row. Appends take them so (BEFORE triggers lock keys, the count comes after); a
          // delivery leaving or re-entering the pending states took the counter first (its
          // triggers fire in name order, and "pending" sorted before "promote"), so an append
          // and a transition sharing a counter row could deadlock. Renamed to fire first.
          `ALTER TRIGGER ax_event_promote ON ${d} RENAME TO ax_event_order_promote`,
          `ALTER TRIGGER ax_event_reorder ON ${d} RENAME TO ax_event_order_reorder`,
          // One counter update per insert statement (a batch of a thousand rows included).
          `DROP TRIGGER ax_event_pending_insert ON ${d}`,
          `CREATE FUNCTION ${s}.ax_event_pending_inserted() RETURNS trigger LANGUAGE plpgsql AS $fn$
           DECLARE n bigint;
           BEGIN
             SELECT count(*) INTO n FROM inserted WHERE status IN ${PENDING_SQL};
             IF n > 0 THEN
               UPDATE ${s}.ax_event_counters SET pending = pending + n
                 WHERE slot = pg_backend_pid() % ${COUNTER_SLOTS};
             END IF;
             RETURN NULL;
           END
           $fn$`,
          `CREATE TRIGGER ax_event_pending_insert AFTER INSERT ON ${d}
             REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT
             EXECUTE FUNCTION ${s}.ax_event_pending_inserted()`,
        ];
      },
    },
  ];
}
