/**
 * Evaluation: a program run over examples and scored by a metric. Evaluations run programs
 * many times, so MCP comes from recordings by default: a client with a live server behind it
 * stops the evaluation before anything is sent, unless `evaluationMode: 'live'` asks for it.
 */
import type { AxAIService } from '../ai/types.js';
import {
  ABORT_SIGNAL,
  ANY_OBJECT,
  anything,
  array,
  func,
  kindOf,
  number,
  object,
  oneOf,
  required,
} from '../options/check.js';
import { AxProgramError, assertProgramOptions, programOptionsError } from './errors.js';
import {
  type AxMCPClients,
  type AxMCPEvaluationMode,
  AxMCPExecutionContext,
  MCP_CLIENTS,
} from './mcp-context.js';
import { checkService } from './shapes.js';

/** A program as evaluation runs it: `ax()`, `agent()`, a flow, or anything with that `forward`. */
export interface AxEvaluableProgram<In, Out> {
  forward(
    ai: AxAIService,
    inputs: In,
    options: { mcpParent?: AxMCPExecutionContext; abortSignal?: AbortSignal },
  ): Promise<Out>;
}

/** One example: the inputs, and what a good answer looks like (for the metric). */
export interface AxEvaluationExample<In, Out> {
  input: In;
  expected?: Partial<Out>;
}

/** One scored run. A run that failed scores 0 and carries its error. */
export interface AxEvaluationRun<In, Out> {
  input: In;
  expected?: Partial<Out>;
  output?: Out;
  score: number;
  error?: unknown;
}

/** Options of {@link axEvaluate}. */
export interface AxEvaluateOptions<In, Out> {
  examples: readonly AxEvaluationExample<In, Out>[];
  /** Scores one run, usually between 0 and 1. */
  metric: (run: { input: In; output: Out; expected?: Partial<Out> }) => number | Promise<number>;
  /** MCP clients every run gets (as its parent context; the program's own clients add to them). */
  mcp?: AxMCPClients;
  /** `'replay'` (default): every MCP client must replay a recording. `'live'`: live servers, on purpose. */
  evaluationMode?: AxMCPEvaluationMode;
  /** Runs at once (default 1: a replayed session is one ordered recording). */
  concurrency?: number;
  abortSignal?: AbortSignal;
}

const EXAMPLE = object(
  { input: required(anything()), expected: ANY_OBJECT },
  {
    expected: 'an example { input, expected? }',
    aliases: { inputs: 'input', output: 'expected', outputs: 'expected' },
  },
);

/** What {@link axEvaluate} accepts; checked once per evaluation, before any run. */
const EVALUATE_OPTIONS = object(
  {
    examples: required(array(EXAMPLE, { expected: 'an array of examples { input, expected? }' })),
    metric: required(func('a function ({ input, output, expected }) => number')),
    mcp: MCP_CLIENTS,
    evaluationMode: oneOf('replay', 'live'),
    concurrency: number({ integer: true, min: 1 }),
    abortSignal: ABORT_SIGNAL,
  },
  {
    expected: 'an options object { examples, metric, mcp?, evaluationMode?, … }',
    aliases: { signal: 'abortSignal', mode: 'evaluationMode', dataset: 'examples', score: 'metric' },
  },
);

const LABEL = 'axEvaluate options';

/** What {@link axEvaluate} returns: the mean score and every run. */
export interface AxEvaluationResult<In, Out> {
  /** The mean score over every example (failed runs count as 0). */
  score: number;
  runs: AxEvaluationRun<In, Out>[];
}

/**
 * Runs `program` on every example and scores it with `metric`.
 *
 * @example
 * ```ts
 * const replayed = new AxMCPClient(new AxMCPReplayTransport(recording), { namespace: 'docs' });
 * const { score } = await axEvaluate(answer, llm, {
 *   mcp: replayed,
 *   examples: [{ input: { question: 'How do I reindex?' }, expected: { answer: 'start_reindex' } }],
 *   metric: ({ output, expected }) => (output.answer.includes(String(expected?.answer)) ? 1 : 0),
 * });
 * ```
 */
export async function axEvaluate<In, Out>(
  program: AxEvaluableProgram<In, Out>,
  ai: AxAIService,
  options: AxEvaluateOptions<In, Out>,
): Promise<AxEvaluationResult<In, Out>> {
  if (typeof (program as Partial<AxEvaluableProgram<In, Out>> | null)?.forward !== 'function') {
    throw programOptionsError('axEvaluate', {
      path: 'program',
      expected: 'a program with forward() (ax(), agent(), a flow, or your own)',
      received: kindOf(program),
    });
  }
  checkService(ai, 'axEvaluate');
  assertProgramOptions(EVALUATE_OPTIONS, options, LABEL);
  const concurrency = options.concurrency ?? 1;
  const mode = options.evaluationMode ?? 'replay';
  // Checks the clients given here at once; the program's own are checked when each run starts.
  const root = AxMCPExecutionContext.create(options.mcp, { evaluation: mode });
  const runs: AxEvaluationRun<In, Out>[] = new Array(options.examples.length);
  let next = 0;
  let stop: unknown;
  const worker = async () => {
    while (stop === undefined && next < options.examples.length) {
      const index = next++;
      const example = options.examples[index] as AxEvaluationExample<In, Out>;
      runs[index] = await runOne(program, ai, example, options, root).catch((error: unknown) => {
        stop ??= error;
        return { input: example.input, score: 0, error };
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, options.examples.length) }, worker));
  if (stop !== undefined) throw stop;
  const total = runs.reduce((sum, run) => sum + run.score, 0);
  return { score: runs.length === 0 ? 0 : total / runs.length, runs };
}

/** One example. Failures of the run are its score; a live client or an abort ends the evaluation. */
async function runOne<In, Out>(
  program: AxEvaluableProgram<In, Out>,
  ai: AxAIService,
  example: AxEvaluationExample<In, Out>,
  options: AxEvaluateOptions<In, Out>,
  root: AxMCPExecutionContext,
): Promise<AxEvaluationRun<In, Out>> {
  const base =
    example.expected === undefined
      ? { input: example.input }
      : { input: example.input, expected: example.expected };
  let output: Out;
  try {
    output = await program.forward(ai, example.input, {
      mcpParent: root,
      ...(options.abortSignal ? { abortSignal: options.abortSignal } : {}),
    });
  } catch (error) {
    if (ends(error) || options.abortSignal?.aborted) throw error;
    return { ...base, score: 0, error };
  }
  const score = await options.metric({ ...base, output });
  if (typeof score !== 'number' || Number.isNaN(score)) {
    throw programOptionsError(
      LABEL,
      {
        path: 'metric',
        expected: 'a function that returns a number',
        received: `one that returned ${kindOf(score)}`,
      },
      `metric returned ${kindOf(score)}, not a number`,
    );
  }
  return { ...base, output, score };
}

function ends(error: unknown): boolean {
  return error instanceof AxProgramError && error.code === 'live_mcp_in_evaluation';
}
