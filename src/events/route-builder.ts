/**
 * The route builder users write: `eventRoute('orders').types('app.order.*').authenticated().wake(target).build()`.
 */

import type { AxEventExtensionValue } from './envelope.js';
import { AxEventConfigError } from './errors.js';
import type { AxEventPath } from './path.js';
import {
  type AxEventAuthorize,
  type AxEventHandler,
  type AxEventInstanceKey,
  type AxEventMatch,
  type AxEventPredicate,
  type AxEventRouteDefinition,
  checkRoute,
} from './route.js';
import type { AxEventTargetDefinition } from './target.js';

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

  /** Match these event types (exact, or prefix with a trailing `*`). */
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

  /** Check and return the route. */
  build(): AxEventRouteDefinition {
    const hasCriteria = Object.keys(this.#criteria).length > 0;
    if (this.#predicate && hasCriteria) {
      throw new AxEventConfigError(`Route ${this.#id}: use criteria or a predicate, not both`, {
        routeId: this.#id,
      });
    }
    if (this.#route.action === undefined) {
      throw new AxEventConfigError(`Route ${this.#id}: choose wake, resume, observe or invalidate`, {
        routeId: this.#id,
      });
    }
    const match: AxEventMatch | AxEventPredicate = this.#predicate ?? { ...this.#criteria };
    const route = { ...this.#route, id: this.#id, match } as AxEventRouteDefinition;
    checkRoute(route);
    return Object.freeze(route);
  }
}

/** Start a route. */
export function eventRoute(id: string): AxEventRouteBuilder {
  return new AxEventRouteBuilder(id);
}
