/**
 * Functions: tools implemented in your own code. MCP servers are attached with `mcp`,
 * never as functions; a client passed here is rejected.
 */
import type { AxAIService } from '../ai/types.js';
import type { AxEventContext } from '../events/target.js';
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

/** Thrown by a function to report a failure to the model (its message is sent) instead of ending the run. */
export class AxFunctionError extends Error {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AxFunctionError';
  }
}

/** A provider tool name: letters, digits, `_` and `-`, at most 64. */
export const PROVIDER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Checks the `functions` option; throws `invalid_options`. */
export function checkFunctions(functions: readonly AxFunction[] | undefined): readonly AxFunction[] {
  if (functions === undefined) return [];
  if (!Array.isArray(functions)) throw new AxProgramError('invalid_options', 'functions must be an array');
  const names = new Set<string>();
  for (const fn of functions as readonly unknown[]) {
    if (isMCPClient(fn)) {
      throw new AxProgramError(
        'invalid_options',
        `The MCP client "${fn.namespace}" was passed in functions; attach MCP clients with the mcp option`,
      );
    }
    const candidate = fn as Partial<AxFunction> | null;
    if (typeof candidate !== 'object' || candidate === null || typeof candidate.func !== 'function') {
      throw new AxProgramError('invalid_options', 'Each function needs name, description and func');
    }
    if (typeof candidate.name !== 'string' || !PROVIDER_NAME.test(candidate.name)) {
      throw new AxProgramError(
        'invalid_options',
        `Function name "${String(candidate.name)}" must match [A-Za-z0-9_-]{1,64}`,
      );
    }
    if (names.has(candidate.name)) {
      throw new AxProgramError('tool_name_collision', `Two functions are named "${candidate.name}"`);
    }
    names.add(candidate.name);
  }
  return Object.freeze([...functions]);
}
