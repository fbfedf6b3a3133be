/**
 * Version and capability negotiation (`docs/specification/overview/index.md`, "Negotiation
 * Protocol", "Authority Binding", "Protocol Version"): the highest protocol version both sides
 * support, then the capability intersection — same name, the highest mutual version, orphaned
 * extensions pruned until stable — over only the capabilities whose `schema` URL is bound to
 * their namespace authority.
 */

/** One capability entry of a profile (`ucp.capabilities[name][]`). */
export interface AxUCPCapabilityEntry {
  version: string;
  spec?: string;
  schema?: string;
  extends?: string | readonly string[];
  config?: Record<string, unknown>;
  [member: string]: unknown;
}

/** A negotiated capability: its name, the selected version and the business's entry. */
export interface AxUCPNegotiatedCapability {
  name: string;
  version: string;
  /** The parents it extends (empty for a root capability). */
  extends: readonly string[];
  /** The business's entry for the selected version (its `config` included). */
  entry: Readonly<AxUCPCapabilityEntry>;
}

/** A capability the client left out, and why. */
export interface AxUCPRejectedCapability {
  name: string;
  reason: string;
}

/** The protocol versions this client speaks, newest first. */
export const UCP_SUPPORTED_VERSIONS: readonly string[] = Object.freeze(['2026-08-25', '2026-04-08']);

/** The capabilities whose operations this client implements. */
export const UCP_CLIENT_CAPABILITIES: readonly string[] = Object.freeze([
  'dev.ucp.shopping.catalog.search',
  'dev.ucp.shopping.catalog.lookup',
  'dev.ucp.shopping.cart',
  'dev.ucp.shopping.checkout',
  'dev.ucp.shopping.order',
  'dev.ucp.shopping.fulfillment',
  'dev.ucp.shopping.discount',
  'dev.ucp.shopping.buyer_consent',
]);

/** The highest version in both lists (`YYYY-MM-DD` strings compare as dates), or undefined. */
export function selectVersion(business: readonly string[], platform: readonly string[]): string | undefined {
  const mutual = business.filter((v) => platform.includes(v)).sort();
  return mutual[mutual.length - 1];
}

/**
 * The authority-binding rule: the `schema` URL is `https:` without userinfo, its host a
 * registered name of at least two labels, and its reversed labels equal `name` or are a
 * label-aligned prefix of it.
 */
export function authorityBindingProblem(name: string, schema: string | undefined): string | undefined {
  if (schema === undefined) return 'it declares no schema URL';
  let url: URL;
  try {
    url = new URL(schema);
  } catch {
    return 'its schema URL does not parse';
  }
  if (url.protocol !== 'https:') return 'its schema URL is not https';
  if (url.username || url.password) return 'its schema URL carries userinfo';
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (host.startsWith('[') || /^\d+(\.\d+){3}$/.test(host)) return 'its schema host is an IP literal';
  const labels = host.split('.');
  if (labels.length < 2) return 'its schema host is a single label';
  const prefix = labels.reverse().join('.');
  if (name === prefix || name.startsWith(`${prefix}.`)) return undefined;
  return `its schema host ${host} does not own the namespace ${name}`;
}

/** Parents of an entry (`extends` as a string or a list). */
function parentsOf(entry: AxUCPCapabilityEntry): string[] {
  const value = entry.extends;
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/**
 * The capability intersection. `business` is the business profile's `ucp.capabilities`;
 * `platform` maps each capability name the platform supports to its versions.
 */
export function intersectCapabilities(
  business: ReadonlyMap<string, readonly AxUCPCapabilityEntry[]>,
  platform: ReadonlyMap<string, readonly string[]>,
): { capabilities: Map<string, AxUCPNegotiatedCapability>; rejected: AxUCPRejectedCapability[] } {
  const out = new Map<string, AxUCPNegotiatedCapability>();
  const rejected: AxUCPRejectedCapability[] = [];
  for (const [name, entries] of business) {
    const platformVersions = platform.get(name);
    if (!platformVersions) continue;
    const bound = entries.filter((entry) => {
      const problem = authorityBindingProblem(name, entry.schema);
      if (problem) rejected.push({ name, reason: `authority binding fails: ${problem}` });
      return problem === undefined;
    });
    const version = selectVersion(
      bound.map((e) => e.version),
      platformVersions,
    );
    if (version === undefined) {
      if (bound.length > 0) rejected.push({ name, reason: 'no mutual version' });
      continue;
    }
    const entry = bound.find((e) => e.version === version)!;
    out.set(name, { name, version, extends: parentsOf(entry), entry });
  }
  for (let changed = true; changed; ) {
    changed = false;
    for (const [name, capability] of out) {
      if (capability.extends.length > 0 && !capability.extends.some((parent) => out.has(parent))) {
        out.delete(name);
        rejected.push({ name, reason: 'its parent capability is not negotiated' });
        changed = true;
      }
    }
  }
  return { capabilities: out, rejected };
}
