/**
 * Token revocation (RFC 7009) when a user signs out: the refresh token first (on most servers
 * that ends the grant and its access tokens), then the access token.
 */
import * as oauth from 'oauth4webapi';
import type { ResolvedClient } from './client-identity.js';
import type { OAuthHTTP } from './http.js';

/** Revokes `tokens` at `as`; does nothing when the server publishes no `revocation_endpoint`. */
export async function revokeTokens(
  http: OAuthHTTP,
  as: oauth.AuthorizationServer,
  client: ResolvedClient,
  tokens: { accessToken: string; refreshToken?: string | undefined },
  signal?: AbortSignal,
): Promise<void> {
  if (as.revocation_endpoint === undefined) return;
  const pairs: [string, string][] = [];
  if (tokens.refreshToken !== undefined) pairs.push([tokens.refreshToken, 'refresh_token']);
  pairs.push([tokens.accessToken, 'access_token']);
  for (const [token, hint] of pairs) {
    const options: oauth.RevocationRequestOptions = {
      [oauth.customFetch]: http.customFetch,
      [oauth.allowInsecureRequests]: true,
      additionalParameters: { token_type_hint: hint },
    };
    if (signal) options.signal = signal;
    const response = await oauth.revocationRequest(as, client.client, client.auth, token, options);
    await oauth.processRevocationResponse(response);
  }
}
