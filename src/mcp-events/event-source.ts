import { backoffDelayMs } from '../backoff/backoff.js';
import type { AxMCPCatalogSnapshot } from '../client/catalog.js';
import type { AxMCPClient } from '../client/client.js';
import type { AxMCPClientEvent } from '../client/events.js';
import type { AxMCPListening } from '../client/listening.js';
import type { AxMCPTask } from '../client/tasks/task.js';
import type { AxEventIdentity, AxEventIngress, AxEventTrust } from '../events/envelope.js';
import {
  AxEventClosedError,
  AxEventConfigError,
  AxEventError,
  AxEventInputError,
  assertEventOptions,
} from '../events/errors.js';
import type {
  AxEventPublisher,
  AxEventSource,
  AxEventSourceDescription,
  AxEventWithheldType,
} from '../events/source.js';
import {
  anyOf,
  anything,
  array,
  boolean,
  findOptionsProblem,
  func,
  instance,
  object,
  oneOf,
  required,
  string,
} from '../options/check.js';
import { AxMCPUnsupportedError } from '../protocol/errors.js';
import { MCP_EVENT_TYPES, mcpSource, toIngress } from './normalize.js';
import {
  type AxMCPResourceSubscriptionPolicy,
  isTemplateLike,
  policySubscribes,
  selectResources,
  unlistedURIs,
} from './policy.js';

/** Options of {@link AxMCPEventSource}. */
export interface AxMCPEventSourceOptions {
  client: AxMCPClient;
  /** Which concrete resources to subscribe to (default `'none'`). */
  resourceSubscriptions?: AxMCPResourceSubscriptionPolicy;
  /** Who the events are attributed to, from your verified authentication (default: anonymous). */
  identity?: AxEventIdentity;
  /** How far events are trusted (default `'untrusted'`: server content is never trusted by default). */
  trust?: AxEventTrust;
  /** Per-event attribution, when it depends on the event. */
  resolveIdentity?: (
    event: AxMCPClientEvent,
  ) => { identity?: AxEventIdentity; trust?: AxEventTrust } | undefined;
  /** The source id, also the subscription owner (default `mcp:<namespace>`). */
  id?: string;
  /** Refuse a volatile event store (default false). */
  requiresDurable?: boolean;
}

/** An {@link AxMCPClient} (or an object with its shape: a `namespace`, `subscribeEvents` and `inspectCatalog`). */
export const MCP_CLIENT = instance('an AxMCPClient', (v) => {
  const client = v as { namespace?: unknown; subscribeEvents?: unknown; inspectCatalog?: unknown } | null;
  return (
    typeof client === 'object' &&
    client !== null &&
    typeof client.namespace === 'string' &&
    typeof client.subscribeEvents === 'function' &&
    typeof client.inspectCatalog === 'function'
  );
});

const NAME = string({ nonEmpty: true });

/** What `resolveIdentity` may answer; its fields are checked as `publish` checks an ingress. */
const RESOLVED_ATTRIBUTION = object(
  { identity: anything(), trust: anything() },
  { expected: 'undefined or { identity?, trust? }' },
);

/** What {@link AxMCPEventSource} accepts; checked once in the constructor. */
export const MCP_EVENT_SOURCE_OPTIONS = object(
  {
    client: required(MCP_CLIENT),
    resourceSubscriptions: anyOf(
      oneOf('none', 'all'),
      array(NAME),
      object(
        { select: required(func('a function (resource, catalog) => boolean')) },
        { expected: '{ select }' },
      ),
    ),
    identity: object(
      { tenantId: NAME, accountId: NAME, userId: NAME, sessionId: NAME },
      {
        expected: 'an identity { tenantId?, accountId?, userId?, sessionId? }',
        aliases: { tenant: 'tenantId', user: 'userId', account: 'accountId' },
      },
    ),
    trust: oneOf('trusted', 'authenticated', 'untrusted'),
    resolveIdentity: func('a function (event) => { identity?, trust? }'),
    id: NAME,
    requiresDurable: boolean(),
  },
  {
    expected: 'options { client, resourceSubscriptions?, identity?, trust?, … }',
    aliases: {
      subscriptions: 'resourceSubscriptions',
      resources: 'resourceSubscriptions',
      policy: 'resourceSubscriptions',
      subscribe: 'resourceSubscriptions',
      durable: 'requiresDurable',
    },
  },
);

