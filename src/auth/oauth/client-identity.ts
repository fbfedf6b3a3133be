/**
 * Which client this is at an authorization server, in the MCP order: pre-registered
 * credentials, then a Client ID Metadata Document (when the server supports them), then
 * Dynamic Client Registration (RFC 7591). Registered clients are bound to their issuer.
 * Also chooses the token endpoint authentication (`none`, `client_secret_basic`,
 * `client_secret_post`, `private_key_jwt`, and with a client certificate `tls_client_auth` or
 * `self_signed_tls_client_auth`) from what the server supports.
 */
import * as oauth from 'oauth4webapi';
import { anyOf, instance, object, oneOf, required, string } from '../../options/check.js';
import { type AxMCPOAuthClientMetadata, applicationTypeOf, describedFields } from './client-metadata.js';
import { AxMCPOAuthError, safeCause } from './errors.js';
import type { OAuthHTTP } from './http.js';
import { isMTLSMethod, MTLS_INSTEAD, MTLS_METHODS } from './mtls.js';
import type { AxMCPStoredClient } from './token-store.js';

/** How the client authenticates at the token endpoint. */
export type AxMCPTokenEndpointAuthMethod =
  | 'none'
  | 'client_secret_basic'
  | 'client_secret_post'
  | 'private_key_jwt'
  | 'tls_client_auth'
  | 'self_signed_tls_client_auth';

/** Credentials registered out of band (pre-registration). */
export interface AxMCPOAuthClientCredentials {
  clientId: string;
  /** For `client_secret_basic` / `client_secret_post`. */
  clientSecret?: string;
  /**
   * For `private_key_jwt` (RFC 7523): a WebCrypto private key (ES256 / RS256 / PS256 / EdDSA).
   * It also signs request objects (RFC 9101) when the server requires them or
   * `signedRequestObject` is set; the server must know its public key.
   */
  privateKey?: CryptoKey | { key: CryptoKey; kid?: string };
  /**
   * The issuer these credentials belong to. Recommended: credentials bound to another
   * issuer are never sent; unbound ones are used with whichever server protects the endpoint.
   */
  issuer?: string;
  /**
   * Force a method instead of choosing from what the server supports. `tls_client_auth` and
   * `self_signed_tls_client_auth` (RFC 8705) need a client certificate in the HTTP stack
   * (ax-mcp/node: `tls: { cert, key }`).
   */
  tokenEndpointAuthMethod?: AxMCPTokenEndpointAuthMethod;
}

const TOKEN_ENDPOINT_AUTH_METHODS = [
  'none',
  'client_secret_basic',
  'client_secret_post',
  'private_key_jwt',
  ...MTLS_METHODS,
] as const satisfies readonly AxMCPTokenEndpointAuthMethod[];

/** A WebCrypto key (duck-typed: keys from another realm are keys too). */
function isCryptoKey(value: unknown): value is CryptoKey {
  if (typeof value !== 'object' || value === null) return false;
  const key = value as Record<string, unknown>;
  return typeof key.type === 'string' && typeof key.algorithm === 'object' && Array.isArray(key.usages);
}

const CRYPTO_KEY = instance('a WebCrypto private key (CryptoKey)', isCryptoKey);

/** The shape of {@link AxMCPOAuthClientCredentials}. */
export const CLIENT_CREDENTIALS = object(
  {
    clientId: required(string({ nonEmpty: true })),
    clientSecret: string(),
    privateKey: anyOf(CRYPTO_KEY, object({ key: required(CRYPTO_KEY), kid: string() })),
    issuer: string({ nonEmpty: true }),
    tokenEndpointAuthMethod: oneOf(...TOKEN_ENDPOINT_AUTH_METHODS),
  },
  {
    expected: 'an OAuth client { clientId, clientSecret?, privateKey?, issuer?, tokenEndpointAuthMethod? }',
    aliases: {
      id: 'clientId',
      client_id: 'clientId',
      secret: 'clientSecret',
      client_secret: 'clientSecret',
      authMethod: 'tokenEndpointAuthMethod',
      token_endpoint_auth_method: 'tokenEndpointAuthMethod',
    },
  },
);

