/**
 * Routes: explicit rules that say which events do what. A route matches on types,
 * sources, subjects, extensions, or a predicate, and has exactly one action.
 */

import {
  type AxOptionsIssue,
  anyOf,
  array,
  boolean,
  func,
  matching,
  number,
  object,
  oneOf,
  record,
  required,
  string,
} from '../options/check.js';
import { describeAnswer, isThenable } from '../options/hook-answers.js';
import { type AxEventExtensionValue, type AxEventIngressRecord, isExtensionName } from './envelope.js';
import { assertEventOptions, optionPath, withRules } from './errors.js';
import type { AxEventPath } from './path.js';
import type { AxEventAction } from './store.js';
import {
  type AxEventHandlerContext,
  type AxEventTargetDefinition,
  EVENT_PATH,
  TARGET_DEFINITION,
} from './target.js';

/**
 * Declarative match criteria. Every given criterion must hold; within a list any entry may
 * match. A pattern ending in `*` matches by prefix (`app.order.*`); `*` alone matches anything;
 * a `*` anywhere else (`mcp.*.updated`) is refused, as it would match no event.
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

/**
 * A pattern is exact text, or a prefix before one trailing `*`. A `*` anywhere else
 * (`mcp.*.updated`, `app.**`) would be compared as literal text and match no event, ever, so
 * it is refused rather than taken as the glob it looks like.
 */
const PATTERN = matching(
  /^[^*]+\*?$|^\*$/,
  'a non-empty string, exact or a prefix ending in one `*` (`app.order.*`)',
  { reveal: true },
);
const PATTERNS = array(PATTERN, { minLength: 1 });

/** The shape of {@link AxEventMatch}. */
export const EVENT_MATCH = object(
  {
    types: PATTERNS,
    sources: PATTERNS,
    subjects: PATTERNS,
    extensions: record(anyOf(string(), number(), boolean()), 'an object of scalar extension values'),
  },
  {
    expected: 'match criteria { types?, sources?, subjects?, extensions? }',
    aliases: { type: 'types', source: 'sources', subject: 'subjects', extension: 'extensions' },
  },
);

const HANDLER = func('a function (ingress, context)');

/** Rules beyond shapes: one action and what it needs, criteria that match something. */
function routeRules(route: AxEventRouteDefinition, path: string, issues: AxOptionsIssue[]): void {
  const at = (key: string) => optionPath(path, key);
  const { action } = route;
  if (typeof route.match !== 'function') {
    const m = route.match;
    const any = m.types || m.sources || m.subjects || (m.extensions && Object.keys(m.extensions).length > 0);
    if (!any) {
      issues.push({
        path: at('match'),
        expected:
          'at least one criterion (types, sources, subjects or extensions; a predicate matches everything)',
        received: 'an empty match',
      });
    }
    for (const name of Object.keys(m.extensions ?? {})) {
      // No event carries it (publish refuses such a name): the route would match nothing, ever.
      if (isExtensionName(name)) continue;
      issues.push({
        path: `${at('match.extensions')}.${name.slice(0, 64)}`,
        expected:
          'an extension name events can carry (lower-case letters and digits, not an event attribute)',
        received: `'${name.slice(0, 64)}'`,
      });
    }
  }
  if (action === 'wake' && route.target === undefined) {
    issues.push({
      path: at('target'),
      expected: 'a target id or definition: a wake route runs one',
      received: 'nothing',
    });
  }
  if ((action === 'observe' || action === 'invalidate') && route.target !== undefined) {
    issues.push({
      path: at('target'),
      expected: `nothing: an ${action} route never invokes a target`,
      received: typeof route.target === 'string' ? `'${route.target}'` : 'a target definition',
    });
  }
  for (const handler of ['observe', 'invalidate'] as const) {
    if (action === handler && route[handler] === undefined) {
      issues.push({
        path: at(handler),
        expected: `a function: an ${handler} route calls it`,
        received: 'nothing',
      });
    }
    if (action !== handler && route[handler] !== undefined) {
      issues.push({
        path: at(handler),
        expected: `nothing: only an ${handler} route calls it (this is a ${action} route)`,
        received: 'a function',
      });
    }
  }
  if (route.correlation !== undefined && action !== 'resume') {
    issues.push({
      path: at('correlation'),
      expected: `nothing: only a resume route looks up a correlation (this is a ${action} route)`,
      received: 'a correlation',
    });
  }
  if (route.coalesce !== undefined && route.debounceMs === undefined) {
    issues.push({
      path: at('debounceMs'),
      expected: "a number ≥ 0: coalesce: 'latest' needs a debounce",
      received: 'nothing',
    });
  }
}

/** What a route definition may hold; checked once when it is built or added to a runtime. */
export const ROUTE_DEFINITION = withRules<AxEventRouteDefinition>(
  object(
    {
      id: required(string({ nonEmpty: true })),
      match: required(anyOf(func('a predicate (ingress) => boolean'), EVENT_MATCH)),
      action: required(oneOf('observe', 'invalidate', 'wake', 'resume')),
      target: anyOf(string({ nonEmpty: true }), TARGET_DEFINITION),
      requireAuthenticated: boolean(),
      authorize: func('a function (ingress, route) => boolean'),
      instanceKey: anyOf(EVENT_PATH, func('a function (ingress) => string')),
      correlation: object(
        { kind: required(string({ nonEmpty: true })), path: EVENT_PATH },
        { expected: 'a correlation { kind, path? }' },
      ),
      debounceMs: number({ min: 0 }),
      coalesce: oneOf('latest'),
      ordering: oneOf('strict', 'relaxed'),
      observe: HANDLER,
      invalidate: HANDLER,
    },
    {
      expected: 'a route definition { id, match, action, … }',
      aliases: {
        types: 'match',
        sources: 'match',
        subjects: 'match',
        authenticated: 'requireAuthenticated',
        requireAuth: 'requireAuthenticated',
        debounce: 'debounceMs',
        correlate: 'correlation',
      },
    },
  ),
  routeRules,
);

