/**
 * The authorization code grant: PKCE (`S256`), `state` and RFC 9207 `iss` validation, the
 * request signed (RFC 9101) and pushed (RFC 9126) when wanted, the host's callback
 * (`onAuthCode`) that takes the user there and back, and the code exchange.
 */
import * as oauth from 'oauth4webapi';
import { authorizationDetailsParameter } from './authorization-details.js';
import { AxMCPOAuthError, safeCause } from './errors.js';
import { type GrantContext, refusalError, requestOptions, scopeParameter, withNonceRetry } from './grants.js';
import { signRequestIfWanted } from './request-object.js';

/** What the host's `onAuthCode` returns: the parameters of the redirect to `redirectUri`. */
export interface AxMCPAuthorizationCallback {
  /** The authorization code (absent when the server answered with an `error`). */
  code?: string;
  /** The `state` parameter as received. */
  state?: string;
  /** The RFC 9207 `iss` parameter as received, if any. */
  iss?: string;
  /** The OAuth `error` parameter, if the server refused. */
  error?: string;
}

/** The context `onAuthCode` gets. */
export interface AxMCPAuthorizationRequestContext {
  /** The `state` sent; the callback must return the one it receives, not this one. */
  state: string;
  redirectUri: string;
  /** The issuer of the authorization server the user is sent to. */
  issuer: string;
  /** The MCP endpoint being authorized. */
  endpoint: string;
  signal?: AbortSignal;
}

/** Opens the authorization URL (browser, or anything else) and returns the redirect's parameters. */
export type AxMCPAuthorizationCodeHandler = (
  url: URL,
  context: AxMCPAuthorizationRequestContext,
) => Promise<AxMCPAuthorizationCallback | URL | URLSearchParams>;
/**
 * Pushes the authorization parameters (RFC 9126) when the server requires it or the caller
 * asked for it and the server offers it; returns what the browser's URL then carries
 * (`client_id` and `request_uri`), or undefined to send `request` in the URL itself.
 */
async function pushIfWanted(
  ctx: GrantContext & { pushedAuthorizationRequests?: boolean },
  request: URLSearchParams,
): Promise<URLSearchParams | undefined> {
  const { as } = ctx;
  const required = as.require_pushed_authorization_requests === true;
  const offered = as.pushed_authorization_request_endpoint !== undefined;
  if (ctx.pushedAuthorizationRequests === false) {
    if (required) {
      throw new AxMCPOAuthError(
        'oauth_unsupported',
        'The authorization server requires pushed authorization requests, which pushedAuthorizationRequests: false refuses',
      );
    }
    return undefined;
  }
  if (!required && !(offered && ctx.pushedAuthorizationRequests === true)) return undefined;
  if (!offered) {
    throw new AxMCPOAuthError(
      'oauth_discovery_failed',
      'The authorization server requires pushed authorization requests but names no pushed_authorization_request_endpoint',
    );
  }
  const pushed = await withNonceRetry(
    ctx,
    'pushed authorization',
    async () => {
      const response = await oauth.pushedAuthorizationRequest(
        as,
        ctx.client.client,
        ctx.client.auth,
        request,
        requestOptions(ctx, true),
      );
      return oauth.processPushedAuthorizationResponse(as, ctx.client.client, response);
    },
    'oauth_authorization_failed',
  );
  return new URLSearchParams({ client_id: ctx.client.client.client_id, request_uri: pushed.request_uri });
}

