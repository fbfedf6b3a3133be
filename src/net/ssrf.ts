/**
 * SSRF protection: which URLs and addresses ax-mcp is willing to talk to.
 *
 * The URL check ({@link assertURLAllowed}) runs everywhere, including browsers. It sees
 * only the URL, so a DNS name that resolves to a private address passes it; the
 * DNS-aware fetch of `ax-mcp/node` closes that gap by checking every resolved address
 * with {@link assertAddressAllowed} before the socket connects.
 *
 * Address classes come from `ipaddr.js`; nothing here does CIDR arithmetic by hand.
 */
import ipaddr from 'ipaddr.js';
import { anyOf, array, boolean, func, instance, object } from '../options/check.js';
import { AxMCPError, type AxMCPSSRFAllowance, AxMCPSSRFError, assertMCPOptions } from '../protocol/errors.js';

/** What SSRF protection lets through besides public HTTPS endpoints. Every flag defaults to `false`. */
export interface AxMCPSSRFOptions {
  /** Allow plain `http:` to any host the other rules allow (default: HTTPS only, except loopback with `allowLoopback`). */
  allowHTTP?: boolean;
  /** Allow loopback: `127.0.0.0/8`, `::1`, `localhost` and `*.localhost`. Also allows plain `http:` to them. */
  allowLoopback?: boolean;
  /**
   * Allow private networks: RFC 1918 (`10/8`, `172.16/12`, `192.168/16`), carrier-grade NAT
   * (`100.64/10`), link-local (`169.254/16`, `fe80::/10`), unique-local (`fc00::/7`) and
   * private-use names (`*.internal`, `*.local`, `*.home.arpa`). Cloud metadata endpoints stay refused.
   */
  allowPrivateNetwork?: boolean;
  /**
   * Hostnames exempt from the address and name rules (not from the HTTPS rule): exact names
   * or IP literals (`mcp.corp.example`, `10.0.0.7`, `[fd00::1]`), or `*.example.com`, which
   * matches every subdomain of `example.com` but not `example.com` itself.
   */
  allowedHosts?: readonly string[];
  /**
   * An extra check that runs after the built-in ones on every URL (each redirect hop
   * included). Throw to refuse; a thrown error other than `AxMCPSSRFError` is wrapped in
   * one. It may run more than once for the same URL, so keep it free of side effects.
   */
  validateURL?: (url: URL) => void | Promise<void>;
}

/** The shape of {@link AxMCPSSRFOptions}, every key of it: the words users reach for instead are aliases. */
export const SSRF_OPTIONS = object(
  {
    allowHTTP: boolean(),
    allowLoopback: boolean(),
    allowPrivateNetwork: boolean(),
    allowedHosts: array(
      instance(
        'a hostname, an IP literal or a "*.domain" wildcard (no scheme, port or path)',
        (entry) => allowedHostPattern(entry) !== undefined,
      ),
    ),
    validateURL: func('a function (url) => void that throws to refuse'),
  },
  {
    expected: 'an object { allowHTTP?, allowLoopback?, allowPrivateNetwork?, allowedHosts?, validateURL? }',
    aliases: {
      allowLocalhost: 'allowLoopback',
      allowLocalHost: 'allowLoopback',
      allowLocal: 'allowLoopback',
      loopback: 'allowLoopback',
      allowInsecure: 'allowHTTP',
      allowInsecureHTTP: 'allowHTTP',
      allowPlainHTTP: 'allowHTTP',
      allowPrivate: 'allowPrivateNetwork',
      allowPrivateNetworks: 'allowPrivateNetwork',
      allowPrivateIPs: 'allowPrivateNetwork',
      allowHosts: 'allowedHosts',
      allowList: 'allowedHosts',
      allowlist: 'allowedHosts',
      hosts: 'allowedHosts',
      validateUrl: 'validateURL',
    },
  },
);

/** The `ssrfProtection` option: `true` or `undefined` = the default policy, `false` = off, or options. */
export type AxMCPSSRFProtection = boolean | AxMCPSSRFOptions;

