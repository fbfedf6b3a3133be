/**
 * One validator for every options object a user hands to ax-mcp. TypeScript catches most
 * mistakes at compile time; this catches them in JavaScript, in configuration read from
 * files, and where a value type-checks but cannot work — at construction, before anything
 * is sent. A misspelled `authorizeToolCall` must never turn a guard into a no-op.
 *
 * Shapes are declared once per options type (module scope) and checked once per
 * construction, never per request. No `eval`: it runs under a strict CSP.
 */

/** One thing wrong with an options object. */
export interface AxOptionsIssue {
  /** Where, as the user writes it: `elicitation`, `routes[2].match.types`. */
  path: string;
  /** What is expected there, in words. */
  expected: string;
  /** What was found: its kind, and the value only for short strings of an enumeration (options may hold secrets). */
  received: string;
  /** The nearest known name when an unknown key looks misspelled. */
  suggestion?: string;
}

/** What a layer's typed error is built from. */
export interface AxOptionsProblem {
  /** The issues found, at least one. */
  issues: AxOptionsIssue[];
  /** A message naming the options object, the first issues and the suggestions. */
  message: string;
}

/** A declared shape of a value. */
export interface Shape {
  /** What the shape accepts, in words ("a function", "'auto', 'legacy' or 'modern'"). */
  readonly expected: string;
  /** False for keys that must be present. */
  readonly optional: boolean;
  check(value: unknown, path: string, issues: AxOptionsIssue[]): void;
}

/** How a shape checks a value: it pushes what it finds wrong. */
export type Check = (value: unknown, path: string, issues: AxOptionsIssue[]) => void;

function shape(expected: string, check: Check): Shape {
  return { expected, optional: true, check };
}

/** Describes a value without revealing it. */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number' && Number.isNaN(value)) return 'NaN';
  if (typeof value === 'object')
    return value.constructor && value.constructor !== Object ? `a ${value.constructor.name}` : 'an object';
  return `${/^[aeiou]/.test(typeof value) ? 'an' : 'a'} ${typeof value}`;
}

function push(issues: AxOptionsIssue[], path: string, expected: string, value: unknown): void {
  issues.push({ path: path || '(options)', expected, received: kindOf(value) });
}

/** A key that must be present. */
export function required<S extends Shape>(inner: S): S {
  return { ...inner, optional: false };
}

export function string(options: { nonEmpty?: boolean } = {}): Shape {
  const expected = options.nonEmpty ? 'a non-empty string' : 'a string';
  return shape(expected, (value, path, issues) => {
    if (typeof value !== 'string' || (options.nonEmpty && value.trim() === ''))
      push(issues, path, expected, value);
  });
}

export function boolean(): Shape {
  return shape('true or false', (value, path, issues) => {
    if (typeof value !== 'boolean') push(issues, path, 'true or false', value);
  });
}

/** A finite number; `integer`, `min` and `max` narrow it. */
export function number(options: { integer?: boolean; min?: number; max?: number } = {}): Shape {
  const words = [options.integer ? 'an integer' : 'a number'];
  if (options.min !== undefined) words.push(`≥ ${options.min}`);
  if (options.max !== undefined) words.push(`≤ ${options.max}`);
  const expected = words.join(' ');
  return shape(expected, (value, path, issues) => {
    const ok =
      typeof value === 'number' &&
      Number.isFinite(value) &&
      (!options.integer || Number.isInteger(value)) &&
      (options.min === undefined || value >= options.min) &&
      (options.max === undefined || value <= options.max);
    if (!ok) {
      if (typeof value === 'number') issues.push({ path, expected, received: String(value) });
      else push(issues, path, expected, value);
    }
  });
}

export function func(expected = 'a function'): Shape {
  return shape(expected, (value, path, issues) => {
    if (typeof value !== 'function') push(issues, path, expected, value);
  });
}

/** Any value at all (callers' own data: `extensions`, `state`). */
export function anything(): Shape {
  return shape('any value', () => {});
}

/** One of a few literal values. */
export function oneOf(...values: readonly (string | number | boolean)[]): Shape {
  const expected = listWords(values.map((v) => (typeof v === 'string' ? `'${v}'` : String(v))));
  return shape(expected, (value, path, issues) => {
    if (values.includes(value as string)) return;
    const received = typeof value === 'string' && value.length <= 40 ? `'${value}'` : kindOf(value);
    const issue: AxOptionsIssue = { path, expected, received };
    if (typeof value === 'string') {
      const near = nearest(
        value,
        values.filter((v): v is string => typeof v === 'string'),
      );
      if (near !== undefined) issue.suggestion = `'${near}'`;
    }
    issues.push(issue);
  });
}

/** An object that satisfies a predicate: a client, a store, an AbortSignal. */
export function instance(expected: string, test: (value: unknown) => boolean): Shape {
  return shape(expected, (value, path, issues) => {
    if (!test(value)) push(issues, path, expected, value);
  });
}