/** The authorization code grant: PKCE, state, `iss`, the host's callback, the code exchange. */
export async function authorizationCodeGrant(
  ctx: GrantContext & {
    redirectUri: string;
    onAuthCode: AxMCPAuthorizationCodeHandler;
    offlineAccess: boolean;
    /** `false` for 2025-03-26 servers without metadata: PKCE is sent without being advertised. */
    requirePKCEMetadata: boolean;
    /** See `AxMCPOAuthOptions.pushedAuthorizationRequests`. */
    pushedAuthorizationRequests?: boolean;
    /** See `AxMCPOAuthOptions.signedRequestObject`. */
    signedRequestObject?: boolean;
  },
): Promise<oauth.TokenEndpointResponse> {
  const { as } = ctx;
  const methods = as.code_challenge_methods_supported;
  if ((ctx.requirePKCEMetadata || methods !== undefined) && !methods?.includes('S256')) {
    throw new AxMCPOAuthError(
      'oauth_unsupported',
      'The authorization server does not advertise PKCE with S256 (code_challenge_methods_supported)',
    );
  }
  if (as.authorization_endpoint === undefined) {
    throw new AxMCPOAuthError(
      'oauth_discovery_failed',
      'The authorization server metadata has no authorization_endpoint',
    );
  }
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const request = new URLSearchParams();
  request.set('response_type', 'code');
  request.set('client_id', ctx.client.client.client_id);
  request.set('redirect_uri', ctx.redirectUri);
  request.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  request.set('code_challenge_method', 'S256');
  request.set('state', state);
  const scope = scopeParameter(as, ctx.scopes, ctx.offlineAccess);
  if (scope !== undefined) request.set('scope', scope);
  request.set('resource', ctx.resource);
  const details = authorizationDetailsParameter(as, ctx.authorizationDetails);
  if (details !== undefined) request.set('authorization_details', details);
  if (ctx.dpop) request.set('dpop_jkt', ctx.dpop.thumbprint);
  const url = new URL(as.authorization_endpoint);
  // Signed first (RFC 9101), then pushed (RFC 9126): the pushed request is the request object.
  const signed = await signRequestIfWanted(as, ctx.client, request, ctx.signedRequestObject);
  const pushed = await pushIfWanted(ctx, signed ?? request);
  for (const [name, value] of pushed ?? signed ?? request) url.searchParams.set(name, value);

  // The issuer is recorded with the verifier and state (RFC 9207): this request's own record.
  const expected = { issuer: as.issuer, state, verifier };
  let answer: AxMCPAuthorizationCallback | URL | URLSearchParams;
  try {
    const context: AxMCPAuthorizationRequestContext = {
      state,
      redirectUri: ctx.redirectUri,
      issuer: as.issuer,
      endpoint: ctx.endpoint,
    };
    if (ctx.signal) context.signal = ctx.signal;
    answer = await ctx.onAuthCode(url, context);
  } catch (error) {
    if (ctx.signal?.aborted) throw error;
    throw new AxMCPOAuthError(
      'oauth_authorization_failed',
      'The authorization callback (onAuthCode) failed',
      {
        cause: safeCause(error),
      },
    );
  }
  const params = callbackParameters(answer);
  const iss = params.get('iss') ?? undefined;
  // RFC 9207 §2.4, compared as plain strings before anything else of the response is used.
  if (iss === undefined) {
    if (as.authorization_response_iss_parameter_supported === true) {
      throw new AxMCPOAuthError(
        'oauth_issuer_mismatch',
        'The authorization response has no iss, though the server promised one; refused',
      );
    }
  } else if (iss !== expected.issuer) {
    throw new AxMCPOAuthError(
      'oauth_issuer_mismatch',
      'The authorization response comes from another issuer; refused',
    );
  }
  if (params.get('state') !== expected.state) {
    throw new AxMCPOAuthError(
      'oauth_state_mismatch',
      'The authorization response state does not match; refused',
    );
  }
  let validated: URLSearchParams;
  try {
    validated = oauth.validateAuthResponse(as, ctx.client.client, params, expected.state);
  } catch (error) {
    throw refusalError('oauth_authorization_failed', 'The authorization was refused', error, ctx);
  }
  return withNonceRetry(ctx, 'authorization code', async () => {
    const options = requestOptions(ctx, true);
    options.additionalParameters = { resource: ctx.resource };
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      ctx.client.client,
      ctx.client.auth,
      validated,
      ctx.redirectUri,
      expected.verifier,
      options,
    );
    return oauth.processAuthorizationCodeResponse(as, ctx.client.client, response);
  });
}

function callbackParameters(answer: AxMCPAuthorizationCallback | URL | URLSearchParams): URLSearchParams {
  if (answer instanceof URL) return new URLSearchParams(answer.searchParams);
  if (answer instanceof URLSearchParams) return new URLSearchParams(answer);
  const params = new URLSearchParams();
  if (!answer || typeof answer !== 'object') {
    throw new AxMCPOAuthError('oauth_authorization_failed', 'onAuthCode returned nothing');
  }
  if (typeof answer.code === 'string') params.set('code', answer.code);
  if (typeof answer.state === 'string') params.set('state', answer.state);
  if (typeof answer.iss === 'string') params.set('iss', answer.iss);
  if (typeof answer.error === 'string') params.set('error', answer.error);
  if (!params.has('code') && !params.has('error')) {
    throw new AxMCPOAuthError(
      'oauth_authorization_failed',
      'onAuthCode returned neither a code nor an error',
    );
  }
  return params;
}