/** The shape of the `ssrfProtection` option: `true`, `false`, {@link AxMCPSSRFOptions}, or a resolved policy. */
export const SSRF_PROTECTION = anyOf(
  boolean(),
  instance('a policy from resolveSSRFPolicy', (value) => isResolvedPolicy(value)),
  SSRF_OPTIONS,
);

const SSRF_PROTECTION_OPTION = object({ ssrfProtection: SSRF_PROTECTION });

/** A resolved, immutable SSRF policy (made from an `ssrfProtection` option). */
export interface AxMCPSSRFPolicy {
  /** `false` when protection is off: only the scheme and the no-credentials-in-URL rules apply. */
  readonly enabled: boolean;
  readonly allowHTTP: boolean;
  readonly allowLoopback: boolean;
  readonly allowPrivateNetwork: boolean;
  /** The normalized `allowedHosts` entries. */
  readonly allowedHosts: readonly string[];
  readonly validateURL: ((url: URL) => void | Promise<void>) | undefined;
}

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

/** How an address or name is treated: public, opt-in (loopback, private) or never. */
type AddressClass = 'public' | 'loopback' | 'private' | 'forbidden';

interface Verdict {
  readonly cls: AddressClass;
  readonly label: string;
}

const PUBLIC: Verdict = { cls: 'public', label: 'public address' };

interface HostMatcher {
  readonly exact: ReadonlySet<string>;
  readonly suffixes: readonly string[];
}

/** Resolved policies and their host matchers; membership marks an object as already resolved. */
const matchers = new WeakMap<AxMCPSSRFPolicy, HostMatcher>();

/** Well-known cloud metadata addresses; refused even with `allowPrivateNetwork`. */
const METADATA_ADDRESSES = new Set(
  [
    '169.254.169.254', // AWS, GCP, Azure, OCI, DigitalOcean, OpenStack
    '169.254.170.2', // AWS ECS task metadata
    '169.254.170.23', // AWS EKS pod identity
    '169.254.0.23', // Tencent Cloud
    '100.100.100.200', // Alibaba Cloud
    '192.0.0.192', // Oracle Cloud classic
    'fd00:ec2::254', // AWS IMDS over IPv6
    'fd00:ec2::23', // AWS EKS pod identity over IPv6
  ].map((text) => ipaddr.parse(text).toNormalizedString()),
);

/** Well-known cloud metadata hostnames. */
const METADATA_NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'metadata.azure.internal',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.tencentyun.com',
  'metadata.oraclecloud.com',
]);

/** Special-use domains that only ever name hosts on a private network. */
const PRIVATE_NAME_SUFFIXES = ['.internal', '.local', '.localdomain', '.home.arpa', '.intranet', '.lan'];

const IPV6_ZERO_PREFIX = ipaddr.IPv6.parseCIDR('::/8');
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

/**
 * Turns the `ssrfProtection` option into a policy. `true` and `undefined` give the default
 * policy (HTTPS to public addresses only), `false` turns protection off. Passing a policy
 * returns it unchanged. Anything else that is not {@link AxMCPSSRFOptions} (an unknown or
 * misspelled key such as `allowLocalhost`, a wrong type, a malformed `allowedHosts` entry)
 * throws `AxMCPInvalidOptionsError` (code `invalid_options`).
 */
export function resolveSSRFPolicy(option?: AxMCPSSRFProtection | AxMCPSSRFPolicy): AxMCPSSRFPolicy {
  if (isResolvedPolicy(option)) return option;
  // Checked as the option it is, so that a problem names it as users write it (`ssrfProtection.allowLocalhost`).
  if (option !== undefined)
    assertMCPOptions(SSRF_PROTECTION_OPTION, { ssrfProtection: option }, 'SSRF protection');
  const options: AxMCPSSRFOptions = typeof option === 'object' && option !== null ? option : {};
  const exact = new Set<string>();
  const suffixes: string[] = [];
  for (const entry of options.allowedHosts ?? []) {
    const pattern = allowedHostPattern(entry) as string;
    if (pattern.startsWith('*.')) suffixes.push(pattern.slice(1));
    else exact.add(pattern);
  }
  const policy: AxMCPSSRFPolicy = Object.freeze({
    enabled: option !== false,
    allowHTTP: options.allowHTTP === true,
    allowLoopback: options.allowLoopback === true,
    allowPrivateNetwork: options.allowPrivateNetwork === true,
    allowedHosts: Object.freeze([...exact, ...suffixes.map((suffix) => `*${suffix}`)]),
    validateURL: option === false ? undefined : options.validateURL,
  });
  matchers.set(policy, { exact, suffixes });
  return policy;
}