/**
 * A string matching `pattern`. The value is not repeated in the issue (options may hold secrets)
 * unless `reveal` says it is no secret (a route's type pattern), so the user sees what was wrong.
 */
export function matching(pattern: RegExp, expected: string, options: { reveal?: boolean } = {}): Shape {
  if (!options.reveal) return instance(expected, (value) => typeof value === 'string' && pattern.test(value));
  return shape(expected, (value, path, issues) => {
    if (typeof value === 'string' && pattern.test(value)) return;
    const received = typeof value === 'string' ? `'${value}'` : kindOf(value);
    issues.push({ path: path || '(options)', expected, received });
  });
}

/** Whether a value behaves as an `AbortSignal` (also one from another realm). */
export function isAbortSignal(value: unknown): value is AbortSignal {
  if (typeof AbortSignal !== 'undefined' && value instanceof AbortSignal) return true;
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<AbortSignal>;
  return typeof candidate.aborted === 'boolean' && typeof candidate.addEventListener === 'function';
}

/** An `AbortSignal`. */
export const ABORT_SIGNAL: Shape = instance('an AbortSignal', isAbortSignal);

/** An object of the caller's own (an MCP result, a JSON Schema): any keys. */
export const ANY_OBJECT: Shape = instance(
  'an object',
  (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
);

/** An object whose kind is named by `key` (a message by `role`, a part by `type`); that kind's shape checks it. */
export function discriminated(key: string, kinds: Readonly<Record<string, Shape>>, expected: string): Shape {
  const names = Object.keys(kinds);
  const kindWords = listWords(names.map((name) => `'${name}'`));
  return shape(expected, (value, path, issues) => {
    if (!isPlainish(value)) return push(issues, path, expected, value);
    const kind = value[key];
    if (typeof kind === 'string' && Object.hasOwn(kinds, kind))
      return kinds[kind]!.check(value, path, issues);
    const issue: AxOptionsIssue = {
      path: join(path, key),
      expected: kindWords,
      received:
        kind === undefined
          ? 'nothing (required)'
          : typeof kind === 'string' && kind.length <= 40
            ? `'${kind}'`
            : kindOf(kind),
    };
    if (typeof kind === 'string') {
      const near = nearest(kind, names);
      if (near !== undefined) issue.suggestion = `'${near}'`;
    }
    issues.push(issue);
  });
}

/** The first shape that accepts the value; otherwise the issue names all of them. */
export function anyOf(...shapes: Shape[]): Shape {
  const expected = listWords(
    shapes.map((s) => s.expected),
    'or',
  );
  return shape(expected, (value, path, issues) => {
    let best: AxOptionsIssue[] | undefined;
    for (const candidate of shapes) {
      const found: AxOptionsIssue[] = [];
      candidate.check(value, path, found);
      if (found.length === 0) return;
      // An object shape that got past its type check tells more than "expected A or B".
      if (found[0]!.path !== (path || '(options)') && (best === undefined || found.length < best.length))
        best = found;
    }
    if (best) issues.push(...best);
    else push(issues, path, expected, value);
  });
}

/** An array whose items all fit `item`; `expected` words it where the item's words do not pluralize. */
export function array(item: Shape, options: { minLength?: number; expected?: string } = {}): Shape {
  const expected = options.expected ?? `an array of ${item.expected.replace(/^an? /, '')}s`;
  return shape(expected, (value, path, issues) => {
    if (!Array.isArray(value)) return push(issues, path, expected, value);
    if (options.minLength !== undefined && value.length < options.minLength) {
      issues.push({ path, expected: `at least ${options.minLength} item(s)`, received: `${value.length}` });
    }
    value.forEach((entry, index) => {
      item.check(entry, `${path}[${index}]`, issues);
    });
  });
}

/** An object with keys the caller chooses, each value fitting `value`. */
export function record(
  value: Shape,
  expected = `an object of ${value.expected.replace(/^an? /, '')}s`,
): Shape {
  return shape(expected, (input, path, issues) => {
    if (!isPlainish(input)) return push(issues, path, expected, input);
    for (const [key, entry] of Object.entries(input)) {
      if (isUnsafeName(key))
        issues.push({ path: join(path, key), expected: 'a safe key', received: `'${key}'` });
      else value.check(entry, join(path, key), issues);
    }
  });
}

export interface ObjectShapeOptions {
  /** Names users reach for that mean a known key: `{ allowLocalhost: 'allowLoopback' }`. */
  aliases?: Readonly<Record<string, string>>;
  /** How the object is named when it is not a plain object ("AxMCPClient options"). */
  expected?: string;
  /**
   * Accept keys not declared (a documented extension point). `'misspellings-refused'` accepts
   * them too, except one that looks like a misspelt known key (an open MCP result whose
   * `stopReson` would otherwise pass for an extension).
   */
  open?: boolean | 'misspellings-refused';
  /** What a key of this object is called in messages (default `option`; `field` for a result). */
  keyNoun?: string;
}

export type Keys = Readonly<Record<string, Shape>>;

/** An object with known keys: an unknown key is an issue, with the nearest known name. */
export function object(keys: Keys, options: ObjectShapeOptions = {}): Shape & { keys: Keys } {
  const expected = options.expected ?? 'an object';
  const known = Object.keys(keys);
  return {
    ...shape(expected, (input, path, issues) => {
      if (!isPlainish(input)) return push(issues, path, expected, input);
      const record = input as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        if (Object.hasOwn(keys, key)) continue;
        if (options.open === true && !isUnsafeName(key)) continue;
        const suggestion = options.aliases?.[key] ?? nearest(key, known);
        if (options.open === 'misspellings-refused' && suggestion === undefined && !isUnsafeName(key))
          continue;
        const issue: AxOptionsIssue = {
          path: join(path, key),
          expected: `no such ${options.keyNoun ?? 'option'}`,
          received: kindOf(record[key]),
        };
        if (suggestion !== undefined) issue.suggestion = suggestion;
        issues.push(issue);
      }
      for (const key of known) {
        const entry = keys[key]!;
        const present = record[key];
        if (present === undefined) {
          if (!entry.optional)
            issues.push({ path: join(path, key), expected: entry.expected, received: 'nothing (required)' });
          continue;
        }
        entry.check(present, join(path, key), issues);
      }
    }),
    keys,
  };
}

