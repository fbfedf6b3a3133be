/**
 * Getting new tokens for an endpoint: discovery (protected resource, then its authorization
 * server), the client to act as (pre-registered, metadata document or registered), DPoP or
 * not, and the configured grant. What the strategy shares between its flows is the
 * {@link OAuthContext} every function here takes.
 */
import { AxMCPError } from '../../protocol/errors.js';
import { authorizationCodeGrant } from './authorization-code.js';
import { checkAuthorizationDetailsTypes } from './authorization-details.js';
import { type AxMCPOAuthClientCredentials, type ResolvedClient, resolveClient } from './client-identity.js';
import {
  type AxMCPAuthorizationServerInfo,
  canonicalResource,
  discoverAuthorizationServer,
  discoverLegacyAuthorizationServer,
  discoverProtectedResource,
} from './discovery.js';
import { DPoPKey } from './dpop.js';
import type { EndpointState, EndpointStates } from './endpoint-state.js';
import { AxMCPOAuthError } from './errors.js';
import {
  clientCredentialsGrant,
  exchangeForIdJag,
  type GrantContext,
  jwtBearerGrant,
  toStoredTokens,
} from './grants.js';
import type { OAuthHTTP } from './http.js';
import type { AxMCPOAuthOptions, AxMCPOAuthSecretSource, GrantType } from './options.js';
import { type AxMCPAuthChallenge, splitScopes } from './www-authenticate.js';

/** What one OAuth strategy's flows share. */
export interface OAuthContext {
  readonly options: AxMCPOAuthOptions;
  readonly http: OAuthHTTP;
  readonly states: EndpointStates;
  readonly preRegistered: readonly AxMCPOAuthClientCredentials[];
  readonly grant: GrantType;
  /** The HTTP stack presents a TLS client certificate and OAuth uses it (RFC 8705). */
  readonly mtls: boolean;
  /** Which token generation each in-flight request was sent with (keyed by its signal). */
  readonly sentWith: WeakMap<AbortSignal, number>;
  /** This process's DPoP key, made on first use. */
  dpop?: Promise<DPoPKey>;
}

/** Step-up (or a first authorization from `authorize()`): discovery, then a grant for `scopes`. */
export async function authorize(
  ctx: OAuthContext,
  state: EndpointState,
  challenge: AxMCPAuthChallenge | undefined,
  scopes: readonly string[] | undefined,
  signal?: AbortSignal,
): Promise<void> {
  await discover(ctx, state, challenge, signal);
  await grantTokens(ctx, state, scopes ?? initialScopes(ctx, state, challenge), signal);
}

/** Scope selection: the challenge's `scope`, else the PRM's `scopes_supported`, else `scopes`, else none. */
export function initialScopes(
  ctx: OAuthContext,
  state: EndpointState,
  challenge: AxMCPAuthChallenge | undefined,
): string[] {
  const challenged = splitScopes(challenge?.params.get('scope'));
  if (challenged.length > 0) return challenged;
  if (state.prm?.scopesSupported && state.prm.scopesSupported.length > 0)
    return [...state.prm.scopesSupported];
  return [...(ctx.options.scopes ?? [])];
}

export async function discover(
  ctx: OAuthContext,
  state: EndpointState,
  challenge: AxMCPAuthChallenge | undefined,
  signal?: AbortSignal,
): Promise<void> {
  const endpoint = state.endpoint;
  const prm = await discoverProtectedResource(
    ctx.http,
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
        server = await discoverAuthorizationServer(ctx.http, issuer, signal);
        break;
      } catch (error) {
        if (signal?.aborted || (error instanceof AxMCPOAuthError && error.code === 'oauth_issuer_mismatch')) {
          throw error;
        }
        failure = error;
      }
    }
    if (!server) throw attribute(failure, endpoint);
  } else {
    server = await discoverLegacyAuthorizationServer(ctx.http, endpoint, state.protocolVersion, signal);
  }
  if (state.server?.metadata.issuer !== server.metadata.issuer) state.client = undefined;
  state.server = server;
}

/**
 * The authorization server of tokens from the store of an earlier process: their issuer is
 * asked directly (it was validated through the protected-resource metadata when they were
 * issued), else the endpoint's legacy discovery.
 */
export async function serverOfStoredTokens(
  ctx: OAuthContext,
  state: EndpointState,
  issuer: string,
  signal?: AbortSignal,
): Promise<AxMCPAuthorizationServerInfo> {
  state.server ??= await discoverAuthorizationServer(ctx.http, issuer, signal).catch(() =>
    discoverLegacyAuthorizationServer(ctx.http, state.endpoint, state.protocolVersion, signal),
  );
  return state.server;
}

