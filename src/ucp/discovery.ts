/**
 * Discovery and negotiation (`docs/specification/overview/index.md`, "Profile Structure",
 * "Protocol Version", "Negotiation Protocol"): the business profile at `/.well-known/ucp`,
 * the protocol version both sides speak (a `supported_versions` profile when it is an older
 * one, checked to declare that version and to be a leaf), the shopping service endpoints, the
 * capability intersection and the business's signing keys.
 */
import { redactURL } from '../net/ssrf.js';
import { AxUCPError, type AxUCPErrorContext } from './errors.js';
import { type ExchangeSettings, exchange } from './http.js';
import {
  type AxUCPCapabilityEntry,
  type AxUCPNegotiatedCapability,
  type AxUCPRejectedCapability,
  intersectCapabilities,
  selectVersion,
  UCP_CLIENT_CAPABILITIES,
  UCP_SUPPORTED_VERSIONS,
} from './negotiation.js';
import type { AxUCPPublicKey } from './signatures.js';
import { assertUCPSchema } from './validate.js';

const PROFILE_BYTES = 256 * 1024;

/** A UCP profile document (`/.well-known/ucp`, or the platform's). Unknown members are kept. */
export interface AxUCPProfile {
  ucp: {
    version: string;
    supported_versions?: Record<string, string>;
    services: Record<string, readonly Record<string, unknown>[]>;
    capabilities?: Record<string, readonly AxUCPCapabilityEntry[]>;
    payment_handlers: Record<string, readonly Record<string, unknown>[]>;
    [member: string]: unknown;
  };
  /** Public signing keys (RFC 7517 JWK Set). 2026-04-08 profiles call it `signing_keys`. */
  keys?: readonly AxUCPPublicKey[];
  [member: string]: unknown;
}

/** The platform profile the client advertises: its URL goes in `UCP-Agent` on every request. */
export interface AxUCPPlatformProfile {
  /** Where the business fetches your profile (HTTPS; it holds your public keys). */
  url: string;
  /**
   * The profile document served at `url`, for negotiating on this side too. Without it the
   * client offers every capability it implements at every version it speaks.
   */
  document?: AxUCPProfile;
}

/** The outcome of discovery and negotiation. */
export interface AxUCPNegotiation {
  /** The protocol version selected. */
  version: string;
  /** The business profile for that version. */
  profile: AxUCPProfile;
  /** The REST endpoint of `dev.ucp.shopping` (empty when the business offers only MCP). */
  restEndpoint: string;
  /** The MCP endpoint of `dev.ucp.shopping`, when the business offers one: make the `mcp` client for it. */
  mcpEndpoint?: string;
  /** The negotiated capabilities, by name. */
  capabilities: ReadonlyMap<string, AxUCPNegotiatedCapability>;
  /** Capabilities left out, with the reason. */
  rejected: readonly AxUCPRejectedCapability[];
  /** The business's public signing keys. */
  keys: readonly AxUCPPublicKey[];
  /** The payment handlers the business declares (`ucp.payment_handlers`). */
  paymentHandlers: Readonly<Record<string, readonly Record<string, unknown>[]>>;
}

/** Fetches and checks one business profile (256 KiB cap, no redirects: the exchange refuses them). */
export async function fetchProfile(
  settings: ExchangeSettings,
  url: URL,
  signal: AbortSignal | undefined,
): Promise<AxUCPProfile> {
  const context: AxUCPErrorContext = { endpoint: redactURL(url), operation: 'discovery' };
  if (settings.namespace !== undefined) context.namespace = settings.namespace;
  const request: Parameters<typeof exchange>[1] = { method: 'GET', url, operation: 'discovery' };
  if (signal) request.signal = signal;
  const response = await exchange({ ...settings, maxResponseBytes: PROFILE_BYTES }, request);
  assertUCPSchema('business_profile', response.json, context);
  return response.json as AxUCPProfile;
}

