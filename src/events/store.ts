/**
 * The `AxEventStore` interface: the only thing the runtime talks to about state. Every
 * method is one atomic operation (a transaction in a database store), so the same
 * interface fits memory, SQLite and PostgreSQL (`FOR UPDATE SKIP LOCKED` claims, leases
 * with fencing tokens, compare-and-set transitions, a unique dedupe key).
 *
 * A store passes the conformance kit `runEventStoreConformance` from `ax-mcp/testing`.
 */

import type { AxEventIngressRecord } from './envelope.js';
import type { AxEventErrorInfo } from './errors.js';
import type { AxJsonValue } from './json.js';

/** What a route does with a matching event. */
export type AxEventAction = 'observe' | 'invalidate' | 'wake' | 'resume';

/** The status of a run (one per delivery). */
export type AxEventRunStatus =
  | 'queued'
  | 'claimed'
  | 'running'
  | 'waiting_event'
  | 'succeeded'
  | 'failed'
  | 'cancelled'
  | 'dead_lettered'
  | 'outcome_unknown';

/** Statuses after which a delivery is never claimed again (unless redriven). */
export const TERMINAL_RUN_STATUSES: ReadonlySet<AxEventRunStatus> = new Set([
  'waiting_event',
  'succeeded',
  'cancelled',
  'dead_lettered',
  'outcome_unknown',
]);

/** True for a status after which nothing more happens to a delivery on its own. */
export function isTerminalRunStatus(status: AxEventRunStatus): boolean {
  return TERMINAL_RUN_STATUSES.has(status);
}

/** Where durability stands: `volatile` stores lose everything when the process ends. */
export type AxEventDurability = 'volatile' | 'durable';

/** A delivery as the runtime asks a store to create it. */
export interface AxEventDeliveryDraft {
  /** Unique delivery id (the idempotency key of the run). */
  id: string;
  /** Unique run id; `getRun` accepts either id. */
  runId: string;
  routeId: string;
  action: AxEventAction;
  /** The target to invoke; `null` for observe/invalidate and for a resume whose continuation is not known yet. */
  targetId: string | null;
  instanceKey: string;
  /**
   * Deliveries with the same ordering key run one at a time in sequence order: none is
   * claimed while an earlier non-terminal one exists. `null` means relaxed.
   */
  orderingKey: string | null;
  /** Not claimable before this time (debounce). */
  dueAt: number;
  /**
   * With a coalesce key, a new delivery replaces a still-queued, unclaimed one with the same
   * key in place (same id, new event, new due time) instead of being added.
   */
  coalesceKey: string | null;
  /** For resume: the correlation to look the continuation up by. */
  correlation: { kind: string; value: string } | null;
  /** A problem found while routing (for example an instance key that did not resolve); dead-letters the delivery before invocation. */
  planError: AxEventErrorInfo | null;
}

/** A stored delivery with its run record fields. */
export interface AxEventDelivery extends AxEventDeliveryDraft {
  /** `event` for routed events, `sink` for a sink write of a finished run. */
  kind: 'event' | 'sink';
  /** For sink deliveries: the sink id (the run id is the parent run's). */
  sinkId: string | null;
  /** The stored event, or `null` for sink deliveries. */
  eventKey: string | null;
  /** Monotonic sequence number assigned by the store. */
  seq: number;
  status: AxEventRunStatus;
  /** Claims so far; each claim adds one. */
  attempt: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
  /** Increases on every claim; a transition must present the current one. */
  fencingToken: number;
  cancelRequested: boolean;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  output: AxJsonValue | null;
  error: AxEventErrorInfo | null;
  continuationIds: string[];
}

/** A stored event. */
export interface AxEventStoredEvent {
  key: string;
  scope: string;
  ingress: AxEventIngressRecord;
  bytes: number;
  receivedAt: number;
}

/** The dedupe key of an event: identity scope, source, id. */
export interface AxEventDedupeKey {
  scope: string;
  source: string;
  id: string;
}