export async function clientFor(
  ctx: OAuthContext,
  state: EndpointState,
  signal: AbortSignal | undefined,
  noRegistration = false,
): Promise<ResolvedClient> {
  if (state.client) return state.client;
  const { options } = ctx;
  const as = state.server!.metadata;
  const input: Parameters<typeof resolveClient>[0] = {
    http: ctx.http,
    as,
    preRegistered: ctx.preRegistered,
    metadata: options.clientMetadata ?? {},
    stored: state.record.clients ?? [],
    mtls: ctx.mtls,
    grantTypes:
      ctx.grant === 'authorization_code'
        ? ['authorization_code', 'refresh_token']
        : ctx.grant === 'client_credentials'
          ? ['client_credentials']
          : ['urn:ietf:params:oauth:grant-type:jwt-bearer'],
    noRegistration,
  };
  if (options.clientMetadataUrl !== undefined) input.clientMetadataUrl = options.clientMetadataUrl;
  if (options.authorizationDetails) {
    input.authorizationDetailsTypes = [...new Set(options.authorizationDetails.map((d) => d.type))];
  }
  if (ctx.grant === 'authorization_code' && options.redirectUri !== undefined) {
    input.redirectUri = options.redirectUri;
  }
  if (signal) input.signal = signal;
  const client = await resolveClient(input);
  if (client.registered) {
    const others = (state.record.clients ?? []).filter((c) => c.issuer !== as.issuer);
    state.record.clients = [...others, client.registered];
    client.registered = undefined;
    await ctx.states.save(state);
  }
  state.client = client;
  return client;
}

export async function useDPoP(ctx: OAuthContext, state: EndpointState): Promise<DPoPKey | undefined> {
  const setting = ctx.options.dpop ?? 'auto';
  if (setting === false) return undefined;
  const algs = state.server?.metadata.dpop_signing_alg_values_supported;
  if (setting === 'auto' && !(state.resourceWantsDPoP && algs?.includes('ES256'))) return undefined;
  // One proof of possession per token: a server that binds to the certificate gets no DPoP unasked.
  if (setting === 'auto' && ctx.mtls && state.server?.metadata.tls_client_certificate_bound_access_tokens)
    return undefined;
  return dpopKey(ctx);
}

export function dpopKey(ctx: OAuthContext): Promise<DPoPKey> {
  ctx.dpop ??= DPoPKey.generate();
  return ctx.dpop;
}

async function grantContext(
  ctx: OAuthContext,
  state: EndpointState,
  scopes: readonly string[],
  signal?: AbortSignal,
): Promise<GrantContext> {
  // Before a registration that would name them (RFC 9396 §10).
  const details = ctx.options.authorizationDetails;
  if (details) checkAuthorizationDetailsTypes(state.server!.metadata, details);
  const client = await clientFor(ctx, state, signal);
  const grant: GrantContext = {
    http: ctx.http,
    as: state.server!.metadata,
    client,
    resource: state.prm?.resource ?? canonicalResource(state.endpoint),
    scopes,
    endpoint: canonicalResource(state.endpoint),
  };
  if (details) grant.authorizationDetails = details;
  const dpop = await useDPoP(ctx, state);
  if (dpop) grant.dpop = dpop;
  if (signal) grant.signal = signal;
  return grant;
}

/** Obtains new tokens with the configured grant. */
export async function grantTokens(
  ctx: OAuthContext,
  state: EndpointState,
  scopes: readonly string[],
  signal?: AbortSignal,
): Promise<void> {
  const { options } = ctx;
  const grant = await grantContext(ctx, state, scopes, signal);
  let response: Awaited<ReturnType<typeof clientCredentialsGrant>>;
  try {
    switch (ctx.grant) {
      case 'client_credentials':
        response = await clientCredentialsGrant(grant);
        break;
      case 'jwt_bearer': {
        const assertion = await reveal(options.workloadIdentity!.assertion, signal);
        response = await jwtBearerGrant(grant, assertion);
        break;
      }
      case 'cross_app_access': {
        const access = options.crossAppAccess!;
        const idJag = await exchangeForIdJag(grant, access.idp, await reveal(access.idToken, signal));
        response = await jwtBearerGrant(grant, idJag);
        break;
      }
      default: {
        const { redirectUri, onAuthCode } = options;
        if (!onAuthCode || redirectUri === undefined) {
          throw new AxMCPOAuthError(
            'oauth_interaction_required',
            `${canonicalResource(state.endpoint)} needs a user's authorization; set onAuthCode and redirectUri in the OAuth options (oauth: { onAuthCode, redirectUri })`,
          );
        }
        response = await authorizationCodeGrant({
          ...grant,
          redirectUri,
          onAuthCode,
          offlineAccess: options.offlineAccess ?? true,
          requirePKCEMetadata: state.server!.source === 'prm',
          ...(options.pushedAuthorizationRequests === undefined
            ? {}
            : { pushedAuthorizationRequests: options.pushedAuthorizationRequests }),
          ...(options.signedRequestObject === undefined
            ? {}
            : { signedRequestObject: options.signedRequestObject }),
        });
      }
    }
  } catch (error) {
    throw attribute(error, state.endpoint);
  }
  await ctx.states.setTokens(state, toStoredTokens(response, grant));
}

async function reveal(source: AxMCPOAuthSecretSource, signal?: AbortSignal): Promise<string> {
  const value = typeof source === 'function' ? await source(signal ? { signal } : {}) : source;
  if (typeof value !== 'string' || value === '') {
    throw new AxMCPError('invalid_argument', 'An OAuth assertion or ID token source produced no string');
  }
  return value;
}

/** Names the endpoint on a typed error (anything else passes unchanged). */
export function attribute(error: unknown, endpoint: URL): unknown {
  if (error instanceof AxMCPError) return error.attribute({ endpoint: canonicalResource(endpoint) });
  return error;
}

/** Reports a failure that a later flow will make up for: its code only, never its message. */
export function warnFailed(ctx: OAuthContext, what: string, state: EndpointState, error: unknown): void {
  const code = error instanceof AxMCPError ? error.code : 'error';
  ctx.options.onWarning?.(`${what} of ${canonicalResource(state.endpoint)} failed (${code})`);
}