/** How a route is named in messages: `Route orders`. */
export function routeLabel(route: unknown): string {
  const id = (route as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'string' && id.length > 0 ? `Route ${id}` : 'Route definition';
}

/**
 * Check a route definition (record form); throws {@link AxEventConfigError} (`invalid_options`)
 * with the path of the first problem (`match.types`, `target`) and, for a misspelled key, the
 * nearest known name.
 */
export function checkRoute(route: AxEventRouteDefinition, label = routeLabel(route)): void {
  const id = (route as { id?: unknown } | null)?.id;
  assertEventOptions(ROUTE_DEFINITION, route, label, typeof id === 'string' ? { routeId: id } : {});
}

/** Why a route does not take an event, the first reason in the order routing checks them. */
export type AxEventRouteMismatchCode =
  /** `match.types` has no pattern for the event's type. */
  | 'type'
  /** `match.sources` has no pattern for the event's source. */
  | 'source'
  /** `match.subjects` has no pattern for the event's subject (or it has none). */
  | 'subject'
  /** An extension in `match.extensions` is missing or has another value. */
  | 'extension'
  /** The match predicate returned something other than `true`, or threw. */
  | 'predicate'
  /** The route requires authentication and the event is anonymous. */
  | 'identity'
  /** The route requires authentication and the event's trust is `untrusted`. */
  | 'trust'
  /** The route's `authorize` hook returned something other than `true`, or threw. */
  | 'authorize'
  /** A resume route: the event has no correlation to look up, or no live continuation owns it. */
  | 'continuation';

/** The first reason a route does not take an event. */
export interface AxEventRouteMismatch {
  code: AxEventRouteMismatchCode;
  /** Says what the route wants and what the event has (`type 'a.b' is not among app.order.*`). */
  message: string;
}

/**
 * What `runtime.explain()` says about one route: whether it would take the event and, if not,
 * the first reason. Computed by the code that routes `publish()`.
 */
export interface AxEventRouteExplanation {
  routeId: string;
  /** True when the route would take the event (a resume route: and a live continuation is found). */
  matches: boolean;
  /** Why not, when `matches` is false. */
  reason?: AxEventRouteMismatch;
}

/** Whether one of `patterns` (trailing `*` for a prefix) takes `value`; no patterns take anything. */
export function matchesPattern(patterns: readonly string[] | undefined, value: string | undefined): boolean {
  if (patterns === undefined) return true;
  if (value === undefined) return false;
  return patterns.some((p) => (p.endsWith('*') ? value.startsWith(p.slice(0, -1)) : p === value));
}

function notAmong(what: string, value: string | undefined, patterns: readonly string[]): string {
  const has = value === undefined ? `the event has no ${what}` : `${what} '${value}'`;
  return `${has} is not among ${patterns.join(', ')}`;
}

/**
 * Told when a route's hook answered what it cannot mean (a promise from a predicate, a
 * non-boolean from `authorize`): the event does not match, and the caller reports the route.
 */
export type RouteMisuseListener = (route: AxEventRouteDefinition, message: string) => void;

/**
 * The first criterion of a route the event fails (authentication and `authorize` are checked
 * separately), or `null` when the criteria match. A predicate that throws does not match, nor
 * does one that returns a promise (`onMisuse` hears of it).
 */
export function routeCriteriaMismatch(
  route: AxEventRouteDefinition,
  ingress: AxEventIngressRecord,
  onMisuse?: RouteMisuseListener,
): AxEventRouteMismatch | null {
  if (typeof route.match === 'function') {
    let result: unknown;
    try {
      result = route.match(ingress);
    } catch (error) {
      return {
        code: 'predicate',
        message: `the match predicate threw: ${(error as Error)?.message ?? error}`,
      };
    }
    if (isThenable(result)) {
      // Not awaited: a predicate decides synchronously. Its rejection must not go unhandled.
      result.then(undefined, () => {});
      const message =
        'the match predicate returned a promise: a predicate decides synchronously, an asynchronous check belongs in authorize()';
      onMisuse?.(route, message);
      return { code: 'predicate', message };
    }
    if (result === true) return null;
    // `(i) => i.event.data.priority` matched nothing, and nothing said why.
    if (result !== false)
      onMisuse?.(
        route,
        `the match predicate returned ${describeAnswer(result)}, not true or false: no match`,
      );
    return { code: 'predicate', message: 'the match predicate did not return true' };
  }
  const m = route.match;
  const e = ingress.event;
  if (!matchesPattern(m.types, e.type)) return { code: 'type', message: notAmong('type', e.type, m.types!) };
  if (!matchesPattern(m.sources, e.source))
    return { code: 'source', message: notAmong('source', e.source, m.sources!) };
  if (!matchesPattern(m.subjects, e.subject))
    return { code: 'subject', message: notAmong('subject', e.subject, m.subjects!) };
  if (m.extensions) {
    for (const name of Object.keys(m.extensions)) {
      const ext = e.extensions;
      if (!ext || !Object.hasOwn(ext, name) || ext[name] !== m.extensions[name]) {
        const has = ext && Object.hasOwn(ext, name) ? `is ${JSON.stringify(ext[name])}` : 'is missing';
        return {
          code: 'extension',
          message: `extension ${name} ${has}, the route wants ${JSON.stringify(m.extensions[name])}`,
        };
      }
    }
  }
  return null;
}
