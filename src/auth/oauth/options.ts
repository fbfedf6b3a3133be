/**
 * What a user configures for `axMCPOAuth`: the options, their schema, the strategy's public
 * shape, and the checks that need more than one option at once (which grant runs, whether
 * mutual TLS is possible, what each pre-registered client needs).
 */
import { optionsError } from '../../net/options-error.js';
import {
  anyOf,
  array,
  boolean,
  func,
  instance,
  number,
  object,
  oneOf,
  required,
  string,
} from '../../options/check.js';
import { AxMCPUnsupportedError } from '../../protocol/errors.js';
import type { AxMCPAuthentication } from '../authentication.js';
import type { AxMCPAuthorizationCodeHandler } from './authorization-code.js';
import { AUTHORIZATION_DETAILS, type AxMCPAuthorizationDetail } from './authorization-details.js';
import { type AxMCPOAuthClientCredentials, CLIENT_CREDENTIALS } from './client-identity.js';
import { type AxMCPOAuthClientMetadata, CLIENT_METADATA, CLIENT_METADATA_URL } from './client-metadata.js';
import { type AxMCPCrossAppAccessIdP, CROSS_APP_ACCESS_IDP } from './grants.js';
import { OAUTH_HTTP_KEYS, type OAuthHTTPOptions } from './http.js';
import type { AxMCPTokenIntrospection } from './introspection.js';
import { isMTLSMethod, MTLS_INSTEAD, presentsClientCertificate } from './mtls.js';
import { type AxMCPTokenStore, TOKEN_STORE } from './token-store.js';

/** A secret given directly, or produced on demand (called for each grant). */
export type AxMCPOAuthSecretSource =
  | string
  | ((context: { signal?: AbortSignal }) => string | Promise<string>);

/** The shape of {@link AxMCPOAuthSecretSource}. */
const SECRET_SOURCE = anyOf(string({ nonEmpty: true }), func('a function ({ signal }) => the secret'));

/** Options of {@link axMCPOAuth}. Which grant runs: `crossAppAccess`, else `workloadIdentity`, else `clientCredentials`, else the authorization code. */
export interface AxMCPOAuthOptions extends OAuthHTTPOptions {
  /** Where the browser (or any host) is sent back after authorizing: required for the authorization code grant. */
  redirectUri?: string;
  /**
   * The host's part of the authorization code grant: open `url` (a browser, a headless
   * fetch, a printed link…), wait for the redirect to `redirectUri`, and return its
   * parameters (`{ code, state, iss }`, or the redirect URL itself). ax-mcp checks `state`
   * and `iss`, then exchanges the code.
   */
  onAuthCode?: AxMCPAuthorizationCodeHandler;
  /** Pre-registered client credentials (tried first), one per issuer or unbound. */
  client?: AxMCPOAuthClientCredentials | readonly AxMCPOAuthClientCredentials[];
  /** This client's Client ID Metadata Document URL (`https:` with a path), used where supported. */
  clientMetadataUrl?: string;
  /** How the client describes itself in dynamic registration. */
  clientMetadata?: AxMCPOAuthClientMetadata;
  /** Use the client credentials grant (a pre-registered confidential client acting for itself). */
  clientCredentials?: boolean;
  /** Workload identity federation: the RFC 7523 JWT bearer grant with this assertion (a workload JWT). */
  workloadIdentity?: { assertion: AxMCPOAuthSecretSource };
  /**
   * Cross-app access (enterprise-managed authorization): the user's ID token is exchanged
   * at the IdP (RFC 8693) for an ID-JAG, then presented with the JWT bearer grant; the
   * client authenticates with `client` at the authorization server.
   */
  crossAppAccess?: { idp: AxMCPCrossAppAccessIdP; idToken: AxMCPOAuthSecretSource };
  /** Scopes to ask for when neither the challenge nor the metadata says (default: none). */
  scopes?: readonly string[];
  /** Add `offline_access` when the authorization server lists it, to get a refresh token (default `true`). */
  offlineAccess?: boolean;
  /**
   * Pushed authorization requests (RFC 9126): the authorization parameters go to the server
   * directly and the user's browser carries only a `request_uri`. Used whenever the server
   * requires it (`require_pushed_authorization_requests`); `true` uses it whenever the server
   * offers it; `false` never (an authorization the server requires it for then fails typed).
   */
  pushedAuthorizationRequests?: boolean;
  /**
   * JWT-secured authorization requests (RFC 9101): the authorization parameters travel as a
   * request object signed with the pre-registered client's `privateKey` (`request` in the
   * browser's URL, or, with pushed authorization requests, the pushed request itself). Used
   * whenever the server requires it (`require_signed_request_object`); `true` always; `false`
   * never (an authorization the server requires it for then fails typed).
   */
  signedRequestObject?: boolean;
  /**
   * Rich authorization requests (RFC 9396): what to ask for beyond scopes, as
   * `authorization_details`. Sent on the authorization request (and the pushed one) of the
   * authorization code grant, and on the token request of the grants without a user. What the
   * server granted is on the stored tokens and `granted(endpoint)`.
   */
  authorizationDetails?: readonly AxMCPAuthorizationDetail[];
  /**
   * Mutual TLS (RFC 8705). The certificate belongs to the HTTP stack (a web-standard fetch
   * cannot present one): `tls: { cert, key }` of `AxMCPNodeHTTPTransport` or `createNodeFetch`
   * (ax-mcp/node), or a fetch marked with `axMCPFetchWithClientCertificate`. With one (the
   * default then), requests go to the server's `mtls_endpoint_aliases`, a pre-registered client
   * may authenticate with `tls_client_auth` / `self_signed_tls_client_auth`, and a registered one
   * asks for certificate-bound tokens. `true` without such a fetch fails with `unsupported`;
   * `false` leaves the certificate to TLS alone.
   */
  mtls?: boolean;
  /**
   * DPoP (RFC 9449) sender-constrained tokens: `true` always, `false` never, `'auto'` (default)
   * when the resource asks for DPoP and the authorization server supports ES256 (and does not
   * bind tokens to this client's TLS certificate instead).
   */
  dpop?: boolean | 'auto';
  /** Where tokens and registrations are kept, keyed by endpoint (default: in memory, per strategy). */
  tokenStore?: AxMCPTokenStore;
  /** Refresh this long before the access token expires (default 60 000 ms; at most half its lifetime). */
  refreshBeforeExpiryMs?: number;
  /** Authorization attempts for one scope set without a success in between (default 3). */
  maxAuthorizationAttempts?: number;
  /** How long an `introspect()` answer is reused at most (default 30 000 ms; never past the token's expiry; 0: never). */
  introspectionCacheMs?: number;
  /** Non-fatal problems (a failed refresh that a new authorization will replace). Never carries secrets. */
  onWarning?: (message: string) => void;
}

