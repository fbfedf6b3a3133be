/** The `Mcp-Param-{Name}` header values of one `tools/call`, mirrored from its arguments. */
import { AxMCPError } from './errors.js';
import { encodeHeaderValue } from './header-value.js';
import { isObject } from './json.js';
import type { ToolParamHeader } from './tool-param-headers.js';

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
