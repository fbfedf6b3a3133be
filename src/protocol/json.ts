import { AxMCPProtocolError, RPC } from './errors.js';

const FORBIDDEN_KEYS = new Set(['__proto__']);

/**
 * Parses JSON text from a peer. `__proto__` keys are refused: a later
 * `Object.assign` or a careless merge would turn them into prototype pollution.
 * The check costs a substring search unless the key is actually present.
 */
export function parseUntrustedJSON(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new AxMCPProtocolError(RPC.parseError, 'Peer sent invalid JSON', undefined, {
      code: 'invalid_message',
      cause: error,
    });
  }
  if (text.includes('__proto__') && containsForbiddenKey(value)) {
    throw new AxMCPProtocolError(
      RPC.invalidRequest,
      'Peer sent a message with a "__proto__" key',
      undefined,
      {
        code: 'unsafe_key',
      },
    );
  }
  return value;
}

function containsForbiddenKey(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (current === null || typeof current !== 'object') continue;
    if (Array.isArray(current)) {
      for (const item of current) stack.push(item);
      continue;
    }
    for (const key of Object.keys(current)) {
      if (FORBIDDEN_KEYS.has(key)) return true;
      stack.push((current as Record<string, unknown>)[key]);
    }
  }
  return false;
}

/** True for a plain JSON object (not an array, not null). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Deep copy of JSON data, so snapshots handed out cannot alias internal state. A plain walk:
 * several times faster than `structuredClone` on catalogs of thousands of tools.
 */
export function cloneJSON<T>(value: T): T {
  return cloneValue(value, 0) as T;
}

function cloneValue(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  // Deeper than any sane JSON (or not a tree at all): the structured clone algorithm copes.
  if (depth > 200) return structuredClone(value);
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = cloneValue(value[i], depth + 1);
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const copy = cloneValue((value as Record<string, unknown>)[key], depth + 1);
    // A "__proto__" key stays a key (assignment would set the prototype).
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: copy, enumerable: true, writable: true, configurable: true });
    else out[key] = copy;
  }
  return out;
}

/** Freezes an object and everything in it, in place, and returns it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
