/**
 * The in-memory event store: fast, bounded, and volatile (everything is lost with the
 * process). A runtime refuses it for sources that require durability unless
 * `allowVolatile: true`.
 */

import { number, object } from '../options/check.js';
import { AxEventClosedError, AxEventError, AxEventInputError, assertEventOptions } from './errors.js';
import type {
  AxEventAppendInput,
  AxEventAppendResult,
  AxEventClaim,
  AxEventContinuation,
  AxEventDeadLetter,
  AxEventDelivery,
  AxEventPruneResult,
  AxEventRun,
  AxEventStoredEvent,
  AxEventTransition,
  EventStore,
} from './store.js';
import { isTerminalRunStatus } from './store.js';
import { copyDelivery, deliveryToRun, NUL, newDelivery, nextDueOf } from './store-helpers.js';

/** Limits and retention of {@link AxMemoryEventStore}. */
export interface AxMemoryEventStoreOptions {
  /** Non-terminal deliveries held at once before `append` reports full. Default 10,000. */
  maxPendingDeliveries?: number;
  /** Bytes of events with pending deliveries held at once before `append` reports full. Default 64 MiB. */
  maxPendingBytes?: number;
  /** Largest single event, in bytes. Default 1 MiB. */
  maxEventBytes?: number;
  /** Finished runs kept for `getRun` (oldest evicted first). Default 10,000. */
  maxRetainedRuns?: number;
  /** Dedupe keys kept (oldest evicted first); bounds the dedupe window. Default 100,000. */
  maxDedupeKeys?: number;
  /** How long finished runs and dedupe keys are kept. Default one hour. */
  retentionMs?: number;
  /** How long dead letters are kept. Default seven days. */
  deadLetterRetentionMs?: number;
}

const COUNT = number({ integer: true, min: 1 });
const DURATION = number({ min: 0 });

/** What {@link AxMemoryEventStore} accepts; checked once in the constructor. */
export const MEMORY_STORE_OPTIONS = object(
  {
    maxPendingDeliveries: COUNT,
    maxPendingBytes: COUNT,
    maxEventBytes: COUNT,
    maxRetainedRuns: number({ integer: true, min: 0 }),
    maxDedupeKeys: number({ integer: true, min: 0 }),
    retentionMs: DURATION,
    deadLetterRetentionMs: DURATION,
  },
  { expected: 'options { maxPendingDeliveries?, maxEventBytes?, retentionMs?, … }' },
);

interface EventSlot {
  event: AxEventStoredEvent;
  refs: number;
  pendingRefs: number;
}

/** A bounded, volatile {@link EventStore} held in memory. */
export class AxMemoryEventStore implements EventStore {
  readonly durability = 'volatile' as const;
  readonly capabilities = { multiWorker: false };
  readonly #o: Required<AxMemoryEventStoreOptions>;
  readonly #events = new Map<string, EventSlot>();
  readonly #deliveries = new Map<string, AxEventDelivery>();
  readonly #runs = new Map<string, string>();
  readonly #sinks = new Map<string, string[]>();
  readonly #dedupe = new Map<string, { deliveryIds: string[]; at: number }>();
  readonly #queues = new Map<string, AxEventDelivery[]>();
  readonly #ready = new Set<string>();
  readonly #coalesce = new Map<string, string>();
  readonly #continuations = new Map<string, AxEventContinuation>();
  readonly #continuationKeys = new Map<string, string>();
  readonly #deadLetters = new Map<string, AxEventDeadLetter>();
  readonly #finished: { id: string; at: number }[] = [];
  #finishedHead = 0;
  #seq = 0;
  #pending = 0;
  #pendingBytes = 0;
  #closed = false;