/** The shape of {@link AxMCPOAuthOptions}, every key of it (those of the OAuth HTTP options included). */
export const OAUTH_OPTIONS = object(
  {
    ...OAUTH_HTTP_KEYS,
    redirectUri: instance('an absolute URL', (value) => typeof value === 'string' && URL.canParse(value)),
    onAuthCode: func('a function (url, context) => Promise<{ code, state, iss } | URL>'),
    client: anyOf(CLIENT_CREDENTIALS, array(CLIENT_CREDENTIALS)),
    clientMetadataUrl: CLIENT_METADATA_URL,
    clientMetadata: CLIENT_METADATA,
    clientCredentials: boolean(),
    workloadIdentity: object(
      { assertion: required(SECRET_SOURCE) },
      { expected: 'an object { assertion }', aliases: { jwt: 'assertion', token: 'assertion' } },
    ),
    crossAppAccess: object(
      { idp: required(CROSS_APP_ACCESS_IDP), idToken: required(SECRET_SOURCE) },
      { expected: 'an object { idp, idToken }', aliases: { id_token: 'idToken', token: 'idToken' } },
    ),
    scopes: array(string({ nonEmpty: true })),
    offlineAccess: boolean(),
    pushedAuthorizationRequests: boolean(),
    signedRequestObject: boolean(),
    authorizationDetails: AUTHORIZATION_DETAILS,
    mtls: boolean(),
    dpop: oneOf(true, false, 'auto'),
    tokenStore: TOKEN_STORE,
    refreshBeforeExpiryMs: number({ min: 0 }),
    maxAuthorizationAttempts: number({ integer: true, min: 0 }),
    introspectionCacheMs: number({ min: 0 }),
    onWarning: func('a function (message) => void'),
  },
  {
    expected: 'an object of OAuth options { redirectUri?, onAuthCode?, client?, … }',
    aliases: {
      redirectUrl: 'redirectUri',
      redirect_uri: 'redirectUri',
      onAuthorizationCode: 'onAuthCode',
      onAuthorize: 'onAuthCode',
      clientId: 'client',
      clients: 'client',
      scope: 'scopes',
      store: 'tokenStore',
      tokens: 'tokenStore',
      par: 'pushedAuthorizationRequests',
      jar: 'signedRequestObject',
      requestObject: 'signedRequestObject',
      signedRequestObjects: 'signedRequestObject',
      rar: 'authorizationDetails',
      authorization_details: 'authorizationDetails',
      mTLS: 'mtls',
      mutualTLS: 'mtls',
      timeout: 'timeoutMs',
    },
  },
);

