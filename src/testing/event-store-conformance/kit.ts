/**
 * What the conformance cases share: assertions that throw (no test library), unique ids, and
 * builders for events, deliveries and continuations.
 */
import { normalizeIngress } from '../../events/envelope.js';
import type {
  AxEventClaim,
  AxEventContinuation,
  AxEventDeliveryDraft,
  AxEventStore,
  AxEventStoredEvent,
} from '../../events/store.js';

/** One conformance case: its title and its body, run against a fresh store. */
export type Case = [string, (store: AxEventStore) => Promise<void>];

class ConformanceError extends Error {}

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new ConformanceError(message);
}

export function same(actual: unknown, expected: unknown, message: string): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new ConformanceError(`${message}: expected ${e}, got ${a}`);
}

let counter = 0;
export const uid = (prefix: string) => `${prefix}_${++counter}_${Math.random().toString(36).slice(2, 8)}`;

/** A stored event for `append` (scope `anonymous` unless given). */
export function storedEvent(id = uid('e'), scope = 'anonymous'): AxEventStoredEvent {
  const { record, bytes } = normalizeIngress({
    event: { id, source: 'test://kit', type: 'kit.test', data: { n: 1 } },
  });
  return { key: uid('evt'), scope, ingress: record, bytes, receivedAt: 0 };
}

export function draft(overrides: Partial<AxEventDeliveryDraft> = {}): AxEventDeliveryDraft {
  return {
    id: uid('dlv'),
    runId: uid('run'),
    routeId: 'route',
    action: 'wake',
    targetId: 'target',
    instanceKey: 'i',
    orderingKey: null,
    dueAt: 0,
    coalesceKey: null,
    correlation: null,
    planError: null,
    ...overrides,
  };
}

export async function publish(
  store: AxEventStore,
  deliveries: AxEventDeliveryDraft[],
  now = 0,
  scope = 'anonymous',
) {
  const event = storedEvent(undefined, scope);
  const result = await store.append({
    dedupe: { scope, source: 'test://kit', id: event.ingress.event.id },
    event,
    deliveries,
    now,
  });
  check(result.status === 'appended', `append should succeed, got ${result.status}`);
  return result.deliveryIds;
}

export function continuation(overrides: Partial<AxEventContinuation>): AxEventContinuation {
  return {
    id: uid('cont'),
    scope: 'id:t/a/u/s',
    kind: 'task',
    value: 'v1',
    targetId: 'target',
    instanceKey: 'i',
    runId: 'run',
    deliveryId: 'dlv',
    expiresAt: null,
    metadata: { step: 1 },
    createdAt: 0,
    ...overrides,
  };
}

export const claimOne = async (store: AxEventStore, now = 0, leaseMs = 1000) => {
  const [claim] = await store.claim({ workerId: 'w1', now, leaseMs, limit: 1 });
  return claim;
};

/** One published delivery, claimed: where most run and continuation cases start. */
export async function publishAndClaim(store: AxEventStore): Promise<{ id: string; c: AxEventClaim }> {
  const [id] = await publish(store, [draft()]);
  const c = await claimOne(store);
  check(c && id, 'claim');
  return { id, c };
}
