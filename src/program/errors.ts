import { AxError } from '../errors/ax-error.js';
import {
  type AxOptionsIssue,
  type AxOptionsProblem,
  describeIssues,
  findOptionsProblem,
  kindOf,
  type Shape,
} from '../options/check.js';

/**
 * Typed errors of programs. Every failure a program reports itself is an
 * {@link AxProgramError} with a stable `code`; errors of the AI service
 * (`AxAIError`) and of MCP clients (`AxMCPError`) pass through unchanged.
 */

/** Stable error codes of programs. */
export type AxProgramErrorCode =
  /** A signature that cannot be parsed (see {@link AxSignatureError.position}). */
  | 'invalid_signature'
  /** Options that cannot work as written (a client passed as a function, a bad `maxSteps`, …). */
  | 'invalid_options'
  /** Inputs that do not match the signature. */
  | 'invalid_input'
  /** Two clients with one namespace in one execution context. */
  | 'duplicate_namespace'
  /** Two tools (MCP or functions) that would reach the provider under one name. */
  | 'tool_name_collision'
  /** More tools than the AI service takes in one request (its `capabilities.maxTools`). */
  | 'too_many_tools'
  /** `mcpInheritance` names a namespace the parent does not have, or names one twice. */
  | 'invalid_inheritance'
  /** The model's final answer does not match the output fields, after every correction. */
  | 'invalid_output'
  /** The tool loop reached `maxSteps` without a final answer. */
  | 'max_steps'
  /** The model refused to answer. */
  | 'refused'
  /** A flow that cannot run (unknown node in an edge, a cycle, …). */
  | 'invalid_flow'
  /** The run was aborted. */
  | 'aborted'
  /** A function told the model its call failed (`AxFunctionError`, thrown by the function itself). */
  | 'function_failed'
  /** An agent's actor asked a clarification question (see `AxAgentClarificationError`). */
  | 'clarification_needed'
  /** Agent state that `setState` cannot restore. */
  | 'invalid_state'
  /** The agent's sandbox (QuickJS WebAssembly) could not start. */
  | 'sandbox_failed'
  /** The agent or its sandbox session was closed. */
  | 'closed'
  /**
   * An evaluation met an MCP client with a live server behind it: every run would repeat its
   * side effects. Replay a recording, or evaluate with `evaluationMode: 'live'` on purpose.
   */
  | 'live_mcp_in_evaluation';

/** The base class of every error programs throw. */
export class AxProgramError extends AxError {
  declare readonly code: AxProgramErrorCode;

  constructor(code: AxProgramErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, options);
  }
}

/**
 * Options of a program, agent, flow or chat that cannot work as written (code
 * `invalid_options`); `issues` lists what the options check found, `path` and `suggestion`
 * describe the first.
 */
export class AxProgramOptionsError extends AxProgramError {
  readonly issues: readonly AxOptionsIssue[];
  /** Where the first problem is (`mcpContext[0].client`). */
  readonly path: string;
  /** The nearest known name when the first problem is a misspelled key. */
  readonly suggestion: string | undefined;

  constructor(problem: AxOptionsProblem) {
    super('invalid_options', problem.message);
    this.issues = problem.issues;
    this.path = problem.issues[0]!.path;
    this.suggestion = problem.issues[0]!.suggestion;
  }
}

/** Throws {@link AxProgramOptionsError} when `value` does not fit `schema`. */
export function assertProgramOptions(schema: Shape, value: unknown, label: string): void {
  const problem = findOptionsProblem(schema, value, label);
  if (problem) throw new AxProgramOptionsError(problem);
}

/**
 * An {@link AxProgramOptionsError} for a rule beyond shapes (a unique name, a known
 * namespace, an input field): `issue` says where and what; `message`, when given, replaces
 * the words generated from it.
 */
export function programOptionsError(
  label: string,
  issue: AxOptionsIssue,
  message?: string,
): AxProgramOptionsError {
  return new AxProgramOptionsError({
    issues: [issue],
    message: `${label}: ${message ?? describeIssues([issue])}`,
  });
}

/** A short string of the user's as an issue shows it (`'docs'`), otherwise only its kind. */
export function shownValue(value: unknown): string {
  return typeof value === 'string' && value.length <= 40 ? `'${value}'` : kindOf(value);
}

/** A malformed signature; `position` is the 0-based offset of the problem in the text. */
export class AxSignatureError extends AxProgramError {
  /** 0-based offset into the signature text. */
  readonly position: number;
  /** The signature text. */
  readonly signature: string;

  constructor(signature: string, position: number, problem: string) {
    const pointer = `${signature}\n${' '.repeat(Math.max(0, position))}^`;
    super('invalid_signature', `Invalid signature at position ${position}: ${problem}\n${pointer}`);
    this.position = position;
    this.signature = signature;
  }
}
