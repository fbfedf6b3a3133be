/**
 * A tool call's arguments against the tool's `inputSchema`, before anything is sent. Servers
 * often drop a property their schema does not declare without a word (the SDKs' object schemas
 * strip unknown keys), so a misspelt optional argument changed nothing and said nothing. JSON
 * Schema allows undeclared properties unless `additionalProperties` says otherwise, so only a
 * key that looks like a misspelt declared one is refused — or any undeclared key when the
 * schema closes the object (`additionalProperties: false`).
 */
import { nearest } from '../options/check.js';
import { AxMCPError, type AxMCPErrorContext } from '../protocol/errors.js';
import type { AxMCPTool } from '../protocol/messages.js';

/** Schema keywords that can declare properties besides `properties`. */
const ELSEWHERE = [
  'patternProperties',
  'unevaluatedProperties',
  'dependentSchemas',
  'allOf',
  'anyOf',
  'oneOf',
  'if',
  '$ref',
  '$dynamicRef',
];

/** Throws `invalid_argument` for an argument `tool` cannot mean. */
export function assertToolArguments(tool: AxMCPTool, args: unknown, where: AxMCPErrorContext): void {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw new AxMCPError('invalid_argument', `The arguments of tool "${tool.name}" are an object`, where);
  }
  const schema = tool.inputSchema as Record<string, unknown> | undefined;
  const properties = schema?.properties;
  if (typeof properties !== 'object' || properties === null) return;
  const declared = Object.keys(properties);
  const closed = schema?.additionalProperties === false;
  // additionalProperties: true or a schema: the tool takes other keys on purpose. Keys may also
  // be declared where this does not look (patterns, branches, references): then it says nothing.
  if (!closed && schema?.additionalProperties !== undefined) return;
  if (ELSEWHERE.some((keyword) => schema?.[keyword] !== undefined)) return;
  for (const key of Object.keys(args)) {
    if (Object.hasOwn(properties, key)) continue;
    const meant = nearest(key, declared);
    if (!closed && (meant === undefined || Object.hasOwn(args, meant))) continue;
    const takes = declared.length > 0 ? `it takes ${declared.join(', ')}` : 'it takes no arguments';
    throw new AxMCPError(
      'invalid_argument',
      `"${key.slice(0, 80)}" is not an argument of tool "${tool.name}" (${takes})${meant ? `: did you mean ${meant}?` : ''}`,
      where,
    );
  }
}