/** A client identity ready for a token request. */
export interface ResolvedClient {
  client: oauth.Client;
  auth: oauth.ClientAuth;
  method: AxMCPTokenEndpointAuthMethod;
  source: 'pre-registered' | 'metadata-document' | 'dcr';
  /** The pre-registered client's private key: it signs request objects (RFC 9101). */
  signingKey?: CryptoKey | oauth.PrivateKey;
  /** Set when a new registration must be stored. */
  registered?: AxMCPStoredClient;
}

/** What {@link resolveClient} needs. */
export interface ClientIdentityInput {
  http: OAuthHTTP;
  as: oauth.AuthorizationServer;
  preRegistered: readonly AxMCPOAuthClientCredentials[];
  clientMetadataUrl?: string;
  metadata: AxMCPOAuthClientMetadata;
  /** Earlier dynamic registrations of this endpoint. */
  stored: readonly AxMCPStoredClient[];
  /** The grants this client will use (for registration). */
  grantTypes: readonly string[];
  redirectUri?: string;
  /** Registration is not allowed now (a refresh must use the client that got the token). */
  noRegistration?: boolean;
  /** The HTTP stack presents a TLS client certificate (RFC 8705): use the mTLS endpoint aliases. */
  mtls: boolean;
  /** The RFC 9396 authorization details types this client asks for (registered with it, §10). */
  authorizationDetailsTypes?: readonly string[];
  signal?: AbortSignal;
}
/** Finds or obtains the client identity to use with `as`. */
export async function resolveClient(input: ClientIdentityInput): Promise<ResolvedClient> {
  const { as } = input;
  const bound = input.preRegistered.find((c) => c.issuer === as.issuer);
  const unbound = input.preRegistered.find((c) => c.issuer === undefined);
  const pre = bound ?? unbound;
  if (pre) {
    const method =
      pre.tokenEndpointAuthMethod ??
      chooseMethod(as, pre.clientSecret !== undefined, pre.privateKey, input.mtls);
    const resolved: ResolvedClient = {
      client: clientOf(pre.clientId, input.mtls),
      auth: clientAuth(method, pre, input.mtls),
      method,
      source: 'pre-registered',
    };
    if (pre.privateKey !== undefined) resolved.signingKey = pre.privateKey;
    return resolved;
  }
  if (
    input.clientMetadataUrl !== undefined &&
    (as as Record<string, unknown>).client_id_metadata_document_supported === true
  ) {
    return {
      client: clientOf(input.clientMetadataUrl, input.mtls),
      auth: oauth.None(),
      method: 'none',
      source: 'metadata-document',
    };
  }
  const stored = input.stored.find((c) => c.issuer === as.issuer);
  if (stored) {
    const method =
      knownMethod(stored.tokenEndpointAuthMethod) ?? (stored.clientSecret ? 'client_secret_basic' : 'none');
    const credentials: AxMCPOAuthClientCredentials = { clientId: stored.clientId };
    if (stored.clientSecret !== undefined) credentials.clientSecret = stored.clientSecret;
    return {
      client: clientOf(stored.clientId, input.mtls),
      auth: clientAuth(method, credentials, input.mtls),
      method,
      source: 'dcr',
    };
  }
  if (input.noRegistration) {
    throw new AxMCPOAuthError(
      'oauth_registration_failed',
      'No client identity for this authorization server',
    );
  }
  if (as.registration_endpoint === undefined) {
    throw new AxMCPOAuthError(
      'oauth_registration_failed',
      'The authorization server supports neither client metadata documents nor dynamic registration, ' +
        'and no pre-registered client was given',
    );
  }
  return register(input);
}

