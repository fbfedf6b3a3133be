/**
 * Codecs for the request headers of the 2026-07-28 Streamable HTTP transport:
 * `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and the tool-derived `Mcp-Param-{Name}`
 * headers, with the `=?base64?…?=` sentinel encoding for values that are not plain ASCII.
 *
 * Pure and isomorphic: web-standard `TextEncoder`/`TextDecoder` only, no `node:` imports.
 */
import { AxMCPError, AxMCPProtocolError, RPC } from './errors.js';

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
/** The shortest encoded value, `=?base64??=` (the empty string). */
const SENTINEL_MIN_LENGTH = SENTINEL_PREFIX.length + SENTINEL_SUFFIX.length;

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const BASE64_VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE64_ALPHABET.length; i++) BASE64_VALUES[BASE64_ALPHABET.charCodeAt(i)] = i;

/** An unpaired UTF-16 surrogate: a string that has no UTF-8 form. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

function base64Encode(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out +=
      BASE64_ALPHABET[n >>> 18]! +
      BASE64_ALPHABET[(n >>> 12) & 63]! +
      BASE64_ALPHABET[(n >>> 6) & 63]! +
      BASE64_ALPHABET[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += BASE64_ALPHABET[n >>> 18]! + BASE64_ALPHABET[(n >>> 12) & 63]! + '==';
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out +=
      BASE64_ALPHABET[n >>> 18]! + BASE64_ALPHABET[(n >>> 12) & 63]! + BASE64_ALPHABET[(n >>> 6) & 63]! + '=';
  }
  return out;
}

/** Strict RFC 4648 §4 decoding: padding required, no whitespace, canonical (zero) pad bits. */
function base64Decode(text: string): Uint8Array | undefined {
  if (text.length % 4 !== 0) return undefined;
  const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const bytes = new Uint8Array((text.length / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    const last = i + 4 === text.length;
    let n = 0;
    for (let j = 0; j < 4; j++) {
      const c = text.charCodeAt(i + j);
      if (last && j >= 4 - pad) {
        n <<= 6; // '=' stands for zero bits
        continue;
      }
      const v = c < 128 ? BASE64_VALUES[c]! : -1;
      if (v < 0) return undefined;
      n = (n << 6) | v;
    }
    if (last && pad === 2 && (n & 0xffff) !== 0) return undefined;
    if (last && pad === 1 && (n & 0xff) !== 0) return undefined;
    bytes[o++] = n >>> 16;
    if (o < bytes.length) bytes[o++] = (n >>> 8) & 0xff;
    if (o < bytes.length) bytes[o++] = n & 0xff;
  }
  return bytes;
}

/** Whether every character is visible ASCII or space, with no space at either end. */
function isPlainASCII(value: string): boolean {
  const n = value.length;
  for (let i = 0; i < n; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return n === 0 || (value.charCodeAt(0) !== 0x20 && value.charCodeAt(n - 1) !== 0x20);
}

function looksLikeSentinel(value: string): boolean {
  return value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX);
}

/** A server string quoted for an error message: escaped (no raw control characters) and bounded. */
function quote(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
}

/**
 * Encode a value for the `Mcp-Name` or an `Mcp-Param-{Name}` header.
 *
 * The value is returned unchanged when it is plain: only visible ASCII and space
 * (0x20–0x7E), no space at either end, and not shaped like the sentinel. The empty string
 * is plain and stays empty. Anything else — non-ASCII, any control character (tab, CR, LF,
 * NUL, DEL…), a leading or trailing space, or a value that starts with `=?base64?` and ends
 * with `?=` — is sent as `=?base64?{Base64 of the UTF-8 bytes}?=` (standard alphabet,
 * padded, lowercase markers).
 *
 * @throws {AxMCPError} `invalid_argument` when the string holds an unpaired UTF-16
 *   surrogate, which has no UTF-8 form and could never match the request body.
 */
export function encodeHeaderValue(value: string): string {
  if (isPlainASCII(value) && !looksLikeSentinel(value)) return value;
  if (LONE_SURROGATE.test(value)) {
    throw new AxMCPError(
      'invalid_argument',
      'A header value contains an unpaired UTF-16 surrogate and cannot be encoded as UTF-8',
    );
  }
  return SENTINEL_PREFIX + base64Encode(utf8Encoder.encode(value)) + SENTINEL_SUFFIX;
}

/**
 * Decode an `Mcp-Name` or `Mcp-Param-{Name}` header value as a server receives it: the
 * inverse of {@link encodeHeaderValue}.
 *
 * Optional whitespace (space, tab) around the field value is removed first, as HTTP does.
 * A value of the form `=?base64?…?=` (lowercase markers only) is decoded as strict Base64
 * (padding required, canonical) of well-formed UTF-8; any other value is literal.
 *
 * @throws {AxMCPProtocolError} with `rpcCode` `-32020` (HeaderMismatch) when the value holds
 *   characters outside tab and 0x20–0x7E, or its Base64 or UTF-8 is malformed.
 */
export function decodeHeaderValue(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value.charCodeAt(start) === 0x20 || value.charCodeAt(start) === 0x09)) start++;
  while (end > start && (value.charCodeAt(end - 1) === 0x20 || value.charCodeAt(end - 1) === 0x09)) end--;
  const field = value.slice(start, end);
  for (let i = 0; i < field.length; i++) {
    const c = field.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c > 0x7e) {
      throw new AxMCPProtocolError(RPC.headerMismatch, 'Header value contains invalid characters');
    }
  }
  if (field.length < SENTINEL_MIN_LENGTH || !looksLikeSentinel(field)) return field;
  const bytes = base64Decode(field.slice(SENTINEL_PREFIX.length, -SENTINEL_SUFFIX.length));
  if (bytes === undefined) {
    throw new AxMCPProtocolError(RPC.headerMismatch, 'Header value has malformed Base64');
  }
  try {
    return utf8Decoder.decode(bytes);
  } catch (cause) {
    throw new AxMCPProtocolError(RPC.headerMismatch, 'Header value is not valid UTF-8', undefined, { cause });
  }
}