/**
 * `base`, and then `rule` for a value that fits it (a rule across keys, a deeper look): `rule`
 * sees only values `base` found nothing wrong with, and pushes its own issues.
 */
export function refine(base: Shape, rule: Check): Shape {
  return shape(base.expected, (value, path, issues) => {
    const before = issues.length;
    base.check(value, path, issues);
    if (issues.length === before) rule(value, path, issues);
  });
}

/** The keys of `base` with `more` added (options that extend others). */
export function extend(
  base: { keys: Keys },
  more: Keys,
  options: ObjectShapeOptions = {},
): Shape & { keys: Keys } {
  return object({ ...base.keys, ...more }, options);
}

/**
 * Checks `value` against `schema`; returns the problem to throw, or `undefined` when it fits.
 * `label` names the options object in the message ("AxMCPClient options").
 */
export function findOptionsProblem(
  schema: Shape,
  value: unknown,
  label: string,
): AxOptionsProblem | undefined {
  const issues: AxOptionsIssue[] = [];
  schema.check(value, '', issues);
  if (issues.length === 0) return undefined;
  return { issues, message: `${label}: ${describeIssues(issues)}` };
}

/** "a: expected …, got …; b is not an option (did you mean c?)", at most five. */
export function describeIssues(issues: readonly AxOptionsIssue[]): string {
  const words = issues.slice(0, 5).map((issue) => {
    const hint = issue.suggestion === undefined ? '' : ` (did you mean ${issue.suggestion}?)`;
    const unknown = /^no such (\w+)$/.exec(issue.expected);
    if (unknown)
      return `${issue.path} is not ${/^[aeiou]/.test(unknown[1] as string) ? 'an' : 'a'} ${unknown[1]}${hint}`;
    return `${issue.path}: expected ${issue.expected}, got ${issue.received}${hint}`;
  });
  if (issues.length > 5) words.push(`and ${issues.length - 5} more`);
  return words.join('; ');
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function isPlainish(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isUnsafeName(key: string): boolean {
  return key === '__proto__' || key === 'constructor' || key === 'prototype';
}

function listWords(words: readonly string[], last = 'or'): string {
  if (words.length <= 1) return words[0] ?? 'nothing';
  return `${words.slice(0, -1).join(', ')} ${last} ${words[words.length - 1]}`;
}

/** The known name closest to `name`: same letters in another case, a prefix, or a few edits away. */
export function nearest(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const sameCase = known.find((k) => k.toLowerCase() === lower);
  if (sameCase !== undefined) return sameCase;
  // A shortened or extended name (`warn` for `warning`, `maxStep` for `maxSteps`), when only one fits.
  const prefixed = known.filter((k) => {
    const other = k.toLowerCase();
    return Math.min(other.length, lower.length) >= 3 && (other.startsWith(lower) || lower.startsWith(other));
  });
  if (prefixed.length === 1) return prefixed[0];
  let best: string | undefined;
  let bestDistance = name.length <= 4 ? 1 : name.length <= 8 ? 2 : 3;
  for (const candidate of known) {
    const distance = editDistance(lower, candidate.toLowerCase(), bestDistance);
    if (distance <= bestDistance && (best === undefined || distance < bestDistance)) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Edit distance counting a swap of neighbours as one edit (optimal string alignment), giving up past `limit`. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, before[j - 2]! + 1);
      current.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > limit) return limit + 1;
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
}
