/**
 * Runs one claimed delivery to a recorded outcome: input mapping, continuations,
 * invocation, output persistence, retries, dead letters, sink writes. Internal.
 */

import { SpanStatusCode, trace } from '@opentelemetry/api';
import { backoffDelayMs } from '../backoff/backoff.js';
import { findOptionsProblem } from '../options/check.js';
import type { AxEventClock } from './clock.js';
import { identityScope } from './envelope.js';
import {
  AxEventContinuationNotFoundError,
  AxEventError,
  AxEventInputError,
  AxEventLeaseLostError,
  AxEventOutcomeUnknownError,
  toEventErrorInfo,
} from './errors.js';
import {
  type AxEventInputField,
  applyInputPlan,
  eventInput,
  indexInputFields,
  validateInput,
} from './input.js';
import { assertPlainJson, cloneJson, toPersistableJson } from './json.js';
import { abortCode, Heartbeats, LeaseKeeper } from './lease.js';
import { eventPath, resolveKeyPath } from './path.js';
import type { AxEventRetryPolicy } from './retry.js';
import type { AxEventRouteDefinition } from './route.js';
import { routeTargetId } from './routing.js';
import { type AxEventStateStore, stateKey } from './state.js';
import type {
  AxEventClaim,
  AxEventContinuation,
  AxEventDeadLetterReason,
  AxEventDelivery,
  AxEventRunStatus,
  AxEventStore,
  AxEventStoredEvent,
  AxEventTransition,
} from './store.js';
import {
  type AxEventContext,
  type AxEventContinuationRequest,
  type AxEventHandlerContext,
  type AxEventTargetDefinition,
  CONTINUATION_REQUEST,
} from './target.js';

/** What the executor needs from the runtime. */
export interface ExecutorDeps {
  store: AxEventStore;
  clock: AxEventClock;
  routes: ReadonlyMap<string, AxEventRouteDefinition>;
  targets: ReadonlyMap<string, AxEventTargetDefinition>;
  stateStore: AxEventStateStore;
  retry: AxEventRetryPolicy;
  random: () => number;
  leaseMs: number;
  onError: (error: unknown, deliveryId: string) => void;
}

type Tx = Omit<AxEventTransition, 'deliveryId' | 'fencingToken' | 'now'>;

/** What failed, as {@link Executor} decides what the failure means. */
interface FailedAttempt {
  /**
   * Whether running it again cannot repeat an effect: an idempotent target, a target that
   * never started, a route's own handler, a sink write (it carries an idempotency key).
   */
  retrySafe: boolean;
  /** Attempts in all before it is dead-lettered. */
  maxAttempts: number;
  /**
   * A sink write: its run already succeeded, so it is not cancelled with it, and whatever it
   * threw it is retried, then dead-lettered as `sink_failed`.
   */
  sink?: boolean;
}

const tracer = trace.getTracer('ax-mcp');
const defaultPlan = eventInput().project(eventPath.data());
const fieldIndexes = new WeakMap<AxEventTargetDefinition, Map<string, AxEventInputField> | undefined>();

function fieldsOf(target: AxEventTargetDefinition): Map<string, AxEventInputField> | undefined {
  if (!fieldIndexes.has(target)) {
    fieldIndexes.set(target, target.inputFields ? indexInputFields(target.inputFields) : undefined);
  }
  return fieldIndexes.get(target);
}

/** Executes claims. One instance per runtime. */
export class Executor {
  /**
   * Starts not written yet: an attempt whose replay is harmless does not mark itself
   * `running` durably; what that mark would have written goes with its next transition.
   */
  readonly #unwrittenStarts = new WeakMap<AxEventDelivery, Omit<Tx, 'status'>>();
  readonly #heartbeats: Heartbeats;

  constructor(private readonly deps: ExecutorDeps) {
    this.#heartbeats = new Heartbeats(deps.store, deps.clock, deps.leaseMs);
  }

  /** Nothing runs any more: the heartbeat loop's timer goes too. */
  close(): void {
    this.#heartbeats.close();
  }

