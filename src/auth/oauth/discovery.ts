/**
 * Discovery: which authorization server protects an MCP endpoint, and what it supports.
 *
 * 1. RFC 9728 protected-resource metadata (PRM): the `resource_metadata` URL of the
 *    challenge, else `/.well-known/oauth-protected-resource<path>`, else the root one.
 *    Its `resource` must name this endpoint (same origin, a path prefix), before any
 *    authorization request is made.
 * 2. RFC 8414 / OpenID Connect metadata of the authorization server, in the order of the
 *    MCP specification, with the `issuer` checked against the identifier used.
 * 3. Without PRM (MCP 2025-03-26): metadata at the endpoint's origin, else the default
 *    `/authorize`, `/token` and `/register` there.
 */
import type { AuthorizationServer } from 'oauth4webapi';
import { AxMCPOAuthError } from './errors.js';
import type { OAuthHTTP } from './http.js';

/** What the protected-resource metadata says (only the fields ax-mcp uses). */
export interface AxMCPProtectedResource {
  /** The resource identifier, exactly as published (sent as RFC 8707 `resource`). */
  resource: string;
  authorizationServers: string[];
  scopesSupported?: string[];
  /** The resource requires DPoP-bound tokens, or lists DPoP algorithms. */
  dpop: boolean;
  /** Where the document was found. */
  url: string;
}

/** An authorization server as discovered, ready for oauth4webapi. */
export interface AxMCPAuthorizationServerInfo {
  /** The validated metadata (a fresh object with the known fields only). */
  metadata: AuthorizationServer;
  /** `prm` (2025-06-18 and later), `legacy-metadata` or `legacy-defaults` (2025-03-26). */
  source: 'prm' | 'legacy-metadata' | 'legacy-defaults';
}

/**
 * The canonical URI of an endpoint (RFC 8707 / MCP): lower-case scheme and host (the URL
 * parser does that), no query, no fragment, no trailing `/` on an empty path.
 */
export function canonicalResource(endpoint: URL): string {
  const path = endpoint.pathname === '/' ? '' : endpoint.pathname;
  return `${endpoint.protocol}//${endpoint.host}${path}`;
}

/**
 * Does the PRM `resource` name this endpoint? The same origin, and the endpoint's path
 * equals the resource's path or lies under it (a root resource covers the whole origin).
 */
export function resourceMatches(endpoint: URL, resource: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(resource);
  } catch {
    return false;
  }
  if (parsed.hash !== '' || resource.includes('#')) return false;
  if (parsed.origin !== endpoint.origin) return false;
  const base = parsed.pathname.endsWith('/') ? parsed.pathname : `${parsed.pathname}/`;
  const path = endpoint.pathname.endsWith('/') ? endpoint.pathname : `${endpoint.pathname}/`;
  return path.startsWith(base);
}

/**
 * Finds the PRM of `endpoint`. `fromChallenge` is the challenge's `resource_metadata`:
 * when present it is the only place asked. `undefined` when the server publishes none
 * (then the 2025-03-26 discovery applies).
 */
