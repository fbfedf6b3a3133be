/**
 * ax-mcp/testing: helpers for users' own tests — the event store conformance kit and a
 * manual clock for deterministic event-runtime tests.
 */
export { AxManualEventClock } from './events/clock.js';
export {
  type EventStoreConformanceOptions,
  runEventStoreConformance,
} from './testing/event-store-conformance.js';
