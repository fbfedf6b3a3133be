/**
 * Which `Mcp-Param-{Name}` headers a tool asks for: the `x-mcp-header` annotations of its
 * `inputSchema`, found in one walk and checked as the 2026-07-28 specification requires.
 */
import { quote } from './header-value.js';
import { isObject } from './json.js';

/** The JSON types an `x-mcp-header` property may have. */
export type ToolParamHeaderType = 'string' | 'integer' | 'boolean';

/** One `Mcp-Param-{Name}` header a tool asks for, derived from its `inputSchema`. */
export interface ToolParamHeader {
  /** The `x-mcp-header` value: the `{Name}` in `Mcp-Param-{Name}`, as the server spelled it. */
  readonly header: string;
  /** The full header field name, `Mcp-Param-{Name}`. */
  readonly fieldName: string;
  /** The argument's location: the chain of `properties` keys from the schema root. */
  readonly path: readonly string[];
  /** The property's declared type (a `"null"` alternative, if any, is dropped). */
  readonly type: ToolParamHeaderType;
}

/** The outcome of {@link toolParamHeaders}: the tool's headers, or why the tool is invalid. */
export type ToolParamHeadersResult =
  | { readonly ok: true; readonly headers: readonly ToolParamHeader[] }
  | { readonly ok: false; readonly reason: string };

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const UNSAFE_PATH_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
const ANNOTATION = 'x-mcp-header';

/** Keywords whose value is one subschema (JSON Schema draft-04 … 2020-12). */
const SCHEMA_KEYWORDS = [
  'additionalProperties',
  'unevaluatedProperties',
  'items',
  'additionalItems',
  'unevaluatedItems',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'contentSchema',
] as const;
/** Keywords whose value is an array of subschemas (`items` had an array form before 2020-12). */
const SCHEMA_ARRAY_KEYWORDS = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'] as const;
/** Keywords whose value maps names to subschemas (`dependencies` values may also be string arrays). */
const SCHEMA_MAP_KEYWORDS = [
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
  'dependencies',
] as const;

type SchemaObject = Record<string, unknown>;

function own(schema: SchemaObject, key: string): unknown {
  return Object.hasOwn(schema, key) ? schema[key] : undefined;
}

const PRIMITIVES: ReadonlySet<string> = new Set(['string', 'integer', 'boolean']);

type TypeCheck = { readonly type: ToolParamHeaderType } | { readonly problem: string };

/** The single primitive type of a list of JSON types, ignoring `"null"`; or why there is none. */
function primitiveOf(types: readonly unknown[]): TypeCheck {
  const kinds = new Set<string>();
  for (const t of types) {
    if (typeof t !== 'string') return { problem: 'has a non-string "type"' };
    if (t !== 'null') kinds.add(t);
  }
  if (kinds.has('number')) {
    return { problem: 'has type "number", which x-mcp-header does not permit (only "integer")' };
  }
  if (kinds.size === 0) return { problem: 'has only type "null"' };
  if (kinds.size > 1) {
    return {
      problem: `has several types (${[...kinds].map(quote).join(', ')}); exactly one of string, integer, boolean is allowed`,
    };
  }
  const kind = kinds.values().next().value as string;
  if (!PRIMITIVES.has(kind))
    return { problem: `has type ${quote(kind)}; only string, integer or boolean is allowed` };
  return { type: kind as ToolParamHeaderType };
}

/**
 * The type of an annotated property: `type` as a string or an array (`["string","null"]`),
 * or, without `type`, an `anyOf`/`oneOf` whose branches each declare a `type` (the nullable
 * form some schema generators emit: `anyOf: [{type: "string"}, {type: "null"}]`).
 */
function propertyType(schema: SchemaObject): TypeCheck {
  const type = own(schema, 'type');
  if (typeof type === 'string') return primitiveOf([type]);
  if (Array.isArray(type)) return primitiveOf(type);
  if (type !== undefined) return { problem: 'has a malformed "type"' };
  for (const keyword of ['anyOf', 'oneOf']) {
    const branches = own(schema, keyword);
    if (!Array.isArray(branches) || branches.length === 0) continue;
    const types: unknown[] = [];
    for (const branch of branches) {
      const branchType = isObject(branch) ? own(branch, 'type') : undefined;
      if (typeof branchType !== 'string') {
        return { problem: `declares its type through ${keyword} branches that lack a string "type"` };
      }
      types.push(branchType);
    }
    return primitiveOf(types);
  }
  return { problem: 'declares no "type"' };
}

/**
 * Where a schema sits, as a linked list back to the root, so that the walk costs O(1) per
 * schema however deep it is; paths and JSON Pointers are built only when needed.
 */
interface SchemaLocation {
  readonly parent: SchemaLocation | undefined;
  /** The JSON Pointer segments from the parent, e.g. `properties/a` or `allOf/0`. */
  readonly segments: string;
  /** The `properties` key, when this schema is reachable from the root through `properties` alone. */
  readonly key: string | undefined;
  readonly reachable: boolean;
  /** Whether a reachable path so far holds `__proto__`, `constructor` or `prototype`. */
  readonly unsafeKey: string | undefined;
}

