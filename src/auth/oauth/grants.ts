/**
 * The grants without a user, and what every grant shares: client credentials; RFC 7523 JWT
 * bearer (workload identity federation); cross-app access (RFC 8693 token exchange at the
 * enterprise IdP for an ID-JAG, then the JWT bearer grant); refresh. The authorization code
 * grant is `authorization-code.ts`. Every request carries the RFC 8707 `resource`, and the
 * RFC 9396 `authorization_details` when there are some: on the authorization request for the
 * code grant (the code then carries the grant), on the token request for the grants without one.
 */
import * as oauth from 'oauth4webapi';
import { instance, object, required, string } from '../../options/check.js';
import {
  type AxMCPAuthorizationDetail,
  authorizationDetailsParameter,
  grantedAuthorizationDetails,
} from './authorization-details.js';
import { oauthErrorContext, type ResolvedClient } from './client-identity.js';
import type { DPoPKey } from './dpop.js';
import { AxMCPOAuthError, safeCause } from './errors.js';
import type { OAuthHTTP } from './http.js';
import type { AxMCPStoredTokens } from './token-store.js';
import { splitScopes } from './www-authenticate.js';

/** Shared by every grant. */
export interface GrantContext {
  http: OAuthHTTP;
  as: oauth.AuthorizationServer;
  client: ResolvedClient;
  resource: string;
  /** The scopes to request (without `offline_access`, added here when allowed). */
  scopes: readonly string[];
  /** RFC 9396 authorization details to ask for. */
  authorizationDetails?: readonly AxMCPAuthorizationDetail[];
  dpop?: DPoPKey;
  endpoint: string;
  signal?: AbortSignal;
}

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_JAG = 'urn:ietf:params:oauth:token-type:id-jag';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';

export function requestOptions(ctx: Pick<GrantContext, 'http' | 'signal' | 'dpop'>, withDPoP: boolean) {
  const options: oauth.TokenEndpointRequestOptions = {
    [oauth.customFetch]: ctx.http.customFetch,
    [oauth.allowInsecureRequests]: true,
  };
  if (ctx.signal) options.signal = ctx.signal;
  if (withDPoP && ctx.dpop) options.DPoP = ctx.dpop.handle;
  return options;
}

/**
 * What to do about an OAuth error that names a client option, said in the words of that
 * option (server descriptions are never shown).
 */
export function refusalHint(
  oauthError: string | undefined,
  ctx: Pick<GrantContext, 'authorizationDetails'>,
): string {
  switch (oauthError) {
    case 'invalid_authorization_details':
      return ctx.authorizationDetails === undefined
        ? ': the authorization server wants authorization details (RFC 9396); set oauth.authorizationDetails'
        : ': the authorization server refused oauth.authorizationDetails';
    case 'invalid_request_object':
      return ': the authorization server refused the signed request object; check that it knows the public key of oauth.client.privateKey';
    default:
      return '';
  }
}

/** Runs a token request; once more when the server asks for a (new) DPoP nonce. */
export async function withNonceRetry<T = oauth.TokenEndpointResponse>(
  ctx: Pick<GrantContext, 'signal' | 'dpop' | 'authorizationDetails'>,
  what: string,
  attempt: () => Promise<T>,
  failure: 'oauth_token_failed' | 'oauth_authorization_failed' = 'oauth_token_failed',
): Promise<T> {
  try {
    try {
      return await attempt();
    } catch (error) {
      if (ctx.dpop && oauth.isDPoPNonceError(error)) return await attempt();
      throw error;
    }
  } catch (error) {
    if (ctx.signal?.aborted || error instanceof AxMCPOAuthError) throw error;
    throw refusalError(failure, `The ${what} request failed`, error, ctx);
  }
}

