/**
 * The recording format shared by the recording and replay transports, and the redaction
 * that keeps secrets out of it. A recording is plain JSON: write it with `JSON.stringify`,
 * read it with `JSON.parse` and {@link parseAxMCPRecording}. Isomorphic: no `node:` imports.
 */

import { anyOf, array, func, instance, object, string } from '../options/check.js';
import { isThenable } from '../options/hook-answers.js';
import { AxMCPError, AxMCPInvalidOptionsError, assertMCPOptions } from '../protocol/errors.js';
import { isObject } from '../protocol/json.js';
import type { JSONRPCMessage } from '../protocol/jsonrpc.js';
import type { AxMCPEra } from '../protocol/versions.js';
import type { AxMCPTransport } from '../transport/types.js';

/** What replaces a redacted value. Replay treats it as "anything". */
export const AX_MCP_REDACTED = '[REDACTED]';

/** A failure the transport threw instead of answering (no JSON-RPC response). */
export interface AxMCPRecordedFailure {
  name: string;
  code: string;
  message: string;
  /** HTTP status, for `http_status` failures. */
  status?: number;
}

/** One message (or failure) of a recording, in the order it happened. */
export interface AxMCPRecordingStep {
  /** Position in the recording, from 0. */
  index: number;
  /** Milliseconds since recording started. */
  atMs: number;
  /** `send`: the client wrote it; `receive`: the server (or the transport) produced it. */
  direction: 'send' | 'receive';
  /** What the step carries. */
  type: 'request' | 'notification' | 'response' | 'failure';
  /** The JSON-RPC message, redacted (absent for failures). */
  message?: JSONRPCMessage;
  /** For `failure`: the id of the client request that failed, and the error. */
  requestId?: string | number;
  failure?: AxMCPRecordedFailure;
  /** The message came on the standalone event stream (legacy HTTP GET), not to the handlers. */
  via?: 'stream';
  /** The SSE event id it came with. */
  eventId?: string;
  /** Era classification traffic before the legacy handshake (a failed `server/discover` probe); replay skips it. */
  probe?: true;
}

/** A recorded MCP session. */
export interface AxMCPRecording {
  format: 'ax-mcp-recording';
  version: 1;
  /** The endpoint, as the transport names it (no credentials, no query). */
  endpoint: string;
  /** The transport kind it was recorded over (replay reports the same, so the client behaves the same). */
  transportKind: AxMCPTransport['kind'];
  /** The era the session spoke; replay hands it to classification instead of probing. */
  era: AxMCPEra | undefined;
  protocolVersion?: string;
  /** ISO 8601 time the recording started. */
  recordedAt: string;
  steps: AxMCPRecordingStep[];
  /** What the recorded program returned, when recorded through `recordAxMCPSession` (redacted). */
  result?: unknown;
}

/** How secrets are kept out of a recording. Redaction runs before anything is stored. */
export interface AxMCPRedactionOptions {
  /**
   * Exact secret values (tokens, passwords) to scrub wherever they appear inside any string,
   * each at least 4 characters: a shorter one is refused (`invalid_options`) rather than kept.
   */
  secrets?: readonly string[];
  /** More object keys whose values are secrets (matched case-insensitively), on top of the built-in ones. */
  keys?: readonly (string | RegExp)[];
  /**
   * A last say on each primitive value: return a replacement (for example {@link AX_MCP_REDACTED})
   * or the value, synchronously. `undefined`, a promise, a function are refused (`invalid_options`).
   */
  redact?: (path: readonly (string | number)[], value: unknown) => unknown;
}

/** Keys whose values are credentials: `password`, `apiKey`, `access_token`, `authorization`, … */
const SECRET_KEY =
  /secret|passw(or)?d|passphrase|api[-_]?key|private[-_]?key|credential|authorization|cookie|bearer/i;
/** `token`, `access_token`, `refreshToken`, … but not `progressToken` or counts like `maxTokens`. */
const TOKEN_KEY = /(^|[-_])token$|[a-z]Token$/;
const NOT_SECRET = new Set(['progressToken', 'nextToken']);
/** Values that look like credentials whatever their key: bearer headers, JWTs, well-known key formats. */
const SECRET_VALUES: readonly RegExp[] = [
  /\bBearer\s+[\w\-.~+/]+=*/gi,
  /\beyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]*/g,
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  /\b(ghp|gho|ghu|ghs|github_pat)_[A-Za-z0-9_]{16,}/g,
  /\bxox[abpr]-[A-Za-z0-9-]{10,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
];

/**
 * What is wrong with an answer of `redact`, if anything: a promise (an async `redact`) or
 * `undefined` (a branch that forgot `return value`) would leave a hole where a value was.
 */
function redactAnswerProblem(answer: unknown): string | undefined {
  if (answer === undefined) return 'undefined';
  if (typeof answer === 'function' || typeof answer === 'symbol' || typeof answer === 'bigint')
    return `a ${typeof answer}`;
  if (isThenable(answer)) return 'a promise';
  return undefined;
}

/** The shortest value `secrets` takes: a shorter one would be scrubbed out of unrelated text. */
export const MIN_SECRET_LENGTH = 4;