  constructor(options: AxMemoryEventStoreOptions = {}) {
    assertEventOptions(MEMORY_STORE_OPTIONS, options, 'AxMemoryEventStore options');
    this.#o = {
      maxPendingDeliveries: options.maxPendingDeliveries ?? 10_000,
      maxPendingBytes: options.maxPendingBytes ?? 64 * 1024 * 1024,
      maxEventBytes: options.maxEventBytes ?? 1024 * 1024,
      maxRetainedRuns: options.maxRetainedRuns ?? 10_000,
      maxDedupeKeys: options.maxDedupeKeys ?? 100_000,
      retentionMs: options.retentionMs ?? 60 * 60 * 1000,
      deadLetterRetentionMs: options.deadLetterRetentionMs ?? 7 * 24 * 60 * 60 * 1000,
    };
  }

  #open(): void {
    if (this.#closed) throw new AxEventClosedError('memory event store');
  }

  async append(input: AxEventAppendInput): Promise<AxEventAppendResult> {
    this.#open();
    const key = [input.dedupe.scope, input.dedupe.source, input.dedupe.id].join(NUL);
    const known = this.#dedupe.get(key);
    if (known) return { status: 'duplicate', deliveryIds: [...known.deliveryIds] };
    if (input.event.bytes > this.#o.maxEventBytes) {
      throw new AxEventInputError('event_too_large', `The event exceeds ${this.#o.maxEventBytes} bytes`);
    }
    const fresh = input.deliveries.filter((d) => !this.#coalescible(d.coalesceKey));
    if (fresh.length > 0 && this.#pending + fresh.length > this.#o.maxPendingDeliveries) {
      return { status: 'full', reason: `${this.#pending} pending deliveries` };
    }
    if (input.deliveries.length > 0 && this.#pendingBytes + input.event.bytes > this.#o.maxPendingBytes) {
      return { status: 'full', reason: `${this.#pendingBytes} pending bytes` };
    }
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
    this.#dedupe.set(key, { deliveryIds: ids, at: input.now });
    while (this.#dedupe.size > this.#o.maxDedupeKeys) {
      const oldest = this.#dedupe.keys().next().value;
      if (oldest === undefined) break;
      this.#dedupe.delete(oldest);
    }
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
    this.#enqueue(d);
  }

  #enqueue(d: AxEventDelivery): void {
    if (d.orderingKey === null) {
      this.#ready.add(d.id);
      return;
    }
    const queue = this.#queues.get(d.orderingKey);
    if (!queue) {
      this.#queues.set(d.orderingKey, [d]);
      this.#ready.add(d.id);
      return;
    }
    const last = queue[queue.length - 1] as AxEventDelivery;
    if (last.seq < d.seq) {
      // The common case: a new delivery goes to the back and the head does not change.
      queue.push(d);
      return;
    }
    // A redriven delivery may go back in front of later ones.
    const head = queue[0] as AxEventDelivery;
    let i = queue.length;
    while (i > 0 && (queue[i - 1] as AxEventDelivery).seq > d.seq) i--;
    queue.splice(i, 0, d);
    if (queue[0] !== head) {
      this.#ready.delete(head.id);
      this.#ready.add(d.id);
    }
  }

  #dequeue(d: AxEventDelivery): void {
    this.#ready.delete(d.id);
    if (d.orderingKey === null) return;
    const queue = this.#queues.get(d.orderingKey);
    if (!queue) return;
    const i = queue.indexOf(d);
    if (i >= 0) queue.splice(i, 1);
    if (queue.length === 0) this.#queues.delete(d.orderingKey);
    else this.#ready.add((queue[0] as AxEventDelivery).id);
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
    this.#dequeue(d);
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
    while (this.#finished.length - this.#finishedHead > this.#o.maxRetainedRuns) {
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
    this.#enqueue(d);
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
    for (const id of d.continuationIds) this.#dropContinuation(id);
  }

  async claim(input: {
    workerId: string;
    now: number;
    leaseMs: number;
    limit: number;
  }): Promise<AxEventClaim[]> {
    this.#open();
    const claims: AxEventClaim[] = [];
    for (const id of this.#ready) {
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
        for (const id of d.continuationIds) this.#dropContinuation(id);
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
    this.#dropContinuation(continuationId);
    const owner = this.#deliveries.get(c.deliveryId);
    if (owner && owner.status === 'waiting_event') {
      const live = owner.continuationIds.some((id) => this.#continuations.has(id));
      if (!live) {
        owner.status = 'succeeded';
        owner.finishedAt = now;
      }
    }
  }

  #dropContinuation(id: string): void {
    const c = this.#continuations.get(id);
    if (!c) return;
    this.#continuations.delete(id);
    const key = [c.scope, c.kind, c.value].join(NUL);
    if (this.#continuationKeys.get(key) === id) this.#continuationKeys.delete(key);
  }

  async cancel(input: { id: string; now: number }): Promise<AxEventRun | null> {
    this.#open();
    const d = this.#byRunOrDelivery(input.id);
    if (!d) return null;
    if (d.status === 'queued' || d.status === 'failed') {
      d.status = 'cancelled';
      this.#finish(d, input.now);
      for (const id of d.continuationIds) this.#dropContinuation(id);
    } else if (d.status === 'claimed' || d.status === 'running') {
      d.cancelRequested = true;
    } else if (d.status === 'waiting_event') {
      d.status = 'cancelled';
      d.finishedAt = input.now;
      for (const id of d.continuationIds) this.#dropContinuation(id);
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
    for (const c of input.continuations) {
      const existingId = this.#continuationKeys.get([c.scope, c.kind, c.value].join(NUL));
      const existing = existingId ? this.#continuations.get(existingId) : undefined;
      const live = existing && (existing.expiresAt === null || existing.expiresAt > input.now);
      if (live && existing.deliveryId !== d.id) {
        throw new AxEventError(
          'continuation_conflict',
          `A live continuation of kind "${c.kind}" already exists`,
        );
      }
    }
    for (const c of input.continuations) {
      const key = [c.scope, c.kind, c.value].join(NUL);
      const existingId = this.#continuationKeys.get(key);
      if (existingId) this.#dropContinuation(existingId);
      this.#continuations.set(c.id, { ...c });
      this.#continuationKeys.set(key, c.id);
      if (!d.continuationIds.includes(c.id)) d.continuationIds.push(c.id);
    }
    return true;
  }

  async findContinuation(input: { scope: string; kind: string; value: string; now: number }) {
    this.#open();
    const id = this.#continuationKeys.get([input.scope, input.kind, input.value].join(NUL));
    const c = id ? this.#continuations.get(id) : undefined;
    if (!c || (c.expiresAt !== null && c.expiresAt <= input.now)) return null;
    return { ...c };
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
    for (const id of this.#ready) {
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
    for (const [id, c] of this.#continuations) {
      if (c.expiresAt !== null && c.expiresAt <= input.now) {
        this.#dropContinuation(id);
        result.continuations++;
      }
    }
    const horizon = input.now - this.#o.retentionMs;
    for (const [key, entry] of this.#dedupe) {
      if (entry.at > horizon) break;
      this.#dedupe.delete(key);
      result.dedupeKeys++;
    }
    for (const [id, letter] of this.#deadLetters) {
      if (letter.createdAt > input.now - this.#o.deadLetterRetentionMs) continue;
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
