import { AxMCPInvalidOptionsError } from '../protocol/errors.js';

/**
 * Makes a namespace safe for tool names and event sources: runs of characters
 * outside `[A-Za-z0-9_]` become `_`. The result must be non-empty.
 */
export function sanitizeNamespace(namespace: string): string {
  const clean = namespace.replace(/[^A-Za-z0-9_]+/g, '_').replace(/^_+|_+$/g, '');
  if (clean === '' || clean === '__proto__' || clean === 'constructor' || clean === 'prototype') {
    throw new AxMCPInvalidOptionsError({
      issues: [
        {
          path: 'namespace',
          expected: 'a name with a letter, digit or _ (not a reserved word)',
          received: `'${namespace.slice(0, 40)}'`,
        },
      ],
      message: `namespace "${namespace.slice(0, 40)}" cannot be used: it needs a letter, digit or _ and must not be __proto__, constructor or prototype`,
    });
  }
  return clean;
}
