/**
 * Plain-JSON checks shared by the event runtime: event data, outputs and metadata must be
 * plain, acyclic, finite JSON so that any store can persist them and no prototype can leak.
 */

import { AxEventInputError } from './errors.js';

/** A JSON value. */
export type AxJsonValue = null | boolean | number | string | AxJsonValue[] | { [key: string]: AxJsonValue };

/** Keys that must never be used as plain-object keys or path segments. */
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** True for `__proto__`, `constructor` and `prototype`. */
export function isUnsafeKey(key: string): boolean {
  return UNSAFE_KEYS.has(key);
}

/** The default maximum nesting depth of event data. */
export const DEFAULT_MAX_JSON_DEPTH = 64;

const encoder = new TextEncoder();

/** The UTF-8 size of a string, in bytes. */
export function byteLength(text: string): number {
  // Fast path: ASCII strings are as long as their UTF-8 encoding.
  let ascii = true;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0x7f) {
      ascii = false;
      break;
    }
  }
  return ascii ? text.length : encoder.encode(text).byteLength;
}

/**
 * Check that `value` is plain, acyclic, finite JSON (plain objects with `Object.prototype`
 * or `null` prototypes, arrays, strings, finite numbers, booleans, `null`) no deeper than
 * `maxDepth`. Throws {@link AxEventInputError} (`invalid_event`) naming the offending path.
 */
export function assertPlainJson(value: unknown, what: string, maxDepth = DEFAULT_MAX_JSON_DEPTH): void {
  const stack = new Set<object>();
  const visit = (v: unknown, path: string, depth: number): void => {
    if (v === null || typeof v === 'string' || typeof v === 'boolean') return;
    if (typeof v === 'number') {
      if (!Number.isFinite(v))
        throw new AxEventInputError('invalid_event', `${what}${path} is not a finite number`);
      return;
    }
    if (typeof v !== 'object') {
      throw new AxEventInputError('invalid_event', `${what}${path} is a ${typeof v}, which is not JSON`);
    }
    if (depth >= maxDepth)
      throw new AxEventInputError('invalid_event', `${what} is nested deeper than ${maxDepth}`);
    if (stack.has(v)) throw new AxEventInputError('invalid_event', `${what}${path} is cyclic`);
    stack.add(v);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) visit(v[i], `${path}[${i}]`, depth + 1);
    } else {
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) {
        throw new AxEventInputError('invalid_event', `${what}${path} is not a plain object`);
      }
      if (Object.getOwnPropertySymbols(v).length > 0) {
        throw new AxEventInputError('invalid_event', `${what}${path} has symbol keys`);
      }
      for (const key of Object.keys(v)) {
        const desc = Object.getOwnPropertyDescriptor(v, key);
        if (desc && (desc.get || desc.set)) {
          throw new AxEventInputError('invalid_event', `${what}${path}.${key} is an accessor, not data`);
        }
        visit((v as Record<string, unknown>)[key], `${path}.${key}`, depth + 1);
      }
    }
    stack.delete(v);
  };
  visit(value, '', 0);
}

/** Deep-freeze a JSON value in place and return it. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/**
 * Turn a value a target returned into JSON that a store can persist: `undefined` becomes
 * `null`; anything `JSON.stringify` cannot represent (cycles, BigInt) throws.
 * Returns the serialized text and a fresh, unshared copy.
 */
export function toPersistableJson(value: unknown): { text: string; value: AxJsonValue } {
  const text = JSON.stringify(value === undefined ? null : value) ?? 'null';
  return { text, value: JSON.parse(text) as AxJsonValue };
}

/** A deep copy of a JSON value (a frozen input gives an unfrozen copy). */
export function cloneJson<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  return JSON.parse(JSON.stringify(value)) as T;
}
