/**
 * The arguments of a tool call or a prompt against what the catalog declares, before anything
 * is sent. Servers drop an argument they do not declare without a word (the SDKs' object
 * schemas strip unknown keys), so a misspelt optional one changed nothing and said nothing.
 *
 * A tool's `inputSchema` is JSON Schema, which allows undeclared properties unless
 * `additionalProperties` says otherwise: only a key that looks like a misspelt declared one is
 * refused, or any undeclared key when the schema closes the object. A prompt's arguments are a
 * fixed list of strings: any other name is refused, and so is a missing required one.
 */
import { nearest } from '../options/check.js';
import { AxMCPError, type AxMCPErrorContext } from '../protocol/errors.js';
import type { AxMCPPrompt, AxMCPTool } from '../protocol/messages.js';

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
    throw undeclared(`tool "${tool.name}"`, key, declared, meant, where);
  }
}

/** Throws `invalid_argument` for prompt arguments that are not strings, or that `prompt` (when the catalog lists it) does not take. */
export function assertPromptArguments(
  name: string,
  prompt: AxMCPPrompt | undefined,
  args: unknown,
  where: AxMCPErrorContext,
): void {
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    throw new AxMCPError(
      'invalid_argument',
      `The arguments of prompt "${name}" are an object of strings`,
      where,
    );
  for (const [key, value] of Object.entries(args)) {
    if (typeof value !== 'string') {
      const message = `Argument "${key.slice(0, 80)}" of prompt "${name}" is a string (the protocol carries prompt arguments as strings)`;
      throw new AxMCPError('invalid_argument', message, where);
    }
  }
  if (!prompt) return;
  const declared = (prompt.arguments ?? []).map((argument) => argument.name);
  for (const key of Object.keys(args)) {
    if (!declared.includes(key))
      throw undeclared(`prompt "${name}"`, key, declared, nearest(key, declared), where);
  }
  for (const argument of prompt.arguments ?? []) {
    if (argument.required && (args as Record<string, unknown>)[argument.name] === undefined)
      throw new AxMCPError(
        'invalid_argument',
        `Prompt "${name}" needs the argument "${argument.name}"`,
        where,
      );
  }
}

function undeclared(
  of: string,
  key: string,
  declared: readonly string[],
  meant: string | undefined,
  where: AxMCPErrorContext,
): AxMCPError {
  const takes = declared.length > 0 ? `it takes ${declared.join(', ')}` : 'it takes no arguments';
  const hint = meant ? `: did you mean ${meant}?` : '';
  return new AxMCPError(
    'invalid_argument',
    `"${key.slice(0, 80)}" is not an argument of ${of} (${takes})${hint}`,
    where,
  );
}
