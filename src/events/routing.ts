/**
 * Routing: turn one published event into independent deliveries, one per matching route,
 * each authorized on its own. Internal.
 */

import { nearest } from '../options/check.js';
import { describeAnswer } from '../options/hook-answers.js';
import { type AxEventIngressRecord, isAnonymous } from './envelope.js';
import { AxEventContinuationNotFoundError, AxEventInputError, toEventErrorInfo } from './errors.js';
import { resolveKeyPath } from './path.js';
import {
  type AxEventRouteDefinition,
  type AxEventRouteExplanation,
  type AxEventRouteMismatch,
  matchesPattern,
  type RouteMisuseListener,
  routeCriteriaMismatch,
} from './route.js';
import type { AxEventWarning } from './runtime-options.js';
import type { AxEventSourceDescription } from './source.js';
import type { AxEventDeliveryDraft, AxEventStore } from './store.js';

/** True if the ingress may reach a route that requires authentication. */
export function isAuthenticatedIngress(ingress: AxEventIngressRecord): boolean {
  return !isAnonymous(ingress.identity) && (ingress.trust === 'authenticated' || ingress.trust === 'trusted');
}

/** The id of a route's target, whether given as an id or a definition. */
export function routeTargetId(route: AxEventRouteDefinition): string | null {
  if (route.target === undefined) return null;
  return typeof route.target === 'string' ? route.target : route.target.id;
}

/**
 * Why a route does not take an event, or `null` when it does: criteria first, then
 * authentication (identity, then trust), then the `authorize` hook (throwing denies; the
 * error goes to `onError`). `publish()` and `explain()` both decide through this function.
 */