export async function discoverProtectedResource(
  http: OAuthHTTP,
  endpoint: URL,
  fromChallenge: string | undefined,
  signal?: AbortSignal,
): Promise<AxMCPProtectedResource | undefined> {
  const candidates: URL[] = [];
  if (fromChallenge !== undefined) {
    let url: URL;
    try {
      url = new URL(fromChallenge, endpoint);
    } catch {
      throw new AxMCPOAuthError(
        'oauth_discovery_failed',
        'The challenge names an invalid resource_metadata URL',
      );
    }
    candidates.push(url);
  } else {
    const path = endpoint.pathname === '/' ? '' : endpoint.pathname.replace(/\/$/, '');
    if (path !== '')
      candidates.push(new URL(`/.well-known/oauth-protected-resource${path}`, endpoint.origin));
    candidates.push(new URL('/.well-known/oauth-protected-resource', endpoint.origin));
  }
  for (const url of candidates) {
    const { status, json } = await http.getJSON(url, signal);
    if (!json) {
      if (fromChallenge !== undefined) {
        throw new AxMCPOAuthError(
          'oauth_discovery_failed',
          `No protected-resource metadata at the URL the server named (HTTP ${status})`,
          { status },
        );
      }
      continue;
    }
    const resource = json.resource;
    const servers = stringArray(json.authorization_servers);
    if (typeof resource !== 'string' || resource === '') {
      throw new AxMCPOAuthError('oauth_discovery_failed', 'The protected-resource metadata has no resource');
    }
    if (!resourceMatches(endpoint, resource)) {
      throw new AxMCPOAuthError(
        'oauth_resource_mismatch',
        `The protected-resource metadata is for another resource, not ${canonicalResource(endpoint)}`,
      );
    }
    if (servers === undefined || servers.length === 0) {
      throw new AxMCPOAuthError(
        'oauth_discovery_failed',
        'The protected-resource metadata lists no authorization server',
      );
    }
    const prm: AxMCPProtectedResource = {
      resource,
      authorizationServers: servers,
      dpop:
        json.dpop_bound_access_tokens_required === true ||
        (stringArray(json.dpop_signing_alg_values_supported)?.length ?? 0) > 0,
      url: url.href,
    };
    const scopes = stringArray(json.scopes_supported);
    if (scopes !== undefined) prm.scopesSupported = scopes;
    return prm;
  }
  return undefined;
}

/** The well-known metadata URLs of an issuer, in the MCP specification's order. */
export function metadataURLs(issuer: URL): URL[] {
  const path = issuer.pathname === '/' ? '' : issuer.pathname.replace(/\/$/, '');
  const origin = issuer.origin;
  if (path === '') {
    return [
      new URL('/.well-known/oauth-authorization-server', origin),
      new URL('/.well-known/openid-configuration', origin),
    ];
  }
  return [
    new URL(`/.well-known/oauth-authorization-server${path}`, origin),
    new URL(`/.well-known/openid-configuration${path}`, origin),
    new URL(`${path}/.well-known/openid-configuration`, origin),
  ];
}

/**
 * Fetches and validates the metadata of `issuer` (a string from the PRM). The document's
 * `issuer` must be identical to it (RFC 8414 §3.3, OpenID Connect Discovery §4.3).
 */
export async function discoverAuthorizationServer(
  http: OAuthHTTP,
  issuer: string,
  signal?: AbortSignal,
): Promise<AxMCPAuthorizationServerInfo> {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new AxMCPOAuthError('oauth_discovery_failed', 'The protected resource names an invalid issuer');
  }
  if (url.search !== '' || url.hash !== '') {
    throw new AxMCPOAuthError('oauth_discovery_failed', 'An issuer identifier has no query or fragment');
  }
  let lastStatus = 0;
  for (const candidate of metadataURLs(url)) {
    const { status, json } = await http.getJSON(candidate, signal);
    lastStatus = status;
    if (!json) continue;
    if (json.issuer !== issuer) {
      throw new AxMCPOAuthError(
        'oauth_issuer_mismatch',
        `The authorization server metadata at ${candidate.origin}${candidate.pathname} names another issuer`,
      );
    }
    return { metadata: toMetadata(json, issuer), source: 'prm' };
  }
  throw new AxMCPOAuthError(
    'oauth_discovery_failed',
    `No authorization server metadata for ${url.origin}${url.pathname} (last HTTP ${lastStatus})`,
    { status: lastStatus },
  );
}

/**
 * MCP 2025-03-26, for a server without PRM: the authorization base URL is the endpoint's
 * origin; its RFC 8414 metadata if it has some, else the default endpoints there. The
 * metadata's `issuer` must be on that origin (servers of that era often put the issuer
 * under a path while serving the metadata at the root).
 */