/** The strategy {@link axMCPOAuth} returns. */
export interface AxMCPOAuthAuthentication extends AxMCPAuthentication {
  readonly kind: 'oauth';
  readonly sensitiveHeaders: readonly string[];
  /** Runs discovery and a grant now for `endpoint`, instead of waiting for a 401. */
  authorize(
    endpoint: string | URL,
    options?: { scopes?: readonly string[]; signal?: AbortSignal },
  ): Promise<void>;
  /**
   * Forgets the tokens of `endpoint` (registrations are kept) and, unless `revoke: false`,
   * revokes them at the authorization server (RFC 7009) when it offers revocation. A failed
   * revocation is reported through `onWarning`: the tokens are forgotten either way.
   */
  signOut(endpoint: string | URL, options?: { revoke?: boolean; signal?: AbortSignal }): Promise<void>;
  /**
   * What the authorization server granted for `endpoint` (no token in it): scopes, RFC 9396
   * authorization details, expiry. `undefined` while there is no token.
   */
  granted(endpoint: string | URL): Promise<AxMCPOAuthGrant | undefined>;
  /**
   * Asks the authorization server (RFC 7662) whether the access token of `endpoint` is active
   * and what it may do. Answers are reused for at most `introspectionCacheMs`, never past the
   * token's expiry; `fresh: true` asks again. `undefined` while there is no token.
   */
  introspect(
    endpoint: string | URL,
    options?: { fresh?: boolean; signal?: AbortSignal },
  ): Promise<AxMCPTokenIntrospection | undefined>;
  toJSON(): Record<string, unknown>;
  toString(): string;
}

/** What an endpoint's tokens were granted, without the tokens (see `granted()`). */
export interface AxMCPOAuthGrant {
  issuer: string;
  resource: string;
  tokenType: 'Bearer' | 'DPoP';
  /** The scopes granted (the server's `scope`, else those requested). */
  scopes: string[];
  /** The RFC 9396 authorization details granted, when the server named some. */
  authorizationDetails?: AxMCPAuthorizationDetail[];
  /** When the access token expires (ms since the epoch), if the server said. */
  expiresAt?: number;
}

/** Which grant obtains the tokens. */
export type GrantType = 'authorization_code' | 'client_credentials' | 'jwt_bearer' | 'cross_app_access';

/** What the options decide together, beyond the shape of each. */
export interface OAuthSetup {
  grant: GrantType;
  /** The HTTP stack presents a TLS client certificate and OAuth uses it (RFC 8705). */
  mtls: boolean;
  preRegistered: readonly AxMCPOAuthClientCredentials[];
}

/** Checks what spans several options (their shapes are checked before); throws typed on a contradiction. */
export function resolveOAuthSetup(options: AxMCPOAuthOptions): OAuthSetup {
  const certificate = presentsClientCertificate(options.fetch);
  if (options.mtls === true && !certificate) {
    throw new AxMCPUnsupportedError(
      `Mutual TLS (oauth.mtls) needs a TLS client certificate, which this fetch does not present (a web-standard fetch cannot): ${MTLS_INSTEAD}`,
    );
  }
  const mtls = options.mtls ?? certificate;
  const clients =
    options.client === undefined ? [] : Array.isArray(options.client) ? options.client : [options.client];
  clients.forEach((client: AxMCPOAuthClientCredentials, index: number) => {
    const method = client.tokenEndpointAuthMethod;
    const needs =
      method === 'client_secret_basic' || method === 'client_secret_post'
        ? 'clientSecret'
        : method === 'private_key_jwt'
          ? 'privateKey'
          : undefined;
    if (isMTLSMethod(method) && !mtls) {
      const path = Array.isArray(options.client)
        ? `client[${index}].tokenEndpointAuthMethod`
        : 'client.tokenEndpointAuthMethod';
      if (options.mtls === false) {
        throw optionsError('axMCPOAuth options', {
          path,
          expected: `a method without mutual TLS (mtls is false)`,
          received: `'${method}'`,
        });
      }
      throw new AxMCPUnsupportedError(
        `${path} '${method}' needs a TLS client certificate, which this fetch does not present (a web-standard fetch cannot): ${MTLS_INSTEAD}`,
      );
    }
    if (needs !== undefined && client[needs] === undefined) {
      const path = Array.isArray(options.client) ? `client[${index}].${needs}` : `client.${needs}`;
      throw optionsError('axMCPOAuth options', {
        path,
        expected: `a ${needs === 'clientSecret' ? 'client secret' : 'private key'} (tokenEndpointAuthMethod is '${method}')`,
        received: 'nothing (required)',
      });
    }
  });
  const preRegistered = clients as readonly AxMCPOAuthClientCredentials[];
  const grant: GrantType = options.crossAppAccess
    ? 'cross_app_access'
    : options.workloadIdentity
      ? 'jwt_bearer'
      : options.clientCredentials
        ? 'client_credentials'
        : 'authorization_code';
  if (grant !== 'authorization_code' && preRegistered.length === 0) {
    const option = options.crossAppAccess
      ? 'crossAppAccess'
      : options.workloadIdentity
        ? 'workloadIdentity'
        : 'clientCredentials';
    throw optionsError('axMCPOAuth options', {
      path: 'client',
      expected: `a pre-registered client { clientId, … }: the ${grant} grant (${option}) needs one`,
      received: 'nothing (required)',
    });
  }
  return { grant, mtls, preRegistered };
}
