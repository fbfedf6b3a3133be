/**
 * Options of the in-memory event store: its limits and retention, and their shape.
 */

import { number, object } from '../options/check.js';

/** Limits and retention of {@link AxMemoryEventStore}. */
export interface AxMemoryEventStoreOptions {
  /** Non-terminal deliveries held at once before `append` reports full. Default 10,000. */
  maxPendingDeliveries?: number;
  /** Bytes of events with pending deliveries held at once before `append` reports full. Default 64 MiB. */
  maxPendingBytes?: number;
  /** Largest single event, in bytes. Default 1 MiB. */
  maxEventBytes?: number;
  /** Finished runs kept for `getRun` (oldest evicted first). Default 10,000. */
  maxRetainedRuns?: number;
  /** Dedupe keys kept (oldest evicted first); bounds the dedupe window. Default 100,000. */
  maxDedupeKeys?: number;
  /** How long finished runs and dedupe keys are kept. Default one hour. */
  retentionMs?: number;
  /** How long dead letters are kept. Default seven days. */
  deadLetterRetentionMs?: number;
}

const COUNT = number({ integer: true, min: 1 });
const DURATION = number({ min: 0 });

/** What {@link AxMemoryEventStore} accepts; checked once in the constructor. */
export const MEMORY_STORE_OPTIONS = object(
  {
    maxPendingDeliveries: COUNT,
    maxPendingBytes: COUNT,
    maxEventBytes: COUNT,
    maxRetainedRuns: number({ integer: true, min: 0 }),
    maxDedupeKeys: number({ integer: true, min: 0 }),
    retentionMs: DURATION,
    deadLetterRetentionMs: DURATION,
  },
  { expected: 'options { maxPendingDeliveries?, maxEventBytes?, retentionMs?, … }' },
);

/** The options with their defaults. */
export function memoryStoreLimits(options: AxMemoryEventStoreOptions): Required<AxMemoryEventStoreOptions> {
  return {
    maxPendingDeliveries: options.maxPendingDeliveries ?? 10_000,
    maxPendingBytes: options.maxPendingBytes ?? 64 * 1024 * 1024,
    maxEventBytes: options.maxEventBytes ?? 1024 * 1024,
    maxRetainedRuns: options.maxRetainedRuns ?? 10_000,
    maxDedupeKeys: options.maxDedupeKeys ?? 100_000,
    retentionMs: options.retentionMs ?? 60 * 60 * 1000,
    deadLetterRetentionMs: options.deadLetterRetentionMs ?? 7 * 24 * 60 * 60 * 1000,
  };
}