export async function discoverLegacyAuthorizationServer(
  http: OAuthHTTP,
  endpoint: URL,
  protocolVersion: string | undefined,
  signal?: AbortSignal,
): Promise<AxMCPAuthorizationServerInfo> {
  const origin = endpoint.origin;
  const headers: Record<string, string> = protocolVersion ? { 'mcp-protocol-version': protocolVersion } : {};
  const { json } = await http.getJSON(
    new URL('/.well-known/oauth-authorization-server', origin),
    signal,
    headers,
  );
  if (json) {
    const issuer = json.issuer;
    let sameOrigin = false;
    try {
      sameOrigin = typeof issuer === 'string' && new URL(issuer).origin === origin;
    } catch {
      sameOrigin = false;
    }
    if (!sameOrigin || typeof issuer !== 'string') {
      throw new AxMCPOAuthError(
        'oauth_issuer_mismatch',
        `The authorization server metadata of ${origin} names an issuer on another origin`,
      );
    }
    return { metadata: toMetadata(json, issuer), source: 'legacy-metadata' };
  }
  return {
    metadata: {
      issuer: origin,
      authorization_endpoint: `${origin}/authorize`,
      token_endpoint: `${origin}/token`,
      registration_endpoint: `${origin}/register`,
      code_challenge_methods_supported: ['S256'],
    },
    source: 'legacy-defaults',
  };
}

const URL_FIELDS = [
  'authorization_endpoint',
  'token_endpoint',
  'registration_endpoint',
  'revocation_endpoint',
  'pushed_authorization_request_endpoint',
  'introspection_endpoint',
  'jwks_uri',
] as const;
/** The endpoints an authorization server may alias for mutual TLS (RFC 8705 §5). */
const MTLS_ALIAS_FIELDS = [
  'token_endpoint',
  'revocation_endpoint',
  'introspection_endpoint',
  'pushed_authorization_request_endpoint',
] as const;
const LIST_FIELDS = [
  'scopes_supported',
  'grant_types_supported',
  'response_types_supported',
  'code_challenge_methods_supported',
  'token_endpoint_auth_methods_supported',
  'token_endpoint_auth_signing_alg_values_supported',
  'dpop_signing_alg_values_supported',
  'introspection_endpoint_auth_methods_supported',
  'request_object_signing_alg_values_supported',
  'authorization_details_types_supported',
] as const;
const TRUE_FIELDS = [
  'authorization_response_iss_parameter_supported',
  'client_id_metadata_document_supported',
  'require_pushed_authorization_requests',
  'require_signed_request_object',
  'request_parameter_supported',
  'tls_client_certificate_bound_access_tokens',
] as const;

/** A fresh metadata object with the known fields only, each of the right type. */
function toMetadata(json: Record<string, unknown>, issuer: string): AuthorizationServer {
  const metadata: Record<string, unknown> = { issuer };
  for (const field of URL_FIELDS) {
    const url = endpointURL(json[field]);
    if (url !== undefined) metadata[field] = url;
  }
  for (const field of LIST_FIELDS) {
    const list = stringArray(json[field]);
    if (list !== undefined) metadata[field] = list;
  }
  for (const field of TRUE_FIELDS) if (json[field] === true) metadata[field] = true;
  const aliases = json.mtls_endpoint_aliases;
  if (aliases && typeof aliases === 'object' && !Array.isArray(aliases)) {
    const kept: Record<string, string> = {};
    for (const field of MTLS_ALIAS_FIELDS) {
      const url = endpointURL((aliases as Record<string, unknown>)[field]);
      if (url !== undefined) kept[field] = url;
    }
    if (Object.keys(kept).length > 0) metadata.mtls_endpoint_aliases = kept;
  }
  return metadata as AuthorizationServer;
}

/** An `http:` or `https:` URL as published; an invalid one is left out (a missing endpoint fails where it is needed). */
function endpointURL(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? value : undefined;
  } catch {
    return undefined;
  }
}

function stringArray(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.filter((item): item is string => typeof item === 'string').slice(0, 256);
}
