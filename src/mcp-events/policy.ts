import type { AxMCPCatalogSnapshot } from '../client/catalog.js';
import { AxEventConfigError } from '../events/errors.js';
import { describeAnswer, isThenable } from '../options/hook-answers.js';
import type { AxMCPResource } from '../protocol/messages.js';

/**
 * Which concrete resources an event source subscribes to. Templates are never
 * expanded: a selection is always a set of URIs the server listed, or URIs the
 * application built itself.
 * - `'none'` (default): nothing — least privilege.
 * - `'all'`: every concrete resource the server lists.
 * - `string[]`: these URIs.
 * - `{ select(resource, catalog) }`: those the function chooses.
 */
export type AxMCPResourceSubscriptionPolicy =
  | 'none'
  | 'all'
  | readonly string[]
  | { select(resource: AxMCPResource, catalog: AxMCPCatalogSnapshot): boolean };

/** The URIs a policy selects from a catalog, deduplicated and sorted. */
export function selectResources(
  policy: AxMCPResourceSubscriptionPolicy,
  catalog: AxMCPCatalogSnapshot,
): string[] {
  let uris: string[];
  if (policy === 'none') uris = [];
  else if (policy === 'all') uris = catalog.resources.map((resource) => resource.uri);
  else if (Array.isArray(policy))
    uris = policy.filter((uri): uri is string => typeof uri === 'string' && uri !== '');
  else {
    const { select } = policy as {
      select: (resource: AxMCPResource, catalog: AxMCPCatalogSnapshot) => boolean;
    };
    uris = catalog.resources.filter((resource) => selected(select(resource, catalog))).map((r) => r.uri);
  }
  return [...new Set(uris)].sort();
}

/** True when the policy subscribes to anything at all. */
export function policySubscribes(policy: AxMCPResourceSubscriptionPolicy): boolean {
  return policy !== 'none' && !(Array.isArray(policy) && policy.length === 0);
}

/**
 * A selector's answer: `true` or `false`. Compared with `true`, an async selector (a promise)
 * or one answering `1` selected nothing, without a word; such an answer throws instead (the
 * source reports it and keeps its last good selection).
 */
function selected(answer: unknown): boolean {
  if (typeof answer === 'boolean') return answer;
  if (isThenable(answer)) {
    answer.then(undefined, () => {});
    throw new AxEventConfigError(
      'The resourceSubscriptions selector returned a promise: select(resource, catalog) decides synchronously ' +
        '(look up what it needs before, and call reconcile() when that changes)',
    );
  }
  throw new AxEventConfigError(
    `The resourceSubscriptions selector returned ${describeAnswer(answer)}, not true or false`,
  );
}

/**
 * The `uris` the catalog does not account for: neither listed nor fitting one of its URI
 * templates (any expression counts as a wildcard: matched, never expanded), and any URI that is
 * itself a template (`…/{id}`: never expanded, so nothing has that URI). A misspelt URI in a
 * list policy is accepted by many servers, and its updates then never come.
 */
export function unlistedURIs(
  uris: readonly string[],
  catalog: Pick<AxMCPCatalogSnapshot, 'resources' | 'resourceTemplates'>,
): string[] {
  const listed = new Set(catalog.resources.map((resource) => resource.uri));
  const templates = catalog.resourceTemplates.map((template) => templatePattern(template.uriTemplate));
  return uris.filter(
    (uri) => !listed.has(uri) && (isTemplateLike(uri) || !templates.some((pattern) => pattern.test(uri))),
  );
}

/** A URI with a `{…}` expression in it: a template given where a concrete URI belongs. */
export function isTemplateLike(uri: string): boolean {
  return /\{[^}]*\}/.test(uri);
}

/** A URI template as a pattern: literal text, any expression a wildcard. */
function templatePattern(template: string): RegExp {
  const parts = template.split(/\{[^}]*\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*')}$`);
}
