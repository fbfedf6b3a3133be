/**
 * Checking a tool's `structuredContent` against its `outputSchema` (a SHOULD in both eras).
 * The schema comes from the server, so it is untrusted: it is compiled once per tool object
 * (a catalog revision replaces the objects), and a schema that could make validation
 * unbounded — too large, too deep, a pattern that can backtrack exponentially, a reference
 * that never descends — is refused with a typed error instead of being run.
 *
 * The validator is `@cfworker/json-schema`: JSON Schema 2020-12 without `eval` or
 * `new Function`, so it runs under a strict CSP, in workers and in browsers.
 */
import { Validator } from '@cfworker/json-schema';
import { AxMCPError, type AxMCPErrorContext } from '../protocol/errors.js';
import type { AxMCPCallToolResult, AxMCPTool } from '../protocol/messages.js';

/** Serialized size of the largest schema compiled. */
const MAX_SCHEMA_BYTES = 256 * 1024;
/** Nesting depth of a schema. */
const MAX_SCHEMA_DEPTH = 64;
/** Objects and arrays in a schema. */
const MAX_SCHEMA_NODES = 20_000;
/** Nesting depth of a validated value (deeper data would exhaust the stack). */
const MAX_INSTANCE_DEPTH = 256;
/** Length of a `pattern`. */
const MAX_PATTERN_LENGTH = 1_000;
/** Errors carried by a mismatch. */
const MAX_REPORTED_ERRORS = 10;

/** One way the result breaks the schema. */
export interface AxMCPOutputSchemaIssue {
  /** JSON pointer into the result (`#/items/0`). */
  instanceLocation: string;
  /** The schema keyword that failed (`type`, `required`, …). */
  keyword: string;
  message: string;
}

/**
 * A tool result that does not fit the tool's `outputSchema` (`output_schema_mismatch`), or a
 * schema that cannot be checked safely (`invalid_output_schema`). The raw result is kept in
 * `result`: nothing the server sent is lost. Turn checking off with `validateToolOutput: false`.
 */
export class AxMCPToolOutputError extends AxMCPError {
  /** The tool's name. */
  readonly tool: string;
  /** The raw result, as the server sent it. */
  readonly result: AxMCPCallToolResult;
  /** What failed (at most ten). */
  readonly issues: readonly AxMCPOutputSchemaIssue[];

  constructor(
    code: 'output_schema_mismatch' | 'invalid_output_schema',
    tool: string,
    result: AxMCPCallToolResult,
    issues: readonly AxMCPOutputSchemaIssue[],
    detail: string,
    context: AxMCPErrorContext = {},
  ) {
    super(code, `Tool "${tool}": ${detail}`, context);
    this.tool = tool;
    this.result = result;
    this.issues = issues;
  }
}

type Compiled = { validator: Validator } | { unsafe: string };

/** Compiled schemas per tool object; a new catalog revision brings new objects. */
const compiled = new WeakMap<object, Compiled>();

/**
 * Throws {@link AxMCPToolOutputError} when `result` breaks `tool.outputSchema`. Results with
 * `isError: true` are not checked (the schema describes success).
 */
export function checkToolOutput(
  tool: AxMCPTool,
  result: AxMCPCallToolResult,
  context: AxMCPErrorContext,
): void {
  const schema = tool.outputSchema;
  if (schema === undefined || result.isError === true) return;
  const name = tool.name;
  if (result.structuredContent === undefined) {
    throw new AxMCPToolOutputError(
      'output_schema_mismatch',
      name,
      result,
      [
        {
          instanceLocation: '#',
          keyword: 'outputSchema',
          message: 'the tool declares an outputSchema but sent no structuredContent',
        },
      ],
      'the result has no structuredContent although the tool declares an outputSchema',
      context,
    );
  }
  let entry = compiled.get(tool);
  if (!entry) {
    entry = compile(schema);
    compiled.set(tool, entry);
  }
  if ('unsafe' in entry) throw unsafe(name, result, entry.unsafe, context);
  if (depthOf(result.structuredContent, 0) > MAX_INSTANCE_DEPTH) {
    throw unsafe(name, result, `structuredContent nests deeper than ${MAX_INSTANCE_DEPTH} levels`, context);
  }
  let outcome: ReturnType<Validator['validate']>;
  try {
    outcome = entry.validator.validate(result.structuredContent);
  } catch (error) {
    // A reference that never descends overflows the stack; an unresolvable one throws.
    const why = error instanceof RangeError ? 'its references recurse without end' : 'it cannot be evaluated';
    throw unsafe(name, result, `the outputSchema cannot be checked: ${why}`, context);
  }
  if (outcome.valid) return;
  const issues = outcome.errors
    .filter((error) => error.keyword !== 'properties' || outcome.errors.length === 1)
    .slice(0, MAX_REPORTED_ERRORS)
    .map((error) => ({
      instanceLocation: error.instanceLocation,
      keyword: error.keyword,
      message: error.error,
    }));
  throw new AxMCPToolOutputError(
    'output_schema_mismatch',
    name,
    result,
    issues,
    `structuredContent does not match the outputSchema (${issues[0]?.instanceLocation ?? '#'}: ${issues[0]?.message ?? 'invalid'})`,
    context,
  );
}

