/**
 * What a user's hook answered, when it is not what the hook is for: a promise from a function
 * that decides synchronously, something other than `true` or `false`. Compared with `true`,
 * such an answer quietly meant "no"; these name it instead.
 */

/** Whether `value` is a promise (or any thenable). */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/** A non-boolean answer in words, without revealing more than the start of a string. */
export function describeAnswer(value: unknown): string {
  if (value === undefined || value === null) return String(value);
  if (typeof value === 'string') return `the string '${value.slice(0, 40)}'`;
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}
