/**
 * Where OAuth state is kept between requests and processes: tokens and client
 * registrations, one record per MCP endpoint. Memory by default; `ax-mcp/node` has a
 * file-backed store.
 */

import { instance, number, object } from '../../options/check.js';
import { assertMCPOptions } from '../../protocol/errors.js';
import { type AxMCPAuthorizationDetail, grantedAuthorizationDetails } from './authorization-details.js';

/** Tokens for one endpoint. Secrets: keep them out of logs and out of program state. */
export interface AxMCPStoredTokens {
  accessToken: string;
  /** `Bearer`, or `DPoP` for a sender-constrained token. */
  tokenType: 'Bearer' | 'DPoP';
  /** When the access token expires (ms since the epoch), if the server said. */
  expiresAt?: number;
  /** When it was issued (ms since the epoch). */
  obtainedAt?: number;
  refreshToken?: string;
  /** The scopes the server granted (its `scope`, else those requested). */
  scopes: string[];
  /** The scopes last requested, the base of a step-up union. */
  requestedScopes: string[];
  /** The issuer that issued them; tokens from another issuer are never sent. */
  issuer: string;
  /** The RFC 8707 resource they were issued for. */
  resource: string;
  /** The JWK thumbprint of the DPoP key a `DPoP` token is bound to. */
  dpopJkt?: string;
  /** The RFC 9396 authorization details the server granted (its `authorization_details`), if any. */
  authorizationDetails?: AxMCPAuthorizationDetail[];
}

/** A client identity obtained from an authorization server, bound to its issuer. */
export interface AxMCPStoredClient {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  /** The token endpoint authentication method the server assigned or accepted. */
  tokenEndpointAuthMethod?: string;
  /** `dcr` (dynamic registration); pre-registered and metadata-document clients are not stored. */
  source: 'dcr';
}

/** Everything kept for one endpoint. */
export interface AxMCPOAuthRecord {
  tokens?: AxMCPStoredTokens;
  /** Dynamically registered clients, one per issuer (never reused with another issuer). */
  clients?: AxMCPStoredClient[];
}

/**
 * Keeps {@link AxMCPOAuthRecord}s keyed by endpoint (the endpoint URL without fragment),
 * so two servers, even on one origin, never share tokens. Implementations return copies.
 */
export interface AxMCPTokenStore {
  get(endpointKey: string): AxMCPOAuthRecord | undefined | Promise<AxMCPOAuthRecord | undefined>;
  set(endpointKey: string, record: AxMCPOAuthRecord): void | Promise<void>;
  delete(endpointKey: string): void | Promise<void>;
}

/** The shape of an {@link AxMCPTokenStore}: `get`, `set` and `delete` functions. */
export const TOKEN_STORE = instance('a token store { get, set, delete }', (value) => {
  if (typeof value !== 'object' || value === null) return false;
  const store = value as Record<string, unknown>;
  return (
    typeof store.get === 'function' && typeof store.set === 'function' && typeof store.delete === 'function'
  );
});

/** Options of {@link AxMCPMemoryTokenStore}. */
export interface AxMCPMemoryTokenStoreOptions {
  /** The most endpoints kept; the least recently written go first (default 1000). */
  maxEntries?: number;
}

/** The shape of {@link AxMCPMemoryTokenStoreOptions}. */
const MEMORY_TOKEN_STORE_OPTIONS = object(
  { maxEntries: number({ integer: true, min: 1 }) },
  { aliases: { max: 'maxEntries', size: 'maxEntries', limit: 'maxEntries' } },
);

/** The default store: process memory, bounded to the most recent `maxEntries` endpoints. */
export class AxMCPMemoryTokenStore implements AxMCPTokenStore {
  readonly #entries = new Map<string, AxMCPOAuthRecord>();
  readonly #maxEntries: number;

  constructor(options: AxMCPMemoryTokenStoreOptions = {}) {
    assertMCPOptions(MEMORY_TOKEN_STORE_OPTIONS, options, 'AxMCPMemoryTokenStore options');
    this.#maxEntries = options.maxEntries ?? 1000;
  }

  get(endpointKey: string): AxMCPOAuthRecord | undefined {
    const record = this.#entries.get(endpointKey);
    return record ? structuredClone(record) : undefined;
  }

  set(endpointKey: string, record: AxMCPOAuthRecord): void {
    this.#entries.delete(endpointKey);
    this.#entries.set(endpointKey, structuredClone(record));
    if (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  delete(endpointKey: string): void {
    this.#entries.delete(endpointKey);
  }

  /** Redacted: a store holds secrets. */
  toJSON(): Record<string, unknown> {
    return { kind: 'memory-token-store', endpoints: this.#entries.size };
  }
}

/** Checks the shape of a record read from storage; `undefined` when it is not one. */
export function parseOAuthRecord(value: unknown): AxMCPOAuthRecord | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const raw = value as Record<string, unknown>;
  const record: AxMCPOAuthRecord = {};
  const tokens = raw.tokens as Record<string, unknown> | undefined;
  if (
    tokens &&
    typeof tokens === 'object' &&
    typeof tokens.accessToken === 'string' &&
    (tokens.tokenType === 'Bearer' || tokens.tokenType === 'DPoP') &&
    typeof tokens.issuer === 'string' &&
    typeof tokens.resource === 'string'
  ) {
    const parsed: AxMCPStoredTokens = {
      accessToken: tokens.accessToken,
      tokenType: tokens.tokenType,
      scopes: strings(tokens.scopes),
      requestedScopes: strings(tokens.requestedScopes),
      issuer: tokens.issuer,
      resource: tokens.resource,
    };
    if (typeof tokens.expiresAt === 'number') parsed.expiresAt = tokens.expiresAt;
    if (typeof tokens.obtainedAt === 'number') parsed.obtainedAt = tokens.obtainedAt;
    if (typeof tokens.refreshToken === 'string') parsed.refreshToken = tokens.refreshToken;
    if (typeof tokens.dpopJkt === 'string') parsed.dpopJkt = tokens.dpopJkt;
    const details = grantedAuthorizationDetails(tokens.authorizationDetails);
    if (details !== undefined) parsed.authorizationDetails = details;
    record.tokens = parsed;
  }
  if (Array.isArray(raw.clients)) {
    const clients: AxMCPStoredClient[] = [];
    for (const item of raw.clients) {
      if (!item || typeof item !== 'object') continue;
      const client = item as Record<string, unknown>;
      if (typeof client.issuer !== 'string' || typeof client.clientId !== 'string') continue;
      const parsed: AxMCPStoredClient = { issuer: client.issuer, clientId: client.clientId, source: 'dcr' };
      if (typeof client.clientSecret === 'string') parsed.clientSecret = client.clientSecret;
      if (typeof client.tokenEndpointAuthMethod === 'string') {
        parsed.tokenEndpointAuthMethod = client.tokenEndpointAuthMethod;
      }
      clients.push(parsed);
    }
    if (clients.length > 0) record.clients = clients;
  }
  return record;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}
