/** Capped exponential backoff with jitter, the one policy every retry and reconnect uses. */
export { type AxBackoffPolicy, backoffDelayMs } from './backoff.js';
