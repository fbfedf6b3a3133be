/**
 * `axMCPOAuth`: OAuth 2.1 for MCP as an authentication strategy. It sends the current
 * access token (Bearer, or DPoP with a fresh proof), refreshes it shortly before expiry,
 * and answers the transport's challenges: a 401 runs discovery and a grant (or a refresh),
 * a 403 `insufficient_scope` re-authorizes with the union of scopes, a DPoP nonce
 * challenge is answered with the new nonce. State is kept per endpoint in a token store.
 * Signed request objects (RFC 9101), authorization details (RFC 9396), mutual TLS (RFC 8705)
 * and introspection (RFC 7662) live in their own modules; this file wires them in.
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
import { AxMCPError, AxMCPUnsupportedError, assertMCPOptions } from '../../protocol/errors.js';
import type {
  AxMCPAuthentication,
  AxMCPAuthenticationChallenge,
  AxMCPAuthenticationRequest,
  AxMCPAuthenticationResponse,
  AxMCPAuthenticationResult,
} from '../authentication.js';
import {
  AUTHORIZATION_DETAILS,
  type AxMCPAuthorizationDetail,
  checkAuthorizationDetailsTypes,
} from './authorization-details.js';
import {
  type AxMCPOAuthClientCredentials,
  type AxMCPOAuthClientMetadata,
  CLIENT_CREDENTIALS,
  CLIENT_METADATA,
  CLIENT_METADATA_URL,
  type ResolvedClient,
  resolveClient,
} from './client-identity.js';
import {
  type AxMCPAuthorizationServerInfo,
  type AxMCPProtectedResource,
  canonicalResource,
  discoverAuthorizationServer,
  discoverLegacyAuthorizationServer,
  discoverProtectedResource,
} from './discovery.js';
import { DPoPKey } from './dpop.js';
import { AxMCPOAuthError } from './errors.js';
import {
  type AxMCPAuthorizationCodeHandler,
  type AxMCPCrossAppAccessIdP,
  authorizationCodeGrant,
  CROSS_APP_ACCESS_IDP,
  clientCredentialsGrant,
  exchangeForIdJag,
  type GrantContext,
  jwtBearerGrant,
  refreshGrant,
  toStoredTokens,
} from './grants.js';
import { OAUTH_HTTP_KEYS, OAuthHTTP, type OAuthHTTPOptions } from './http.js';
import { type AxMCPTokenIntrospection, IntrospectionCache, introspectToken } from './introspection.js';
import { isMTLSMethod, MTLS_INSTEAD, presentsClientCertificate } from './mtls.js';
import { revokeTokens } from './revocation.js';
import {
  AxMCPMemoryTokenStore,
  type AxMCPOAuthRecord,
  type AxMCPStoredTokens,
  type AxMCPTokenStore,
  TOKEN_STORE,
} from './token-store.js';
import {
  type AxMCPAuthChallenge,
  findChallenge,
  parseWWWAuthenticate,
  splitScopes,
} from './www-authenticate.js';

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

type Grant = 'authorization_code' | 'client_credentials' | 'jwt_bearer' | 'cross_app_access';

/** What one endpoint has: discovery results, the client, the tokens. */
interface EndpointState {
  key: string;
  endpoint: URL;
  loaded?: Promise<void>;
  record: AxMCPOAuthRecord;
  prm?: AxMCPProtectedResource | null;
  server?: AxMCPAuthorizationServerInfo;
  client?: ResolvedClient;
  /** Bumped whenever the tokens change. */
  generation: number;
  inflight?: Promise<void>;
  /** Authorization attempts per scope set since the last success. */
  attempts: Map<string, number>;
  /** The resource said it wants DPoP (challenge scheme or metadata). */
  resourceWantsDPoP: boolean;
  /** A DPoP nonce arrived since the last proof. */
  freshNonce: boolean;
  protocolVersion?: string;
}

const SENSITIVE = Object.freeze(['authorization', 'dpop']);

/**
 * OAuth 2.1 for MCP servers that require it, as an {@link AxMCPAuthentication} strategy.
 *
 * @example
 * ```ts
 * const transport = new AxMCPStreamableHTTPTransport('https://mcp.example.com/mcp', {
 *   oauth: {
 *     redirectUri: 'http://127.0.0.1:8765/callback',
 *     clientMetadataUrl: 'https://app.example.com/oauth/client.json',
 *     onAuthCode: async (url) => openBrowserAndWaitForCallback(url),
 *   },
 * });
 * ```
 */
