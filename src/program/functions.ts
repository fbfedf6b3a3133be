/**
 * Functions: tools implemented in your own code. MCP servers are attached with `mcp`,
 * never as functions; a client passed here is rejected.
 */
import type { AxAIService } from '../ai/types.js';
import type { AxEventContext } from '../events/target.js';
import {
  anything,
  array,
  func,
  matching,
  object,
  record,
  required,
  type Shape,
  string,
} from '../options/check.js';
import { AxProgramError } from './errors.js';
import { type AxMCPExecutionContext, isMCPClient } from './mcp-context.js';

/** What a function receives besides its arguments. */
export interface AxFunctionContext {
  /** Aborted when the run is aborted. */
  signal: AbortSignal;
  /** The AI service of the run (to run a nested program). */
  ai: AxAIService;
  /** The run's MCP execution context: pass it as `mcpParent` to nested programs. */
  mcp: AxMCPExecutionContext;
  /** The provider's id of this tool call. */
  toolCallId: string;
  /** The event that woke the program, when the event runtime runs it. */
  eventContext?: AxEventContext;
}

/**
 * A tool implemented in code.
 *
 * @example
 * ```ts
 * const now: AxFunction = {
 *   name: 'current_time',
 *   description: 'The current time as ISO 8601',
 *   parameters: { type: 'object', properties: {} },
 *   func: () => new Date().toISOString(),
 * };
 * ```
 */
export interface AxFunction {
  /** The name the model sees: `[A-Za-z0-9_-]{1,64}`. */
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters?: Record<string, unknown>;
  /**
   * Runs the call. A string is sent to the model as is; anything else as JSON. Throw
   * {@link AxFunctionError} to tell the model the call failed; other errors end the run.
   */
  func(args: Record<string, unknown>, context: AxFunctionContext): unknown | Promise<unknown>;
}

/**
 * Thrown by a function to report a failure to the model (its message is sent) instead of ending
 * the run. An {@link AxProgramError} with code `function_failed`, like every error of the package.
 */
export class AxFunctionError extends AxProgramError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('function_failed', message, options);
  }
}

/** A provider tool name: letters, digits, `_` and `-`, at most 64. */
export const PROVIDER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

const FUNCTION_WORDS = 'a function definition { name, description, parameters?, func }';

const FUNCTION = object(
  {
    name: required(matching(PROVIDER_NAME, 'a name matching [A-Za-z0-9_-]{1,64}')),
    description: required(string()),
    parameters: record(anything(), 'a JSON Schema object'),
    func: required(func('a function (args, context) => result')),
  },
  {
    expected: FUNCTION_WORDS,
    aliases: {
      handler: 'func',
      fn: 'func',
      run: 'func',
      execute: 'func',
      schema: 'parameters',
      inputSchema: 'parameters',
      params: 'parameters',
    },
  },
);

/** One function; an MCP client here is named as such (clients go in the `mcp` option). */
const FUNCTION_OR_CLIENT: Shape = {
  expected: FUNCTION_WORDS,
  optional: true,
  check(value, path, issues) {
    if (!isMCPClient(value)) return FUNCTION.check(value, path, issues);
    issues.push({
      path,
      expected: `${FUNCTION_WORDS}; attach MCP clients with the mcp option`,
      received: `the MCP client "${value.namespace.slice(0, 64)}"`,
    });
  },
};

/** The shape of the `functions` option. */
export const FUNCTIONS: Shape = array(FUNCTION_OR_CLIENT, {
  expected: 'an array of function definitions { name, description, parameters?, func }',
});

/**
 * The `functions` option after its shape was checked ({@link FUNCTIONS}): two functions with
 * one name throw `tool_name_collision`.
 */
export function functionList(functions: readonly AxFunction[] | undefined): readonly AxFunction[] {
  if (functions === undefined) return [];
  const names = new Set<string>();
  for (const fn of functions) {
    if (names.has(fn.name))
      throw new AxProgramError('tool_name_collision', `Two functions are named "${fn.name}"`);
    names.add(fn.name);
  }
  return Object.freeze([...functions]);
}