/** The typed error for a server's refusal: its OAuth error code and a hint, never its description. */
export function refusalError(
  code: 'oauth_token_failed' | 'oauth_authorization_failed',
  message: string,
  error: unknown,
  ctx: Pick<GrantContext, 'authorizationDetails'>,
): AxMCPOAuthError {
  const context = oauthErrorContext(error);
  const detail = context.oauthError ? ` (${context.oauthError})` : '';
  const hint = refusalHint(context.oauthError, ctx);
  return new AxMCPOAuthError(code, `${message}${detail}${hint}`, { cause: safeCause(error), ...context });
}

/** `scope` for a request: the scopes, plus `offline_access` when the server lists it. */
export function scopeParameter(as: oauth.AuthorizationServer, scopes: readonly string[], offline: boolean) {
  const all = [...scopes];
  if (offline && as.scopes_supported?.includes('offline_access') && !all.includes('offline_access')) {
    all.push('offline_access');
  }
  return all.length > 0 ? all.join(' ') : undefined;
}

/** Turns a token response into what is stored. */
export function toStoredTokens(
  response: oauth.TokenEndpointResponse,
  ctx: Pick<GrantContext, 'as' | 'resource' | 'scopes' | 'dpop'>,
  previous?: AxMCPStoredTokens,
): AxMCPStoredTokens {
  const dpop = response.token_type === 'dpop';
  const tokens: AxMCPStoredTokens = {
    accessToken: response.access_token,
    tokenType: dpop ? 'DPoP' : 'Bearer',
    scopes: response.scope !== undefined ? splitScopes(response.scope) : [...ctx.scopes],
    requestedScopes: [...ctx.scopes],
    issuer: ctx.as.issuer,
    resource: ctx.resource,
  };
  if (typeof response.expires_in === 'number' && response.expires_in >= 0) {
    tokens.obtainedAt = Date.now();
    tokens.expiresAt = tokens.obtainedAt + response.expires_in * 1000;
  }
  const refresh = response.refresh_token ?? previous?.refreshToken;
  if (refresh !== undefined) tokens.refreshToken = refresh;
  if (dpop && ctx.dpop) tokens.dpopJkt = ctx.dpop.thumbprint;
  // RFC 9396 §7: what was granted; a refresh that names none keeps the grant's.
  const details =
    grantedAuthorizationDetails(response.authorization_details) ?? previous?.authorizationDetails;
  if (details !== undefined) tokens.authorizationDetails = details;
  return tokens;
}
/** The token request parameters of a grant without a user: `parameters`, the scopes, the authorization details. */
function tokenParameters(ctx: GrantContext, parameters: Record<string, string>): Record<string, string> {
  const scope = scopeParameter(ctx.as, ctx.scopes, false);
  if (scope !== undefined) parameters.scope = scope;
  const details = authorizationDetailsParameter(ctx.as, ctx.authorizationDetails);
  if (details !== undefined) parameters.authorization_details = details;
  return parameters;
}

/** The client credentials grant (the client acts on its own behalf). */
export function clientCredentialsGrant(ctx: GrantContext): Promise<oauth.TokenEndpointResponse> {
  return withNonceRetry(ctx, 'client credentials', async () => {
    const parameters = tokenParameters(ctx, { resource: ctx.resource });
    const response = await oauth.clientCredentialsGrantRequest(
      ctx.as,
      ctx.client.client,
      ctx.client.auth,
      parameters,
      requestOptions(ctx, true),
    );
    return oauth.processClientCredentialsResponse(ctx.as, ctx.client.client, response);
  });
}

/**
 * The JWT bearer grant (RFC 7523) with an assertion: a workload identity token, or an
 * ID-JAG. A refusal is final: no retry, no other grant.
 */
export function jwtBearerGrant(ctx: GrantContext, assertion: string): Promise<oauth.TokenEndpointResponse> {
  return withNonceRetry(ctx, 'JWT bearer', async () => {
    const parameters = tokenParameters(ctx, { assertion, resource: ctx.resource });
    const response = await oauth.genericTokenEndpointRequest(
      ctx.as,
      ctx.client.client,
      ctx.client.auth,
      JWT_BEARER,
      parameters,
      requestOptions(ctx, true),
    );
    return oauth.processGenericTokenEndpointResponse(ctx.as, ctx.client.client, response);
  });
}

