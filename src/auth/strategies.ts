/**
 * The simple credential strategies: bearer token, HTTP Basic and API key.
 * Each keeps its secret in a closure; `toJSON()` and `toString()` show only the kind.
 */
import { optionsError } from '../net/options-error.js';
import { anyOf, func, instance, object, required, string } from '../options/check.js';
import { AxMCPError, assertMCPOptions } from '../protocol/errors.js';
import type {
  AxMCPAuthentication,
  AxMCPAuthenticationRequest,
  AxMCPAuthenticationResult,
} from './authentication.js';
import {
  assertHeaderValue,
  assertToken,
  base64,
  isHeaderName,
  isHeaderValue,
  utf8Bytes,
} from './encoding.js';

/** A secret given directly, or fetched per request (for rotating tokens). */
export type AxMCPSecret = string | ((request: AxMCPAuthenticationRequest) => string | Promise<string>);

/** A built-in strategy: an {@link AxMCPAuthentication} that redacts itself when printed or serialized. */
export interface AxMCPRedactedAuthentication extends AxMCPAuthentication {
  /** Which strategy this is, for logs. */
  readonly kind: string;
  readonly sensitiveHeaders: readonly string[];
  /** A description without secrets. */
  toJSON(): Record<string, unknown>;
  toString(): string;
}

/** Builds a frozen strategy whose JSON and string forms show `description` only. */
export function redactedAuthentication(
  kind: string,
  description: Record<string, unknown>,
  sensitiveHeaders: readonly string[],
  authenticate: (request: AxMCPAuthenticationRequest) => Promise<AxMCPAuthenticationResult>,
): AxMCPRedactedAuthentication {
  const shown = Object.freeze({ kind, ...description });
  return Object.freeze({
    kind,
    sensitiveHeaders: Object.freeze(sensitiveHeaders.map((name) => name.toLowerCase())),
    authenticate,
    toJSON: () => ({ ...shown }),
    toString: () => `[AxMCPAuthentication ${kind}]`,
  });
}

async function reveal(secret: AxMCPSecret, request: AxMCPAuthenticationRequest): Promise<string> {
  return typeof secret === 'function' ? secret(request) : secret;
}

function assertSecretSource(secret: AxMCPSecret, what: string): void {
  if (typeof secret !== 'string' && typeof secret !== 'function') {
    throw new AxMCPError('invalid_argument', `${what} must be a string or a function returning one`);
  }
}

/**
 * `Authorization: Bearer <token>`. The token may be a function, called on every request
 * (it gets the request, so it can honour `request.signal`).
 *
 * @example
 * axMCPBearerAuthentication(process.env.MCP_TOKEN!)
 * axMCPBearerAuthentication(async () => (await tokens.current()).accessToken)
 */
export function axMCPBearerAuthentication(token: AxMCPSecret): AxMCPRedactedAuthentication {
  assertSecretSource(token, 'The bearer token');
  if (typeof token === 'string') assertToken(token, 'The bearer token');
  const fixed = typeof token === 'string' ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
  return redactedAuthentication('bearer', { token: '[redacted]' }, ['authorization'], async (request) => {
    if (fixed !== undefined) return { headers: { ...fixed.headers } };
    const value = await reveal(token, request);
    assertToken(value, 'The bearer token');
    return { headers: { Authorization: `Bearer ${value}` } };
  });
}

/** Credentials of {@link axMCPBasicAuthentication}. */
export interface AxMCPBasicCredentials {
  /** Any Unicode text without `:` (RFC 7617). */
  username: string;
  /** Any Unicode text. */
  password: string;
}

/** The shape of {@link AxMCPBasicCredentials}. */
const BASIC_CREDENTIALS = object(
  {
    username: required(
      instance('a string without ":"', (value) => typeof value === 'string' && !value.includes(':')),
    ),
    password: required(string()),
  },
  { expected: 'an object { username, password }', aliases: { user: 'username', pass: 'password' } },
);

/**
 * HTTP Basic: `Authorization: Basic base64(utf8(username ":" password))` (RFC 7617 with
 * `charset=UTF-8`), safe for any Unicode.
 */
export function axMCPBasicAuthentication(credentials: AxMCPBasicCredentials): AxMCPRedactedAuthentication {
  assertMCPOptions(BASIC_CREDENTIALS, credentials, 'axMCPBasicAuthentication credentials');
  const { username, password } = credentials;
  const header = `Basic ${base64(utf8Bytes(`${username}:${password}`))}`;
  return redactedAuthentication(
    'basic',
    { username: '[redacted]', password: '[redacted]' },
    ['authorization'],
    async () => ({
      headers: { Authorization: header },
    }),
  );
}

/** Options of {@link axMCPAPIKeyAuthentication}: the key goes in a header (default) or a query parameter. */
export interface AxMCPAPIKeyOptions {
  /** The key, or a function called on every request. */
  key: AxMCPSecret;
  /** The header that carries the key (default `X-API-Key`). */
  header?: string;
  /** Send the key as this query parameter instead of a header. */
  query?: string;
}

/** The shape of {@link AxMCPAPIKeyOptions}. */
const API_KEY_OPTIONS = object(
  {
    key: required(
      anyOf(
        instance('a non-empty string without control characters or surrounding spaces', isHeaderValue),
        func('a function (request) => the key'),
      ),
    ),
    header: instance('an HTTP header name', isHeaderName),
    query: string({ nonEmpty: true }),
  },
  {
    expected: 'an object { key, header? } or { key, query }',
    aliases: { apiKey: 'key', value: 'key', headerName: 'header', queryParameter: 'query', param: 'query' },
  },
);

/**
 * An API key in a header (`X-API-Key` unless `header` says otherwise) or, with `query`,
 * in a query parameter. Prefer the header: URLs end up in logs.
 */
export function axMCPAPIKeyAuthentication(options: AxMCPAPIKeyOptions): AxMCPRedactedAuthentication {
  assertMCPOptions(API_KEY_OPTIONS, options, 'axMCPAPIKeyAuthentication options');
  const { key, header, query } = options;
  if (header !== undefined && query !== undefined) {
    throw optionsError('axMCPAPIKeyAuthentication options', {
      path: 'query',
      expected: 'no query alongside header (the key goes in a header or a query parameter, not both)',
      received: 'both header and query',
    });
  }
  const headerName = header ?? 'X-API-Key';
  const check = (value: string) => assertHeaderValue(value, 'The API key');
  const description =
    query === undefined ? { header: headerName, key: '[redacted]' } : { query, key: '[redacted]' };
  const sensitive = query === undefined ? [headerName] : [];
  return redactedAuthentication('api-key', description, sensitive, async (request) => {
    const value = await reveal(key, request);
    check(value);
    return query === undefined ? { headers: { [headerName]: value } } : { query: { [query]: value } };
  });
}