/** One atomic publish. */
export interface AxEventAppendInput {
  dedupe: AxEventDedupeKey;
  event: AxEventStoredEvent;
  /** May be empty: an event no route matched is still recorded for dedupe. */
  deliveries: AxEventDeliveryDraft[];
  now: number;
  /**
   * `event.ingress` as JSON text (`JSON.stringify(event.ingress)`), when the runtime has it
   * already: a store that writes the ingress as text may use it instead of serializing again.
   */
  ingressText?: string;
}

/** One event of a batch for {@link AxEventStore.appendMany}: an append without its time. */
export type AxEventAppendItem = Omit<AxEventAppendInput, 'now'>;

/** One atomic publish of several events, in order. */
export interface AxEventAppendManyInput {
  /** May be empty. Order matters: deliveries of one ordering key run in this order. */
  items: AxEventAppendItem[];
  now: number;
}

/** The outcome of {@link AxEventStore.append}. */
export type AxEventAppendResult =
  | { status: 'appended'; deliveryIds: string[] }
  | { status: 'duplicate'; deliveryIds: string[] }
  | { status: 'full'; reason: string };

/** A claimed delivery, leased to the caller. */
export interface AxEventClaim {
  delivery: AxEventDelivery;
  /** `null` for sink deliveries. */
  event: AxEventStoredEvent | null;
  /** True when the previous lease expired while the delivery was claimed or running. */
  recovered: boolean;
  /** The status before this claim (`running` after a crash means the target may have run). */
  previousStatus: AxEventRunStatus;
}

/** A sink write to schedule when a run succeeds. */
export interface AxEventSinkDraft {
  id: string;
  sinkId: string;
}

/** A dead letter: a delivery or a sink write that will not be tried again unless redriven. */
export interface AxEventDeadLetter {
  id: string;
  kind: 'delivery' | 'sink';
  deliveryId: string;
  runId: string;
  sinkId: string | null;
  reason: AxEventDeadLetterReason;
  error: AxEventErrorInfo | null;
  createdAt: number;
}

/** Why something was dead-lettered. */
export type AxEventDeadLetterReason =
  | 'input_error'
  | 'continuation_not_found'
  | 'target_not_found'
  | 'max_attempts'
  | 'non_retryable'
  | 'outcome_unknown'
  | 'sink_failed';

/** A compare-and-set transition of a leased delivery. */
export interface AxEventTransition {
  deliveryId: string;
  /** Must equal the delivery's current fencing token, or nothing changes. */
  fencingToken: number;
  now: number;
  status: AxEventRunStatus;
  /** For `queued`/`failed`: when to claim it again. */
  dueAt?: number;
  /** Overwrite the attempt count (used to hand a delivery back without counting a try). */
  attempt?: number;
  /** Resolved when known (resume learns it from the continuation). */
  targetId?: string;
  instanceKey?: string;
  startedAt?: number;
  output?: AxJsonValue | null;
  error?: AxEventErrorInfo | null;
  /** Sink writes to create in the same transaction (on success). */
  sinks?: AxEventSinkDraft[];
  /** Delete this continuation in the same transaction (a resume that succeeded). */
  consumeContinuationId?: string;
  /** Record a dead letter in the same transaction. */
  deadLetter?: { id: string; reason: AxEventDeadLetterReason };
  /**
   * Losing this transition to a database crash would only run the delivery again, which its
   * target allows (an idempotent target's success), or leave it leased until its lease runs
   * out (a hand-back): a store may commit it without waiting for it to be durable. Stores
   * that cannot tell the difference ignore it.
   */
  replayable?: boolean;
}

/** A continuation: a waiting run's promise to be resumed by a correlated event in the same identity scope. */
export interface AxEventContinuation {
  id: string;
  /** Identity scope of the run that registered it; a resume must come from the same scope. */
  scope: string;
  kind: string;
  value: string;
  targetId: string;
  instanceKey: string;
  runId: string;
  deliveryId: string;
  expiresAt: number | null;
  metadata: AxJsonValue | null;
  createdAt: number;
}

