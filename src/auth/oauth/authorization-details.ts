/**
 * Rich authorization requests (RFC 9396): what the client asks for in `authorization_details`
 * (checked once, at construction), and what the server says it granted (validated and copied
 * at the edge: bounded, plain JSON, without `__proto__`-like keys).
 */
import type * as oauth from 'oauth4webapi';
import { array, kindOf, object, refine, required, string } from '../../options/check.js';
import type { AxMCPJSONValue } from '../../protocol/messages.js';
import { AxMCPOAuthError } from './errors.js';

/**
 * One entry of `authorization_details` (RFC 9396 §2): a `type` the authorization server
 * knows, the common fields, and whatever else that type defines (JSON values).
 */
export interface AxMCPAuthorizationDetail {
  readonly type: string;
  readonly locations?: readonly string[];
  readonly actions?: readonly string[];
  readonly datatypes?: readonly string[];
  readonly identifier?: string;
  readonly privileges?: readonly string[];
  readonly [field: string]: AxMCPJSONValue | readonly string[] | undefined;
}

const NON_EMPTY = string({ nonEmpty: true });

/** The common fields (RFC 9396 §2.2); a type may define more (the object is open). */
const DETAIL_FIELDS = object(
  {
    type: required(NON_EMPTY),
    locations: array(NON_EMPTY),
    actions: array(NON_EMPTY),
    datatypes: array(NON_EMPTY),
    identifier: NON_EMPTY,
    privileges: array(NON_EMPTY),
  },
  { open: true, expected: 'an authorization detail { type, locations?, actions?, … }' },
);

/** The shape of one {@link AxMCPAuthorizationDetail}: the fields above, and JSON values only. */
const DETAIL = refine(DETAIL_FIELDS, (value, path, issues) => {
  if (!isPlainJSON(value, 0)) {
    issues.push({
      path,
      expected: 'JSON values only (no functions, class instances, cycles or __proto__ keys)',
      received: kindOf(value),
    });
  }
});

/** The shape of the `authorizationDetails` option. */
export const AUTHORIZATION_DETAILS = array(DETAIL, { minLength: 1 });

const MAX_DETAILS = 64;
const MAX_DEPTH = 8;
const MAX_BYTES = 64 * 1024;
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

function isPlainJSON(value: unknown, depth: number): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (depth > MAX_DEPTH || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.every((item) => isPlainJSON(item, depth + 1));
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  return Object.entries(value).every(([key, item]) => !UNSAFE_KEYS.has(key) && isPlainJSON(item, depth + 1));
}

/** The `authorization_details` parameter for `details`, checked against what the server lists. */
export function authorizationDetailsParameter(
  as: oauth.AuthorizationServer,
  details: readonly AxMCPAuthorizationDetail[] | undefined,
): string | undefined {
  if (details === undefined || details.length === 0) return undefined;
  checkAuthorizationDetailsTypes(as, details);
  return JSON.stringify(details);
}

/** Refuses, before anything is sent, a type the server does not list (when it lists them). */
export function checkAuthorizationDetailsTypes(
  as: oauth.AuthorizationServer,
  details: readonly AxMCPAuthorizationDetail[],
): void {
  // A list of strings, or absent: discovery keeps nothing else.
  const supported = as.authorization_details_types_supported as string[] | undefined;
  if (supported !== undefined) {
    const unknown = details.find((detail) => !supported.includes(detail.type));
    if (unknown) {
      throw new AxMCPOAuthError(
        'oauth_unsupported',
        `The authorization server does not accept authorization_details of type '${printable(unknown.type)}' ` +
          `(it lists ${supported.slice(0, 8).map(printable).join(', ') || 'none'}); change oauth.authorizationDetails`,
      );
    }
  }
}

/**
 * What the server granted, from a token or introspection response: a fresh copy of plain
 * JSON, or `undefined` when it sent nothing usable (not an array of objects with a `type`,
 * too many, too deep or too large).
 */
export function grantedAuthorizationDetails(value: unknown): AxMCPAuthorizationDetail[] | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_DETAILS) return undefined;
  const budget = { bytes: MAX_BYTES };
  const out: AxMCPAuthorizationDetail[] = [];
  for (const item of value) {
    if (!item || typeof item !== 'object' || Array.isArray(item)) return undefined;
    const type = (item as Record<string, unknown>).type;
    if (typeof type !== 'string' || type === '') return undefined;
    const copy = copyJSON(item, 0, budget);
    if (copy === undefined) return undefined;
    out.push(copy as unknown as AxMCPAuthorizationDetail);
  }
  return out;
}

/** A copy of server JSON: plain objects and arrays, unsafe keys dropped; `undefined` past the bounds. */
function copyJSON(value: unknown, depth: number, budget: { bytes: number }): AxMCPJSONValue | undefined {
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string') {
    budget.bytes -= value.length + 2;
    return budget.bytes < 0 ? undefined : value;
  }
  if (depth >= MAX_DEPTH || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    const items: AxMCPJSONValue[] = [];
    for (const item of value) {
      const copy = copyJSON(item, depth + 1, budget);
      if (copy === undefined) return undefined;
      items.push(copy);
    }
    return items;
  }
  const out: { [key: string]: AxMCPJSONValue } = {};
  for (const [key, item] of Object.entries(value)) {
    if (UNSAFE_KEYS.has(key)) continue;
    budget.bytes -= key.length + 4;
    const copy = copyJSON(item, depth + 1, budget);
    if (copy === undefined || budget.bytes < 0) return undefined;
    out[key] = copy;
  }
  return out;
}

/** A server-chosen string fit for a message: short, printable ASCII. */
function printable(value: string): string {
  return value.replace(/[^\x20-\x7e]/g, '?').slice(0, 64);
}