async function register(input: ClientIdentityInput): Promise<ResolvedClient> {
  const { as, http } = input;
  const supported = as.token_endpoint_auth_methods_supported;
  const requested: AxMCPTokenEndpointAuthMethod =
    supported === undefined || supported.includes('none')
      ? 'none'
      : supported.includes('client_secret_basic')
        ? 'client_secret_basic'
        : supported.includes('client_secret_post')
          ? 'client_secret_post'
          : 'none';
  const body: Record<string, oauth.JsonValue> = {
    client_name: input.metadata.clientName ?? 'ax-mcp',
    grant_types: [...input.grantTypes],
    token_endpoint_auth_method: requested,
    application_type: input.metadata.applicationType ?? applicationTypeOf(input.redirectUri),
  };
  if (input.redirectUri !== undefined) {
    body.redirect_uris = [input.redirectUri];
    body.response_types = ['code'];
  }
  Object.assign(body, describedFields(input.metadata));
  if (input.authorizationDetailsTypes !== undefined && input.authorizationDetailsTypes.length > 0) {
    body.authorization_details_types = [...input.authorizationDetailsTypes];
  }
  // RFC 8705 §3.4: a client with a certificate asks for tokens bound to it, where the server binds.
  if (input.mtls && as.tls_client_certificate_bound_access_tokens === true) {
    body.tls_client_certificate_bound_access_tokens = true;
  }
  let registered: Record<string, unknown>;
  try {
    const response = await oauth.dynamicClientRegistrationRequest(as, body, {
      [oauth.customFetch]: http.customFetch,
      [oauth.allowInsecureRequests]: true,
      ...(input.signal ? { signal: input.signal } : {}),
    });
    registered = await registrationResponse(response);
  } catch (error) {
    if (input.signal?.aborted || error instanceof AxMCPOAuthError) throw error;
    throw new AxMCPOAuthError('oauth_registration_failed', 'Dynamic client registration failed', {
      cause: safeCause(error),
      ...oauthErrorContext(error),
    });
  }
  const clientId = registered.client_id as string;
  const clientSecret = typeof registered.client_secret === 'string' ? registered.client_secret : undefined;
  const method = knownMethod(registered.token_endpoint_auth_method) ?? requested;
  const credentials: AxMCPOAuthClientCredentials = { clientId };
  if (clientSecret !== undefined) credentials.clientSecret = clientSecret;
  const stored: AxMCPStoredClient = {
    issuer: as.issuer,
    clientId,
    tokenEndpointAuthMethod: method,
    source: 'dcr',
  };
  if (clientSecret !== undefined) stored.clientSecret = clientSecret;
  return {
    client: clientOf(clientId, input.mtls),
    auth: clientAuth(method, credentials, input.mtls),
    method,
    source: 'dcr',
    registered: stored,
  };
}

/**
 * The registration response (RFC 7591 §3.2.1), read leniently: a `client_id` is required;
 * `client_secret_expires_at`, which many servers leave out, is not.
 */
async function registrationResponse(response: Response): Promise<Record<string, unknown>> {
  let json: unknown;
  try {
    json = await response.json();
  } catch {
    json = undefined;
  }
  const body =
    json && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : {};
  if (response.status !== 201 && response.status !== 200) {
    const error = typeof body.error === 'string' ? body.error : undefined;
    throw new AxMCPOAuthError(
      'oauth_registration_failed',
      `Dynamic client registration failed (HTTP ${response.status}${error ? `, ${error}` : ''})`,
      { status: response.status, ...(error ? { oauthError: error } : {}) },
    );
  }
  if (typeof body.client_id !== 'string' || body.client_id === '') {
    throw new AxMCPOAuthError('oauth_registration_failed', 'The registration response has no client_id');
  }
  return body;
}

/** The oauth4webapi client: with a certificate, its requests go to the mTLS endpoint aliases (RFC 8705 §5). */
function clientOf(clientId: string, mtls: boolean): oauth.Client {
  return mtls ? { client_id: clientId, use_mtls_endpoint_aliases: true } : { client_id: clientId };
}