/**
 * Publishes a client's notifications as attributed events, and owns the resource
 * subscriptions its policy selects. After `resources/list_changed` (and after a
 * reconnect) it reconciles its selection — releasing removals, subscribing additions —
 * before publishing the catalog event. A selector that throws keeps the last good
 * selection; wire failures are retried on the next change.
 *
 * @example
 * ```ts
 * const source = new AxMCPEventSource({ client, resourceSubscriptions: 'all', identity: { tenantId: 't1' }, trust: 'authenticated' });
 * const runtime = eventRuntime({ sources: [source], routes: [...axMCPEventRoutes({ client })], allowVolatile: true });
 * await runtime.start();
 * ```
 */
export class AxMCPEventSource implements AxEventSource {
  readonly id: string;
  readonly requiresDurable: boolean;
  readonly client: AxMCPClient;
  readonly #options: AxMCPEventSourceOptions;
  readonly #policy: AxMCPResourceSubscriptionPolicy;
  #publisher: AxEventPublisher | undefined;
  #unsubscribe: (() => void) | undefined;
  #listening: AxMCPListening | undefined;
  /** URIs this source owns on the client. */
  readonly #owned = new Set<string>();
  /** Events are handled one at a time, in arrival order. */
  #queue: Promise<void> = Promise.resolve();
  /** Aborted on close: ends a publish retry's wait. */
  readonly #closing = new AbortController();
  readonly #watched = new Map<string, AbortController>();
  #closed = false;
  /** Tells this source's events apart from an earlier instance's (revisions restart per client). */
  readonly #origin = crypto.randomUUID();
  /** Notifications still queued when the source closed (reported by `close`). */
  #unpublished = 0;

  /** Listed URIs already told of as unknown to the catalog. */
  readonly #notedUnlisted = new Set<string>();
  /** The URIs the policy selected at the last reconcile (`undefined` before the first). */
  #selected: readonly string[] | undefined;

  constructor(options: AxMCPEventSourceOptions) {
    assertEventOptions(MCP_EVENT_SOURCE_OPTIONS, options, 'AxMCPEventSource options');
    this.client = options.client;
    this.id = options.id ?? `mcp:${options.client.namespace}`;
    this.requiresDurable = options.requiresDurable ?? false;
    this.#options = options;
    this.#policy = options.resourceSubscriptions ?? 'none';
  }