/** The enterprise identity provider of cross-app access. */
export interface AxMCPCrossAppAccessIdP {
  /** The IdP's token endpoint (RFC 8693 token exchange). */
  tokenEndpoint: string;
  /** The IdP's issuer identifier (default: the token endpoint's origin). */
  issuer?: string;
  /** This client's id at the IdP. */
  clientId: string;
  /** This client's secret at the IdP (`client_secret_basic`), if it has one. */
  clientSecret?: string;
}

/** The shape of {@link AxMCPCrossAppAccessIdP}. */
export const CROSS_APP_ACCESS_IDP = object(
  {
    tokenEndpoint: required(
      instance('an absolute URL', (value) => typeof value === 'string' && URL.canParse(value)),
    ),
    issuer: string({ nonEmpty: true }),
    clientId: required(string({ nonEmpty: true })),
    clientSecret: string(),
  },
  {
    expected: 'an IdP { tokenEndpoint, clientId, issuer?, clientSecret? }',
    aliases: { token_endpoint: 'tokenEndpoint', tokenUrl: 'tokenEndpoint', client_id: 'clientId' },
  },
);

/**
 * RFC 8693 token exchange at the IdP: the user's ID token for an Identity Assertion JWT
 * Authorization Grant (ID-JAG) audienced to the authorization server and the resource.
 */
export async function exchangeForIdJag(
  ctx: GrantContext,
  idp: AxMCPCrossAppAccessIdP,
  idToken: string,
): Promise<string> {
  let endpoint: URL;
  try {
    endpoint = new URL(idp.tokenEndpoint);
  } catch {
    throw new AxMCPOAuthError('oauth_unsupported', 'crossAppAccess.idp.tokenEndpoint is not a valid URL');
  }
  const idpAS: oauth.AuthorizationServer = {
    issuer: idp.issuer ?? endpoint.origin,
    token_endpoint: endpoint.href,
  };
  const client: oauth.Client = { client_id: idp.clientId };
  const auth = idp.clientSecret !== undefined ? oauth.ClientSecretBasic(idp.clientSecret) : oauth.None();
  const parameters: Record<string, string> = {
    requested_token_type: ID_JAG,
    subject_token: idToken,
    subject_token_type: ID_TOKEN,
    audience: ctx.as.issuer,
    resource: ctx.resource,
  };
  const scope = scopeParameter(ctx.as, ctx.scopes, false);
  if (scope !== undefined) parameters.scope = scope;
  const response = await withNonceRetry({ signal: ctx.signal }, 'token exchange', async () => {
    const answer = await oauth.genericTokenEndpointRequest(
      idpAS,
      client,
      auth,
      TOKEN_EXCHANGE,
      parameters,
      requestOptions({ http: ctx.http, signal: ctx.signal }, false),
    );
    return oauth.processGenericTokenEndpointResponse(idpAS, client, answer, {
      recognizedTokenTypes: { n_a: () => {} },
    });
  });
  const issued = (response as Record<string, unknown>).issued_token_type;
  if (issued !== undefined && issued !== ID_JAG) {
    throw new AxMCPOAuthError(
      'oauth_token_failed',
      'The identity provider issued another kind of token than an ID-JAG',
    );
  }
  return response.access_token;
}

/** The refresh token grant, with the same `resource`. */
export function refreshGrant(ctx: GrantContext, refreshToken: string): Promise<oauth.TokenEndpointResponse> {
  return withNonceRetry(ctx, 'refresh', async () => {
    const options = requestOptions(ctx, true);
    options.additionalParameters = { resource: ctx.resource };
    const response = await oauth.refreshTokenGrantRequest(
      ctx.as,
      ctx.client.client,
      ctx.client.auth,
      refreshToken,
      options,
    );
    return oauth.processRefreshTokenResponse(ctx.as, ctx.client.client, response);
  });
}
