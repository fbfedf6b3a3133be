/**
 * Retry timing: capped exponential backoff with jitter.
 */

/** How failed attempts are retried. */
export interface AxEventRetryPolicy {
  /** Attempts in all, including the first. */
  maxAttempts: number;
  /** Delay after the first failure. */
  baseMs: number;
  /** Upper bound of any delay. */
  maxMs: number;
  /** Fraction of the delay that is randomized (0 = none, 1 = full jitter). */
  jitter: number;
}

/** The default policy: 5 attempts, 1 s doubling to at most 60 s, half jitter. */
export const DEFAULT_RETRY_POLICY: AxEventRetryPolicy = {
  maxAttempts: 5,
  baseMs: 1000,
  maxMs: 60_000,
  jitter: 0.5,
};

/**
 * The delay before the attempt after `attempt` (1-based):
 * `d = min(maxMs, baseMs · 2^(attempt−1))`, then a random share `jitter` of `d` is taken off.
 */
export function retryDelayMs(
  attempt: number,
  policy: AxEventRetryPolicy,
  random: () => number = Math.random,
): number {
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, Math.min(attempt - 1, 52)));
  const r = Math.min(1, Math.max(0, random()));
  return Math.max(0, Math.round(exp - exp * policy.jitter * r));
}
