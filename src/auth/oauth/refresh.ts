/**
 * Keeping an endpoint's tokens fresh: a refresh shortly before expiry (at most half the
 * token's lifetime), or, for the grants without a user, simply a new grant.
 */

import {
  clientFor,
  dpopKey,
  grantTokens,
  type OAuthContext,
  serverOfStoredTokens,
  useDPoP,
  warnFailed,
} from './authorization.js';
import { canonicalResource } from './discovery.js';
import { type EndpointState, runAsFlow } from './endpoint-state.js';
import { AxMCPOAuthError } from './errors.js';
import { type GrantContext, refreshGrant, toStoredTokens } from './grants.js';
import type { AxMCPStoredTokens } from './token-store.js';

/** Refreshes with the refresh token; `false` (tokens dropped) when the server refuses. */
export async function refresh(
  ctx: OAuthContext,
  state: EndpointState,
  signal?: AbortSignal,
): Promise<boolean> {
  const tokens = state.record.tokens;
  if (tokens?.refreshToken === undefined) return false;
  try {
    const server = await serverOfStoredTokens(ctx, state, tokens.issuer, signal);
    if (server.metadata.issuer !== tokens.issuer) {
      await ctx.states.setTokens(state, undefined);
      return false;
    }
    const client = await clientFor(ctx, state, signal, true);
    const grant: GrantContext = {
      http: ctx.http,
      as: state.server!.metadata,
      client,
      resource: tokens.resource,
      scopes: tokens.requestedScopes,
      endpoint: canonicalResource(state.endpoint),
    };
    if (tokens.tokenType === 'DPoP' || (await useDPoP(ctx, state))) grant.dpop = await dpopKey(ctx);
    if (signal) grant.signal = signal;
    const response = await refreshGrant(grant, tokens.refreshToken);
    await ctx.states.setTokens(state, toStoredTokens(response, grant, tokens));
    return true;
  } catch (error) {
    if (signal?.aborted) throw error;
    warnFailed(ctx, 'Refreshing the token', state, error);
    if (error instanceof AxMCPOAuthError && error.code === 'oauth_token_failed') {
      await ctx.states.setTokens(state, undefined);
    }
    return false;
  }
}

/** Before a request: refresh a token about to expire, or get a new one without a user. */
export async function renew(ctx: OAuthContext, state: EndpointState, signal?: AbortSignal): Promise<void> {
  const run = async () => {
    const tokens = state.record.tokens;
    if (!tokens || !expiresSoon(ctx, tokens)) return;
    if (tokens.refreshToken !== undefined && (await refresh(ctx, state, signal))) return;
    if (ctx.grant !== 'authorization_code' && state.server) {
      try {
        await grantTokens(ctx, state, tokens.requestedScopes, signal);
      } catch (error) {
        if (signal?.aborted) throw error;
        warnFailed(ctx, 'Renewing the token', state, error);
      }
    }
  };
  if (state.inflight) {
    await state.inflight.catch(() => {});
    return;
  }
  await runAsFlow(state, run());
}

/** Within the refresh window: `refreshBeforeExpiryMs`, but never more than half the token's lifetime. */
export function expiresSoon(ctx: OAuthContext, tokens: AxMCPStoredTokens): boolean {
  if (tokens.expiresAt === undefined) return false;
  let window = ctx.options.refreshBeforeExpiryMs ?? 60_000;
  if (tokens.obtainedAt !== undefined) window = Math.min(window, (tokens.expiresAt - tokens.obtainedAt) / 2);
  return tokens.expiresAt - Date.now() <= window;
}

export function expired(tokens: AxMCPStoredTokens): boolean {
  return tokens.expiresAt !== undefined && tokens.expiresAt <= Date.now();
}
