/**
 * Token introspection (RFC 7662): asks the authorization server whether a token is active and
 * what it carries. Answers are cached per token, never longer than the token lives (its `exp`,
 * or the expiry the token response gave) nor than a small cap, and for a bounded number of
 * tokens. Tokens are keyed by their SHA-256, so the cache holds no token.
 */
import * as oauth from 'oauth4webapi';
import { utf8Bytes } from '../encoding.js';
import { type AxMCPAuthorizationDetail, grantedAuthorizationDetails } from './authorization-details.js';
import { oauthErrorContext, type ResolvedClient } from './client-identity.js';
import { AxMCPOAuthError, safeCause } from './errors.js';
import type { OAuthHTTP } from './http.js';
import { splitScopes } from './www-authenticate.js';

/** What the authorization server says about a token (RFC 7662 §2.2), typed and validated. */
export interface AxMCPTokenIntrospection {
  /** Whether the token is active: issued by this server, not expired, not revoked. The rest is absent otherwise. */
  active: boolean;
  /** The scopes it carries. */
  scopes?: string[];
  /** The RFC 9396 authorization details it carries. */
  authorizationDetails?: AxMCPAuthorizationDetail[];
  clientId?: string;
  /** The resource owner (`sub`). */
  subject?: string;
  username?: string;
  /** Whom it is for (`aud`). */
  audience?: string[];
  issuer?: string;
  /** `Bearer`, `DPoP`, … */
  tokenType?: string;
  /** When it expires, was issued, becomes valid (ms since the epoch). */
  expiresAt?: number;
  issuedAt?: number;
  notBefore?: number;
  /** RFC 8705: the SHA-256 thumbprint of the certificate it is bound to (`cnf.x5t#S256`). */
  certificateThumbprint?: string;
  /** RFC 9449: the thumbprint of the DPoP key it is bound to (`cnf.jkt`). */
  dpopThumbprint?: string;
  /** When the server gave this answer (ms since the epoch); a cached answer keeps its time. */
  checkedAt: number;
}

/** Asks `as` about `token`, authenticated as `client`. */
export async function introspectToken(
  http: OAuthHTTP,
  as: oauth.AuthorizationServer,
  client: ResolvedClient,
  token: string,
  signal?: AbortSignal,
): Promise<AxMCPTokenIntrospection> {
  const aliased = client.client.use_mtls_endpoint_aliases === true;
  if (
    as.introspection_endpoint === undefined &&
    !(aliased && as.mtls_endpoint_aliases?.introspection_endpoint !== undefined)
  ) {
    throw new AxMCPOAuthError(
      'oauth_unsupported',
      'The authorization server offers no token introspection (no introspection_endpoint in its metadata)',
    );
  }
  const methods = as.introspection_endpoint_auth_methods_supported;
  if (methods !== undefined && !methods.includes(client.method)) {
    throw new AxMCPOAuthError(
      'oauth_unsupported',
      `The introspection endpoint does not accept ${client.method === 'none' ? 'public clients' : client.method} ` +
        `(it lists ${methods.slice(0, 8).join(', ') || 'none'}): give a pre-registered client (oauth.client) ` +
        'a clientSecret, a privateKey, or a TLS client certificate, as the server accepts',
    );
  }
  let answer: oauth.IntrospectionResponse;
  try {
    const options: oauth.IntrospectionRequestOptions = {
      [oauth.customFetch]: http.customFetch,
      [oauth.allowInsecureRequests]: true,
      additionalParameters: { token_type_hint: 'access_token' },
    };
    if (signal) options.signal = signal;
    const response = await oauth.introspectionRequest(as, client.client, client.auth, token, options);
    answer = await oauth.processIntrospectionResponse(as, client.client, response);
  } catch (error) {
    if (signal?.aborted || error instanceof AxMCPOAuthError) throw error;
    const context = oauthErrorContext(error);
    const detail = context.oauthError ? ` (${context.oauthError})` : '';
    throw new AxMCPOAuthError('oauth_token_failed', `The introspection request failed${detail}`, {
      cause: safeCause(error),
      ...context,
    });
  }
  return toIntrospection(answer);
}

/** The typed answer: only fields of the right type, copied. */
function toIntrospection(answer: oauth.IntrospectionResponse): AxMCPTokenIntrospection {
  const out: AxMCPTokenIntrospection = { active: answer.active === true, checkedAt: Date.now() };
  if (!out.active) return out;
  const text = (value: unknown) => (typeof value === 'string' && value.length <= 2048 ? value : undefined);
  const time = (value: unknown) =>
    typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value * 1000 : undefined;
  const set = <K extends keyof AxMCPTokenIntrospection>(
    key: K,
    value: AxMCPTokenIntrospection[K] | undefined,
  ) => {
    if (value !== undefined) out[key] = value;
  };
  if (typeof answer.scope === 'string') out.scopes = splitScopes(answer.scope);
  set('authorizationDetails', grantedAuthorizationDetails(answer.authorization_details));
  set('clientId', text(answer.client_id));
  set('subject', text(answer.sub));
  set('username', text(answer.username));
  set('issuer', text(answer.iss));
  set('tokenType', text(answer.token_type));
  const audience = typeof answer.aud === 'string' ? [answer.aud] : answer.aud;
  if (Array.isArray(audience)) {
    const list = audience.filter((item): item is string => typeof item === 'string').slice(0, 64);
    if (list.length > 0) out.audience = list;
  }
  set('expiresAt', time(answer.exp));
  set('issuedAt', time(answer.iat));
  set('notBefore', time(answer.nbf));
  const cnf = answer.cnf;
  if (cnf && typeof cnf === 'object' && !Array.isArray(cnf)) {
    set('certificateThumbprint', text(cnf['x5t#S256']));
    set('dpopThumbprint', text(cnf.jkt));
  }
  return out;
}

/** Bounded, per token; see the module comment. */
export class IntrospectionCache {
  readonly #entries = new Map<string, { answer: AxMCPTokenIntrospection; until: number }>();
  readonly #maxAgeMs: number;
  readonly #maxEntries: number;

  constructor(maxAgeMs: number, maxEntries = 100) {
    this.#maxAgeMs = maxAgeMs;
    this.#maxEntries = maxEntries;
  }

  async get(token: string): Promise<AxMCPTokenIntrospection | undefined> {
    if (this.#maxAgeMs <= 0 || this.#entries.size === 0) return undefined;
    const key = await keyOf(token);
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.until <= Date.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return structuredClone(entry.answer);
  }

  /** Keeps `answer` until the earliest of: the cap, its `exp`, `tokenExpiresAt`. */
  async set(
    token: string,
    answer: AxMCPTokenIntrospection,
    tokenExpiresAt: number | undefined,
  ): Promise<void> {
    if (this.#maxAgeMs <= 0) return;
    let until = answer.checkedAt + this.#maxAgeMs;
    if (answer.expiresAt !== undefined) until = Math.min(until, answer.expiresAt);
    if (tokenExpiresAt !== undefined) until = Math.min(until, tokenExpiresAt);
    if (until <= Date.now()) return;
    const key = await keyOf(token);
    this.#entries.delete(key);
    this.#entries.set(key, { answer: structuredClone(answer), until });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }

  async delete(token: string): Promise<void> {
    if (this.#entries.size > 0) this.#entries.delete(await keyOf(token));
  }
}

async function keyOf(token: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', utf8Bytes(token)));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return hex;
}
