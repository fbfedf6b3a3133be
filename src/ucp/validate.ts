/**
 * Checking business responses against {@link UCP_SCHEMAS} with `@cfworker/json-schema` (the
 * validator the MCP client uses for tool output: no `eval`, runs under a strict CSP). Each
 * schema is compiled once per process, on first use.
 */
import { Validator } from '@cfworker/json-schema';
import { type AxUCPErrorContext, AxUCPSchemaError, type AxUCPSchemaIssue } from './errors.js';
import { type AxUCPSchemaName, UCP_SCHEMAS } from './schemas.js';

const MAX_DEPTH = 128;
const MAX_ISSUES = 10;
const compiled = new Map<AxUCPSchemaName, Validator>();

/** Throws {@link AxUCPSchemaError} when `value` breaks the named schema. */
export function assertUCPSchema(name: AxUCPSchemaName, value: unknown, context: AxUCPErrorContext): void {
  if (depthOf(value, 0) > MAX_DEPTH) {
    throw new AxUCPSchemaError(
      `The response nests deeper than ${MAX_DEPTH} levels`,
      [{ instanceLocation: '#', keyword: 'depth', message: 'too deep' }],
      undefined,
      context,
    );
  }
  let validator = compiled.get(name);
  if (!validator) {
    validator = new Validator(UCP_SCHEMAS[name] as Record<string, unknown>, '2020-12', false);
    compiled.set(name, validator);
  }
  const outcome = validator.validate(value);
  if (outcome.valid) return;
  // The leaf errors say what is wrong; the wrapping `properties`/`allOf`/`$ref` ones only where.
  const leaves = outcome.errors.filter((e) => !['properties', 'allOf', '$ref', 'items'].includes(e.keyword));
  const issues: AxUCPSchemaIssue[] = (leaves.length > 0 ? leaves : outcome.errors)
    .slice(0, MAX_ISSUES)
    .map((e) => ({ instanceLocation: e.instanceLocation, keyword: e.keyword, message: e.error }));
  const first = issues[0];
  throw new AxUCPSchemaError(
    `The response does not fit the UCP ${name} schema (${first?.instanceLocation ?? '#'}: ${first?.message ?? 'invalid'})`,
    issues,
    value,
    context,
  );
}

function depthOf(value: unknown, depth: number): number {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return depth;
  let max = depth;
  for (const child of Array.isArray(value) ? value : Object.values(value)) {
    const d = depthOf(child, depth + 1);
    if (d > max) max = d;
    if (max > MAX_DEPTH) break;
  }
  return max;
}
