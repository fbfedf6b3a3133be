/**
 * `axMCPOAuth`: OAuth 2.1 for MCP as an authentication strategy. It sends the current
 * access token (Bearer, or DPoP with a fresh proof), refreshes it shortly before expiry,
 * and answers the transport's challenges (see `challenge.ts`). State is kept per endpoint in
 * a token store (`endpoint-state.ts`); getting tokens is `authorization.ts`, keeping them
 * fresh `refresh.ts`. Signed request objects (RFC 9101), authorization details (RFC 9396),
 * mutual TLS (RFC 8705) and introspection (RFC 7662) live in their own modules; this file is
 * the strategy users hold and what it does for them directly (sign out, grants, introspection).
 */
import { ABORT_SIGNAL, array, boolean, object, string } from '../../options/check.js';
import { assertMCPOptions } from '../../protocol/errors.js';
import type {
  AxMCPAuthenticationChallenge,
  AxMCPAuthenticationRequest,
  AxMCPAuthenticationResponse,
  AxMCPAuthenticationResult,
} from '../authentication.js';
import {
  attribute,
  authorize,
  clientFor,
  dpopKey,
  type OAuthContext,
  serverOfStoredTokens,
  warnFailed,
} from './authorization.js';
import { answerChallenge } from './challenge.js';
import { discoverAuthorizationServer } from './discovery.js';
import { type EndpointState, EndpointStates, flowSettled, runAsFlow } from './endpoint-state.js';
import { AxMCPOAuthError } from './errors.js';
import { OAuthHTTP, type OAuthHTTPOptions } from './http.js';
import { type AxMCPTokenIntrospection, IntrospectionCache, introspectToken } from './introspection.js';
import {
  type AxMCPOAuthAuthentication,
  type AxMCPOAuthGrant,
  type AxMCPOAuthOptions,
  OAUTH_OPTIONS,
  resolveOAuthSetup,
} from './options.js';
import { expired, expiresSoon, renew } from './refresh.js';
import { revokeTokens } from './revocation.js';
import { AxMCPMemoryTokenStore, type AxMCPStoredTokens } from './token-store.js';

const SENSITIVE = Object.freeze(['authorization', 'dpop']);

/*
 * The options of the strategy's calls, checked on every call: a misspelt one went nowhere, so
 * `introspect(endpoint, { refresh: true })` answered from the cache (a revoked token still
 * active), `authorize(endpoint, { scope: [...] })` asked for the default scopes and
 * `signOut(endpoint, { revok: false })` revoked.
 */