/**
 * Refuses a URL the policy does not allow, with an `AxMCPSSRFError` that names the reason.
 * Whatever the policy, only `http:` and `https:` are accepted and a URL must not carry
 * credentials (`https://user:pass@host`). With protection on: plain `http:` needs
 * `allowHTTP` (or a loopback host and `allowLoopback`); loopback, private, link-local,
 * unspecified, multicast, reserved and cloud metadata hosts are refused unless allowed
 * (metadata never is), including IPv6 forms that embed such an IPv4 address; then
 * `validateURL` runs. Accepts a policy or the raw `ssrfProtection` option.
 */
export async function assertURLAllowed(
  url: URL | string,
  policy?: AxMCPSSRFPolicy | AxMCPSSRFProtection,
): Promise<void> {
  const resolved = resolveSSRFPolicy(policy);
  const parsed = typeof url === 'string' ? parseURL(url) : url;
  checkURL(parsed, resolved);
  if (!resolved.enabled || resolved.validateURL === undefined) return;
  try {
    await resolved.validateURL(new URL(parsed.href));
  } catch (error) {
    if (error instanceof AxMCPSSRFError) throw error;
    throw new AxMCPSSRFError(redactURL(parsed), 'refused by ssrfProtection.validateURL', { cause: error });
  }
}

/**
 * The synchronous part of {@link assertURLAllowed}: every rule except `validateURL`.
 * @internal
 */
export function checkURL(url: URL, policy: AxMCPSSRFPolicy): void {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new AxMCPSSRFError(redactURL(url), `scheme "${url.protocol}" is not http: or https:`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new AxMCPSSRFError(
      redactURL(url),
      'credentials in the URL are not allowed; pass them with the `authentication` option',
    );
  }
  if (!policy.enabled) return;
  const host = normalizeHost(url.hostname);
  const verdict = classifyHost(host);
  if (!isAllowedHost(host, policy)) {
    const refused = refusal(verdict, policy);
    if (refused !== undefined) throw new AxMCPSSRFError(redactURL(url), refused.reason, refused);
  }
  if (
    url.protocol === 'http:' &&
    !policy.allowHTTP &&
    !(verdict.cls === 'loopback' && policy.allowLoopback)
  ) {
    // A loopback host is refused above unless allowLoopback, which permits its plain HTTP too.
    throw new AxMCPSSRFError(redactURL(url), 'plain http: is refused, HTTPS is required', {
      allowWith: 'allowHTTP',
    });
  }
}

/**
 * Refuses an address that DNS resolved for `host`, unless the policy allows its class or
 * `host` is in `allowedHosts`. Also refuses a `localhost` name that resolved to anything
 * but loopback. This is the DNS-rebinding guard: call it on every address before connecting.
 */
export function assertAddressAllowed(
  ip: string,
  host: string,
  policy?: AxMCPSSRFPolicy | AxMCPSSRFProtection,
): void {
  const resolved = resolveSSRFPolicy(policy);
  if (!resolved.enabled) return;
  const name = normalizeHost(host);
  if (isAllowedHost(name, resolved)) return;
  const address = normalizeHost(ip);
  if (!ipaddr.isValid(address)) {
    throw new AxMCPSSRFError(name, `resolved to "${address.slice(0, 64)}", which is not an IP address`);
  }
  const verdict = classifyAddress(ipaddr.parse(address));
  if (isLocalhostName(name) && verdict.cls !== 'loopback') {
    throw new AxMCPSSRFError(name, `a localhost name resolved to ${address}, which is not loopback`);
  }
  const refused = refusal(verdict, resolved);
  if (refused !== undefined)
    throw new AxMCPSSRFError(name, `resolves to ${address}: ${refused.reason}`, refused);
}

