import { AxMCPError } from '../protocol/errors.js';

/**
 * Makes a namespace safe for tool names and event sources: runs of characters
 * outside `[A-Za-z0-9_]` become `_`. The result must be non-empty.
 */
export function sanitizeNamespace(namespace: string): string {
  const clean = namespace.replace(/[^A-Za-z0-9_]+/g, '_').replace(/^_+|_+$/g, '');
  if (clean === '' || clean === '__proto__' || clean === 'constructor' || clean === 'prototype') {
    throw new AxMCPError('invalid_argument', `"${namespace}" cannot be used as a namespace`);
  }
  return clean;
}
