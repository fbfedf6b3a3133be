/**
 * Routes: explicit rules that say which events do what. A route matches on types,
 * sources, subjects, extensions, or a predicate, and has exactly one action.
 */

import type { AxEventExtensionValue, AxEventIngressRecord } from './envelope.js';
import { AxEventConfigError } from './errors.js';
import { type AxEventPath, isEventPath } from './path.js';
import type { AxEventAction } from './store.js';
import type { AxEventHandlerContext, AxEventTargetDefinition } from './target.js';

/**
 * Declarative match criteria. Every given criterion must hold; within a list any entry may
 * match. A pattern ending in `*` matches by prefix (`app.order.*`); `*` alone matches anything.
 */
export interface AxEventMatch {
  types?: readonly string[];
  sources?: readonly string[];
  subjects?: readonly string[];
  /** Extension attributes that must be present with exactly these values. */
  extensions?: Readonly<Record<string, AxEventExtensionValue>>;
}

/** A match predicate over the normalized ingress. Must not throw; a throw counts as no match. */
export type AxEventPredicate = (ingress: AxEventIngressRecord) => boolean;

/** The identity hook: return `true` to let this route take the event. */
export type AxEventAuthorize = (
  ingress: AxEventIngressRecord,
  route: { id: string },
) => boolean | Promise<boolean>;

/** A callback of an `observe` or `invalidate` route. It never invokes a target. */
export type AxEventHandler = (
  ingress: AxEventIngressRecord,
  context: AxEventHandlerContext,
) => void | Promise<void>;

/** How a route derives the instance key: a path, or a function of the ingress. */
export type AxEventInstanceKey = AxEventPath | ((ingress: AxEventIngressRecord) => string | undefined);

/** The record form of a route. */
export interface AxEventRouteDefinition {
  /** Unique among the runtime's routes. */
  id: string;
  /** Declarative criteria or a predicate (not both). */
  match: AxEventMatch | AxEventPredicate;
  action: AxEventAction;
  /**
   * `wake`: the target to run (an id, or a definition the runtime registers). `resume`:
   * optional; when given, only continuations owned by this target are resumed.
   */
  target?: string | AxEventTargetDefinition;
  /** Anonymous events and events not `authenticated`/`trusted` cannot match. */
  requireAuthenticated?: boolean;
  /** Identity hook, called for every event that matches otherwise; throwing denies. */
  authorize?: AxEventAuthorize;
  /** Default: `partitionKey ?? subject ?? identity scope`. */
  instanceKey?: AxEventInstanceKey;
  /**
   * Which correlation resumes: `kind` with an optional path for the value (default: the
   * ingress correlation of that kind). Without it, the ingress's first correlation is used.
   */
  correlation?: { kind: string; path?: AxEventPath };
  /** Delay deliveries by this many milliseconds. */
  debounceMs?: number;
  /** With `debounceMs`: a newer event replaces a still-waiting delivery of the same instance. */
  coalesce?: 'latest';
  /** `strict` (default): one delivery at a time per (target, identity scope, instance), in order. */
  ordering?: 'strict' | 'relaxed';
  /** The callback of an `observe` route. */
  observe?: AxEventHandler;
  /** The callback of an `invalidate` route. */
  invalidate?: AxEventHandler;
}

const ACTIONS: ReadonlySet<string> = new Set(['observe', 'invalidate', 'wake', 'resume']);

function checkList(list: unknown, what: string, routeId: string): void {
  if (list === undefined) return;
  if (
    !Array.isArray(list) ||
    list.length === 0 ||
    list.some((p) => typeof p !== 'string' || p.length === 0)
  ) {
    throw new AxEventConfigError(`Route ${routeId}: ${what} must be a non-empty list of non-empty strings`, {
      routeId,
    });
  }
}

/** Check a route definition; throws {@link AxEventConfigError} naming the problem. */
export function checkRoute(route: AxEventRouteDefinition): void {
  const id = route?.id;
  if (typeof id !== 'string' || id.length === 0) throw new AxEventConfigError('A route needs a non-empty id');
  const fail = (message: string) => new AxEventConfigError(`Route ${id}: ${message}`, { routeId: id });
  if (!ACTIONS.has(route.action)) throw fail('action must be observe, invalidate, wake or resume');
  if (typeof route.match !== 'function') {
    const m = route.match;
    if (m === null || typeof m !== 'object') throw fail('match must be criteria or a predicate');
    checkList(m.types, 'types', id);
    checkList(m.sources, 'sources', id);
    checkList(m.subjects, 'subjects', id);
    if (m.extensions !== undefined && (m.extensions === null || typeof m.extensions !== 'object')) {
      throw fail('extensions must be an object of scalars');
    }
    const any = m.types || m.sources || m.subjects || (m.extensions && Object.keys(m.extensions).length > 0);
    if (!any) throw fail('match needs at least one criterion (use a predicate to match everything)');
  }
  if (route.action === 'wake' && route.target === undefined) throw fail('a wake route needs a target');
  if ((route.action === 'observe' || route.action === 'invalidate') && route.target !== undefined) {
    throw fail(`an ${route.action} route never invokes a target`);
  }
  if (route.action === 'observe' && typeof route.observe !== 'function')
    throw fail('observe needs a callback');
  if (route.action === 'invalidate' && typeof route.invalidate !== 'function') {
    throw fail('invalidate needs a callback');
  }
  if (route.debounceMs !== undefined && !(Number.isFinite(route.debounceMs) && route.debounceMs >= 0)) {
    throw fail('debounceMs must be a non-negative number');
  }
  if (route.coalesce !== undefined && (route.coalesce !== 'latest' || route.debounceMs === undefined)) {
    throw fail("coalesce must be 'latest' and needs debounceMs");
  }
  if (route.ordering !== undefined && route.ordering !== 'strict' && route.ordering !== 'relaxed') {
    throw fail("ordering must be 'strict' or 'relaxed'");
  }
  if (
    route.instanceKey !== undefined &&
    typeof route.instanceKey !== 'function' &&
    !isEventPath(route.instanceKey)
  ) {
    throw fail('instanceKey must be an eventPath or a function');
  }
  if (route.correlation !== undefined) {
    const c = route.correlation;
    if (typeof c?.kind !== 'string' || c.kind.length === 0) throw fail('correlation needs a kind');
    if (c.path !== undefined && !isEventPath(c.path)) throw fail('correlation.path must be an eventPath');
  }
}

function matchesPattern(patterns: readonly string[] | undefined, value: string | undefined): boolean {
  if (patterns === undefined) return true;
  if (value === undefined) return false;
  return patterns.some((p) => (p.endsWith('*') ? value.startsWith(p.slice(0, -1)) : p === value));
}

/**
 * Whether the route's criteria match (authentication and `authorize` are checked
 * separately). A predicate that throws does not match.
 */
export function routeCriteriaMatch(route: AxEventRouteDefinition, ingress: AxEventIngressRecord): boolean {
  if (typeof route.match === 'function') {
    try {
      return route.match(ingress) === true;
    } catch {
      return false;
    }
  }
  const m = route.match;
  const e = ingress.event;
  if (!matchesPattern(m.types, e.type) || !matchesPattern(m.sources, e.source)) return false;
  if (!matchesPattern(m.subjects, e.subject)) return false;
  if (m.extensions) {
    for (const name of Object.keys(m.extensions)) {
      const ext = e.extensions;
      if (!ext || !Object.hasOwn(ext, name) || ext[name] !== m.extensions[name]) return false;
    }
  }
  return true;
}