const AUTHORIZE_NOW_OPTIONS = object(
  { scopes: array(string({ nonEmpty: true })), signal: ABORT_SIGNAL },
  { expected: 'options { scopes?, signal? }', aliases: { scope: 'scopes' } },
);
const SIGN_OUT_OPTIONS = object(
  { revoke: boolean(), signal: ABORT_SIGNAL },
  { expected: 'options { revoke?, signal? }' },
);
const INTROSPECT_OPTIONS = object(
  { fresh: boolean(), signal: ABORT_SIGNAL },
  { expected: 'options { fresh?, signal? }', aliases: { refresh: 'fresh', force: 'fresh' } },
);

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
  readonly #ctx: OAuthContext;
  readonly #introspections: IntrospectionCache;

  constructor(options: AxMCPOAuthOptions) {
    assertMCPOptions(OAUTH_OPTIONS, options, 'axMCPOAuth options');
    const http: OAuthHTTPOptions = {};
    if (options.fetch) http.fetch = options.fetch;
    if (options.ssrfProtection !== undefined) http.ssrfProtection = options.ssrfProtection;
    if (options.timeoutMs !== undefined) http.timeoutMs = options.timeoutMs;
    if (options.maxResponseBytes !== undefined) http.maxResponseBytes = options.maxResponseBytes;
    const oauthHTTP = new OAuthHTTP(http);
    const store = options.tokenStore ?? new AxMCPMemoryTokenStore();
    this.#introspections = new IntrospectionCache(options.introspectionCacheMs ?? 30_000);
    const ctx: OAuthContext = {
      options,
      http: oauthHTTP,
      states: new EndpointStates(store, () => ctx.dpop),
      sentWith: new WeakMap(),
      ...resolveOAuthSetup(options),
    };
    this.#ctx = ctx;
  }

  facade(): AxMCPOAuthAuthentication {
    const { grant, mtls } = this.#ctx;
    const description = { kind: 'oauth', grant, ...(mtls ? { mtls: true } : {}) };
    return Object.freeze({
      kind: 'oauth' as const,
      sensitiveHeaders: SENSITIVE,
      authenticate: (request: AxMCPAuthenticationRequest) => this.authenticate(request),
      challenge: (challenge: AxMCPAuthenticationChallenge) => answerChallenge(this.#ctx, challenge),
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

  async authenticate(request: AxMCPAuthenticationRequest): Promise<AxMCPAuthenticationResult> {
    const ctx = this.#ctx;
    const state = await ctx.states.get(request.url);
    const version = request.headers.get('mcp-protocol-version');
    if (version !== null) state.protocolVersion = version;
    await flowSettled(state);
    let tokens = state.record.tokens;
    if (tokens && expiresSoon(ctx, tokens)) {
      await renew(ctx, state, request.signal);
      tokens = state.record.tokens;
    }
    if (request.signal) ctx.sentWith.set(request.signal, state.generation);
    if (!tokens || expired(tokens)) return {};
    if (tokens.tokenType === 'DPoP') {
      const key = await dpopKey(ctx);
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
    const state = this.#ctx.states.find(response.url);
    if (!state) return;
    const nonce = response.headers.get('dpop-nonce');
    if (nonce !== null && this.#ctx.dpop) {
      void this.#ctx.dpop.then((key) => {
        if (key.rememberNonce(response.url, nonce)) state.freshNonce = true;
      });
    }
    if (response.status >= 200 && response.status < 300 && state.record.tokens) state.attempts.clear();
  }

  async authorizeNow(
    endpoint: string | URL,
    opts: { scopes?: readonly string[]; signal?: AbortSignal } = {},
  ): Promise<void> {
    assertMCPOptions(AUTHORIZE_NOW_OPTIONS, opts, 'authorize options');
    const state = await this.#ctx.states.get(new URL(endpoint));
    await flowSettled(state);
    await runAsFlow(state, authorize(this.#ctx, state, undefined, opts.scopes, opts.signal));
  }

  async signOut(
    endpoint: string | URL,
    options: { revoke?: boolean; signal?: AbortSignal } = {},
  ): Promise<void> {
    assertMCPOptions(SIGN_OUT_OPTIONS, options, 'signOut options');
    const ctx = this.#ctx;
    const state = await ctx.states.get(new URL(endpoint));
    const tokens = state.record.tokens;
    // Forgotten first: signing out locally never waits on, or fails with, the server.
    await ctx.states.setTokens(state, undefined);
    if (tokens === undefined) return;
    await this.#introspections.delete(tokens.accessToken);
    if (options.revoke === false) return;
    try {
      state.server ??= await discoverAuthorizationServer(ctx.http, tokens.issuer, options.signal);
      if (state.server.metadata.issuer !== tokens.issuer) return;
      const client = await clientFor(ctx, state, options.signal, true);
      await revokeTokens(ctx.http, state.server.metadata, client, tokens, options.signal);
    } catch (error) {
      if (options.signal?.aborted) throw error;
      warnFailed(ctx, 'Revoking the tokens', state, error);
    }
  }

  async granted(endpoint: string | URL): Promise<AxMCPOAuthGrant | undefined> {
    const state = await this.#ctx.states.get(new URL(endpoint));
    await flowSettled(state);
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
    assertMCPOptions(INTROSPECT_OPTIONS, options, 'introspect options');
    const ctx = this.#ctx;
    const state = await ctx.states.get(new URL(endpoint));
    await flowSettled(state);
    const tokens = state.record.tokens;
    if (!tokens) return undefined;
    if (!options.fresh) {
      const cached = await this.#introspections.get(tokens.accessToken);
      if (cached) return cached;
    }
    try {
      const server = await this.#issuerOf(state, tokens, options.signal);
      const client = await clientFor(ctx, state, options.signal, true);
      const answer = await introspectToken(ctx.http, server, client, tokens.accessToken, options.signal);
      await this.#introspections.set(tokens.accessToken, answer, tokens.expiresAt);
      return answer;
    } catch (error) {
      throw attribute(error, state.endpoint);
    }
  }

  /** The metadata of the server that issued `tokens` (discovered again in a new process). */
  async #issuerOf(state: EndpointState, tokens: AxMCPStoredTokens, signal?: AbortSignal) {
    const server = await serverOfStoredTokens(this.#ctx, state, tokens.issuer, signal);
    if (server.metadata.issuer !== tokens.issuer) {
      throw new AxMCPOAuthError(
        'oauth_issuer_mismatch',
        'The tokens were issued by another authorization server than the one that protects the endpoint now',
      );
    }
    return server.metadata;
  }
}
