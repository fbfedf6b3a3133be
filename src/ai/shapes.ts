/**
 * Shapes the options check lacks, shared by the AI and program layers: an object told apart
 * by one key (a message by `role`, a part by `type`), an `AbortSignal`, a string matching a
 * pattern, a literal value. Built on the shapes of `options/check.ts`; no `eval`.
 */
import { type AxOptionsIssue, array, kindOf, nearest, type Shape } from '../options/check.js';

/** An object whose kind is named by `key`; the shape of that kind checks the whole object. */
export function discriminated(key: string, kinds: Readonly<Record<string, Shape>>, expected: string): Shape {
  const names = Object.keys(kinds);
  const kindWords = names.map((name) => `'${name}'`).join(', ');
  return {
    expected,
    optional: true,
    check(value, path, issues) {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        issues.push({ path: path || '(options)', expected, received: kindOf(value) });
        return;
      }
      const kind = (value as Record<string, unknown>)[key];
      if (typeof kind === 'string' && Object.hasOwn(kinds, kind)) {
        kinds[kind]!.check(value, path, issues);
        return;
      }
      const issue: AxOptionsIssue = {
        path: path === '' ? key : `${path}.${key}`,
        expected: `one of ${kindWords}`,
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
    },
  };
}

/** A value the predicate accepts, reported with `expected` (received: its kind). */
export function satisfies(expected: string, test: (value: unknown) => boolean): Shape {
  return {
    expected,
    optional: true,
    check(value, path, issues) {
      if (!test(value)) issues.push({ path: path || '(options)', expected, received: kindOf(value) });
    },
  };
}

/** A string matching `pattern` (the value is not repeated in the issue: options may hold secrets). */
export function matching(pattern: RegExp, expected: string): Shape {
  return satisfies(expected, (value) => typeof value === 'string' && pattern.test(value));
}

/** An array whose items fit `item`, described as `expected` (for items whose words do not pluralize). */
export function listOf(item: Shape, expected: string): Shape {
  const items = array(item);
  return {
    expected,
    optional: true,
    check(value, path, issues) {
      if (Array.isArray(value)) items.check(value, path, issues);
      else issues.push({ path: path || '(options)', expected, received: kindOf(value) });
    },
  };
}

/** Whether a value behaves as an `AbortSignal` (also one from another realm). */
export function isAbortSignal(value: unknown): value is AbortSignal {
  if (typeof AbortSignal !== 'undefined' && value instanceof AbortSignal) return true;
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<AbortSignal>;
  return typeof candidate.aborted === 'boolean' && typeof candidate.addEventListener === 'function';
}

/** An `AbortSignal`. */
export const ABORT_SIGNAL: Shape = satisfies('an AbortSignal', isAbortSignal);

/** A plain-ish object of the caller's own (an MCP result, a JSON Schema): any keys. */
export const ANY_OBJECT: Shape = satisfies(
  'an object',
  (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
);
