import type {
  AxEventIdentity,
  AxEventRouteDefinition,
  AxEventRuntime,
  AxEventTrust,
  AxMCPCatalogSnapshot,
  AxMCPClient,
  AxMCPResourceSubscriptionPolicy,
} from '../index.js';
import { AxMCPEventSource, eventRoute, eventRuntime } from '../index.js';
import { UsageError } from './connect.js';
import { style } from './style.js';

/** Turns `--subscribe` and `--select` flags into a subscription policy. */
export function watchPolicy(
  subscribe: string[] | undefined,
  select: string | undefined,
): AxMCPResourceSubscriptionPolicy {
  if (select !== undefined) {
    // Both would mean two policies; one would silently win over the other.
    if (subscribe && subscribe.length > 0)
      throw new UsageError('--select and --subscribe both choose what to subscribe: give one of them');
    const pattern = globToRegExp(select);
    return { select: (resource) => pattern.test(resource.uri) };
  }
  if (!subscribe || subscribe.length === 0) return 'none';
  if (subscribe.length === 1 && subscribe[0] === 'all') return 'all';
  return subscribe;
}

/** `*` matches within a path segment, `**` across segments; everything else is literal. */
function globToRegExp(glob: string): RegExp {
  let pattern = '';
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i] as string;
    if (char === '*') {
      if (glob[i + 1] === '*') {
        pattern += '.*';
        i++;
      } else pattern += '[^/]*';
    } else pattern += char.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${pattern}$`);
}

/**
 * What the policy selects that says nothing by itself: a glob that matches none of the listed
 * resources, or `all` on a server that lists none. (A listed URI the catalog does not account
 * for, or a template given as a URI, the source reports itself.)
 */
export function subscriptionNotes(
  policy: AxMCPResourceSubscriptionPolicy,
  catalog: Pick<AxMCPCatalogSnapshot, 'resources' | 'resourceTemplates'>,
): string[] {
  const listed = catalog.resources.length;
  if (policy === 'all' && listed === 0) return ['--subscribe all: the server lists no concrete resource'];
  if (typeof policy === 'object' && policy !== null && 'select' in policy) {
    const chosen = catalog.resources.filter((resource) =>
      policy.select(resource, catalog as AxMCPCatalogSnapshot),
    );
    if (chosen.length === 0) return [`--select matched none of the ${listed} resource(s) the server lists`];
  }
  return [];
}

const COLOURS: Record<string, (text: string) => string> = {
  'mcp.resource.updated': style.green,
  'mcp.catalog.changed': style.yellow,
  'mcp.progress': style.blue,
  'mcp.logging': style.dim,
  'mcp.task.status': style.magenta,
  'mcp.lifecycle': style.cyan,
};

/**
 * The routes of a user's runtime module, asked what they would do with each event the watch
 * sees (`--routes`). The runtime is never started: nothing runs, nothing is stored.
 */
export interface WatchRoutes {
  runtime: AxEventRuntime;
  routes: readonly AxEventRouteDefinition[];
}

/** How the watch's source attributes its events (`--tenant`, `--trust`), as an app's source would. */
export interface WatchAttribution {
  identity?: AxEventIdentity;
  trust?: AxEventTrust;
}

/**
 * Streams a server's events to the terminal until `signal` aborts: the subscription
 * policy is applied and kept in line with the catalog, and connection changes show. With
 * `routes`, each event is followed by what every route would do with it, and why not.
 */
export async function watch(
  client: AxMCPClient,
  policy: AxMCPResourceSubscriptionPolicy,
  out: (text: string) => void,
  signal: AbortSignal,
  options: { routes?: WatchRoutes; attribution?: WatchAttribution } = {},
): Promise<void> {
  const attribution = options.attribution ?? {};
  const source = new AxMCPEventSource({ client, resourceSubscriptions: policy, ...attribution });
  const runtime = eventRuntime({
    sources: [source],
    allowVolatile: true,
    onError: (error: unknown) => out(style.red(`! ${errorText(error)}`)),
    routes: [
      eventRoute('print')
        .types('mcp.*')
        .observe(async (ingress) => {
          const event = ingress.event;
          const colour = COLOURS[event.type] ?? ((text: string) => text);
          const time = (event.time ?? new Date().toISOString()).slice(11, 23);
          out(`${style.dim(time)} ${colour(event.type.padEnd(20))} ${summary(event.subject, event.data)}`);
          if (options.routes)
            for (const line of await explainLines(options.routes, event, ingress)) out(line);
        })
        .build(),
    ],
  });
  await runtime.start();
  const catalog = await client.inspectCatalog();
  out(
    style.bold(`watching ${client.namespace}`) +
      style.dim(
        ` (${catalog.era}, ${catalog.protocolVersion}) — subscribed: ${source.subscriptions.join(', ') || 'nothing'}`,
      ),
  );
  // A misspelt URI or a glob that matches nothing watched in silence, for ever.
  for (const note of subscriptionNotes(policy, catalog)) out(style.yellow(`note: ${note}`));
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await runtime.close();
  await source.close();
}

/** One line per route: what it would do with the event, or the first reason it would not. */
async function explainLines(
  routes: WatchRoutes,
  event: Parameters<AxEventRuntime['explain']>[0],
  ingress: { identity: Readonly<AxEventIdentity>; trust: AxEventTrust },
): Promise<string[]> {
  const anonymous = Object.keys(ingress.identity).length === 0;
  const verdicts = await routes.runtime.explain(event, {
    ...(anonymous ? {} : { identity: { ...ingress.identity } }),
    trust: ingress.trust,
  });
  return verdicts.map((verdict) => {
    const route = routes.routes.find((candidate) => candidate.id === verdict.routeId);
    const target = typeof route?.target === 'string' ? route.target : route?.target?.id;
    if (verdict.matches) {
      return style.green(
        `    ✓ ${verdict.routeId}: would ${route?.action ?? 'take it'}${target ? ` ${target}` : ''}`,
      );
    }
    return style.dim(
      `    · ${verdict.routeId}: ${verdict.reason?.code ?? 'no'} — ${verdict.reason?.message ?? ''}`,
    );
  });
}

function summary(subject: string | undefined, data: unknown): string {
  const record = (data ?? {}) as Record<string, unknown>;
  if (record.state !== undefined) return String(record.state);
  if (record.status !== undefined) return `${subject ?? ''} ${String(record.status)}`;
  if (record.level !== undefined)
    return `[${String(record.level)}] ${JSON.stringify(record.data).slice(0, 200)}`;
  if (record.progress !== undefined)
    return `${String(record.progress)}${record.total ? `/${String(record.total)}` : ''}`;
  if (record.kinds !== undefined)
    return `${(record.kinds as string[]).join(', ')} (revision ${String(record.revision)})`;
  return subject ?? '';
}

function errorText(report: unknown): string {
  if (report instanceof Error) return report.message;
  const error = (report as { error?: unknown } | undefined)?.error;
  return error instanceof Error ? error.message : String(error ?? report);
}
