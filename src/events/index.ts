/**
 * The generic event runtime: CloudEvents envelopes with verified attribution, explicit
 * routes, targets and input plans, continuations, retries, dead letters, sinks, stores and
 * clocks. It knows nothing about MCP.
 */

export { type AxEventClock, AxManualEventClock, systemEventClock } from './clock.js';
export {
  type AxEvent,
  type AxEventCorrelation,
  type AxEventDraft,
  type AxEventEnvelope,
  type AxEventExtensionValue,
  type AxEventIdentity,
  type AxEventIngress,
  type AxEventIngressRecord,
  type AxEventLimits,
  type AxEventTrust,
  createEvent,
  DEFAULT_MAX_EVENT_BYTES,
  identityScope,
  isAnonymous,
  normalizeIngress,
} from './envelope.js';
export {
  AxEventBackpressureError,
  AxEventClosedError,
  AxEventConfigError,
  AxEventContinuationNotFoundError,
  AxEventError,
  type AxEventErrorCode,
  type AxEventErrorContext,
  type AxEventErrorInfo,
  AxEventInputError,
  AxEventLeaseLostError,
  AxEventOutcomeUnknownError,
  toEventErrorInfo,
} from './errors.js';
export {
  type AxEventInputField,
  type AxEventInputFieldType,
  AxEventInputPlan,
  type AxEventInputStep,
  eventInput,
} from './input.js';
export type { AxJsonValue } from './json.js';
export { AxMemoryEventStore, type AxMemoryEventStoreOptions } from './memory-store.js';
export {
  type AxEventPath,
  type AxEventPathRoot,
  type AxEventPathSegment,
  type AxEventPathView,
  eventPath,
  isEventPath,
  resolveEventPath,
} from './path.js';
export { type AxEventRetryPolicy, DEFAULT_RETRY_POLICY } from './retry.js';
export {
  type AxEventAuthorize,
  type AxEventHandler,
  type AxEventInstanceKey,
  type AxEventMatch,
  type AxEventPredicate,
  type AxEventRouteDefinition,
  type AxEventRouteExplanation,
  type AxEventRouteMismatch,
  type AxEventRouteMismatchCode,
  checkRoute,
} from './route.js';
export { AxEventRouteBuilder, eventRoute } from './route-builder.js';
export {
  type AxEventPublished,
  type AxEventPublishListener,
  AxEventRuntime,
  eventRuntime,
} from './runtime.js';
export type {
  AxEventErrorReport,
  AxEventRuntimeConfig,
  AxEventRuntimeOptions,
  AxEventWarning,
} from './runtime-options.js';
export {
  type AxEventPublisher,
  type AxEventPublishOptions,
  type AxEventReceipt,
  type AxEventSource,
  type AxEventSourceDescription,
  type AxEventWithheldType,
  AxPushEventSource,
  type AxPushEventSourceOptions,
  AxTimerEventSource,
  type AxTimerEventSourceOptions,
} from './source.js';
export {
  type AxEventStateStore,
  AxMemoryEventStateStore,
  type AxMemoryEventStateStoreOptions,
} from './state.js';
export {
  type AxEventAction,
  type AxEventAppendInput,
  type AxEventAppendItem,
  type AxEventAppendManyInput,
  type AxEventAppendResult,
  type AxEventClaim,
  type AxEventContinuation,
  type AxEventContinuationListing,
  type AxEventDeadLetter,
  type AxEventDeadLetterReason,
  type AxEventDedupeKey,
  type AxEventDelivery,
  type AxEventDeliveryDraft,
  type AxEventDurability,
  type AxEventPruneResult,
  type AxEventRun,
  type AxEventRunPage,
  type AxEventRunQuery,
  type AxEventRunStatus,
  type AxEventSinkDraft,
  type AxEventStore,
  type AxEventStoreCapabilities,
  type AxEventStoredEvent,
  type AxEventTransition,
  type EventStore,
  isTerminalRunStatus,
  TERMINAL_RUN_STATUSES,
} from './store.js';
export type {
  AxEventContext,
  AxEventContinuationRequest,
  AxEventForwardOptions,
  AxEventHandlerContext,
  AxEventMapInputContext,
  AxEventProgram,
  AxEventRetrySafety,
  AxEventSink,
  AxEventSinkContext,
  AxEventStateHandle,
  AxEventTargetDefinition,
  AxEventWaitFor,
} from './target.js';
export {
  type AxEventInputPlanner,
  AxEventTargetBuilder,
  checkTarget,
  eventTarget,
} from './target-builder.js';
