/**
 * Routing: turn one published event into independent deliveries, one per matching route,
 * each authorized on its own. Internal.
 */

import { type AxEventIngressRecord, isAnonymous } from './envelope.js';
import { AxEventContinuationNotFoundError, AxEventInputError, toEventErrorInfo } from './errors.js';
import { resolveKeyPath } from './path.js';
import { type AxEventRouteDefinition, routeCriteriaMatch } from './route.js';
import type { AxEventDeliveryDraft, EventStore } from './store.js';

/** True if the ingress may reach a route that requires authentication. */
export function isAuthenticatedIngress(ingress: AxEventIngressRecord): boolean {
  return !isAnonymous(ingress.identity) && (ingress.trust === 'authenticated' || ingress.trust === 'trusted');
}

/** The id of a route's target, whether given as an id or a definition. */
export function routeTargetId(route: AxEventRouteDefinition): string | null {
  if (route.target === undefined) return null;
  return typeof route.target === 'string' ? route.target : route.target.id;
}

/** Whether a route takes an event: criteria, authentication, then the `authorize` hook (throwing denies). */
export async function routeAccepts(
  route: AxEventRouteDefinition,
  ingress: AxEventIngressRecord,
  onError: (error: unknown) => void,
): Promise<boolean> {
  if (!routeCriteriaMatch(route, ingress)) return false;
  if (route.requireAuthenticated && !isAuthenticatedIngress(ingress)) return false;
  if (!route.authorize) return true;
  try {
    return (await route.authorize(ingress, { id: route.id })) === true;
  } catch (error) {
    onError(error);
    return false;
  }
}

function instanceKeyOf(route: AxEventRouteDefinition, ingress: AxEventIngressRecord, scope: string) {
  const fallback = ingress.partitionKey ?? ingress.event.subject ?? scope;
  const key = route.instanceKey;
  if (key === undefined) return { value: fallback };
  let value: string | undefined;
  try {
    const raw = typeof key === 'function' ? key(ingress) : resolveKeyPath(key, { ingress });
    value = typeof raw === 'string' && raw.length > 0 ? raw : undefined;
  } catch {
    value = undefined;
  }
  if (value !== undefined) return { value };
  const error = new AxEventInputError(
    'invalid_input',
    `Route ${route.id}: the instance key did not resolve`,
    {
      routeId: route.id,
    },
  );
  return { value: '', error };
}

function correlationOf(route: AxEventRouteDefinition, ingress: AxEventIngressRecord) {
  const c = route.correlation;
  if (!c) return ingress.correlation[0] ?? null;
  const value = c.path
    ? resolveKeyPath(c.path, { ingress })
    : ingress.correlation.find((entry) => entry.kind === c.kind)?.value;
  return value === undefined ? null : { kind: c.kind, value };
}

/** Build the delivery drafts of an event (nothing is stored here). */
export async function planDeliveries(input: {
  routes: Iterable<AxEventRouteDefinition>;
  ingress: AxEventIngressRecord;
  scope: string;
  now: number;
  store: EventStore;
  onError: (error: unknown) => void;
}): Promise<AxEventDeliveryDraft[]> {
  const { ingress, scope, now } = input;
  const drafts: AxEventDeliveryDraft[] = [];
  for (const route of input.routes) {
    if (!(await routeAccepts(route, ingress, input.onError))) continue;
    const instance = instanceKeyOf(route, ingress, scope);
    let instanceKey = instance.value;
    let planError = instance.error ? toEventErrorInfo(instance.error) : null;
    let targetId = route.action === 'wake' ? routeTargetId(route) : null;
    let correlation: { kind: string; value: string } | null = null;
    if (route.action === 'resume') {
      correlation = correlationOf(route, ingress);
      if (!correlation) {
        const kind = route.correlation?.kind ?? '(any)';
        planError ??= toEventErrorInfo(new AxEventContinuationNotFoundError(kind, { routeId: route.id }));
      } else {
        // Advisory: learn the continuation's target and instance now, for ordering. The
        // executor looks it up again and that lookup decides.
        const found = await input.store.findContinuation({ scope, ...correlation, now });
        if (found) {
          targetId = found.targetId;
          instanceKey = found.instanceKey;
        }
      }
    }
    const orderingOwner = targetId ?? `route:${route.id}`;
    drafts.push({
      id: `dlv_${crypto.randomUUID()}`,
      runId: `run_${crypto.randomUUID()}`,
      routeId: route.id,
      action: route.action,
      targetId,
      instanceKey,
      orderingKey:
        route.ordering === 'relaxed' || planError
          ? null
          : JSON.stringify([orderingOwner, scope, instanceKey]),
      dueAt: now + (route.debounceMs ?? 0),
      coalesceKey:
        route.coalesce === 'latest' && !planError ? JSON.stringify([route.id, scope, instanceKey]) : null,
      correlation,
      planError,
    });
  }
  return drafts;
}