/** The public run record. */
export interface AxEventRun {
  id: string;
  deliveryId: string;
  routeId: string;
  action: AxEventAction;
  targetId: string | null;
  instanceKey: string;
  status: AxEventRunStatus;
  attempt: number;
  /** When the next attempt is due, for queued and failed runs. */
  dueAt: number | null;
  startedAt: number | null;
  finishedAt: number | null;
  output: AxJsonValue | null;
  error: AxEventErrorInfo | null;
  continuationIds: string[];
  /** Each sink write of this run. */
  sinks: {
    sinkId: string;
    deliveryId: string;
    status: AxEventRunStatus;
    attempt: number;
    error: AxEventErrorInfo | null;
  }[];
}

/**
 * Which runs {@link AxEventStore.listRuns} lists, and where a page starts. Filters combine
 * with AND; an empty or absent `status` list filters nothing.
 */
export interface AxEventRunQuery {
  /** Only runs in one of these statuses. */
  status?: readonly AxEventRunStatus[];
  /** Only runs of this route. */
  routeId?: string;
  /** Only runs of this target (a resume run's target is known once it found its continuation). */
  targetId?: string;
  /** Runs per page, 1 to 500. Default 50. */
  limit?: number;
  /** The `next` of the previous page: list the runs after it. Opaque; only this store reads it. */
  before?: string;
}

/** One page of {@link AxEventStore.listRuns}. */
export interface AxEventRunPage {
  /** Newest first: by last update (the latest of creation, start and finish), then by run id. */
  runs: AxEventRun[];
  /** Pass as `before` for the next page; absent on the last page. */
  next?: string;
}

/** A continuation as {@link AxEventStore.listContinuations} lists it. */
export interface AxEventContinuationListing extends AxEventContinuation {
  /** Past its `expiresAt`: a resume no longer finds it, and the next `prune` removes it. */
  expired: boolean;
}

/** What {@link AxEventStore.prune} removed. */
export interface AxEventPruneResult {
  deliveries: number;
  events: number;
  dedupeKeys: number;
  continuations: number;
  deadLetters: number;
}

/** What a store can do; the runtime refuses combinations a store cannot support. */
export interface AxEventStoreCapabilities {
  /** Safe for several runtimes (processes, machines) sharing it at once. */
  multiWorker: boolean;
}

/**
 * The persistence contract of the event runtime. Every method is atomic. Implementations:
 * `AxMemoryEventStore` (volatile), `AxSQLiteEventStore` and `AxPostgresEventStore` (`ax-mcp/node`).
 */