/**
 * A URL safe to show in errors and logs: scheme, host, port and path; never userinfo,
 * and the query (which may hold an API key) reduced to `?…`.
 */
export function redactURL(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}${url.search === '' ? '' : '?…'}`;
}

function parseURL(text: string): URL {
  try {
    return new URL(text);
  } catch (error) {
    throw new AxMCPError('invalid_argument', 'Not a valid absolute URL', { cause: error });
  }
}

/** Why a host or address of this class is refused under `policy`, and what would allow it. */
function refusal(
  verdict: Verdict,
  policy: AxMCPSSRFPolicy,
): { reason: string; allowWith?: AxMCPSSRFAllowance } | undefined {
  switch (verdict.cls) {
    case 'public':
      return undefined;
    case 'loopback':
      return policy.allowLoopback ? undefined : { reason: verdict.label, allowWith: 'allowLoopback' };
    case 'private':
      return policy.allowPrivateNetwork
        ? undefined
        : { reason: verdict.label, allowWith: 'allowPrivateNetwork' };
    default:
      return { reason: verdict.label };
  }
}

/** Lower case, without IPv6 brackets and trailing dots. */
function normalizeHost(host: string): string {
  let out = host.toLowerCase();
  if (out.startsWith('[') && out.endsWith(']')) out = out.slice(1, -1);
  while (out.endsWith('.')) out = out.slice(0, -1);
  return out;
}

/** A policy {@link resolveSSRFPolicy} made (its host matcher is known). */
function isResolvedPolicy(value: unknown): value is AxMCPSSRFPolicy {
  return typeof value === 'object' && value !== null && matchers.has(value as AxMCPSSRFPolicy);
}

/** The normalized form of an `allowedHosts` entry, or `undefined` when it is not one. */
function allowedHostPattern(entry: unknown): string | undefined {
  if (typeof entry !== 'string') return undefined;
  const host = normalizeHost(entry.trim());
  if (host.startsWith('*.')) {
    const rest = host.slice(2);
    if (rest === '' || !/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(rest)) return undefined;
    return `*.${rest}`;
  }
  if (ipaddr.isValid(host)) return ipaddr.parse(host).toNormalizedString();
  if (host === '' || !/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(host)) return undefined;
  return host;
}

function isAllowedHost(host: string, policy: AxMCPSSRFPolicy): boolean {
  const matcher = matchers.get(policy);
  if (matcher === undefined) return false;
  if (matcher.exact.size === 0 && matcher.suffixes.length === 0) return false;
  // Wildcards name domains, never IP literals.
  if (ipaddr.isValid(host)) return matcher.exact.has(ipaddr.parse(host).toNormalizedString());
  if (matcher.exact.has(host)) return true;
  for (const suffix of matcher.suffixes) {
    if (host.length > suffix.length && host.endsWith(suffix)) return true;
  }
  return false;
}

function isLocalhostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/** Verdicts of recently seen hosts: a client talks to few hosts, over and over. */
const hostVerdicts = new Map<string, Verdict>();
const HOST_VERDICTS_MAX = 256;

function classifyHost(host: string): Verdict {
  let verdict = hostVerdicts.get(host);
  if (verdict === undefined) {
    verdict = classifyHostUncached(host);
    if (hostVerdicts.size >= HOST_VERDICTS_MAX) hostVerdicts.clear();
    hostVerdicts.set(host, verdict);
  }
  return verdict;
}

function classifyHostUncached(host: string): Verdict {
  if (ipaddr.isValid(host)) return classifyAddress(ipaddr.parse(host));
  if (isLocalhostName(host)) return { cls: 'loopback', label: 'localhost name' };
  if (METADATA_NAMES.has(host)) return { cls: 'forbidden', label: 'cloud metadata hostname' };
  for (const suffix of PRIVATE_NAME_SUFFIXES) {
    if (host.endsWith(suffix)) return { cls: 'private', label: `private-use name (*${suffix})` };
  }
  return PUBLIC;
}

function classifyAddress(address: IPv4 | IPv6): Verdict {
  return address.kind() === 'ipv4' ? classifyIPv4(address as IPv4) : classifyIPv6(address as IPv6);
}

function classifyIPv4(address: IPv4): Verdict {
  if (METADATA_ADDRESSES.has(address.toNormalizedString())) {
    return { cls: 'forbidden', label: 'cloud metadata address' };
  }
  const range: string = address.range();
  switch (range) {
    case 'unicast':
      return PUBLIC;
    case 'loopback':
      return { cls: 'loopback', label: 'loopback address' };
    case 'private':
      return { cls: 'private', label: 'private network address' };
    case 'linkLocal':
      return { cls: 'private', label: 'link-local address' };
    case 'carrierGradeNat':
      return { cls: 'private', label: 'carrier-grade NAT address' };
    case 'unspecified':
      return { cls: 'forbidden', label: 'unspecified address' };
    case 'broadcast':
      return { cls: 'forbidden', label: 'broadcast address' };
    case 'multicast':
      return { cls: 'forbidden', label: 'multicast address' };
    default:
      return { cls: 'forbidden', label: `reserved address (${range})` };
  }
}

function classifyIPv6(address: IPv6): Verdict {
  if (METADATA_ADDRESSES.has(address.toNormalizedString())) {
    return { cls: 'forbidden', label: 'cloud metadata address' };
  }
  const parts = address.parts;
  const range: string = address.range();
  switch (range) {
    case 'unicast':
      if (!address.match(IPV6_ZERO_PREFIX)) return PUBLIC;
      if (
        parts[0] === 0 &&
        parts[1] === 0 &&
        parts[2] === 0 &&
        parts[3] === 0 &&
        parts[4] === 0 &&
        parts[5] === 0
      ) {
        return embedded('IPv4-compatible IPv6 address', parts[6]!, parts[7]!);
      }
      return { cls: 'forbidden', label: 'reserved address (::/8)' };
    case 'loopback':
      return { cls: 'loopback', label: 'loopback address' };
    case 'unspecified':
      return { cls: 'forbidden', label: 'unspecified address' };
    case 'linkLocal':
      return { cls: 'private', label: 'link-local address' };
    case 'uniqueLocal':
      return { cls: 'private', label: 'unique-local address' };
    case 'deprecatedSiteLocal':
      return { cls: 'private', label: 'site-local address' };
    case 'multicast':
      return { cls: 'forbidden', label: 'multicast address' };
    case 'ipv4Mapped':
      return embedded('IPv4-mapped IPv6 address', parts[6]!, parts[7]!);
    case 'rfc6145':
      return embedded('IPv4-translated IPv6 address', parts[6]!, parts[7]!);
    case 'rfc6052':
      if (address.match(NAT64_WELL_KNOWN)) return embedded('NAT64 IPv6 address', parts[6]!, parts[7]!);
      return { cls: 'private', label: 'local-use NAT64 address' };
    case '6to4':
      return embedded('6to4 IPv6 address', parts[1]!, parts[2]!);
    case 'teredo':
      return { cls: 'forbidden', label: 'Teredo tunnel address' };
    default:
      return { cls: 'forbidden', label: `reserved address (${range})` };
  }
}

/** Classifies an IPv6 address by the IPv4 address it carries (two 16-bit groups). */
function embedded(kind: string, high: number, low: number): Verdict {
  const inner = new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  const verdict = classifyIPv4(inner);
  if (verdict.cls === 'public') return PUBLIC;
  return { cls: verdict.cls, label: `${kind} embedding ${inner.toString()}, a ${verdict.label}` };
}