/**
 * The shapes of {@link AxMCPRedactionOptions}, for every options object that takes them. A
 * secret too short to scrub was dropped without a word, and so stayed in the recording.
 */
export const REDACTION_KEYS = {
  secrets: array(
    instance(
      `a secret of ${MIN_SECRET_LENGTH} characters or more (a shorter one would be scrubbed out of unrelated text: name its key in keys, or use redact)`,
      (value) => typeof value === 'string' && value.length >= MIN_SECRET_LENGTH,
    ),
  ),
  keys: array(
    anyOf(
      string({ nonEmpty: true }),
      instance('a RegExp', (value) => value instanceof RegExp),
    ),
  ),
  redact: func('a function (path, value) => the value to record'),
} as const;
const REDACTION_OPTIONS = object(REDACTION_KEYS, { expected: 'options { secrets?, keys?, redact? }' });

/** The redaction options among larger ones (a recording transport's). */
export function redactionOptionsOf(options: AxMCPRedactionOptions): AxMCPRedactionOptions {
  const out: AxMCPRedactionOptions = {};
  if (options.secrets !== undefined) out.secrets = options.secrets;
  if (options.keys !== undefined) out.keys = options.keys;
  if (options.redact !== undefined) out.redact = options.redact;
  return out;
}

/**
 * Returns a redacted deep copy of a JSON value. Object keys named like credentials lose their
 * values. Its options are checked (a secret shorter than 4 characters, a misspelt key, a
 * `redact` answering `undefined` or a promise: `invalid_options`).
 */
export function redactRecordedValue(value: unknown, options: AxMCPRedactionOptions = {}): unknown {
  assertMCPOptions(REDACTION_OPTIONS, options, 'redactRecordedValue options');
  const secrets = options.secrets ?? [];
  const extraKeys = (options.keys ?? []).map((key) =>
    typeof key === 'string'
      ? new RegExp(`^${escapeRegExp(key)}$`, 'i')
      : // A global or sticky RegExp keeps its place between tests: /token/g matched every other key.
        new RegExp(key.source, key.flags.replace(/[gy]/g, '')),
  );
  const isSecretKey = (key: string) =>
    !NOT_SECRET.has(key) &&
    (SECRET_KEY.test(key) || TOKEN_KEY.test(key) || extraKeys.some((k) => k.test(key)));
  const walk = (node: unknown, path: (string | number)[]): unknown => {
    if (Array.isArray(node)) return node.map((item, i) => walk(item, [...path, i]));
    if (isObject(node)) {
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(node)) {
        const copy =
          isSecretKey(key) && child !== null && typeof child !== 'object'
            ? AX_MCP_REDACTED
            : walk(child, [...path, key]);
        // defineProperty: a server-chosen `__proto__` key stays a plain key.
        Object.defineProperty(out, key, {
          value: copy,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    let leaf = node;
    if (typeof leaf === 'string') {
      let text = leaf;
      for (const secret of secrets) text = text.split(secret).join(AX_MCP_REDACTED);
      for (const pattern of SECRET_VALUES) text = text.replace(pattern, AX_MCP_REDACTED);
      leaf = text;
    }
    if (!options.redact) return leaf;
    const answer = options.redact(path, leaf);
    const problem = redactAnswerProblem(answer);
    if (problem) {
      const issue = {
        path: 'redact',
        expected: 'the value to record (the value given, to keep it)',
        received: problem,
      };
      const where = path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${part}`)).join('');
      throw new AxMCPInvalidOptionsError({
        issues: [issue],
        message: `redact answered ${problem} for $${where}: it must return the value to record (the value it was given, to keep it), synchronously`,
      });
    }
    return answer;
  };
  return walk(value, []);
}

/**
 * Checks that a parsed JSON value is a recording this version understands and returns it.
 * Throws `AxMCPError('invalid_argument')` naming what is wrong.
 */
export function parseAxMCPRecording(value: unknown): AxMCPRecording {
  const fail = (why: string) => new AxMCPError('invalid_argument', `Not an ax-mcp recording: ${why}`);
  if (!isObject(value) || value.format !== 'ax-mcp-recording') throw fail('format is not "ax-mcp-recording"');
  if (value.version !== 1) throw fail(`version ${String(value.version).slice(0, 20)} is not 1`);
  if (!Array.isArray(value.steps)) throw fail('steps is not an array');
  if (value.era !== undefined && value.era !== 'legacy' && value.era !== 'modern')
    throw fail('era is invalid');
  for (const [i, step] of value.steps.entries()) {
    if (!isObject(step) || (step.direction !== 'send' && step.direction !== 'receive')) {
      throw fail(`step ${i} has no direction`);
    }
    if (step.type !== 'failure' && !isObject(step.message)) throw fail(`step ${i} has no message`);
  }
  return value as unknown as AxMCPRecording;
}

/** A short, human-readable name of a step for error messages: `step 7 (send request "tools/call")`. */
export function describeStep(step: AxMCPRecordingStep): string {
  const message = step.message;
  const what =
    message && 'method' in message
      ? `${step.type} "${message.method}"`
      : `${step.type} id ${String(message && 'id' in message ? message.id : step.requestId)}`;
  return `step ${step.index} (${step.direction} ${what})`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
