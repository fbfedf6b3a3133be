import { backoffDelayMs } from '../../backoff/backoff.js';
import { number, object } from '../../options/check.js';
import { AxMCPHTTPStatusError, AxMCPTransportError } from '../../protocol/errors.js';

/** When and how long to wait before sending a safe request again. */
export interface AxMCPRetryOptions {
  /** Retries after the first attempt (default 3). */
  attempts?: number;
  /** First backoff step in ms (default 250), doubled each retry. */
  baseDelayMs?: number;
  /** Upper bound of any wait, including a server's `Retry-After` (default 30 000). */
  maxDelayMs?: number;
}

/** The shape of {@link AxMCPRetryOptions}. */
export const RETRY_OPTIONS = object(
  {
    attempts: number({ integer: true, min: 0 }),
    baseDelayMs: number({ min: 0 }),
    maxDelayMs: number({ min: 0 }),
  },
  {
    expected: 'an object { attempts?, baseDelayMs?, maxDelayMs? }',
    aliases: {
      retries: 'attempts',
      maxAttempts: 'attempts',
      maxRetries: 'attempts',
      delayMs: 'baseDelayMs',
      baseDelay: 'baseDelayMs',
      maxDelay: 'maxDelayMs',
    },
  },
);

export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/** Connection-level failures as node:http reports them (`fetch` reports them as a `TypeError`). */
const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * Did the exchange fail on the network, with no HTTP answer, whichever HTTP stack sent it: a
 * `fetch` network error, or a node:http connection error (a reset keep-alive socket, a refused
 * connection). Both entries must retry the same failures.
 */
export function isNetworkFailure(error: unknown): boolean {
  if (!(error instanceof AxMCPTransportError) || error.code !== 'transport_error') return false;
  const cause = error.cause;
  if (cause instanceof TypeError) return true;
  const code = typeof cause === 'object' && cause !== null ? (cause as { code?: unknown }).code : undefined;
  return typeof code === 'string' && NETWORK_ERROR_CODES.has(code);
}

export function resolveRetryPolicy(option: AxMCPRetryOptions | false | undefined): RetryPolicy {
  if (option === false) return { attempts: 0, baseDelayMs: 0, maxDelayMs: 0 };
  return {
    attempts: Math.max(0, option?.attempts ?? 3),
    baseDelayMs: Math.max(0, option?.baseDelayMs ?? 250),
    maxDelayMs: Math.max(0, option?.maxDelayMs ?? 30_000),
  };
}

/**
 * The wait before retry `attempt + 1` (`attempt` 0-based): the package's backoff with half
 * jitter; a server's `Retry-After` wins when given (bounded by `maxDelayMs`).
 */
export function httpRetryWaitMs(policy: RetryPolicy, attempt: number, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined) return Math.min(policy.maxDelayMs, Math.max(0, retryAfterMs));
  return backoffDelayMs(attempt + 1, { baseMs: policy.baseDelayMs, maxMs: policy.maxDelayMs, jitter: 0.5 });
}

/** Parses `Retry-After` as delay-seconds or an HTTP date; undefined when absent or malformed. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * The wait before sending again after `error` on attempt `attempt` (0-based), or `undefined`:
 * give up (attempts spent, or a failure that is not a 429/502/503/504 or a network failure).
 */
export function retryWaitAfter(policy: RetryPolicy, error: unknown, attempt: number): number | undefined {
  if (attempt >= policy.attempts) return undefined;
  if (error instanceof AxMCPHTTPStatusError && RETRYABLE_STATUSES.has(error.status)) {
    return httpRetryWaitMs(policy, attempt, error.retryAfterMs);
  }
  if (isNetworkFailure(error)) return httpRetryWaitMs(policy, attempt);
  return undefined;
}
