/**
 * One backoff for the whole package: capped exponential delays with jitter, for request
 * retries (HTTP, AI services), event delivery retries and stream reconnects alike.
 */

/** How long to wait after the n-th failure in a row. */
export interface AxBackoffPolicy {
  /** The delay after the first failure, in ms. */
  baseMs: number;
  /** The upper bound of any delay, in ms. */
  maxMs: number;
  /**
   * The share of each delay that is random, from 0 (none) to 1 (full jitter: anywhere from 0
   * to the delay). Half jitter (0.5) keeps at least half the delay and spreads the rest, so
   * clients that failed together do not come back together.
   */
  jitter: number;
}

/**
 * The delay after `failures` failures in a row (1 = the first):
 * `d = min(maxMs, baseMs · 2^(failures − 1))`, less a random share `jitter` of `d`.
 * `random` is injectable for tests.
 */
export function backoffDelayMs(
  failures: number,
  policy: AxBackoffPolicy,
  random: () => number = Math.random,
): number {
  const exponent = Math.max(0, Math.min(failures - 1, 52));
  const delay = Math.min(policy.maxMs, policy.baseMs * 2 ** exponent);
  const share = Math.min(1, Math.max(0, policy.jitter)) * Math.min(1, Math.max(0, random()));
  return Math.max(0, Math.round(delay - delay * share));
}