function unsafe(tool: string, result: AxMCPCallToolResult, why: string, context: AxMCPErrorContext) {
  return new AxMCPToolOutputError(
    'invalid_output_schema',
    tool,
    result,
    [{ instanceLocation: '#', keyword: 'outputSchema', message: why }],
    `${why} (validateToolOutput: false skips the check)`,
    context,
  );
}

function compile(schema: unknown): Compiled {
  let text: string;
  try {
    text = JSON.stringify(schema);
  } catch {
    return { unsafe: 'the outputSchema is not JSON' };
  }
  if (text.length > MAX_SCHEMA_BYTES)
    return { unsafe: `the outputSchema is larger than ${MAX_SCHEMA_BYTES} bytes` };
  const problem = boundedSchemaProblem(schema);
  if (problem) return { unsafe: problem };
  try {
    return { validator: new Validator(schema as Record<string, unknown>, '2020-12', false) };
  } catch {
    return { unsafe: 'the outputSchema cannot be compiled' };
  }
}

/** Depth, size and patterns of a schema; the first reason it is unsafe, or undefined. */
function boundedSchemaProblem(schema: unknown): string | undefined {
  let nodes = 0;
  const stack: Array<{ value: unknown; depth: number; key: string | undefined }> = [
    { value: schema, depth: 0, key: undefined },
  ];
  while (stack.length > 0) {
    const { value, depth, key } = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (++nodes > MAX_SCHEMA_NODES) return `the outputSchema has more than ${MAX_SCHEMA_NODES} parts`;
    if (depth > MAX_SCHEMA_DEPTH) return `the outputSchema nests deeper than ${MAX_SCHEMA_DEPTH} levels`;
    const record = value as Record<string, unknown>;
    if (!Array.isArray(value) && key !== 'properties') {
      if (typeof record.pattern === 'string') {
        const reason = patternProblem(record.pattern);
        if (reason) return reason;
      }
      if (typeof record.patternProperties === 'object' && record.patternProperties !== null) {
        for (const pattern of Object.keys(record.patternProperties)) {
          const reason = patternProblem(pattern);
          if (reason) return reason;
        }
      }
    }
    for (const [childKey, child] of Object.entries(record))
      stack.push({ value: child, depth: depth + 1, key: childKey });
  }
  return undefined;
}

/**
 * Refuses patterns a backtracking engine may take exponential time on, conservatively: a
 * repeated group that holds a repeated part and can start its repetitions in more than one way
 * (`(a+)+`, `(\w+\s?)*`, `(a|aa)*`), and backreferences. A repeated group that starts with a
 * literal character (`(-[a-z]+)*`, `(\.\d+)*`) splits its repetitions unambiguously and passes.
 */