export interface AxEventStore {
  readonly durability: AxEventDurability;
  readonly capabilities: AxEventStoreCapabilities;
  /**
   * Optional: calls `listener` when work may have become claimable elsewhere (another process
   * on a shared store), so a runtime's worker loop wakes at once instead of at its next poll.
   * Returns the function that removes the listener. `AxPostgresEventStore` has it (`LISTEN`).
   * `count`, when the store knows it, is how many deliveries became claimable (a hint), and
   * `laterDueAt` the earliest due time among them when some are not due yet (a retry's backoff,
   * a delay): without it every one announced is due now, so a listener's next due time stands.
   */
  onWork?(listener: (count?: number, laterDueAt?: number) => void): () => void;
  /**
   * Record an event and its deliveries unless its dedupe key is known (then return the
   * original delivery ids), or report `full` without changing anything.
   */
  append(input: AxEventAppendInput): Promise<AxEventAppendResult>;
  /**
   * Optional: append a batch as {@link AxEventStore.append} would append its items one after
   * the other, in one round trip or transaction, and return one result per item, in order.
   * An item whose dedupe key is known, or was taken by an earlier item of the same batch, is
   * a `duplicate` with the original delivery ids. `full` means the item was not written and
   * may be appended again: a store refuses the whole batch at once (every result `full`), or
   * appends a prefix and refuses the rest, never a gap. An item over the store's size limit
   * throws before anything is written. Without it, the runtime calls `append` per item.
   */
  appendMany?(input: AxEventAppendManyInput): Promise<AxEventAppendResult[]>;
  /**
   * Lease up to `limit` claimable deliveries: queued or failed ones due by `now`, and
   * claimed or running ones whose lease expired (returned with `recovered: true`), never
   * one behind an earlier non-terminal delivery of its ordering key. Each claim increments
   * `attempt` and `fencingToken` and sets status `claimed`.
   */
  claim(input: { workerId: string; now: number; leaseMs: number; limit: number }): Promise<AxEventClaim[]>;
  /** Extend a lease. `held` is false once the fencing token is stale or the delivery is no longer leased. */
  heartbeat(input: {
    deliveryId: string;
    fencingToken: number;
    leaseUntil: number;
  }): Promise<{ held: boolean; cancelRequested: boolean }>;
  /**
   * Compare-and-set transition of a leased delivery. Returns false and changes nothing if the
   * fencing token is stale or the delivery is not claimed or running. A terminal, queued or
   * failed status releases the lease. A success that consumes a continuation also marks
   * the run that registered it `succeeded` once it has no continuation left.
   */
  transition(input: AxEventTransition): Promise<boolean>;
  /**
   * Cancel a run: a queued or failed one becomes `cancelled` at once (and its continuations
   * go); a claimed or running one gets `cancelRequested` (its worker sees it on the next
   * heartbeat). Returns the run, or `null` if unknown.
   */
  cancel(input: { id: string; now: number }): Promise<AxEventRun | null>;
  /**
   * Register continuations for a leased delivery (fenced like a transition). Unique per
   * (scope, kind, value): a live one owned by another delivery is a conflict (throws
   * `AxEventError` `continuation_conflict`); an expired one, or one the same delivery owns, is
   * replaced. Returns false if the fencing token is stale.
   */
  putContinuations(input: {
    deliveryId: string;
    fencingToken: number;
    now: number;
    continuations: AxEventContinuation[];
  }): Promise<boolean>;
  /** The live continuation for (scope, kind, value), or `null` (missing or expired). */
  findContinuation(input: {
    scope: string;
    kind: string;
    value: string;
    now: number;
  }): Promise<AxEventContinuation | null>;
  /** A run by run id or delivery id. */
  getRun(id: string): Promise<AxEventRun | null>;
  /**
   * Optional: every run the store holds, newest first by last update (the latest of creation,
   * start and finish), then by run id, filtered and in pages; each run as `getRun` returns it
   * (sink writes are part of their run, not runs of their own). Page on with `before: next`:
   * a run added meanwhile is newer than the cursor and never shows up on a later page, so
   * paging neither skips nor repeats a run that is not updated meanwhile (a run that is moves
   * to the front). A malformed `before`, an unknown status or a `limit` outside 1–500 throws
   * `AxEventInputError` (`invalid_input`); nothing is ignored.
   */
  listRuns?(input?: AxEventRunQuery): Promise<AxEventRunPage>;
  /**
   * Optional: the continuations the store holds, newest first (by creation, then id), live
   * ones and those expired by `now` that `prune` has not removed yet (`expired: true`).
   * `limit` is 1 to 500, default 50; outside it throws `AxEventInputError`.
   */
  listContinuations?(input: { now: number; limit?: number }): Promise<AxEventContinuationListing[]>;
  /** Dead letters not yet redriven, oldest first. */
  listDeadLetters(input?: { limit?: number }): Promise<AxEventDeadLetter[]>;
  /**
   * Requeue the delivery or sink write of a dead letter (attempts start again) and retire the
   * dead letter. Returns the requeued delivery id, or `null` if the dead letter is unknown.
   */
  redrive(input: { deadLetterId: string; now: number }): Promise<string | null>;
  /** The earliest time something becomes claimable (a due time or a lease expiry), or `null`. */
  nextDueAt(): Promise<number | null>;
  /** How many deliveries are not terminal. */
  countPending(): Promise<number>;
  /** Expire every lease now (a single worker restarting after a crash takes its work back). */
  recoverLeases(input: { now: number }): Promise<number>;
  /** Remove what the store's retention policy lets go, and expired continuations. */
  prune(input: { now: number }): Promise<AxEventPruneResult>;
  close(): Promise<void>;
}

/** @deprecated Renamed {@link AxEventStore}: public names start with `Ax`. */
export type EventStore = AxEventStore;
