/**
 * ax-mcp/testing: helpers for users' own tests — recording and replay of MCP sessions, the event store conformance kit and a
 * manual clock for deterministic event-runtime tests.
 */
export { AxManualEventClock } from './events/clock.js';
export {
  type AxEventStoreConformanceOptions,
  type EventStoreConformanceOptions,
  runEventStoreConformance,
} from './testing/event-store-conformance.js';
export {
  type AxMCPRecordingOptions,
  AxMCPRecordingTransport,
  type AxMCPRecordSessionOptions,
  recordAxMCPSession,
} from './testing/recording.js';
export {
  AX_MCP_REDACTED,
  type AxMCPRecordedFailure,
  type AxMCPRecording,
  type AxMCPRecordingStep,
  type AxMCPRedactionOptions,
  parseAxMCPRecording,
  redactRecordedValue,
} from './testing/recording-format.js';
export { type AxMCPReplayOptions, AxMCPReplayTransport } from './testing/replay.js';
export {
  type AxMCPEvaluationMode,
  assertAxMCPEvaluationTransport,
  axMCPEvaluationTransport,
  isAxMCPReplayTransport,
} from './testing/replay-evaluation.js';
export { type AxMCPReplayMismatch, AxMCPReplayMismatchError } from './testing/replay-match.js';
