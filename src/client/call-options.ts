/**
 * The per-call options of `AxMCPClient`'s methods, checked on every call. The options were
 * read field by field, so a misspelt one went nowhere without a word: `{ timeoutMS: 5_000 }`
 * left a call on the client's 60 s default, `{ pollIntervalMS }` a task on its default pace,
 * `inspectCatalog({ refrsh: true })` served the cached lists.
 */

import {
  ABORT_SIGNAL,
  boolean,
  extend,
  findOptionsProblem,
  func,
  number,
  object,
  oneOf,
  type Shape,
} from '../options/check.js';
import { type AxMCPErrorContext, AxMCPInvalidOptionsError } from '../protocol/errors.js';

/** `{ signal? }`: the options of the methods that take nothing else. */
export const SIGNAL_OPTIONS = object({ signal: ABORT_SIGNAL }, { expected: 'options { signal? }' });

/** `AxMCPCallOptions`. */
export const CALL_OPTIONS = object(
  {
    signal: ABORT_SIGNAL,
    timeoutMs: number({ min: 0 }),
    onProgress: func('a function (progress) => void'),
  },
  { expected: 'call options { signal?, timeoutMs?, onProgress? }', aliases: { timeout: 'timeoutMs' } },
);

/** `AxMCPToolCallOptions`. */
export const TOOL_CALL_OPTIONS = extend(
  CALL_OPTIONS,
  {
    taskHandling: oneOf('await', 'expose'),
    onStatus: func('a function (task) => void'),
    pollIntervalMs: number({ min: 0 }),
  },
  {
    expected:
      'tool call options { signal?, timeoutMs?, onProgress?, taskHandling?, onStatus?, pollIntervalMs? }',
  },
);

/** The options of the legacy task draft's `callToolTask`. */
export const DRAFT_TASK_OPTIONS = extend(
  CALL_OPTIONS,
  { ttlMs: number({ min: 0 }) },
  { expected: 'options { signal?, timeoutMs?, onProgress?, ttlMs? }' },
);

/** `AxMCPTaskWaitOptions`. */
export const TASK_WAIT_OPTIONS = object(
  { signal: ABORT_SIGNAL, onStatus: func('a function (task) => void'), pollIntervalMs: number({ min: 0 }) },
  { expected: 'options { signal?, onStatus?, pollIntervalMs? }' },
);

/** `AxMCPListenOptions`. */
export const LISTEN_OPTIONS = object(
  {
    signal: ABORT_SIGNAL,
    retryDelayMs: number({ min: 0 }),
    maxRetryDelayMs: number({ min: 0 }),
    onError: func('a function (error) => void'),
  },
  { expected: 'options { signal?, retryDelayMs?, maxRetryDelayMs?, onError? }' },
);

/** The options of `inspectCatalog`. */
export const CATALOG_OPTIONS = object(
  { refresh: boolean(), signal: ABORT_SIGNAL },
  { expected: 'options { refresh?, signal? }', aliases: { force: 'refresh' } },
);

/** The options of `refresh`. */
export const REFRESH_OPTIONS = object(
  { force: boolean() },
  { expected: 'options { force? }', aliases: { refresh: 'force' } },
);

/**
 * A rejected promise when `options` do not fit `shape` (the methods answer with promises, so
 * a misuse arrives where their other failures do), `undefined` when they fit.
 */
export function refusedOptions(
  shape: Shape,
  options: unknown,
  method: string,
  where: () => AxMCPErrorContext,
): Promise<never> | undefined {
  if (options === undefined) return undefined;
  const problem = findOptionsProblem(shape, options, `${method} options`);
  return problem ? Promise.reject(new AxMCPInvalidOptionsError(problem, where())) : undefined;
}
