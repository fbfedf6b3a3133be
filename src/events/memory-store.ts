/**
 * The in-memory event store: fast, bounded, and volatile (everything is lost with the
 * process). A runtime refuses it for sources that require durability unless
 * `allowVolatile: true`.
 */

import { AxEventClosedError, AxEventInputError, assertEventOptions } from './errors.js';
import { MemoryContinuations } from './memory-continuations.js';
import { MemoryDedupe } from './memory-dedupe.js';
import { OrderingQueues } from './memory-queues.js';
import {
  type AxMemoryEventStoreOptions,
  MEMORY_STORE_OPTIONS,
  memoryStoreLimits,
} from './memory-store-options.js';
import { checkContinuationQuery, checkRunQuery, lastUpdateOf, pageOf } from './run-listing.js';
import type {
  AxEventAppendInput,
  AxEventAppendManyInput,
  AxEventAppendResult,
  AxEventClaim,
  AxEventContinuation,
  AxEventContinuationListing,
  AxEventDeadLetter,
  AxEventDelivery,
  AxEventPruneResult,
  AxEventRun,
  AxEventRunPage,
  AxEventRunQuery,
  AxEventStore,
  AxEventStoredEvent,
  AxEventTransition,
} from './store.js';
import { isTerminalRunStatus } from './store.js';
import { copyDelivery, deliveryToRun, newDelivery, nextDueOf } from './store-helpers.js';

export { type AxMemoryEventStoreOptions, MEMORY_STORE_OPTIONS } from './memory-store-options.js';

interface EventSlot {
  event: AxEventStoredEvent;
  refs: number;
  pendingRefs: number;
}

/** A bounded, volatile {@link AxEventStore} held in memory. */
export class AxMemoryEventStore implements AxEventStore {
  readonly durability = 'volatile' as const;
  readonly capabilities = { multiWorker: false };
  readonly #limits: Required<AxMemoryEventStoreOptions>;
  readonly #events = new Map<string, EventSlot>();
  readonly #deliveries = new Map<string, AxEventDelivery>();
  readonly #runs = new Map<string, string>();
  readonly #sinks = new Map<string, string[]>();
  readonly #dedupe: MemoryDedupe;
  readonly #queues = new OrderingQueues();
  readonly #coalesce = new Map<string, string>();
  readonly #continuations = new MemoryContinuations();
  readonly #deadLetters = new Map<string, AxEventDeadLetter>();
  readonly #finished: { id: string; at: number }[] = [];
  #finishedHead = 0;
  #seq = 0;
  #pending = 0;
  #pendingBytes = 0;
  #closed = false;

  constructor(options: AxMemoryEventStoreOptions = {}) {
    assertEventOptions(MEMORY_STORE_OPTIONS, options, 'AxMemoryEventStore options');
    this.#limits = memoryStoreLimits(options);
    this.#dedupe = new MemoryDedupe(this.#limits.maxDedupeKeys);
  }

  #open(): void {
    if (this.#closed) throw new AxEventClosedError('memory event store');
  }

  async append(input: AxEventAppendInput): Promise<AxEventAppendResult> {
    this.#open();
    return this.#append(input);
  }