/** What {@link discover} needs. */
export interface DiscoveryInput {
  settings: ExchangeSettings;
  profileURL: URL;
  platform: AxUCPPlatformProfile;
  /** Whether operations go over MCP (then a REST service is not required). */
  overMCP: boolean;
  context: AxUCPErrorContext;
}

/** Discovery, version selection and capability negotiation. */
export async function discover(
  input: DiscoveryInput,
  signal: AbortSignal | undefined,
): Promise<AxUCPNegotiation> {
  const { settings, context } = input;
  let profile = await fetchProfile(settings, input.profileURL, signal);
  const platformVersions = input.platform.document
    ? [input.platform.document.ucp.version]
    : [...UCP_SUPPORTED_VERSIONS];
  const offered = [profile.ucp.version, ...Object.keys(profile.ucp.supported_versions ?? {})];
  const version = selectVersion(
    offered,
    platformVersions.filter((v) => UCP_SUPPORTED_VERSIONS.includes(v)),
  );
  if (version === undefined) {
    throw new AxUCPError(
      'version_unsupported',
      `The business speaks UCP ${offered.slice(0, 5).join(', ')}; this client speaks ${UCP_SUPPORTED_VERSIONS.join(', ')}`,
      context,
    );
  }
  if (version !== profile.ucp.version) {
    const target = profile.ucp.supported_versions?.[version];
    let url: URL;
    try {
      url = new URL(target ?? '');
    } catch {
      throw new AxUCPError('discovery_failed', `The profile URL for version ${version} is invalid`, context);
    }
    profile = await fetchProfile(settings, url, signal);
    if (profile.ucp.version !== version || profile.ucp.supported_versions !== undefined) {
      throw new AxUCPError(
        'discovery_failed',
        `The version profile for ${version} declares ${String(profile.ucp.version).slice(0, 20)}, or is not a leaf`,
        context,
      );
    }
  }
  const services = profile.ucp.services['dev.ucp.shopping'] ?? [];
  const rest = services.find(
    (s) => s.transport === 'rest' && s.version === version && typeof s.endpoint === 'string',
  );
  const mcpService = services.find(
    (s) => s.transport === 'mcp' && s.version === version && typeof s.endpoint === 'string',
  );
  if (!rest && !(input.overMCP && mcpService)) {
    throw new AxUCPError(
      'capability_unsupported',
      `The business has no REST service for UCP ${version}`,
      context,
    );
  }
  let restEndpoint = '';
  let mcpEndpoint: string | undefined;
  try {
    if (rest) restEndpoint = new URL(rest.endpoint as string).href;
    if (mcpService) mcpEndpoint = new URL(mcpService.endpoint as string).href;
  } catch {
    throw new AxUCPError('discovery_failed', 'A service endpoint in the profile is not a URL', context);
  }
  const business = new Map<string, readonly AxUCPCapabilityEntry[]>();
  for (const [name, entries] of Object.entries(profile.ucp.capabilities ?? {})) business.set(name, entries);
  const platform = new Map<string, readonly string[]>();
  const ours = input.platform.document?.ucp.capabilities;
  if (ours) {
    for (const [name, entries] of Object.entries(ours))
      platform.set(
        name,
        entries.map((e) => e.version),
      );
  } else {
    for (const name of UCP_CLIENT_CAPABILITIES) platform.set(name, [version]);
  }
  const { capabilities, rejected } = intersectCapabilities(business, platform);
  const out: AxUCPNegotiation = {
    version,
    profile,
    restEndpoint,
    capabilities,
    rejected,
    keys: keysOf(profile),
    paymentHandlers: profile.ucp.payment_handlers,
  };
  if (mcpEndpoint !== undefined) out.mcpEndpoint = mcpEndpoint;
  return out;
}

/** The keys of a profile: `keys[]`, or 2026-04-08's `signing_keys[]`. */
export function keysOf(profile: AxUCPProfile): readonly AxUCPPublicKey[] {
  const keys = profile.keys ?? (profile as { signing_keys?: readonly AxUCPPublicKey[] }).signing_keys ?? [];
  return Object.freeze([...keys]);
}
