/**
 * Shapes of program options that belong to no single options type (the event context the
 * event runtime sets) and the check of a run's AI service. The options types declare their
 * schemas next to their interfaces and compose these.
 */
import { type AxAIService, isAIService } from '../ai/types.js';
import { instance, kindOf } from '../options/check.js';
import { programOptionsError } from './errors.js';

/** `eventContext`: set by the event runtime when an event wakes or resumes a program. */
export const EVENT_CONTEXT = instance(
  'an event context (the event runtime sets it)',
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { registerContinuation?: unknown }).registerContinuation === 'function',
);

/** The AI service argument of a run (`forward(ai, …)`, `axMCPChat(ai, …)`), checked before anything is sent. */
export function checkService(ai: unknown, label: string): asserts ai is AxAIService {
  if (isAIService(ai)) return;
  throw programOptionsError(label, {
    path: 'ai',
    expected: 'an AI service { name, capabilities, chat, streamingChat } (the first argument)',
    received: kindOf(ai),
  });
}