interface PendingSchema {
  readonly schema: unknown;
  readonly location: SchemaLocation;
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function pointerOf(location: SchemaLocation): string {
  const parts: string[] = [];
  for (let at: SchemaLocation | undefined = location; at?.parent !== undefined; at = at.parent) {
    parts.push(at.segments);
  }
  return parts.length === 0 ? 'the schema root' : `/${parts.reverse().join('/')}`;
}

function pathOf(location: SchemaLocation): string[] {
  const keys: string[] = [];
  for (let at: SchemaLocation | undefined = location; at?.key !== undefined; at = at.parent)
    keys.push(at.key);
  return keys.reverse();
}

function child(parent: SchemaLocation, keyword: string, member: string | undefined): SchemaLocation {
  const reachable = parent.reachable && keyword === 'properties';
  const key = reachable ? member : undefined;
  return {
    parent,
    segments: member === undefined ? keyword : `${keyword}/${escapePointer(member)}`,
    key,
    reachable,
    unsafeKey: reachable ? (parent.unsafeKey ?? (UNSAFE_PATH_KEYS.has(key!) ? key : undefined)) : undefined,
  };
}

function invalid(
  header: string | undefined,
  location: SchemaLocation,
  problem: string,
): ToolParamHeadersResult {
  const name = header === undefined ? '' : ` ${quote(header)}`;
  return { ok: false, reason: `x-mcp-header${name} at ${pointerOf(location)} ${problem}` };
}

/**
 * Derive a tool's `Mcp-Param-{Name}` headers from the `x-mcp-header` annotations in its
 * `inputSchema`, and check them as the 2026-07-28 spec requires. Run it once per tool (per
 * catalog revision) and keep the result; it walks the schema once, without recursion.
 *
 * A tool is invalid — and a Streamable HTTP client must leave it out of its tool list,
 * ideally with a warning naming the tool and `reason` — when any annotation:
 * - is not a non-empty RFC 9110 token (`1*tchar`: letters, digits and ``!#$%&'*+-.^_`|~``);
 * - repeats another annotation of the same tool, compared case-insensitively;
 * - sits on a property whose type is not exactly one of `string`, `integer`, `boolean`
 *   (a `"null"` alternative is allowed; `number` is not);
 * - sits anywhere but a property reached from the root through `properties` keys only —
 *   e.g. under `items`, `prefixItems`, `additionalProperties`, `patternProperties`,
 *   `allOf`/`anyOf`/`oneOf`/`not`, `if`/`then`/`else`, `$defs`/`definitions`, or on the root;
 * - has `__proto__`, `constructor` or `prototype` in its property path (an ax-mcp rule).
 *
 * Values inside `const`, `enum`, `default`, `examples` and unknown keywords are data, not
 * schemas, and are not inspected.
 *
 * @param inputSchema - the tool's `inputSchema` as received (untrusted).
 */
export function toolParamHeaders(inputSchema: unknown): ToolParamHeadersResult {
  if (!isObject(inputSchema)) return { ok: false, reason: 'inputSchema is not a JSON object' };
  const headers: ToolParamHeader[] = [];
  const byLowerName = new Map<string, SchemaLocation>();
  const seen = new WeakSet<object>();
  const root: SchemaLocation = {
    parent: undefined,
    segments: '',
    key: undefined,
    reachable: true,
    unsafeKey: undefined,
  };
  const stack: PendingSchema[] = [{ schema: inputSchema, location: root }];

  while (stack.length > 0) {
    const { schema, location } = stack.pop()!;
    if (!isObject(schema) || seen.has(schema)) continue;
    seen.add(schema);

    if (Object.hasOwn(schema, ANNOTATION)) {
      if (!location.reachable || location === root) {
        return invalid(undefined, location, 'is not on a property reached through "properties" keys alone');
      }
      const header = schema[ANNOTATION];
      if (typeof header !== 'string') return invalid(undefined, location, 'is not a string');
      if (header.length === 0) return invalid(undefined, location, 'is empty');
      if (!TOKEN.test(header)) return invalid(header, location, 'is not an HTTP token (1*tchar)');
      if (location.unsafeKey !== undefined) {
        return invalid(header, location, `has ${quote(location.unsafeKey)} in its property path`);
      }
      const checked = propertyType(schema);
      if ('problem' in checked) return invalid(header, location, `is on a property that ${checked.problem}`);
      const lower = header.toLowerCase();
      const earlier = byLowerName.get(lower);
      if (earlier !== undefined) {
        return invalid(
          header,
          location,
          `duplicates the one at ${pointerOf(earlier)} (names are case-insensitive)`,
        );
      }
      byLowerName.set(lower, location);
      headers.push(
        Object.freeze({
          header,
          fieldName: `Mcp-Param-${header}`,
          path: Object.freeze(pathOf(location)),
          type: checked.type,
        }),
      );
    }

    // Push in reverse so that the walk (a stack) visits schemas in document order.
    const pending: PendingSchema[] = [];
    for (const keyword of SCHEMA_MAP_KEYWORDS) {
      const map = own(schema, keyword);
      if (!isObject(map)) continue;
      for (const key of Object.keys(map))
        pending.push({ schema: map[key], location: child(location, keyword, key) });
    }
    for (const keyword of SCHEMA_KEYWORDS) {
      const sub = own(schema, keyword);
      if (isObject(sub)) pending.push({ schema: sub, location: child(location, keyword, undefined) });
    }
    for (const keyword of SCHEMA_ARRAY_KEYWORDS) {
      const list = own(schema, keyword);
      if (!Array.isArray(list)) continue;
      for (let i = 0; i < list.length; i++)
        pending.push({ schema: list[i], location: child(location, keyword, String(i)) });
    }
    for (let i = pending.length - 1; i >= 0; i--) stack.push(pending[i]!);
  }
  return { ok: true, headers: Object.freeze(headers) };
}