  /** All or nothing: the room and the sizes of the whole batch are checked before anything is written. */
  async appendMany(input: AxEventAppendManyInput): Promise<AxEventAppendResult[]> {
    this.#open();
    const seen = new Set<string>();
    let fresh = 0;
    let bytes = 0;
    for (const item of input.items) {
      const key = MemoryDedupe.keyOf(item);
      if (seen.has(key) || this.#dedupe.has(key)) continue;
      seen.add(key);
      this.#checkSize(item.event.bytes);
      // Counted as if none coalesced with an earlier item of the batch: never too little room.
      fresh += item.deliveries.filter((d) => !this.#coalescible(d.coalesceKey)).length;
      if (item.deliveries.length > 0) bytes += item.event.bytes;
    }
    const full = this.#noRoom(fresh, bytes);
    if (full !== null) return input.items.map(() => ({ status: 'full', reason: full }));
    return input.items.map((item) => this.#append({ ...item, now: input.now }));
  }

  #checkSize(bytes: number): void {
    if (bytes > this.#limits.maxEventBytes)
      throw new AxEventInputError('event_too_large', `The event exceeds ${this.#limits.maxEventBytes} bytes`);
  }

  /** Why `deliveries` more pending deliveries holding `bytes` more do not fit, or `null`. */
  #noRoom(deliveries: number, bytes: number): string | null {
    if (deliveries > 0 && this.#pending + deliveries > this.#limits.maxPendingDeliveries)
      return `${this.#pending} pending deliveries`;
    if (bytes > 0 && this.#pendingBytes + bytes > this.#limits.maxPendingBytes)
      return `${this.#pendingBytes} pending bytes`;
    return null;
  }

  #append(input: AxEventAppendInput): AxEventAppendResult {
    const key = MemoryDedupe.keyOf(input);
    const known = this.#dedupe.deliveriesOf(key);
    if (known) return { status: 'duplicate', deliveryIds: known };
    this.#checkSize(input.event.bytes);
    const fresh = input.deliveries.filter((d) => !this.#coalescible(d.coalesceKey)).length;
    const full = this.#noRoom(fresh, input.deliveries.length > 0 ? input.event.bytes : 0);
    if (full !== null) return { status: 'full', reason: full };
    const ids: string[] = [];
    if (input.deliveries.length > 0) {
      const slot: EventSlot = { event: input.event, refs: 0, pendingRefs: 0 };
      this.#events.set(input.event.key, slot);
      for (const draft of input.deliveries) {
        const existingId = draft.coalesceKey ? this.#coalesce.get(draft.coalesceKey) : undefined;
        const existing = existingId ? this.#deliveries.get(existingId) : undefined;
        if (existing && existing.status === 'queued' && existing.attempt === 0) {
          this.#unref(existing.eventKey, true);
          existing.eventKey = input.event.key;
          existing.dueAt = draft.dueAt;
          existing.correlation = draft.correlation;
          existing.planError = draft.planError;
          slot.refs++;
          slot.pendingRefs++;
          if (slot.pendingRefs === 1) this.#pendingBytes += slot.event.bytes;
          ids.push(existing.id);
          continue;
        }
        const d = newDelivery(draft, {
          kind: 'event',
          sinkId: null,
          eventKey: input.event.key,
          seq: ++this.#seq,
          now: input.now,
        });
        slot.refs++;
        slot.pendingRefs++;
        if (slot.pendingRefs === 1) this.#pendingBytes += slot.event.bytes;
        this.#insert(d);
        this.#runs.set(d.runId, d.id);
        if (d.coalesceKey) this.#coalesce.set(d.coalesceKey, d.id);
        ids.push(d.id);
      }
      if (slot.refs === 0) this.#events.delete(input.event.key);
    }
    this.#dedupe.remember(key, ids, input.now);
    return { status: 'appended', deliveryIds: ids };
  }

  #coalescible(coalesceKey: string | null): boolean {
    if (!coalesceKey) return false;
    const id = this.#coalesce.get(coalesceKey);
    const d = id ? this.#deliveries.get(id) : undefined;
    return d !== undefined && d.status === 'queued' && d.attempt === 0;
  }

  #insert(d: AxEventDelivery): void {
    this.#deliveries.set(d.id, d);
    this.#pending++;
    this.#queues.add(d);
  }

  #unref(eventKey: string | null, pending: boolean): void {
    if (!eventKey) return;
    const slot = this.#events.get(eventKey);
    if (!slot) return;
    slot.refs--;
    if (pending) {
      slot.pendingRefs--;
      if (slot.pendingRefs === 0) this.#pendingBytes -= slot.event.bytes;
    }
    if (slot.refs <= 0) this.#events.delete(eventKey);
  }

  #finish(d: AxEventDelivery, now: number): void {
    this.#pending--;
    this.#queues.remove(d);
    if (d.coalesceKey && this.#coalesce.get(d.coalesceKey) === d.id) this.#coalesce.delete(d.coalesceKey);
    const slot = d.eventKey ? this.#events.get(d.eventKey) : undefined;
    if (slot) {
      slot.pendingRefs--;
      if (slot.pendingRefs === 0) this.#pendingBytes -= slot.event.bytes;
    }
    d.finishedAt = now;
    d.leaseOwner = null;
    d.leaseUntil = null;
    if (d.kind === 'event') this.#finished.push({ id: d.id, at: now });
    while (this.#finished.length - this.#finishedHead > this.#limits.maxRetainedRuns) {
      const entry = this.#finished[this.#finishedHead++] as { id: string; at: number };
      const old = this.#deliveries.get(entry.id);
      if (old && old.finishedAt === entry.at && this.#evictable(old)) this.#forget(old);
    }
    if (this.#finishedHead > 4096 && this.#finishedHead * 2 > this.#finished.length) {
      this.#finished.splice(0, this.#finishedHead);
      this.#finishedHead = 0;
    }
  }

  /** A finished run may go when nothing can still need it: no dead letter, no live continuation, no pending sink. */
  #evictable(d: AxEventDelivery): boolean {
    if (!isTerminalRunStatus(d.status) || d.status === 'dead_lettered' || d.status === 'outcome_unknown')
      return false;
    if (d.continuationIds.some((id) => this.#continuations.has(id))) return false;
    return (this.#sinks.get(d.runId) ?? []).every((id) => {
      const s = this.#deliveries.get(id);
      return !s || s.status === 'succeeded' || s.status === 'cancelled';
    });
  }

  #reopen(d: AxEventDelivery): void {
    this.#pending++;
    const slot = d.eventKey ? this.#events.get(d.eventKey) : undefined;
    if (slot) {
      slot.pendingRefs++;
      if (slot.pendingRefs === 1) this.#pendingBytes += slot.event.bytes;
    }
    d.finishedAt = null;
    this.#queues.add(d);
  }

  #forget(d: AxEventDelivery): void {
    this.#deliveries.delete(d.id);
    this.#unref(d.eventKey, false);
    if (d.kind === 'event') {
      this.#runs.delete(d.runId);
      for (const sinkId of this.#sinks.get(d.runId) ?? []) {
        const s = this.#deliveries.get(sinkId);
        if (s && isTerminalRunStatus(s.status)) this.#deliveries.delete(sinkId);
      }
      this.#sinks.delete(d.runId);
    }
    for (const id of d.continuationIds) this.#continuations.drop(id);
  }

