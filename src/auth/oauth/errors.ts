/** The typed error of the OAuth client. Messages never carry tokens, secrets or codes. */
import { AxMCPError, type AxMCPErrorCode, type AxMCPErrorContext } from '../../protocol/errors.js';

declare module '../../protocol/errors.js' {
  // The OAuth client's codes (see AxMCPOAuthError), merged into the one documented interface.
  interface AxMCPErrorCodes {
    oauth_discovery_failed: true;
    oauth_resource_mismatch: true;
    oauth_issuer_mismatch: true;
    oauth_unsupported: true;
    oauth_registration_failed: true;
    oauth_interaction_required: true;
    oauth_authorization_failed: true;
    oauth_state_mismatch: true;
    oauth_token_failed: true;
  }
}

/** The stable codes an {@link AxMCPOAuthError} carries. */
export type AxMCPOAuthErrorCode = Extract<AxMCPErrorCode, `oauth_${string}`>;

/**
 * An OAuth failure. `code` says what went wrong:
 * - `oauth_discovery_failed`: no usable protected-resource or authorization-server metadata;
 * - `oauth_resource_mismatch`: the protected resource metadata names another resource;
 * - `oauth_issuer_mismatch`: metadata `issuer`, or the authorization response's `iss`, is not
 *   the expected issuer (or `iss` is missing where the server promised it);
 * - `oauth_unsupported`: the authorization server lacks something required (PKCE `S256`, a
 *   grant, a client authentication method this client can use);
 * - `oauth_registration_failed`: no client identity (pre-registered, metadata document, dynamic);
 * - `oauth_interaction_required`: a user must authorize, and no `onAuthCode` was given;
 * - `oauth_authorization_failed`: the authorization response carried an error, or the host
 *   callback failed;
 * - `oauth_state_mismatch`: the authorization response's `state` is not the one sent;
 * - `oauth_token_failed`: the token endpoint refused (an expired refresh token included).
 *
 * `oauthError` is the server's OAuth error code (`invalid_grant`, `invalid_client`, …), when
 * there is one. Server-supplied descriptions are kept out of the message.
 */
export class AxMCPOAuthError extends AxMCPError {
  declare readonly code: AxMCPOAuthErrorCode;
  /** The OAuth `error` code from the server, if any (a short ASCII token, never a secret). */
  readonly oauthError?: string;
  /** The HTTP status of the response that failed, if any. */
  readonly status?: number;

  constructor(
    code: AxMCPOAuthErrorCode,
    message: string,
    context: AxMCPErrorContext & { oauthError?: string; status?: number } = {},
  ) {
    super(code, message, context);
    if (context.oauthError !== undefined && /^[\x20-\x7e]{1,64}$/.test(context.oauthError)) {
      this.oauthError = context.oauthError;
    }
    if (context.status !== undefined) this.status = context.status;
  }
}

/**
 * A cause safe to attach: the name and message of `error` only. oauth4webapi errors keep
 * the parsed response body (tokens included) in their own `cause`; that never travels on.
 */
export function safeCause(error: unknown): Error | undefined {
  if (error instanceof AxMCPError) return error;
  if (!(error instanceof Error)) return undefined;
  const copy = new Error(error.message);
  copy.name = error.name;
  return copy;
}
