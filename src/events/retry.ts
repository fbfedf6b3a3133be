/**
 * Retry timing of deliveries: capped exponential backoff with jitter.
 */
import type { AxBackoffPolicy } from '../backoff/backoff.js';

/** How failed attempts are retried: the package's backoff, and how many attempts in all. */
export interface AxEventRetryPolicy extends AxBackoffPolicy {
  /** Attempts in all, including the first. */
  maxAttempts: number;
}

/** The default policy: 5 attempts, 1 s doubling to at most 60 s, half jitter. */
export const DEFAULT_RETRY_POLICY: AxEventRetryPolicy = {
  maxAttempts: 5,
  baseMs: 1000,
  maxMs: 60_000,
  jitter: 0.5,
};
