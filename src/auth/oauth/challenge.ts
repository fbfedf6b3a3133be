/**
 * Answering the transport's challenges: a DPoP nonce challenge is sent again with the new
 * nonce, a 401 discovers again and refreshes or authorizes, a 403 `insufficient_scope`
 * steps up to the union of scopes — one flow per endpoint at a time, with a bounded number
 * of attempts per scope set.
 */
import type { AxMCPAuthenticationChallenge } from '../authentication.js';
import { authorize, discover, grantTokens, initialScopes, type OAuthContext } from './authorization.js';
import { canonicalResource } from './discovery.js';
import { type EndpointState, runAsFlow, spendAttempt } from './endpoint-state.js';
import { AxMCPOAuthError } from './errors.js';
import { refresh } from './refresh.js';
import {
  type AxMCPAuthChallenge,
  findChallenge,
  parseWWWAuthenticate,
  splitScopes,
} from './www-authenticate.js';

/** `true` when the request should be sent again (with the credentials as they are now). */
export async function answerChallenge(
  ctx: OAuthContext,
  challenge: AxMCPAuthenticationChallenge,
): Promise<boolean> {
  const state = await ctx.states.get(challenge.url);
  const parsed = parseWWWAuthenticate(challenge.headers.get('www-authenticate'));
  if (findChallenge(parsed, 'dpop')) state.resourceWantsDPoP = true;
  // A DPoP nonce challenge: send again with the nonce that came with it.
  const dpopChallenge = findChallenge(parsed, 'dpop');
  if (dpopChallenge?.params.get('error') === 'use_dpop_nonce') {
    if (ctx.dpop) await ctx.dpop;
    const fresh = state.freshNonce;
    state.freshNonce = false;
    return fresh;
  }
  // Credentials changed since this request was sent (another request already authorized).
  const sent = challenge.signal ? ctx.sentWith.get(challenge.signal) : undefined;
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
    return run(ctx, state, () => authorize(ctx, state, bearer, scopes, challenge.signal), scopes);
  }
  if (challenge.status !== 401) return false;
  return run(ctx, state, () => recover(ctx, state, bearer, challenge.signal), undefined);
}

/** Runs one authorization at a time per endpoint; `false` once the attempts for a scope set are spent. */
async function run(
  ctx: OAuthContext,
  state: EndpointState,
  flow: () => Promise<void>,
  scopes: readonly string[] | undefined,
): Promise<boolean> {
  if (scopes !== undefined && spendAttempt(state, scopes, maxAttempts(ctx)) !== undefined) return false;
  await runAsFlow(state, flow());
  return true;
}

/** After a 401: discover again (the server may have moved), then refresh or authorize. */
async function recover(
  ctx: OAuthContext,
  state: EndpointState,
  challenge: AxMCPAuthChallenge | undefined,
  signal?: AbortSignal,
): Promise<void> {
  await discover(ctx, state, challenge, signal);
  const tokens = state.record.tokens;
  const server = state.server!;
  if (tokens && tokens.issuer !== server.metadata.issuer) {
    // The resource moved to another authorization server: its tokens are worthless here.
    await ctx.states.setTokens(state, undefined);
  } else if (tokens?.refreshToken !== undefined && (await refresh(ctx, state, signal))) {
    return;
  }
  const scopes = initialScopes(ctx, state, challenge);
  const made = spendAttempt(state, scopes, maxAttempts(ctx));
  if (made !== undefined) {
    throw new AxMCPOAuthError(
      'oauth_authorization_failed',
      `Gave up after ${made} authorizations that the server did not accept`,
      { endpoint: canonicalResource(state.endpoint) },
    );
  }
  await grantTokens(ctx, state, scopes, signal);
}

function maxAttempts(ctx: OAuthContext): number {
  return ctx.options.maxAuthorizationAttempts ?? 3;
}

function union(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])];
}
