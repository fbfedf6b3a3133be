/**
 * The route builder users write: `eventRoute('orders').types('app.order.*').authenticated().wake(target).build()`.
 */

import { object, oneOf } from '../options/check.js';
import type { AxEventExtensionValue } from './envelope.js';
import { AxEventConfigError, assertEventOptions, eventRuleError } from './errors.js';
import type { AxEventPath } from './path.js';
import {
  type AxEventAuthorize,
  type AxEventHandler,
  type AxEventInstanceKey,
  type AxEventMatch,
  type AxEventPredicate,
  type AxEventRouteDefinition,
  checkRoute,
  routeLabel,
} from './route.js';
import type { AxEventTargetDefinition } from './target.js';

/** The options of {@link AxEventRouteBuilder.debounce}. */
const DEBOUNCE_OPTIONS = object(
  { coalesce: oneOf('latest') },
  { expected: "options { coalesce?: 'latest' }" },
);

/** Builds an {@link AxEventRouteDefinition}; pick exactly one action, then `build()`. */
export class AxEventRouteBuilder {
  readonly #id: string;
  readonly #criteria: {
    types?: string[];
    sources?: string[];
    subjects?: string[];
    extensions?: Record<string, AxEventExtensionValue>;
  } = {};
  #predicate?: AxEventPredicate;
  #route: Partial<AxEventRouteDefinition> = {};

  constructor(id: string) {
    this.#id = id;
  }

  /** Match these event types (exact, or prefix with a trailing `*`; no `*` elsewhere). */
  types(...types: string[]): this {
    this.#criteria.types = [...(this.#criteria.types ?? []), ...types];
    return this;
  }

  /** Match these sources. */
  sources(...sources: string[]): this {
    this.#criteria.sources = [...(this.#criteria.sources ?? []), ...sources];
    return this;
  }

  /** Match these subjects. */
  subjects(...subjects: string[]): this {
    this.#criteria.subjects = [...(this.#criteria.subjects ?? []), ...subjects];
    return this;
  }

  /** Require these extension values. */
  extensions(values: Readonly<Record<string, AxEventExtensionValue>>): this {
    this.#criteria.extensions = Object.assign(Object.create(null), this.#criteria.extensions, values);
    return this;
  }

  /** Match with a predicate instead of criteria. */
  match(predicate: AxEventPredicate): this {
    this.#predicate = predicate;
    return this;
  }

  /** Anonymous and untrusted events cannot match. */
  authenticated(): this {
    this.#route.requireAuthenticated = true;
    return this;
  }

  /** Same as {@link authenticated} when `true`. */
  requireAuthenticated(required = true): this {
    this.#route.requireAuthenticated = required;
    return this;
  }

  /** The identity hook. */
  authorize(fn: AxEventAuthorize): this {
    this.#route.authorize = fn;
    return this;
  }

  /** How to derive the instance key. */
  instanceKey(key: AxEventInstanceKey): this {
    this.#route.instanceKey = key;
    return this;
  }

  /** Which correlation a resume looks up. */
  correlate(kind: string, path?: AxEventPath): this {
    this.#route.correlation = path === undefined ? { kind } : { kind, path };
    return this;
  }

  /** Delay deliveries; with `coalesce: 'latest'` a newer event replaces a waiting one. */
  debounce(ms: number, options: { coalesce?: 'latest' } = {}): this {
    assertEventOptions(DEBOUNCE_OPTIONS, options, `Route ${this.#id}: debounce() options`, {
      routeId: this.#id,
    });
    this.#route.debounceMs = ms;
    if (options.coalesce) this.#route.coalesce = options.coalesce;
    return this;
  }

  /** `strict` (default) or `relaxed` ordering per (target, instance). */
  ordering(ordering: 'strict' | 'relaxed'): this {
    this.#route.ordering = ordering;
    return this;
  }

  #action(action: AxEventRouteDefinition['action'], extra: Partial<AxEventRouteDefinition>): this {
    if (this.#route.action !== undefined) {
      throw new AxEventConfigError(`Route ${this.#id}: a route has exactly one action`, {
        routeId: this.#id,
      });
    }
    this.#route = { ...this.#route, ...extra, action };
    return this;
  }

  /** Run `target` for every matching event. */
  wake(target: string | AxEventTargetDefinition): this {
    return this.#action('wake', { target });
  }

  /** Resume the continuation the event correlates with (optionally only those owned by `target`). */
  resume(target?: string | AxEventTargetDefinition): this {
    return this.#action('resume', target === undefined ? {} : { target });
  }

  /** Call `fn` for every matching event; never invokes a target. */
  observe(fn: AxEventHandler): this {
    return this.#action('observe', { observe: fn });
  }

  /** Call `fn` to invalidate a cache for every matching event; never invokes a target. */
  invalidate(fn: AxEventHandler): this {
    return this.#action('invalidate', { invalidate: fn });
  }

  /**
   * Check and return the route: exactly one action, criteria or a predicate, then the record
   * check `eventRuntime()` applies to routes given as records (paths name the definition's keys:
   * `match.types`, `debounceMs`).
   * Throws {@link AxEventConfigError} (`invalid_options`).
   */
  build(): AxEventRouteDefinition {
    const label = routeLabel({ id: this.#id });
    const context = { routeId: this.#id };
    const hasCriteria = Object.keys(this.#criteria).length > 0;
    if (this.#predicate && hasCriteria) {
      throw eventRuleError(
        label,
        { path: 'match', expected: 'use criteria or a predicate, not both', received: 'both' },
        context,
      );
    }
    if (this.#route.action === undefined) {
      throw eventRuleError(
        label,
        {
          path: 'action',
          expected: 'wake(target), resume(), observe(fn) or invalidate(fn)',
          received: 'nothing',
        },
        context,
      );
    }
    const match: AxEventMatch | AxEventPredicate = this.#predicate ?? { ...this.#criteria };
    const route = { ...this.#route, id: this.#id, match } as AxEventRouteDefinition;
    checkRoute(route, label);
    return Object.freeze(route);
  }
}

/** Start a route. */
export function eventRoute(id: string): AxEventRouteBuilder {
  return new AxEventRouteBuilder(id);
}