export function axMCPOAuth(options: AxMCPOAuthOptions = {}): AxMCPOAuthAuthentication {
  return new OAuthStrategy(options).facade();
}

class OAuthStrategy {
  readonly #options: AxMCPOAuthOptions;
  readonly #http: OAuthHTTP;
  readonly #store: AxMCPTokenStore;
  readonly #states = new Map<string, EndpointState>();
  /** Which token generation each in-flight request was sent with (keyed by its signal). */
  readonly #sentWith = new WeakMap<AbortSignal, number>();
  readonly #preRegistered: readonly AxMCPOAuthClientCredentials[];
  readonly #grant: Grant;
  /** The HTTP stack presents a TLS client certificate and OAuth uses it (RFC 8705). */
  readonly #mtls: boolean;
  readonly #introspections: IntrospectionCache;
  #dpop?: Promise<DPoPKey>;

  constructor(options: AxMCPOAuthOptions) {
    assertMCPOptions(OAUTH_OPTIONS, options, 'axMCPOAuth options');
    this.#options = options;
    const http: OAuthHTTPOptions = {};
    if (options.fetch) http.fetch = options.fetch;
    if (options.ssrfProtection !== undefined) http.ssrfProtection = options.ssrfProtection;
    if (options.timeoutMs !== undefined) http.timeoutMs = options.timeoutMs;
    if (options.maxResponseBytes !== undefined) http.maxResponseBytes = options.maxResponseBytes;
    this.#http = new OAuthHTTP(http);
    this.#store = options.tokenStore ?? new AxMCPMemoryTokenStore();
    this.#introspections = new IntrospectionCache(options.introspectionCacheMs ?? 30_000);
    const certificate = presentsClientCertificate(options.fetch);
    if (options.mtls === true && !certificate) {
      throw new AxMCPUnsupportedError(
        `Mutual TLS (oauth.mtls) needs a TLS client certificate, which this fetch does not present (a web-standard fetch cannot): ${MTLS_INSTEAD}`,
      );
    }
    this.#mtls = options.mtls ?? certificate;
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
      if (isMTLSMethod(method) && !this.#mtls) {
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
    this.#preRegistered = clients as readonly AxMCPOAuthClientCredentials[];
    this.#grant = options.crossAppAccess
      ? 'cross_app_access'
      : options.workloadIdentity
        ? 'jwt_bearer'
        : options.clientCredentials
          ? 'client_credentials'
          : 'authorization_code';
    if (this.#grant !== 'authorization_code' && this.#preRegistered.length === 0) {
      const option = options.crossAppAccess
        ? 'crossAppAccess'
        : options.workloadIdentity
          ? 'workloadIdentity'
          : 'clientCredentials';
      throw optionsError('axMCPOAuth options', {
        path: 'client',
        expected: `a pre-registered client { clientId, … }: the ${this.#grant} grant (${option}) needs one`,
        received: 'nothing (required)',
      });
    }
  }

  facade(): AxMCPOAuthAuthentication {
    const description = { kind: 'oauth', grant: this.#grant, ...(this.#mtls ? { mtls: true } : {}) };
    return Object.freeze({
      kind: 'oauth' as const,
      sensitiveHeaders: SENSITIVE,
      authenticate: (request: AxMCPAuthenticationRequest) => this.authenticate(request),
      challenge: (challenge: AxMCPAuthenticationChallenge) => this.challenge(challenge),
      observe: (response: AxMCPAuthenticationResponse) => this.observe(response),
      authorize: (endpoint: string | URL, opts?: { scopes?: readonly string[]; signal?: AbortSignal }) =>
        this.authorizeNow(endpoint, opts),
      signOut: (endpoint: string | URL, opts?: { revoke?: boolean; signal?: AbortSignal }) =>
        this.signOut(endpoint, opts),
      granted: (endpoint: string | URL) => this.granted(endpoint),
      introspect: (endpoint: string | URL, opts?: { fresh?: boolean; signal?: AbortSignal }) =>
        this.introspect(endpoint, opts),
      toJSON: () => ({ ...description }),
      toString: () => '[AxMCPAuthentication oauth]',
    });
  }

  // ---------------------------------------------------------------------------------------
  // The strategy hooks.

  async authenticate(request: AxMCPAuthenticationRequest): Promise<AxMCPAuthenticationResult> {
    const state = await this.#state(request.url);
    const version = request.headers.get('mcp-protocol-version');
    if (version !== null) state.protocolVersion = version;
    if (state.inflight) await state.inflight.catch(() => {});
    let tokens = state.record.tokens;
    if (tokens && this.#expiresSoon(tokens)) {
      await this.#renew(state, request.signal);
      tokens = state.record.tokens;
    }
    if (request.signal) this.#sentWith.set(request.signal, state.generation);
    if (!tokens || this.#expired(tokens)) return {};
    if (tokens.tokenType === 'DPoP') {
      const key = await this.#dpopKey();
      return {
        headers: {
          Authorization: `DPoP ${tokens.accessToken}`,
          DPoP: await key.proof(request.method, request.url, tokens.accessToken),
        },
      };
    }
    return { headers: { Authorization: `Bearer ${tokens.accessToken}` } };
  }

  observe(response: AxMCPAuthenticationResponse): void {
    const state = this.#states.get(stateKey(response.url));
    if (!state) return;
    const nonce = response.headers.get('dpop-nonce');
    if (nonce !== null && this.#dpop) {
      void this.#dpop.then((key) => {
        if (key.rememberNonce(response.url, nonce)) state.freshNonce = true;
      });
    }
    if (response.status >= 200 && response.status < 300 && state.record.tokens) state.attempts.clear();
  }

  async challenge(challenge: AxMCPAuthenticationChallenge): Promise<boolean> {
    const state = await this.#state(challenge.url);
    const parsed = parseWWWAuthenticate(challenge.headers.get('www-authenticate'));
    if (findChallenge(parsed, 'dpop')) state.resourceWantsDPoP = true;
    // A DPoP nonce challenge: send again with the nonce that came with it.
    const dpopChallenge = findChallenge(parsed, 'dpop');
    if (dpopChallenge?.params.get('error') === 'use_dpop_nonce') {
      if (this.#dpop) await this.#dpop;
      const fresh = state.freshNonce;
      state.freshNonce = false;
      return fresh;
    }
    // Credentials changed since this request was sent (another request already authorized).
    const sent = challenge.signal ? this.#sentWith.get(challenge.signal) : undefined;
    if (sent !== undefined && sent !== state.generation && state.record.tokens) return true;
    if (state.inflight) {
      await state.inflight;
      return true;
    }
    const bearer = findChallenge(parsed, 'bearer', 'dpop');
    if (challenge.status === 403) {
      if (bearer?.params.get('error') !== 'insufficient_scope') return false;
      const previous = state.record.tokens?.requestedScopes ?? [];
      const scopes = union(previous, splitScopes(bearer.params.get('scope')));
      return this.#run(state, () => this.#authorize(state, bearer, scopes, challenge.signal), scopes);
    }
    if (challenge.status !== 401) return false;
    return this.#run(state, () => this.#recover(state, bearer, challenge.signal), undefined);
  }

  // ---------------------------------------------------------------------------------------
  // Flows.

  /** Runs one authorization at a time per endpoint; `false` once the attempts for a scope set are spent. */
  async #run(
    state: EndpointState,
    flow: () => Promise<void>,
    scopes: readonly string[] | undefined,
  ): Promise<boolean> {
    if (scopes !== undefined) {
      const key = [...scopes].sort().join(' ');
      const attempts = (state.attempts.get(key) ?? 0) + 1;
      if (attempts > (this.#options.maxAuthorizationAttempts ?? 3)) return false;
      state.attempts.set(key, attempts);
    }
    const running = flow();
    state.inflight = running;
    try {
      await running;
    } finally {
      if (state.inflight === running) state.inflight = undefined;
    }
    return true;
  }

  /** After a 401: discover again (the server may have moved), then refresh or authorize. */
  async #recover(state: EndpointState, challenge: AxMCPAuthChallenge | undefined, signal?: AbortSignal) {
    await this.#discover(state, challenge, signal);
    const tokens = state.record.tokens;
    const server = state.server!;
    if (tokens && tokens.issuer !== server.metadata.issuer) {
      // The resource moved to another authorization server: its tokens are worthless here.
      await this.#setTokens(state, undefined);
    } else if (tokens?.refreshToken !== undefined && (await this.#refresh(state, signal))) {
      return;
    }
    const scopes = this.#initialScopes(state, challenge);
    const key = [...scopes].sort().join(' ');
    const attempts = (state.attempts.get(key) ?? 0) + 1;
    if (attempts > (this.#options.maxAuthorizationAttempts ?? 3)) {
      throw new AxMCPOAuthError(
        'oauth_authorization_failed',
        `Gave up after ${attempts - 1} authorizations that the server did not accept`,
        { endpoint: canonicalResource(state.endpoint) },
      );
    }
    state.attempts.set(key, attempts);
    await this.#grantTokens(state, scopes, signal);
  }

  /** Step-up (or a first authorization from `authorize()`): discovery, then a grant for `scopes`. */
  async #authorize(
    state: EndpointState,
    challenge: AxMCPAuthChallenge | undefined,
    scopes: readonly string[] | undefined,
    signal?: AbortSignal,
  ) {
    await this.#discover(state, challenge, signal);
    await this.#grantTokens(state, scopes ?? this.#initialScopes(state, challenge), signal);
  }

  async authorizeNow(
    endpoint: string | URL,
    opts: { scopes?: readonly string[]; signal?: AbortSignal } = {},
  ) {
    const state = await this.#state(new URL(endpoint));
    if (state.inflight) await state.inflight.catch(() => {});
    const running = this.#authorize(state, undefined, opts.scopes, opts.signal);
    state.inflight = running;
    try {
      await running;
    } finally {
      if (state.inflight === running) state.inflight = undefined;
    }
  }

  async signOut(
    endpoint: string | URL,
    options: { revoke?: boolean; signal?: AbortSignal } = {},
  ): Promise<void> {
    const state = await this.#state(new URL(endpoint));
    const tokens = state.record.tokens;
    // Forgotten first: signing out locally never waits on, or fails with, the server.
    await this.#setTokens(state, undefined);
    if (tokens === undefined) return;
    await this.#introspections.delete(tokens.accessToken);
    if (options.revoke === false) return;
    try {
      state.server ??= await discoverAuthorizationServer(this.#http, tokens.issuer, options.signal);
      if (state.server.metadata.issuer !== tokens.issuer) return;
      const client = await this.#clientFor(state, options.signal, true);
      await revokeTokens(this.#http, state.server.metadata, client, tokens, options.signal);
    } catch (error) {
      if (options.signal?.aborted) throw error;
      const code = error instanceof AxMCPError ? error.code : 'error';
      this.#options.onWarning?.(
        `Revoking the tokens of ${canonicalResource(state.endpoint)} failed (${code})`,
      );
    }
  }

  async granted(endpoint: string | URL): Promise<AxMCPOAuthGrant | undefined> {
    const state = await this.#state(new URL(endpoint));
    if (state.inflight) await state.inflight.catch(() => {});
    const tokens = state.record.tokens;
    if (!tokens) return undefined;
    const grant: AxMCPOAuthGrant = {
      issuer: tokens.issuer,
      resource: tokens.resource,
      tokenType: tokens.tokenType,
      scopes: [...tokens.scopes],
    };
    if (tokens.authorizationDetails)
      grant.authorizationDetails = structuredClone(tokens.authorizationDetails);
    if (tokens.expiresAt !== undefined) grant.expiresAt = tokens.expiresAt;
    return grant;
  }

  async introspect(
    endpoint: string | URL,
    options: { fresh?: boolean; signal?: AbortSignal } = {},
  ): Promise<AxMCPTokenIntrospection | undefined> {
    const state = await this.#state(new URL(endpoint));
    if (state.inflight) await state.inflight.catch(() => {});
    const tokens = state.record.tokens;
    if (!tokens) return undefined;
    if (!options.fresh) {
      const cached = await this.#introspections.get(tokens.accessToken);
      if (cached) return cached;
    }
    try {
      const server = await this.#issuerOf(state, tokens, options.signal);
      const client = await this.#clientFor(state, options.signal, true);
      const answer = await introspectToken(this.#http, server, client, tokens.accessToken, options.signal);
      await this.#introspections.set(tokens.accessToken, answer, tokens.expiresAt);
      return answer;
    } catch (error) {
      throw attribute(error, state.endpoint);
    }
  }

  /** The metadata of the server that issued `tokens` (discovered again in a new process). */
  async #issuerOf(state: EndpointState, tokens: AxMCPStoredTokens, signal?: AbortSignal) {
    state.server ??= await discoverAuthorizationServer(this.#http, tokens.issuer, signal).catch(() =>
      discoverLegacyAuthorizationServer(this.#http, state.endpoint, state.protocolVersion, signal),
    );
    if (state.server.metadata.issuer !== tokens.issuer) {
      throw new AxMCPOAuthError(
        'oauth_issuer_mismatch',
        'The tokens were issued by another authorization server than the one that protects the endpoint now',
      );
    }
    return state.server.metadata;
  }

  /** Scope selection: the challenge's `scope`, else the PRM's `scopes_supported`, else `scopes`, else none. */
  #initialScopes(state: EndpointState, challenge: AxMCPAuthChallenge | undefined): string[] {
    const challenged = splitScopes(challenge?.params.get('scope'));
    if (challenged.length > 0) return challenged;
    if (state.prm?.scopesSupported && state.prm.scopesSupported.length > 0)
      return [...state.prm.scopesSupported];
    return [...(this.#options.scopes ?? [])];
  }

  async #discover(state: EndpointState, challenge: AxMCPAuthChallenge | undefined, signal?: AbortSignal) {
    const endpoint = state.endpoint;
    const prm = await discoverProtectedResource(
      this.#http,
      endpoint,
      challenge?.params.get('resource_metadata'),
      signal,
    );
    state.prm = prm ?? null;
    if (prm?.dpop) state.resourceWantsDPoP = true;
    let server: AxMCPAuthorizationServerInfo | undefined;
    if (prm) {
      let failure: unknown;
      for (const issuer of prm.authorizationServers.slice(0, 4)) {
        try {
          server = await discoverAuthorizationServer(this.#http, issuer, signal);
          break;
        } catch (error) {
          if (
            signal?.aborted ||
            (error instanceof AxMCPOAuthError && error.code === 'oauth_issuer_mismatch')
          ) {
            throw error;
          }
          failure = error;
        }
      }
      if (!server) throw attribute(failure, endpoint);
    } else {
      server = await discoverLegacyAuthorizationServer(this.#http, endpoint, state.protocolVersion, signal);
    }
    if (state.server?.metadata.issuer !== server.metadata.issuer) state.client = undefined;
    state.server = server;
  }

  #resource(state: EndpointState): string {
    return state.prm?.resource ?? canonicalResource(state.endpoint);
  }

  async #clientFor(
    state: EndpointState,
    signal: AbortSignal | undefined,
    noRegistration = false,
  ): Promise<ResolvedClient> {
    if (state.client) return state.client;
    const as = state.server!.metadata;
    const input: Parameters<typeof resolveClient>[0] = {
      http: this.#http,
      as,
      preRegistered: this.#preRegistered,
      metadata: this.#options.clientMetadata ?? {},
      stored: state.record.clients ?? [],
      mtls: this.#mtls,
      grantTypes:
        this.#grant === 'authorization_code'
          ? ['authorization_code', 'refresh_token']
          : this.#grant === 'client_credentials'
            ? ['client_credentials']
            : ['urn:ietf:params:oauth:grant-type:jwt-bearer'],
      noRegistration,
    };
    if (this.#options.clientMetadataUrl !== undefined)
      input.clientMetadataUrl = this.#options.clientMetadataUrl;
    if (this.#options.authorizationDetails) {
      input.authorizationDetailsTypes = [...new Set(this.#options.authorizationDetails.map((d) => d.type))];
    }
    if (this.#grant === 'authorization_code' && this.#options.redirectUri !== undefined) {
      input.redirectUri = this.#options.redirectUri;
    }
    if (signal) input.signal = signal;
    const client = await resolveClient(input);
    if (client.registered) {
      const others = (state.record.clients ?? []).filter((c) => c.issuer !== as.issuer);
      state.record.clients = [...others, client.registered];
      client.registered = undefined;
      await this.#save(state);
    }
    state.client = client;
    return client;
  }

  async #useDPoP(state: EndpointState): Promise<DPoPKey | undefined> {
    const setting = this.#options.dpop ?? 'auto';
    if (setting === false) return undefined;
    const algs = state.server?.metadata.dpop_signing_alg_values_supported;
    if (setting === 'auto' && !(state.resourceWantsDPoP && algs?.includes('ES256'))) return undefined;
    // One proof of possession per token: a server that binds to the certificate gets no DPoP unasked.
    if (setting === 'auto' && this.#mtls && state.server?.metadata.tls_client_certificate_bound_access_tokens)
      return undefined;
    return this.#dpopKey();
  }

  #dpopKey(): Promise<DPoPKey> {
    this.#dpop ??= DPoPKey.generate();
    return this.#dpop;
  }

  async #grantContext(
    state: EndpointState,
    scopes: readonly string[],
    signal?: AbortSignal,
  ): Promise<GrantContext> {
    // Before a registration that would name them (RFC 9396 §10).
    const details = this.#options.authorizationDetails;
    if (details) checkAuthorizationDetailsTypes(state.server!.metadata, details);
    const client = await this.#clientFor(state, signal);
    const ctx: GrantContext = {
      http: this.#http,
      as: state.server!.metadata,
      client,
      resource: this.#resource(state),
      scopes,
      endpoint: canonicalResource(state.endpoint),
    };
    if (details) ctx.authorizationDetails = details;
    const dpop = await this.#useDPoP(state);
    if (dpop) ctx.dpop = dpop;
    if (signal) ctx.signal = signal;
    return ctx;
  }

  /** Obtains new tokens with the configured grant. */
  async #grantTokens(state: EndpointState, scopes: readonly string[], signal?: AbortSignal): Promise<void> {
    const ctx = await this.#grantContext(state, scopes, signal);
    let response: Awaited<ReturnType<typeof clientCredentialsGrant>>;
    try {
      switch (this.#grant) {
        case 'client_credentials':
          response = await clientCredentialsGrant(ctx);
          break;
        case 'jwt_bearer': {
          const assertion = await reveal(this.#options.workloadIdentity!.assertion, signal);
          response = await jwtBearerGrant(ctx, assertion);
          break;
        }
        case 'cross_app_access': {
          const access = this.#options.crossAppAccess!;
          const idJag = await exchangeForIdJag(ctx, access.idp, await reveal(access.idToken, signal));
          response = await jwtBearerGrant(ctx, idJag);
          break;
        }
        default: {
          const { redirectUri, onAuthCode } = this.#options;
          if (!onAuthCode || redirectUri === undefined) {
            throw new AxMCPOAuthError(
              'oauth_interaction_required',
              `${canonicalResource(state.endpoint)} needs a user's authorization; set onAuthCode and redirectUri in the OAuth options (oauth: { onAuthCode, redirectUri })`,
            );
          }
          response = await authorizationCodeGrant({
            ...ctx,
            redirectUri,
            onAuthCode,
            offlineAccess: this.#options.offlineAccess ?? true,
            requirePKCEMetadata: state.server!.source === 'prm',
            ...(this.#options.pushedAuthorizationRequests === undefined
              ? {}
              : { pushedAuthorizationRequests: this.#options.pushedAuthorizationRequests }),
            ...(this.#options.signedRequestObject === undefined
              ? {}
              : { signedRequestObject: this.#options.signedRequestObject }),
          });
        }
      }
    } catch (error) {
      throw attribute(error, state.endpoint);
    }
    await this.#setTokens(state, toStoredTokens(response, ctx));
  }

  /** Refreshes with the refresh token; `false` (tokens dropped) when the server refuses. */
  async #refresh(state: EndpointState, signal?: AbortSignal): Promise<boolean> {
    const tokens = state.record.tokens;
    if (tokens?.refreshToken === undefined) return false;
    try {
      // Tokens from the store of an earlier process: ask their issuer directly (it was
      // validated through the protected-resource metadata when they were issued).
      state.server ??= await discoverAuthorizationServer(this.#http, tokens.issuer, signal).catch(() =>
        discoverLegacyAuthorizationServer(this.#http, state.endpoint, state.protocolVersion, signal),
      );
      if (state.server.metadata.issuer !== tokens.issuer) {
        await this.#setTokens(state, undefined);
        return false;
      }
      const client = await this.#clientFor(state, signal, true);
      const ctx: GrantContext = {
        http: this.#http,
        as: state.server!.metadata,
        client,
        resource: tokens.resource,
        scopes: tokens.requestedScopes,
        endpoint: canonicalResource(state.endpoint),
      };
      if (tokens.tokenType === 'DPoP' || (await this.#useDPoP(state))) ctx.dpop = await this.#dpopKey();
      if (signal) ctx.signal = signal;
      const response = await refreshGrant(ctx, tokens.refreshToken);
      await this.#setTokens(state, toStoredTokens(response, ctx, tokens));
      return true;
    } catch (error) {
      if (signal?.aborted) throw error;
      const code = error instanceof AxMCPError ? error.code : 'error';
      this.#options.onWarning?.(
        `Refreshing the token of ${canonicalResource(state.endpoint)} failed (${code})`,
      );
      if (error instanceof AxMCPOAuthError && error.code === 'oauth_token_failed') {
        await this.#setTokens(state, undefined);
      }
      return false;
    }
  }

  /** Before a request: refresh a token about to expire, or get a new one without a user. */
  async #renew(state: EndpointState, signal?: AbortSignal): Promise<void> {
    const run = async () => {
      const tokens = state.record.tokens;
      if (!tokens || !this.#expiresSoon(tokens)) return;
      if (tokens.refreshToken !== undefined && (await this.#refresh(state, signal))) return;
      if (this.#grant !== 'authorization_code' && state.server) {
        try {
          await this.#grantTokens(state, tokens.requestedScopes, signal);
        } catch (error) {
          if (signal?.aborted) throw error;
          const code = error instanceof AxMCPError ? error.code : 'error';
          this.#options.onWarning?.(
            `Renewing the token of ${canonicalResource(state.endpoint)} failed (${code})`,
          );
        }
      }
    };
    if (state.inflight) {
      await state.inflight.catch(() => {});
      return;
    }
    const running = run();
    state.inflight = running;
    try {
      await running;
    } finally {
      if (state.inflight === running) state.inflight = undefined;
    }
  }

  /** Within the refresh window: `refreshBeforeExpiryMs`, but never more than half the token's lifetime. */
  #expiresSoon(tokens: AxMCPStoredTokens): boolean {
    if (tokens.expiresAt === undefined) return false;
    let window = this.#options.refreshBeforeExpiryMs ?? 60_000;
    if (tokens.obtainedAt !== undefined)
      window = Math.min(window, (tokens.expiresAt - tokens.obtainedAt) / 2);
    return tokens.expiresAt - Date.now() <= window;
  }

  #expired(tokens: AxMCPStoredTokens): boolean {
    return tokens.expiresAt !== undefined && tokens.expiresAt <= Date.now();
  }

  // ---------------------------------------------------------------------------------------
  // State.

  async #state(url: URL): Promise<EndpointState> {
    const key = stateKey(url);
    let state = this.#states.get(key);
    if (!state) {
      const endpoint = new URL(url.href);
      endpoint.search = '';
      endpoint.hash = '';
      state = {
        key,
        endpoint,
        record: {},
        generation: 0,
        attempts: new Map(),
        resourceWantsDPoP: false,
        freshNonce: false,
      };
      const created = state;
      created.loaded = (async () => {
        const record = await this.#store.get(key);
        if (record) created.record = record;
        const tokens = created.record.tokens;
        // A DPoP-bound token is useless without its key, which lives only in this process.
        if (tokens?.tokenType === 'DPoP') {
          const key = this.#dpop ? await this.#dpop : undefined;
          if (key?.thumbprint !== tokens.dpopJkt) created.record.tokens = undefined;
        }
      })();
      this.#states.set(key, state);
    }
    await state.loaded;
    return state;
  }

  async #setTokens(state: EndpointState, tokens: AxMCPStoredTokens | undefined): Promise<void> {
    if (tokens) state.record.tokens = tokens;
    else delete state.record.tokens;
    state.generation++;
    await this.#save(state);
  }

  async #save(state: EndpointState): Promise<void> {
    await this.#store.set(state.key, state.record);
  }
}

/** Tokens are kept per endpoint: origin and path (the query and fragment do not count). */
function stateKey(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

function union(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])];
}

async function reveal(source: AxMCPOAuthSecretSource, signal?: AbortSignal): Promise<string> {
  const value = typeof source === 'function' ? await source(signal ? { signal } : {}) : source;
  if (typeof value !== 'string' || value === '') {
    throw new AxMCPError('invalid_argument', 'An OAuth assertion or ID token source produced no string');
  }
  return value;
}

function attribute(error: unknown, endpoint: URL): unknown {
  if (error instanceof AxMCPError) return error.attribute({ endpoint: canonicalResource(endpoint) });
  return error;
}