  async claim(input: {
    workerId: string;
    now: number;
    leaseMs: number;
    limit: number;
  }): Promise<AxEventClaim[]> {
    this.#open();
    const claims: AxEventClaim[] = [];
    for (const id of this.#queues.ready()) {
      if (claims.length >= input.limit) break;
      const d = this.#deliveries.get(id);
      if (!d) continue;
      const queuedDue = (d.status === 'queued' || d.status === 'failed') && d.dueAt <= input.now;
      const expired = (d.status === 'claimed' || d.status === 'running') && (d.leaseUntil ?? 0) <= input.now;
      if (!queuedDue && !expired) continue;
      const previousStatus = d.status;
      if (d.coalesceKey && this.#coalesce.get(d.coalesceKey) === d.id) this.#coalesce.delete(d.coalesceKey);
      d.status = 'claimed';
      d.attempt++;
      d.fencingToken++;
      d.leaseOwner = input.workerId;
      d.leaseUntil = input.now + input.leaseMs;
      const event = d.eventKey ? (this.#events.get(d.eventKey)?.event ?? null) : null;
      claims.push({
        delivery: copyDelivery(d),
        event,
        recovered: expired,
        previousStatus,
      });
    }
    return claims;
  }

  #leased(deliveryId: string, fencingToken: number): AxEventDelivery | null {
    const d = this.#deliveries.get(deliveryId);
    if (!d || d.fencingToken !== fencingToken) return null;
    return d.status === 'claimed' || d.status === 'running' ? d : null;
  }

  async heartbeat(input: { deliveryId: string; fencingToken: number; leaseUntil: number }) {
    this.#open();
    const d = this.#leased(input.deliveryId, input.fencingToken);
    if (!d) return { held: false, cancelRequested: false };
    d.leaseUntil = input.leaseUntil;
    return { held: true, cancelRequested: d.cancelRequested };
  }

  async transition(t: AxEventTransition): Promise<boolean> {
    this.#open();
    const d = this.#leased(t.deliveryId, t.fencingToken);
    if (!d) return false;
    if (t.targetId !== undefined) d.targetId = t.targetId;
    if (t.instanceKey !== undefined) d.instanceKey = t.instanceKey;
    if (t.startedAt !== undefined) d.startedAt = t.startedAt;
    if (t.output !== undefined) d.output = t.output;
    if (t.error !== undefined) d.error = t.error;
    if (t.attempt !== undefined) d.attempt = t.attempt;
    d.status = t.status;
    if (t.status === 'queued' || t.status === 'failed') {
      d.dueAt = t.dueAt ?? t.now;
      d.leaseOwner = null;
      d.leaseUntil = null;
    } else if (isTerminalRunStatus(t.status)) {
      this.#finish(d, t.now);
      if (t.status === 'dead_lettered' || t.status === 'cancelled') {
        for (const id of d.continuationIds) this.#continuations.drop(id);
      }
    }
    for (const sink of t.sinks ?? []) this.#addSink(d, sink.id, sink.sinkId, t.now);
    if (t.consumeContinuationId) this.#consume(t.consumeContinuationId, t.now);
    if (t.deadLetter) {
      this.#deadLetters.set(t.deadLetter.id, {
        id: t.deadLetter.id,
        kind: d.kind === 'sink' ? 'sink' : 'delivery',
        deliveryId: d.id,
        runId: d.runId,
        sinkId: d.sinkId,
        reason: t.deadLetter.reason,
        error: d.error,
        createdAt: t.now,
      });
    }
    return true;
  }

  #addSink(parent: AxEventDelivery, id: string, sinkId: string, now: number): void {
    const draft = {
      id,
      runId: parent.runId,
      routeId: parent.routeId,
      action: parent.action,
      targetId: parent.targetId,
      instanceKey: parent.instanceKey,
      orderingKey: null,
      dueAt: now,
      coalesceKey: null,
      correlation: null,
      planError: null,
    };
    const s = newDelivery(draft, { kind: 'sink', sinkId, eventKey: null, seq: ++this.#seq, now });
    this.#insert(s);
    const list = this.#sinks.get(parent.runId) ?? [];
    list.push(id);
    this.#sinks.set(parent.runId, list);
  }

  #consume(continuationId: string, now: number): void {
    const c = this.#continuations.get(continuationId);
    if (!c) return;
    this.#continuations.drop(continuationId);
    const owner = this.#deliveries.get(c.deliveryId);
    if (owner && owner.status === 'waiting_event') {
      const live = owner.continuationIds.some((id) => this.#continuations.has(id));
      if (!live) {
        owner.status = 'succeeded';
        owner.finishedAt = now;
      }
    }
  }

  async cancel(input: { id: string; now: number }): Promise<AxEventRun | null> {
    this.#open();
    const d = this.#byRunOrDelivery(input.id);
    if (!d) return null;
    if (d.status === 'queued' || d.status === 'failed') {
      d.status = 'cancelled';
      this.#finish(d, input.now);
      for (const id of d.continuationIds) this.#continuations.drop(id);
    } else if (d.status === 'claimed' || d.status === 'running') {
      d.cancelRequested = true;
    } else if (d.status === 'waiting_event') {
      d.status = 'cancelled';
      d.finishedAt = input.now;
      for (const id of d.continuationIds) this.#continuations.drop(id);
    }
    return this.#run(d);
  }

  async putContinuations(input: {
    deliveryId: string;
    fencingToken: number;
    now: number;
    continuations: AxEventContinuation[];
  }): Promise<boolean> {
    this.#open();
    const d = this.#leased(input.deliveryId, input.fencingToken);
    if (!d) return false;
    this.#continuations.put(d.id, input.continuations, input.now);
    for (const c of input.continuations) if (!d.continuationIds.includes(c.id)) d.continuationIds.push(c.id);
    return true;
  }

  async findContinuation(input: { scope: string; kind: string; value: string; now: number }) {
    this.#open();
    return this.#continuations.find(input, input.now);
  }

  #byRunOrDelivery(id: string): AxEventDelivery | undefined {
    const d = this.#deliveries.get(this.#runs.get(id) ?? id);
    return d?.kind === 'event' ? d : undefined;
  }

  #run(d: AxEventDelivery): AxEventRun {
    const sinks = (this.#sinks.get(d.runId) ?? []).flatMap((id) => {
      const s = this.#deliveries.get(id);
      return s ? [s] : [];
    });
    return deliveryToRun(d, sinks);
  }

  async getRun(id: string): Promise<AxEventRun | null> {
    this.#open();
    const d = this.#byRunOrDelivery(id);
    return d ? this.#run(d) : null;
  }

  /** Scans every run it holds (at most `maxRetainedRuns` finished ones and the pending ones). */
  async listRuns(input?: AxEventRunQuery): Promise<AxEventRunPage> {
    this.#open();
    const query = checkRunQuery(input);
    const statuses = query.statuses && new Set(query.statuses);
    const matching: AxEventDelivery[] = [];
    for (const deliveryId of this.#runs.values()) {
      const d = this.#deliveries.get(deliveryId);
      if (!d || (statuses && !statuses.has(d.status))) continue;
      if (query.routeId !== null && d.routeId !== query.routeId) continue;
      if (query.targetId !== null && d.targetId !== query.targetId) continue;
      matching.push(d);
    }
    const { page, next } = pageOf(matching, (d) => ({ at: lastUpdateOf(d), id: d.runId }), query);
    return { runs: page.map((d) => this.#run(d)), ...(next === undefined ? {} : { next }) };
  }

  async listContinuations(input: { now: number; limit?: number }): Promise<AxEventContinuationListing[]> {
    this.#open();
    const { now, limit } = checkContinuationQuery(input);
    return this.#continuations.list(now, limit);
  }

  async listDeadLetters(input: { limit?: number } = {}): Promise<AxEventDeadLetter[]> {
    this.#open();
    return [...this.#deadLetters.values()].slice(0, input.limit ?? 1000).map((l) => ({ ...l }));
  }

  async redrive(input: { deadLetterId: string; now: number }): Promise<string | null> {
    this.#open();
    const letter = this.#deadLetters.get(input.deadLetterId);
    if (!letter) return null;
    const d = this.#deliveries.get(letter.deliveryId);
    this.#deadLetters.delete(input.deadLetterId);
    if (!d || !isTerminalRunStatus(d.status)) return d ? d.id : null;
    d.status = 'queued';
    d.attempt = 0;
    d.dueAt = input.now;
    d.cancelRequested = false;
    this.#reopen(d);
    return d.id;
  }

  async nextDueAt(): Promise<number | null> {
    this.#open();
    let min: number | null = null;
    for (const id of this.#queues.ready()) {
      const d = this.#deliveries.get(id);
      if (!d) continue;
      const at = nextDueOf(d);
      if (at !== null && (min === null || at < min)) min = at;
    }
    return min;
  }

  async countPending(): Promise<number> {
    this.#open();
    return this.#pending;
  }

  async recoverLeases(input: { now: number }): Promise<number> {
    this.#open();
    let n = 0;
    for (const d of this.#deliveries.values()) {
      if ((d.status === 'claimed' || d.status === 'running') && (d.leaseUntil ?? 0) > input.now) {
        d.leaseUntil = input.now;
        n++;
      }
    }
    return n;
  }

  async prune(input: { now: number }): Promise<AxEventPruneResult> {
    this.#open();
    const result: AxEventPruneResult = {
      deliveries: 0,
      events: 0,
      dedupeKeys: 0,
      continuations: 0,
      deadLetters: 0,
    };
    result.continuations = this.#continuations.pruneExpired(input.now);
    const horizon = input.now - this.#limits.retentionMs;
    result.dedupeKeys = this.#dedupe.pruneUntil(horizon);
    for (const [id, letter] of this.#deadLetters) {
      if (letter.createdAt > input.now - this.#limits.deadLetterRetentionMs) continue;
      this.#deadLetters.delete(id);
      result.deadLetters++;
    }
    const lettered = new Set([...this.#deadLetters.values()].map((l) => l.deliveryId));
    const eventsBefore = this.#events.size;
    for (const d of [...this.#deliveries.values()]) {
      if (d.kind !== 'event' || !isTerminalRunStatus(d.status)) continue;
      if ((d.finishedAt ?? input.now) > horizon) continue;
      const sinks = this.#sinks.get(d.runId) ?? [];
      const held = lettered.has(d.id) || sinks.some((id) => lettered.has(id));
      const waiting = d.continuationIds.some((id) => this.#continuations.has(id));
      const sinksDone = sinks.every((id) =>
        isTerminalRunStatus(this.#deliveries.get(id)?.status ?? 'succeeded'),
      );
      if (held || waiting || !sinksDone) continue;
      result.deliveries += 1 + sinks.length;
      this.#forget(d);
    }
    result.events = eventsBefore - this.#events.size;
    return result;
  }

  async close(): Promise<void> {
    this.#closed = true;
  }
}