/** The method for a client with (or without) a secret, key or certificate, from what the server lists. */
function chooseMethod(
  as: oauth.AuthorizationServer,
  hasSecret: boolean,
  privateKey: AxMCPOAuthClientCredentials['privateKey'],
  mtls: boolean,
): AxMCPTokenEndpointAuthMethod {
  const supported = as.token_endpoint_auth_methods_supported;
  if (privateKey !== undefined) {
    if (supported === undefined || supported.includes('private_key_jwt')) return 'private_key_jwt';
  }
  if (hasSecret) {
    // RFC 8414: an absent list means client_secret_basic.
    if (supported === undefined || supported.includes('client_secret_basic')) return 'client_secret_basic';
    if (supported.includes('client_secret_post')) return 'client_secret_post';
  }
  // The certificate is the credential: both mTLS methods look the same on the wire.
  const tls = supported?.find(isMTLSMethod);
  if (mtls && tls !== undefined) return tls;
  const onlyMTLS = tls !== undefined && supported!.every((method) => isMTLSMethod(method));
  if (!hasSecret && privateKey === undefined && !onlyMTLS) return 'none';
  if (supported?.includes('none')) return 'none';
  if (onlyMTLS) {
    throw new AxMCPOAuthError(
      'oauth_unsupported',
      `The authorization server accepts only mutual-TLS client authentication (it lists ${supported!.join(', ')}), ` +
        `and this client presents no certificate: ${MTLS_INSTEAD}`,
    );
  }
  throw new AxMCPOAuthError(
    'oauth_unsupported',
    `The authorization server supports none of the token endpoint authentication methods this client has ` +
      `(it lists ${(supported ?? []).slice(0, 8).join(', ') || 'none'})`,
  );
}

function clientAuth(
  method: AxMCPTokenEndpointAuthMethod,
  credentials: AxMCPOAuthClientCredentials,
  mtls: boolean,
): oauth.ClientAuth {
  switch (method) {
    case 'tls_client_auth':
    case 'self_signed_tls_client_auth': {
      if (!mtls) {
        throw new AxMCPOAuthError(
          'oauth_unsupported',
          `${method} needs a TLS client certificate, and this client presents none: ${MTLS_INSTEAD}`,
        );
      }
      return oauth.TlsClientAuth();
    }
    case 'client_secret_basic':
    case 'client_secret_post': {
      if (credentials.clientSecret === undefined) {
        throw new AxMCPOAuthError(
          'oauth_unsupported',
          `${method} needs a client secret, and there is none (give the client a clientSecret)`,
        );
      }
      return method === 'client_secret_basic'
        ? clientSecretBasic(credentials.clientSecret)
        : oauth.ClientSecretPost(credentials.clientSecret);
    }
    case 'private_key_jwt': {
      if (credentials.privateKey === undefined) {
        throw new AxMCPOAuthError(
          'oauth_unsupported',
          'private_key_jwt needs a private key, and there is none (give the client a privateKey)',
        );
      }
      return oauth.PrivateKeyJwt(credentials.privateKey);
    }
    default:
      return oauth.None();
  }
}

/**
 * `client_secret_basic` (RFC 6749 §2.3.1): id and secret form-urlencoded (WHATWG: letters,
 * digits and `*-._` stay as they are), joined by `:`, base64. Servers that forget to decode
 * still understand the common ids and secrets this way.
 */
function clientSecretBasic(secret: string): oauth.ClientAuth {
  const encode = (value: string) => new URLSearchParams([['', value]]).toString().slice(1);
  return (_as, client, _body, headers) => {
    headers.set('authorization', `Basic ${btoa(`${encode(client.client_id)}:${encode(secret)}`)}`);
  };
}

function knownMethod(method: unknown): AxMCPTokenEndpointAuthMethod | undefined {
  return (TOKEN_ENDPOINT_AUTH_METHODS as readonly unknown[]).includes(method)
    ? (method as AxMCPTokenEndpointAuthMethod)
    : undefined;
}
/** The OAuth `error` code and HTTP status of an oauth4webapi failure, for AxMCPOAuthError. */
export function oauthErrorContext(error: unknown): { oauthError?: string; status?: number } {
  const out: { oauthError?: string; status?: number } = {};
  if (error instanceof oauth.ResponseBodyError) {
    out.oauthError = error.error;
    out.status = error.status;
  } else if (error instanceof oauth.WWWAuthenticateChallengeError) {
    const first = error.cause[0]?.parameters.error;
    if (first !== undefined) out.oauthError = first;
    out.status = error.status;
  } else if (error instanceof oauth.AuthorizationResponseError) {
    out.oauthError = error.error;
  }
  return out;
}