  /** URIs this source currently owns. */
  get subscriptions(): string[] {
    return [...this.#owned].sort();
  }

  async start(publisher: AxEventPublisher): Promise<void> {
    this.#publisher = publisher;
    this.#unsubscribe = this.client.subscribeEvents((event) => this.#enqueue(event));
    await this.client.init();
    if (policySubscribes(this.#policy) && !this.client.serverCapabilities?.resources?.subscribe) {
      throw new AxMCPUnsupportedError(
        `The server behind "${this.client.namespace}" does not offer resource subscriptions, but the source's policy subscribes`,
        { namespace: this.client.namespace },
      );
    }
    // Listen first: what the server sends while accepting the subscriptions is not missed.
    this.#listening = this.client.startListening({ onError: (error) => publisher.reportError(error) });
    await this.#listening.ready;
    await this.reconcile();
  }

  /**
   * Follows a task the application started (for example with `callToolOutcome`), so its
   * status changes are published even without task notifications.
   */
  watchTask(task: AxMCPTask | string): void {
    const taskId = typeof task === 'string' ? task : task.taskId;
    if (this.#watched.has(taskId) || this.#closed) return;
    const controller = new AbortController();
    this.#watched.set(taskId, controller);
    this.client
      .waitForTask(task, { signal: controller.signal })
      .catch((error) => {
        if (!controller.signal.aborted && !isTaskOutcome(error)) this.#publisher?.reportError(error);
      })
      .finally(() => this.#watched.delete(taskId));
  }

  /** Brings this source's subscriptions in line with its policy and the current catalog. */
  async reconcile(): Promise<void> {
    if (!policySubscribes(this.#policy) && this.#owned.size === 0) {
      this.#selected = [];
      return;
    }
    const catalog = await this.client.inspectCatalog();
    let wanted: string[];
    try {
      wanted = selectResources(this.#policy, catalog);
      if (Array.isArray(this.#policy)) {
        this.#noteUnlisted(wanted, catalog);
        // The client refuses a template: it is told of once above, not retried on every change.
        wanted = wanted.filter((uri) => !isTemplateLike(uri));
      }
      this.#selected = wanted;
    } catch (error) {
      // A selector that throws keeps the last good selection.
      this.#publisher?.reportError(error);
      return;
    }
    // The changes of one pass go out together: the client serializes per URI and merges the
    // listen-filter changes made meanwhile (2026-07-28), so N additions are one filter change,
    // not N. A merged change fails for every URI in it, so what failed is retried in halves,
    // one half at a time: one refused URI costs a few changes (about 2·log2 N), not one per
    // URI, and does not take the others down with it.
    const failures: unknown[] = [];
    const apply = async (
      uris: string[],
      change: (uri: string) => Promise<void>,
      onDone: (uri: string) => void,
    ) => {
      const attempt = async (group: string[]) => {
        const settled = await Promise.allSettled(group.map((uri) => change(uri)));
        const failed: { uri: string; reason: unknown }[] = [];
        settled.forEach((outcome, index) => {
          const uri = group[index] as string;
          if (outcome.status === 'fulfilled') onDone(uri);
          else failed.push({ uri, reason: outcome.reason });
        });
        return failed;
      };
      const isolate = async (failed: { uri: string; reason: unknown }[]): Promise<void> => {
        if (failed.length === 1) {
          failures.push((failed[0] as { reason: unknown }).reason);
          return;
        }
        const middle = Math.ceil(failed.length / 2);
        for (const half of [failed.slice(0, middle), failed.slice(middle)]) {
          const again = await attempt(half.map((entry) => entry.uri));
          if (again.length === 0) continue;
          if (half.length === 1) failures.push((again[0] as { reason: unknown }).reason);
          else await isolate(again);
        }
      };
      const failed = await attempt(uris);
      // A single failure is this URI's own: it is retried on the next change, not now.
      if (failed.length === 1) failures.push((failed[0] as { reason: unknown }).reason);
      else if (failed.length > 1) await isolate(failed);
    };
    await apply(
      [...this.#owned].filter((owned) => !wanted.includes(owned)),
      (uri) => this.client.releaseResourceSubscription(uri, this.id),
      (uri) => this.#owned.delete(uri),
    );
    await apply(
      wanted.filter((candidate) => !this.#owned.has(candidate)),
      (uri) => this.client.acquireResourceSubscription(uri, this.id),
      (uri) => this.#owned.add(uri),
    );
    if (failures.length > 0) {
      this.#publisher?.reportError(
        new AggregateError(
          failures,
          `${failures.length} subscription change(s) failed; retried on the next change`,
        ),
      );
    }
  }

  /**
   * Tells, once per URI, of a listed URI the catalog does not account for: many servers accept a
   * subscription to any URI, so a misspelt one was subscribed and its updates never came. It
   * is still subscribed (the server may serve URIs it does not list); a template is not.
   */
  #noteUnlisted(uris: readonly string[], catalog: AxMCPCatalogSnapshot): void {
    for (const uri of unlistedURIs(uris, catalog)) {
      if (this.#notedUnlisted.has(uri)) continue;
      this.#notedUnlisted.add(uri);
      const why = isTemplateLike(uri)
        ? 'a URI template: templates are never expanded, so no resource has that URI; it is not subscribed (list concrete URIs)'
        : `which the ${this.client.namespace} server neither lists nor could mean by one of its URI templates: it is subscribed, but its updates may never come`;
      this.#publisher?.reportError(
        new AxEventConfigError(`Source ${this.id}: resourceSubscriptions names ${uri}, ${why}`),
      );
    }
  }

  /**
   * What this source publishes, for the runtime's warnings: the `mcp://<namespace>` source,
   * the MCP event types (all of `mcp.*`), its attribution (`varies` with `resolveIdentity`), and
   * `mcp.resource.updated` as withheld while its policy selects no resource and the client
   * holds no subscription of another owner.
   */
  describe(): AxEventSourceDescription {
    const perEvent = this.#options.resolveIdentity !== undefined;
    const withheld = this.#withheld();
    const types = Object.values(MCP_EVENT_TYPES).filter((type) => withheld?.type !== type);
    return {
      sources: [mcpSource(this.client.namespace)],
      types,
      identity: perEvent ? 'varies' : this.#options.identity ? 'identified' : 'anonymous',
      trust: perEvent ? 'varies' : (this.#options.trust ?? 'untrusted'),
      ...(withheld ? { withheld: [withheld] } : {}),
      // Every mcp.* type the library publishes is listed above: anything else under it is a typo.
      typePrefixes: ['mcp.'],
    };
  }

  #withheld(): AxEventWithheldType | undefined {
    if (this.#selected === undefined || this.#selected.length > 0) return undefined;
    // Updates of resources another owner subscribed through the same client still arrive.
    if (this.client.subscriptions.length > 0) return undefined;
    const policy = this.#policy;
    const why =
      policy === 'none'
        ? `its resourceSubscriptions policy is 'none'${this.#options.resourceSubscriptions === undefined ? ' (the default)' : ''}`
        : Array.isArray(policy)
          ? 'its resourceSubscriptions list is empty'
          : `its resourceSubscriptions policy selected no resource of the ${this.client.namespace} catalog`;
    return {
      type: MCP_EVENT_TYPES.resourceUpdated,
      reason: `${why}: set resourceSubscriptions to 'all', a list of URIs or { select(resource) } on the AxMCPEventSource`,
    };
  }

  /** Stops publishing and releases only this source's subscriptions. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort();
    this.#unsubscribe?.();
    this.#listening?.close();
    for (const controller of this.#watched.values()) controller.abort();
    await this.#queue;
    if (this.#unpublished > 0) {
      this.#publisher?.reportError(
        new AxEventError(
          'closed',
          `Source ${this.id} closed with ${this.#unpublished} notification(s) received but not yet published: they are dropped`,
        ),
      );
    }
    const owned = [...this.#owned];
    const outcomes = await Promise.allSettled(
      owned.map((uri) => this.client.releaseResourceSubscription(uri, this.id)),
    );
    const failures: unknown[] = [];
    outcomes.forEach((outcome, index) => {
      if (outcome.status === 'fulfilled') this.#owned.delete(owned[index] as string);
      else failures.push(outcome.reason);
    });
    // What could not be released stays owned (and listed), so it is visible instead of leaking silently.
    if (failures.length > 0) {
      this.#publisher?.reportError(
        new AggregateError(failures, `${failures.length} subscription(s) not released on close`),
      );
    }
    this.#publisher = undefined;
  }

  #enqueue(event: AxMCPClientEvent): void {
    if (this.#closed) return;
    // The session the notification came on, read as it arrives: a legacy event id means something
    // only within its session, and by the time the queue reaches it (behind a publish the store
    // refused, say) the client may be on another session, or between two.
    const sessionId = this.client.transport.sessionId;
    this.#queue = this.#queue
      .then(() => this.#handle(event, sessionId))
      .catch((error) => this.#publisher?.reportError(error));
  }

  async #handle(event: AxMCPClientEvent, sessionId: string | undefined): Promise<void> {
    const publisher = this.#publisher;
    if (!publisher) return;
    if (this.#closed) {
      // The client has moved past it (its Last-Event-ID too): counted, so that close says so.
      if (toIngress(event, { origin: this.#origin, trust: 'untrusted' })) this.#unpublished++;
      return;
    }
    const resourcesChanged = event.type === 'catalog_changed' && event.kinds.includes('resources');
    const reconnected =
      event.type === 'lifecycle' && (event.state === 'reconnected' || event.state === 'session_restored');
    if (resourcesChanged || reconnected) await this.reconcile();
    const resolved = this.#options.resolveIdentity?.(event);
    if (resolved !== undefined) {
      // A misspelt `identity` would publish the event as the source's default (or anonymous)
      // under the trust it named: given up and reported, as a malformed event is.
      const problem = findOptionsProblem(RESOLVED_ATTRIBUTION, resolved, 'resolveIdentity result');
      if (problem) throw new AxEventInputError('invalid_event', problem.message);
    }
    const identity = resolved?.identity ?? this.#options.identity;
    const attribution = {
      origin: this.#origin,
      trust: resolved?.trust ?? this.#options.trust ?? 'untrusted',
      ...(identity ? { identity } : {}),
      ...(sessionId ? { sessionId } : {}),
    };
    const ingress = toIngress(event, attribution);
    if (ingress) await this.#publish(publisher, ingress);
  }

  /**
   * Publish until the store takes it. The client has taken the notification off its stream
   * (its `Last-Event-ID` has moved past it), so a publish the store refused — a cut
   * connection, a failover, a full store — is retried with backoff while the source is open,
   * and the notifications behind it wait, in order. Each failure is reported. Only what can
   * never be published (a malformed or oversized event) is given up, reported.
   */
  async #publish(publisher: AxEventPublisher, ingress: AxEventIngress): Promise<void> {
    for (let failures = 1; ; failures++) {
      try {
        await publisher.publish(ingress);
        return;
      } catch (error) {
        if (error instanceof AxEventInputError || error instanceof AxEventClosedError || this.#closed)
          throw error;
        publisher.reportError(error);
        await publisher.clock.sleep(backoffDelayMs(failures, PUBLISH_RETRY), this.#closing.signal);
        if (this.#closed) throw error;
      }
    }
  }
}

/** Retries of a publish the store refused: from 100 ms up to 5 s apart. */
const PUBLISH_RETRY = { baseMs: 100, maxMs: 5000, jitter: 0.5 };

function isTaskOutcome(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === 'task_failed' || code === 'task_cancelled';
}