/** The request field that `Mcp-Name` mirrors, per method. */
export type McpNameSource = 'name' | 'uri' | 'taskId';

/**
 * Methods whose requests carry `Mcp-Name`, and the `params` field it mirrors:
 * `tools/call` and `prompts/get` → `name`, `resources/read` → `uri` (core protocol), and
 * `tasks/get`, `tasks/update`, `tasks/cancel` → `taskId` (the tasks extension).
 */
export const MCP_NAME_SOURCES: ReadonlyMap<string, McpNameSource> = new Map<string, McpNameSource>([
  ['tools/call', 'name'],
  ['prompts/get', 'name'],
  ['resources/read', 'uri'],
  ['tasks/get', 'taskId'],
  ['tasks/update', 'taskId'],
  ['tasks/cancel', 'taskId'],
]);

/**
 * The raw (unencoded) `Mcp-Name` value for a request: `params.name` for `tools/call` and
 * `prompts/get`, `params.uri` for `resources/read`, `params.taskId` for `tasks/get`,
 * `tasks/update` and `tasks/cancel`.
 *
 * @returns `undefined` when the method carries no `Mcp-Name`, or when the source field is
 *   not an own string property of `params` ({@link modernHeaders} rejects the latter).
 */
export function mcpNameFor(method: string, params: Record<string, unknown> | undefined): string | undefined {
  const source = MCP_NAME_SOURCES.get(method);
  if (source === undefined || params === undefined || params === null) return undefined;
  if (!Object.hasOwn(params, source)) return undefined;
  const value = params[source];
  return typeof value === 'string' ? value : undefined;
}

/** The standard headers of one 2026-07-28 Streamable HTTP request (lowercase names). */
export interface ModernRequestHeaders {
  'mcp-protocol-version': string;
  'mcp-method': string;
  /** Present for the methods in {@link MCP_NAME_SOURCES}; already encoded. */
  'mcp-name'?: string;
}

