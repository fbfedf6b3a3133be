import type { AxMCPCatalogSnapshot } from '../client/catalog.js';
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
    uris = catalog.resources
      .filter((resource) => select(resource, catalog) === true)
      .map((resource) => resource.uri);
  }
  return [...new Set(uris)].sort();
}

/** True when the policy subscribes to anything at all. */
export function policySubscribes(policy: AxMCPResourceSubscriptionPolicy): boolean {
  return policy !== 'none' && !(Array.isArray(policy) && policy.length === 0);
}
