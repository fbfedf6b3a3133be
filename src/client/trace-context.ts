/**
 * W3C trace context for the server: when an OpenTelemetry span is active, every request carries
 * `traceparent` (and `tracestate`) in `params._meta`, so the server's spans join the caller's
 * trace. Both eras allow `_meta` on every request. The registered propagator writes them when
 * there is one (it may add `baggage`); otherwise they are built from the active span itself.
 */
import { context, isSpanContextValid, propagation, trace } from '@opentelemetry/api';

/** The trace context to put in `_meta`, or `undefined` when no valid span is active. */
export function traceContextMeta(): Record<string, string> | undefined {
  const active = context.active();
  const span = trace.getSpan(active);
  if (!span) return undefined;
  const spanContext = span.spanContext();
  if (!isSpanContextValid(spanContext)) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(active, carrier);
  if (carrier.traceparent === undefined) {
    const sampled = (spanContext.traceFlags & 1) === 1 ? '01' : '00';
    carrier.traceparent = `00-${spanContext.traceId}-${spanContext.spanId}-${sampled}`;
    const state = spanContext.traceState?.serialize();
    if (state) carrier.tracestate = state;
  }
  return carrier;
}