export async function routeMismatch(
  route: AxEventRouteDefinition,
  ingress: AxEventIngressRecord,
  onError: (error: unknown) => void,
  onMisuse?: RouteMisuseListener,
): Promise<AxEventRouteMismatch | null> {
  const criteria = routeCriteriaMismatch(route, ingress, onMisuse);
  if (criteria) return criteria;
  if (route.requireAuthenticated) {
    if (isAnonymous(ingress.identity)) {
      return {
        code: 'identity',
        message:
          'the route requires authentication and the event is anonymous: attribute it to an identity from verified authentication',
      };
    }
    if (!isAuthenticatedIngress(ingress)) {
      return {
        code: 'trust',
        message: `the route requires authentication and the event's trust is '${ingress.trust}': use 'authenticated' or 'trusted' for verified attribution`,
      };
    }
  }
  if (!route.authorize) return null;
  try {
    const allowed: unknown = await route.authorize(ingress, { id: route.id });
    if (allowed === true) return null;
    // Denied either way (fail closed), but an answer that is not a boolean is a mistake to hear of.
    if (allowed !== false) {
      onMisuse?.(route, `the authorize hook returned ${describeAnswer(allowed)}, not true or false: denied`);
    }
    return { code: 'authorize', message: 'the authorize hook did not return true' };
  } catch (error) {
    onError(error);
    return { code: 'authorize', message: `the authorize hook threw: ${(error as Error)?.message ?? error}` };
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

/** What routing one event needs. */
interface PlanInput {
  ingress: AxEventIngressRecord;
  scope: string;
  now: number;
  store: AxEventStore;
  onError: (error: unknown) => void;
  onMisuse?: RouteMisuseListener;
}

/**
 * One route's decision on one event: the delivery to store (`draft`, or `null` when the route
 * does not take the event) and the first reason it does not match. A resume route whose
 * continuation is missing still gets a delivery, which the executor dead-letters
 * (`continuation_not_found`) so the miss is recorded; its reason is `continuation`.
 */
async function planRoute(
  route: AxEventRouteDefinition,
  input: PlanInput,
): Promise<{ draft: AxEventDeliveryDraft | null; reason: AxEventRouteMismatch | null }> {
  const { ingress, scope, now } = input;
  const mismatch = await routeMismatch(route, ingress, input.onError, input.onMisuse);
  if (mismatch) return { draft: null, reason: mismatch };
  const instance = instanceKeyOf(route, ingress, scope);
  let instanceKey = instance.value;
  let planError = instance.error ? toEventErrorInfo(instance.error) : null;
  let targetId = route.action === 'wake' ? routeTargetId(route) : null;
  let correlation: { kind: string; value: string } | null = null;
  let reason: AxEventRouteMismatch | null = null;
  if (route.action === 'resume') {
    correlation = correlationOf(route, ingress);
    if (!correlation) {
      const kind = route.correlation?.kind ?? '(any)';
      planError ??= toEventErrorInfo(new AxEventContinuationNotFoundError(kind, { routeId: route.id }));
      reason = {
        code: 'continuation',
        message: route.correlation
          ? `the event carries no correlation of kind ${route.correlation.kind}`
          : 'the event carries no correlation',
      };
    } else {
      // Advisory: learn the continuation's target and instance now, for ordering. The
      // executor looks it up again and that lookup decides.
      const found = await input.store.findContinuation({ scope, ...correlation, now });
      const only = routeTargetId(route);
      if (found) {
        targetId = found.targetId;
        instanceKey = found.instanceKey;
      }
      if (!found) {
        reason = {
          code: 'continuation',
          message: `no live continuation of kind ${correlation.kind} for ${correlation.value} in this identity scope`,
        };
      } else if (only !== null && found.targetId !== only) {
        reason = {
          code: 'continuation',
          message: `the live continuation belongs to target ${found.targetId}; this route resumes only ${only}`,
        };
      }
    }
  }
  const orderingOwner = targetId ?? `route:${route.id}`;
  const draft: AxEventDeliveryDraft = {
    id: `dlv_${crypto.randomUUID()}`,
    runId: `run_${crypto.randomUUID()}`,
    routeId: route.id,
    action: route.action,
    targetId,
    instanceKey,
    orderingKey:
      route.ordering === 'relaxed' || planError ? null : JSON.stringify([orderingOwner, scope, instanceKey]),
    dueAt: now + (route.debounceMs ?? 0),
    coalesceKey:
      route.coalesce === 'latest' && !planError ? JSON.stringify([route.id, scope, instanceKey]) : null,
    correlation,
    planError,
  };
  return { draft, reason };
}

/** Build the delivery drafts of an event (nothing is stored here). */
export async function planDeliveries(
  input: PlanInput & { routes: Iterable<AxEventRouteDefinition> },
): Promise<AxEventDeliveryDraft[]> {
  const drafts: AxEventDeliveryDraft[] = [];
  for (const route of input.routes) {
    const { draft } = await planRoute(route, input);
    if (draft) drafts.push(draft);
  }
  return drafts;
}

/** What every route would do with an event, by the same decisions as {@link planDeliveries}. */
export async function explainRoutes(
  input: PlanInput & { routes: Iterable<AxEventRouteDefinition> },
): Promise<AxEventRouteExplanation[]> {
  const explanations: AxEventRouteExplanation[] = [];
  for (const route of input.routes) {
    const { reason } = await planRoute(route, input);
    explanations.push(
      reason ? { routeId: route.id, matches: false, reason } : { routeId: route.id, matches: true },
    );
  }
  return explanations;
}

/** A warning about a route a source's events can never reach. */
export interface SourceWarning {
  message: string;
  details: AxEventWarning;
}

/** Whether a declarative route may take events of `type` from a source so described. */
function mayTake(route: AxEventRouteDefinition, type: string, d: AxEventSourceDescription): boolean {
  if (typeof route.match === 'function') return false; // a predicate cannot be read ahead of time
  const m = route.match;
  if (!matchesPattern(m.types, type)) return false;
  if (m.sources === undefined) return true;
  return d.sources?.some((source) => matchesPattern(m.sources, source)) === true;
}

/**
 * Routes with type patterns under a prefix the source speaks for in full (`mcp.`) that match none
 * of its types, published or withheld: a misspelling no event will ever meet. Routes narrowed to
 * other sources are not this source's concern.
 */
function unknownTypeWarnings(
  sourceId: string,
  d: AxEventSourceDescription,
  routes: readonly AxEventRouteDefinition[],
): SourceWarning[] {
  const prefixes = d.typePrefixes ?? [];
  if (prefixes.length === 0) return [];
  const known = [...(d.types ?? []), ...(d.withheld ?? []).map((withheld) => withheld.type)];
  const warnings: SourceWarning[] = [];
  for (const route of routes) {
    if (typeof route.match === 'function' || route.match.types === undefined) continue;
    const { sources } = route.match;
    if (sources !== undefined && !d.sources?.some((source) => matchesPattern(sources, source))) continue;
    const unknown = route.match.types.filter((pattern) => {
      const stem = pattern.endsWith('*') ? pattern.slice(0, -1) : pattern;
      if (!prefixes.some((prefix) => stem.startsWith(prefix))) return false;
      return !known.some((type) => matchesPattern([pattern], type));
    });
    if (unknown.length === 0) continue;
    const guesses = unknown.map((pattern) => {
      const guess = pattern.endsWith('*') ? undefined : nearest(pattern, known);
      return guess === undefined ? pattern : `${pattern} (did you mean ${guess}?)`;
    });
    warnings.push({
      message:
        `Route ${route.id} waits for ${guesses.join(', ')}, which source ${sourceId} never publishes: ` +
        `its ${prefixes.map((prefix) => `${prefix}*`).join(', ')} types are ${known.join(', ')}`,
      details: { code: 'unknown_type', sourceId, routeId: route.id, type: unknown[0] as string },
    });
  }
  return warnings;
}

/**
 * Routes a source's events can never reach, from what the source says it publishes: (a) its
 * events are anonymous or untrusted, and every route that wants one of its types requires
 * authentication; (b) a route waits for a type the source withholds, and for nothing else it
 * publishes. Predicate routes are not read ahead of time.
 */
export function sourceWarnings(
  sourceId: string,
  d: AxEventSourceDescription,
  routes: readonly AxEventRouteDefinition[],
): SourceWarning[] {
  const warnings: SourceWarning[] = [];
  const anonymous = d.identity === 'anonymous';
  const untrusted = d.trust === 'untrusted';
  const warned = new Set<string>();
  if (anonymous || untrusted) {
    const how = [anonymous ? 'anonymous' : '', untrusted ? 'untrusted' : ''].filter(Boolean).join(' and ');
    for (const type of d.types ?? []) {
      const wanting = routes.filter((route) => mayTake(route, type, d));
      if (wanting.length === 0 || !wanting.every((route) => route.requireAuthenticated)) continue;
      for (const route of wanting) {
        if (warned.has(route.id)) continue;
        warned.add(route.id);
        warnings.push({
          message:
            `Route ${route.id} takes only authenticated events, but source ${sourceId} publishes ${type} ` +
            `events that are ${how}, so they match no route: set identity and trust ('authenticated' or ` +
            `'trusted') on source ${sourceId} from your verified authentication`,
          details: { code: 'unauthenticated_source', sourceId, routeId: route.id, type },
        });
      }
    }
  }
  warnings.push(...unknownTypeWarnings(sourceId, d, routes));
  for (const withheld of d.withheld ?? []) {
    for (const route of routes) {
      if (!mayTake(route, withheld.type, d)) continue;
      if ((d.types ?? []).some((type) => mayTake(route, type, d))) continue;
      warnings.push({
        message: `Route ${route.id} waits for ${withheld.type}, but source ${sourceId} does not publish it: ${withheld.reason}`,
        details: { code: 'withheld_type', sourceId, routeId: route.id, type: withheld.type },
      });
    }
  }
  return warnings;
}
