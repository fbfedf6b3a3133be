/**
 * How the replay transport compares what a program sends with what was recorded, and the
 * error it raises when they part. Isomorphic: no `node:` imports.
 */
import { AxMCPError } from '../protocol/errors.js';
import { isObject } from '../protocol/json.js';
import { AX_MCP_REDACTED, type AxMCPRecordingStep, describeStep } from './recording-format.js';

/** What was expected and what came instead, for {@link AxMCPReplayMismatchError}. */
export interface AxMCPReplayMismatch {
  /** The recorded step the program diverged at (its `index` names it). */
  step: AxMCPRecordingStep | undefined;
  /** What the program sent, for example `request "tools/call"`. */
  sent: string;
  /** For a params mismatch (strict replay): where they differ, as a JSON path (`$.arguments.text`). */
  path?: string;
  recorded?: unknown;
  actual?: unknown;
}

/**
 * The program did not send what the recording says it sent next: another method, or (with
 * `strict`) other params. The message names the step; `mismatch` holds the details.
 */
export class AxMCPReplayMismatchError extends AxMCPError {
  readonly mismatch: AxMCPReplayMismatch;
  /** The index of the recorded step the program diverged at, or -1 past the end of the recording. */
  readonly stepIndex: number;

  constructor(mismatch: AxMCPReplayMismatch, reason: string, context: { endpoint?: string } = {}) {
    const where = mismatch.step ? describeStep(mismatch.step) : 'the end of the recording';
    super('invalid_message', `Replay mismatch at ${where}: ${reason}`, context);
    this.mismatch = mismatch;
    this.stepIndex = mismatch.step?.index ?? -1;
  }
}

/** Request params that change from run to run and are never compared. */
const VOLATILE_META = new Set(['progressToken', 'traceparent', 'tracestate', 'baggage']);

/**
 * The first place where `actual` differs from `recorded`, as a JSON path, or `undefined`
 * when they match. A recorded {@link AX_MCP_REDACTED} matches anything; `_meta.progressToken`
 * (which is the request id) and trace context are ignored.
 */
export function firstDifference(recorded: unknown, actual: unknown, path = '$'): string | undefined {
  if (recorded === AX_MCP_REDACTED) return undefined;
  if (Array.isArray(recorded) || Array.isArray(actual)) {
    if (!Array.isArray(recorded) || !Array.isArray(actual) || recorded.length !== actual.length) return path;
    for (let i = 0; i < recorded.length; i++) {
      const difference = firstDifference(recorded[i], actual[i], `${path}[${i}]`);
      if (difference) return difference;
    }
    return undefined;
  }
  if (isObject(recorded) && isObject(actual)) {
    const inMeta = path.endsWith('._meta');
    const keys = new Set([...Object.keys(recorded), ...Object.keys(actual)]);
    for (const key of [...keys].sort()) {
      if (inMeta && VOLATILE_META.has(key)) continue;
      const difference = firstDifference(recorded[key], actual[key], `${path}.${key}`);
      if (difference) return difference;
    }
    return undefined;
  }
  if (isObject(recorded) || isObject(actual)) return path;
  return Object.is(recorded, actual) ? undefined : path;
}

/** The value at a `$.a.b[0]` path, for error messages. */
export function valueAt(root: unknown, path: string): unknown {
  let node = root;
  for (const part of path.replace(/^\$/, '').match(/\.[^.[\]]+|\[\d+\]/g) ?? []) {
    if (node === undefined || node === null) return undefined;
    node = part.startsWith('[')
      ? (node as unknown[])[Number(part.slice(1, -1))]
      : (node as Record<string, unknown>)[part.slice(1)];
  }
  return node;
}

/** A short JSON rendering of a value for an error message. */
export function preview(value: unknown): string {
  const text = value === undefined ? 'nothing' : JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}