  /**
   * Run a claim to completion; `register` lets the runtime abort it (cancel, close). With
   * `writeBehind`, an attempt whose last write is a replayable plain success with no
   * ordering key (see {@link AxEventTransition.replayable}) ends as soon as that write is
   * sent: the write goes to `writeBehind`, so the lane starts its next run meanwhile and the
   * successes that pile up in one round trip share the next statement. Losing such a write
   * only makes the delivery run again, which its target allows; its failure is reported. The
   * delivery's span ends with the write, and says what the store made of it (`lease_lost`
   * when this worker was fenced out meanwhile).
   */
  async execute(
    claim: AxEventClaim,
    register: (controller: AbortController) => () => void,
    writeBehind?: (write: Promise<void>) => void,
  ): Promise<void> {
    const d = claim.delivery;
    const lease = new LeaseKeeper(
      this.#heartbeats,
      d.id,
      d.fencingToken,
      (e) => this.deps.onError(e, d.id),
      d.leaseUntil,
    );
    const unregister = register(lease.controller);
    lease.start();
    const attributes = {
      'ax.event.delivery_id': d.id,
      'ax.event.route_id': d.routeId,
      'ax.event.action': d.action,
      'ax.event.attempt': d.attempt,
      'ax.event.kind': d.kind,
    };
    await tracer.startActiveSpan('ax.event.delivery', { attributes }, async (span) => {
      const failed = (error: unknown): void => {
        span.setStatus({ code: SpanStatusCode.ERROR, message: toEventErrorInfo(error).code });
        this.deps.onError(error, d.id);
      };
      let behind: Promise<boolean> | undefined;
      const sendBehind = writeBehind
        ? (write: Promise<boolean>) => {
            behind = write;
          }
        : undefined;
      try {
        const status =
          d.kind === 'sink' ? await this.#sink(claim, lease) : await this.#event(claim, lease, sendBehind);
        if (behind && writeBehind) {
          // The lane goes on; the span waits for the write and says what the store made of it.
          const taken = behind.then((stored) => {
            span.setAttribute('ax.event.status', stored && status ? status : 'lease_lost');
          }, failed);
          writeBehind(taken.finally(() => span.end()));
        } else span.setAttribute('ax.event.status', status ?? 'lease_lost');
      } catch (error) {
        failed(error);
      } finally {
        if (!behind) span.end();
        unregister();
        await lease.stop();
      }
    });
  }