export function patternProblem(pattern: string): string | undefined {
  if (pattern.length > MAX_PATTERN_LENGTH) return `a pattern is longer than ${MAX_PATTERN_LENGTH} characters`;
  const shown = JSON.stringify(pattern.slice(0, 60));
  try {
    new RegExp(pattern, 'u');
  } catch {
    return `the pattern ${shown} is not a valid regular expression`;
  }
  if (/\\[1-9]|\\k</.test(pattern)) return `the pattern ${shown} uses a backreference`;
  interface Group {
    /** Holds a repeating quantifier (directly or in a nested group). */
    repeats: boolean;
    /** Holds an alternation. */
    alternates: boolean;
    /** Its first token is a literal character that is not itself optional or repeated. */
    literalStart: boolean;
    /** No token seen yet. */
    empty: boolean;
  }
  const groups: Group[] = [];
  let inClass = false;
  const noteToken = (end: number, literal: boolean) => {
    const group = groups[groups.length - 1];
    if (!group) return;
    const quantified = isQuantifier(pattern, end) || pattern[end] === '?';
    if (group.empty) group.literalStart = literal && !quantified;
    group.empty = false;
    if (isQuantifier(pattern, end)) group.repeats = true;
  };
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    if (inClass) {
      if (char === '\\') i++;
      else if (char === ']') {
        inClass = false;
        noteToken(i + 1, false);
      }
      continue;
    }
    if (char === '\\') {
      // `\.` or `\n` is one literal character; `\d`, `\w`, `\p{…}` are classes.
      const escaped = pattern[i + 1] ?? '';
      noteToken(i + 2, !/[A-Za-z0-9]/.test(escaped) || 'ntrfv'.includes(escaped));
      i++;
    } else if (char === '[') inClass = true;
    else if (char === '(') {
      groups.push({ repeats: false, alternates: false, literalStart: false, empty: true });
      // Skip `?:`, `?=`, `?!`, `?<name>`, `?<=`, `?<!`.
      if (pattern[i + 1] === '?') {
        const close =
          pattern[i + 2] === '<' && /[A-Za-z]/.test(pattern[i + 3] ?? '') ? pattern.indexOf('>', i) : i + 2;
        i = pattern[i + 2] === '<' && !/[A-Za-z]/.test(pattern[i + 3] ?? '') ? i + 3 : close;
      }
    } else if (char === ')') {
      const group = groups.pop();
      if (!group) continue;
      const repeated = isQuantifier(pattern, i + 1);
      // Only an unbounded repetition of the group multiplies the ways to split the input.
      if (isUnbounded(pattern, i + 1) && (group.alternates || (group.repeats && !group.literalStart))) {
        return `the pattern ${shown} repeats a group that can repeat in more than one way (exponential backtracking)`;
      }
      const parent = groups[groups.length - 1];
      if (parent) {
        if (parent.empty) parent.literalStart = group.literalStart && !repeated && pattern[i + 1] !== '?';
        parent.empty = false;
        parent.repeats ||= group.repeats || repeated;
        parent.alternates ||= group.alternates && repeated;
      }
    } else if (char === '|') {
      const group = groups[groups.length - 1];
      if (group) group.alternates = true;
    } else if (char === '*' || char === '+' || char === '?' || char === '{') {
      if (char === '{') {
        const end = pattern.indexOf('}', i);
        if (end > i && /^\{\d+(,\d*)?\}/.test(pattern.slice(i))) i = end;
      }
    } else if (char === '^' || char === '$') {
      // Anchors match no character.
    } else {
      noteToken(i + 1, char !== '.');
    }
  }
  return undefined;
}

/** A repeating quantifier at `index`: `*`, `+`, or `{n,}` / `{n,m}` with m > 1. */
function isQuantifier(pattern: string, index: number): boolean {
  const char = pattern[index];
  if (char === '*' || char === '+') return true;
  if (char !== '{') return false;
  const match = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(index));
  if (!match) return false;
  if (match[2] === undefined) return Number(match[1]) > 1;
  return match[3] === '' || Number(match[3]) > 1;
}

/** `*`, `+` or `{n,}` at `index`. */
function isUnbounded(pattern: string, index: number): boolean {
  const char = pattern[index];
  return char === '*' || char === '+' || (char === '{' && /^\{\d+,\}/.test(pattern.slice(index)));
}

function depthOf(value: unknown, depth: number): number {
  if (typeof value !== 'object' || value === null) return depth;
  if (depth > MAX_INSTANCE_DEPTH) return depth;
  let deepest = depth + 1;
  for (const child of Object.values(value)) {
    deepest = Math.max(deepest, depthOf(child, depth + 1));
    if (deepest > MAX_INSTANCE_DEPTH) break;
  }
  return deepest;
}