function requirePlainValue(what: string, value: string): void {
  if (value.length === 0 || !isPlainASCII(value)) {
    throw new AxMCPError(
      'invalid_argument',
      `${what} ${quote(value)} cannot be sent as an HTTP header value`,
    );
  }
}

/**
 * The standard request headers for a 2026-07-28 Streamable HTTP POST:
 * `MCP-Protocol-Version`, `Mcp-Method` and, where the method has one, the encoded `Mcp-Name`.
 * `Mcp-Param-*` headers come from {@link paramHeaderValues}.
 *
 * @param protocolVersion - the value also sent in `_meta["io.modelcontextprotocol/protocolVersion"]`.
 * @throws {AxMCPError} `invalid_argument` when the method or version is empty or not plain
 *   ASCII (these two headers have no Base64 form), or when a method that needs `Mcp-Name`
 *   lacks its string source field.
 */
export function modernHeaders(
  method: string,
  params: Record<string, unknown> | undefined,
  protocolVersion: string,
): ModernRequestHeaders {
  requirePlainValue('Protocol version', protocolVersion);
  requirePlainValue('Method', method);
  const headers: ModernRequestHeaders = { 'mcp-protocol-version': protocolVersion, 'mcp-method': method };
  const source = MCP_NAME_SOURCES.get(method);
  if (source !== undefined) {
    const name = mcpNameFor(method, params);
    if (name === undefined) {
      throw new AxMCPError(
        'invalid_argument',
        `${method} needs a string params.${source} for the Mcp-Name header`,
      );
    }
    headers['mcp-name'] = encodeHeaderValue(name);
  }
  return headers;
}

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

function isObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

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

function describeType(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function valueAt(args: unknown, path: readonly string[]): unknown {
  let current = args;
  for (const key of path) {
    if (!isObject(current) || !Object.hasOwn(current, key)) return undefined;
    current = current[key];
  }
  return current;
}

/**
 * The `Mcp-Param-{Name}` headers for one `tools/call`, from the tool's derived header list
 * ({@link toolParamHeaders}) and the call's `arguments`. Keys are the full field names
 * (`Mcp-Param-Region`); the object has no prototype.
 *
 * The value at each header's exact property path becomes:
 * - a string → {@link encodeHeaderValue} (an empty string gives an empty header value);
 * - a boolean → `true` / `false`;
 * - a finite number → its JavaScript/JSON decimal text (`42`, `-7`; a non-integer such as
 *   `3.5` is sent as `3.5`) — the same digits `JSON.stringify` puts in the body.
 *
 * No header is produced when the path is absent, passes through a non-object, or ends in
 * `null` or `undefined`, or in `NaN`/`±Infinity` (which `JSON.stringify` sends as `null`).
 *
 * A value whose JSON type differs from the declared one is still mirrored when it is a
 * string, boolean or number: header and body then agree, and the server reports the real
 * problem (or coerces the value) instead of a misleading header mismatch.
 *
 * @throws {AxMCPError} `invalid_argument` when a value cannot be mirrored: an integer
 *   outside ±(2^53−1), an object or array, a bigint, or a string with an unpaired surrogate.
 */
export function paramHeaderValues(
  headers: readonly ToolParamHeader[],
  args: Record<string, unknown> | undefined,
): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  for (const spec of headers) {
    const value = valueAt(args, spec.path);
    if (value === undefined || value === null) continue;
    switch (typeof value) {
      case 'string':
        out[spec.fieldName] = encodeHeaderValue(value);
        break;
      case 'boolean':
        out[spec.fieldName] = value ? 'true' : 'false';
        break;
      case 'number':
        if (!Number.isFinite(value)) break;
        if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
          throw new AxMCPError(
            'invalid_argument',
            `Argument ${spec.path.join('.')} (${spec.fieldName}) is an integer outside the safe range ±(2^53-1)`,
          );
        }
        out[spec.fieldName] = String(value);
        break;
      default:
        throw new AxMCPError(
          'invalid_argument',
          `Argument ${spec.path.join('.')} (${spec.fieldName}) is ${describeType(value)}; ` +
            `the header needs a ${spec.type}`,
        );
    }
  }
  return out;
}