  #tx(d: AxEventDelivery) {
    return (patch: Tx) => {
      const start = this.#unwrittenStarts.get(d);
      if (start) this.#unwrittenStarts.delete(d);
      return this.deps.store.transition({
        ...start,
        ...patch,
        deliveryId: d.id,
        fencingToken: d.fencingToken,
        now: this.deps.clock.now(),
      });
    };
  }

  /** A transition that ends this attempt: its status when the store took it, `null` when fenced out. */
  async #settle(
    d: AxEventDelivery,
    patch: Tx & { status: AxEventRunStatus },
  ): Promise<AxEventRunStatus | null> {
    return (await this.#tx(d)(patch)) ? patch.status : null;
  }

  /**
   * The attempt starts; `false` when this worker was fenced out. The durable `running` mark
   * is what tells a recovering worker that a target may have run, so that a target which is
   * not idempotent ends `outcome_unknown` instead of running twice. Where a replay is
   * harmless (`replaySafe`: an idempotent target, a route's own handler, a sink write) the
   * mark buys nothing and costs a round trip and a row update per delivery: the run stays
   * `claimed` until its attempt ends, and the start is written with that transition.
   */
  async #begin(
    d: AxEventDelivery,
    replaySafe: boolean,
    patch: Omit<Tx, 'status' | 'startedAt'> = {},
  ): Promise<boolean> {
    const start = { ...patch, startedAt: this.deps.clock.now() };
    if (!replaySafe) return this.#tx(d)({ ...start, status: 'running' });
    this.#unwrittenStarts.set(d, start);
    return true;
  }

  /**
   * A claim this worker will not start (it claimed ahead and is closing, or the claim waited
   * too long): back to the queue, the attempt not counted.
   */
  async handBack(claim: AxEventClaim): Promise<void> {
    await this.#handBack(claim.delivery);
  }

  /**
   * The worker is closing: the delivery goes back to the queue, this attempt not counted.
   * Replayable: lost to a database crash, the delivery stays leased until its lease runs out
   * (and a target that is not idempotent and had been marked `running` then ends
   * `outcome_unknown`, as it would have without the hand-back).
   */
  #handBack(d: AxEventDelivery): Promise<AxEventRunStatus | null> {
    return this.#settle(d, {
      status: 'queued',
      attempt: d.attempt - 1,
      dueAt: this.deps.clock.now(),
      replayable: true,
    });
  }

  /** The delivery ends with a dead letter (`outcome_unknown` ends as that status, others as `dead_lettered`). */
  #deadLetter(
    d: AxEventDelivery,
    reason: AxEventDeadLetterReason,
    error: unknown,
  ): Promise<AxEventRunStatus | null> {
    return this.#settle(d, {
      status: reason === 'outcome_unknown' ? 'outcome_unknown' : 'dead_lettered',
      error: toEventErrorInfo(error),
      deadLetter: { id: `dl_${crypto.randomUUID()}`, reason },
    });
  }

  async #event(
    claim: AxEventClaim,
    lease: LeaseKeeper,
    writeBehind?: (write: Promise<boolean>) => void,
  ): Promise<AxEventRunStatus | null> {
    const d = claim.delivery;
    const event = claim.event;
    const route = this.deps.routes.get(d.routeId);
    if (d.cancelRequested) return this.#settle(d, { status: 'cancelled' });
    if (!event)
      return this.#deadLetter(d, 'non_retryable', new AxEventError('not_found', 'The event is gone'));
    if (!route) {
      const error = new AxEventError(
        'target_not_found',
        `Route ${d.routeId} is not registered in this runtime`,
      );
      return this.#deadLetter(d, 'target_not_found', error);
    }
    const invokes = d.action === 'wake' || d.action === 'resume';
    if (claim.recovered && claim.previousStatus === 'running') {
      const target = d.targetId ? this.deps.targets.get(d.targetId) : undefined;
      if (invokes && target?.retrySafety !== 'idempotent') {
        const error = new AxEventOutcomeUnknownError('The lease expired while the target was running');
        return this.#deadLetter(d, 'outcome_unknown', error);
      }
    }
    if (d.planError) {
      // Routing recorded why this delivery cannot run; its error info is kept as it was.
      const reason = d.planError.code === 'continuation_not_found' ? 'continuation_not_found' : 'input_error';
      return this.#settle(d, {
        status: 'dead_lettered',
        error: d.planError,
        deadLetter: { id: `dl_${crypto.randomUUID()}`, reason },
      });
    }
    const scope = identityScope(event.ingress.identity);
    const base: AxEventHandlerContext = {
      runId: d.runId,
      deliveryId: d.id,
      routeId: d.routeId,
      action: d.action,
      instanceKey: d.instanceKey,
      event: event.ingress.event,
      ingress: event.ingress,
      identity: event.ingress.identity,
      trust: event.ingress.trust,
      identityScope: scope,
      attempt: d.attempt,
      idempotencyKey: d.id,
      fencingToken: d.fencingToken,
      abortSignal: lease.controller.signal,
    };
    if (!invokes) {
      if (!(await this.#begin(d, true)) || lease.ranOut()) return null;
      const handler = d.action === 'observe' ? route.observe : route.invalidate;
      try {
        await handler?.(event.ingress, base);
      } catch (error) {
        return this.#failure(d, error, lease, { retrySafe: true, maxAttempts: this.deps.retry.maxAttempts });
      }
      return this.#settle(d, { status: 'succeeded', error: null });
    }
    return this.#invoke(claim, event, route, base, lease, writeBehind);
  }

  async #invoke(
    claim: AxEventClaim,
    event: AxEventStoredEvent,
    route: AxEventRouteDefinition,
    base: AxEventHandlerContext,
    lease: LeaseKeeper,
    writeBehind?: (write: Promise<boolean>) => void,
  ): Promise<AxEventRunStatus | null> {
    const d = claim.delivery;
    const now = this.deps.clock.now();
    let continuation: AxEventContinuation | null = null;
    let targetId = d.targetId;
    let instanceKey = d.instanceKey;
    if (d.action === 'resume') {
      const c = d.correlation;
      continuation = c
        ? await this.deps.store.findContinuation({ scope: base.identityScope, ...c, now })
        : null;
      const only = routeTargetId(route);
      if (!continuation || (only !== null && continuation.targetId !== only)) {
        const error = new AxEventContinuationNotFoundError(c?.kind ?? '(none)', {
          deliveryId: d.id,
          routeId: d.routeId,
        });
        return this.#deadLetter(d, 'continuation_not_found', error);
      }
      targetId = continuation.targetId;
      instanceKey = continuation.instanceKey;
    }
    const target = targetId ? this.deps.targets.get(targetId) : undefined;
    if (!target) {
      const error = new AxEventError('target_not_found', `Target ${targetId} is not registered`, {
        deliveryId: d.id,
      });
      return this.#deadLetter(d, 'target_not_found', error);
    }
    const maxAttempts = target.maxAttempts ?? this.deps.retry.maxAttempts;
    const idempotent = target.retrySafety === 'idempotent';
    if (d.attempt > maxAttempts) {
      const error = new AxEventError('invalid_state', `Gave up after ${maxAttempts} attempts`, {
        deliveryId: d.id,
      });
      return this.#deadLetter(d, 'max_attempts', error);
    }
    const view = { ingress: event.ingress, continuationMetadata: continuation?.metadata ?? undefined };
    let input: Record<string, unknown>;
    let waits: AxEventContinuation[] = [];
    try {
      input = await this.#mapInput(target, d, instanceKey, continuation, view);
      if (d.action === 'wake') {
        waits = (target.waitFor ?? []).map((w) => {
          const value = resolveKeyPath(w.path, view);
          if (value === undefined) {
            throw new AxEventInputError(
              'invalid_input',
              `waitFor(${w.kind}): ${w.path.text} did not resolve`,
            );
          }
          return this.#continuation(d, target.id, instanceKey, base.identityScope, w.kind, value, {
            expiresInMs: w.expiresInMs,
            metadata: w.metadata,
          });
        });
      }
    } catch (error) {
      return this.#deadLetter(d, 'input_error', error);
    }
    if (waits.length > 0) {
      try {
        const put = { deliveryId: d.id, fencingToken: d.fencingToken, now, continuations: waits };
        if (!(await this.deps.store.putContinuations(put))) return null;
      } catch (error) {
        if (error instanceof AxEventError && error.code === 'continuation_conflict') {
          return this.#deadLetter(d, 'non_retryable', error);
        }
        throw error;
      }
    }
    if (!(await this.#begin(d, idempotent, { targetId: target.id, instanceKey }))) return null;
    let registered = waits.length;
    const context: AxEventContext = {
      ...base,
      instanceKey,
      targetId: target.id,
      continuation,
      state: {
        load: () => this.deps.stateStore.load(stateKey(target.id, base.identityScope, instanceKey)),
        save: (s) => this.deps.stateStore.save(stateKey(target.id, base.identityScope, instanceKey), s),
      },
      registerContinuation: async (request: AxEventContinuationRequest) => {
        const problem = findOptionsProblem(CONTINUATION_REQUEST, request, 'registerContinuation');
        // Not retryable: the same request would be refused again.
        if (problem) throw new AxEventInputError('invalid_input', problem.message, { deliveryId: d.id });
        const list = Array.isArray(request.correlation) ? request.correlation : [request.correlation];
        const made = list.map((c: { kind: string; value: string }) =>
          this.#continuation(d, target.id, instanceKey, base.identityScope, c.kind, c.value, request),
        );
        const put = {
          deliveryId: d.id,
          fencingToken: d.fencingToken,
          now: this.deps.clock.now(),
          continuations: made,
        };
        if (!(await this.deps.store.putContinuations(put))) throw new AxEventLeaseLostError(d.id);
        registered += made.length;
        return made;
      },
    };
    let raw: unknown;
    let invoked = false;
    try {
      // Never start a target whose run was already aborted (closing, cancelled, lease lost),
      // nor one whose lease ran out while this process was not running.
      if (lease.ranOut()) return null;
      lease.controller.signal.throwIfAborted();
      invoked = true;
      raw = await target.invoke(input, context);
    } catch (error) {
      return this.#failure(d, error, lease, { retrySafe: idempotent || !invoked, maxAttempts });
    }
    if (abortCode(lease.controller.signal) === 'lease_lost') return null;
    let output: ReturnType<typeof toPersistableJson>['value'];
    try {
      output = toPersistableJson(raw).value;
    } catch (cause) {
      const error = new AxEventOutcomeUnknownError('The target ran but its output could not be saved', {
        cause,
      });
      return this.#deadLetter(d, 'outcome_unknown', error);
    }
    const status: AxEventRunStatus = registered > 0 ? 'waiting_event' : 'succeeded';
    const patch: Tx & { status: AxEventRunStatus } = { status, output, error: null };
    if (target.sinks?.length) {
      patch.sinks = target.sinks.map((s) => ({ id: `dlv_${crypto.randomUUID()}`, sinkId: s.id }));
    }
    if (continuation) patch.consumeContinuationId = continuation.id;
    // An idempotent target's plain success may be lost to a database crash: it then runs
    // again, which it allows. Not so with sinks to write, a continuation consumed or waits
    // registered: those must not happen twice.
    if (idempotent && status === 'succeeded' && !patch.sinks && !continuation) patch.replayable = true;
    // Ordered ones are awaited: the next delivery of the key becomes claimable only with it.
    if (writeBehind && patch.replayable && d.orderingKey === null) {
      writeBehind(this.#tx(d)(patch));
      return status;
    }
    return this.#settle(d, patch);
  }

  async #mapInput(
    target: AxEventTargetDefinition,
    d: AxEventDelivery,
    instanceKey: string,
    continuation: AxEventContinuation | null,
    view: Parameters<typeof applyInputPlan>[1],
  ): Promise<Record<string, unknown>> {
    const fields = fieldsOf(target);
    if (target.mapInput) {
      const mapped = await target.mapInput(view.ingress, { action: d.action, instanceKey, continuation });
      if (mapped === null || typeof mapped !== 'object' || Array.isArray(mapped)) {
        throw new AxEventInputError('invalid_input', `Target ${target.id}: mapInput must return an object`);
      }
      assertPlainJson(mapped, 'mapInput result');
      return validateInput(mapped as Record<string, unknown>, fields, { dropUnknown: true });
    }
    const plan = (d.action === 'wake' ? target.wakeInput : target.resumeInput) ?? target.input ?? defaultPlan;
    return applyInputPlan(plan, view, fields);
  }

  #continuation(
    d: AxEventDelivery,
    targetId: string,
    instanceKey: string,
    scope: string,
    kind: string,
    value: string,
    options: { expiresAt?: number; expiresInMs?: number; metadata?: unknown },
  ): AxEventContinuation {
    if (typeof kind !== 'string' || kind.length === 0 || typeof value !== 'string' || value.length === 0) {
      throw new AxEventInputError('invalid_input', 'A continuation needs a non-empty kind and value');
    }
    if (options.metadata !== undefined) assertPlainJson(options.metadata, 'continuation metadata');
    const now = this.deps.clock.now();
    const expiresAt =
      options.expiresAt ??
      (options.expiresInMs === undefined ? null : now + Math.max(0, options.expiresInMs));
    return {
      id: `cont_${crypto.randomUUID()}`,
      scope,
      kind,
      value,
      targetId,
      instanceKey,
      runId: d.runId,
      deliveryId: d.id,
      expiresAt,
      metadata: options.metadata === undefined ? null : cloneJson(options.metadata as never),
      createdAt: now,
    };
  }

  /**
   * The one place a failed attempt is judged: lost lease, cancel, hand back on close,
   * unknown outcome, input error, then retry after the backoff or, at the last attempt, a
   * dead letter.
   */
  async #failure(
    d: AxEventDelivery,
    error: unknown,
    lease: LeaseKeeper,
    attempt: FailedAttempt,
  ): Promise<AxEventRunStatus | null> {
    const aborted = abortCode(lease.controller.signal);
    if (aborted === 'lease_lost') return null;
    if (aborted === 'aborted' && !attempt.sink)
      return this.#settle(d, { status: 'cancelled', error: toEventErrorInfo(error) });
    if (aborted === 'closed' && attempt.retrySafe) return this.#handBack(d);
    if (!attempt.sink) {
      if (!attempt.retrySafe || (error instanceof AxEventError && error.code === 'outcome_unknown')) {
        const wrapped =
          error instanceof AxEventOutcomeUnknownError
            ? error
            : new AxEventOutcomeUnknownError(
                `A target that is not idempotent failed: ${toEventErrorInfo(error).message}`,
                { cause: error },
              );
        return this.#deadLetter(d, 'outcome_unknown', wrapped);
      }
      if (error instanceof AxEventInputError) return this.#deadLetter(d, 'non_retryable', error);
    }
    if (d.attempt >= attempt.maxAttempts)
      return this.#deadLetter(d, attempt.sink ? 'sink_failed' : 'max_attempts', error);
    const dueAt = this.deps.clock.now() + backoffDelayMs(d.attempt, this.deps.retry, this.deps.random);
    return this.#settle(d, { status: 'failed', dueAt, error: toEventErrorInfo(error) });
  }

  async #sink(claim: AxEventClaim, lease: LeaseKeeper): Promise<AxEventRunStatus | null> {
    const d = claim.delivery;
    const run = await this.deps.store.getRun(d.runId);
    const target = run?.targetId ? this.deps.targets.get(run.targetId) : undefined;
    const sink = target?.sinks?.find((s) => s.id === d.sinkId);
    if (!run || !sink) {
      const error = new AxEventError(
        'target_not_found',
        `Sink ${d.sinkId} of run ${d.runId} is not registered`,
      );
      return this.#deadLetter(d, 'sink_failed', error);
    }
    if (!(await this.#begin(d, true))) return null;
    try {
      await sink.write(cloneJson(run.output), {
        run,
        sinkId: sink.id,
        idempotencyKey: `${run.id}:${sink.id}`,
        attempt: d.attempt,
        abortSignal: lease.controller.signal,
      });
    } catch (error) {
      const maxAttempts = target?.maxAttempts ?? this.deps.retry.maxAttempts;
      return this.#failure(d, error, lease, { retrySafe: true, maxAttempts, sink: true });
    }
    return this.#settle(d, { status: 'succeeded', error: null });
  }
}
