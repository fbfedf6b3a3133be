/**
 * Reads a chat-completions SSE stream: yields text and tool-call deltas as they arrive and
 * assembles the final response. Parsing is incremental (`eventsource-parser`); the total
 * size is bounded. Internal.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { isObject } from '../protocol/json.js';
import { AxAIError } from './errors.js';
import type { Deadline } from './http.js';
import { finishReason, parseUsage } from './openai-wire.js';
import type { AxAIChatResponse, AxAIChatStreamEvent, AxAIToolCall, AxAIUsage } from './types.js';

interface PartialCall {
  id: string;
  name: string;
  arguments: string;
}

/** Yields the stream's deltas, then `finish` with the assembled response. */
export async function* readChatStream(
  body: ReadableStream<Uint8Array>,
  deadline: Deadline,
  provider: string,
  maxBytes: number,
): AsyncGenerator<AxAIChatStreamEvent> {
  const invalid = (what: string) =>
    new AxAIError('invalid_response', `${provider} streamed ${what}`, { provider });
  const queue: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (message) => void queue.push(message) });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let bytes = 0;
  let text = '';
  let sawText = false;
  let refusal = '';
  let finish: unknown;
  let usage: AxAIUsage | undefined;
  let model: string | undefined;
  let id: string | undefined;
  let done = false;
  const calls = new Map<number, PartialCall>();
  try {
    while (!done) {
      const read = await reader.read();
      if (read.done) break;
      deadline.reset();
      bytes += read.value.byteLength;
      if (bytes > maxBytes) {
        throw new AxAIError('response_too_large', `${provider}: the stream exceeded ${maxBytes} bytes`, {
          provider,
        });
      }
      parser.feed(decoder.decode(read.value, { stream: true }));
      while (queue.length > 0) {
        const message = queue.shift() as EventSourceMessage;
        if (message.data === '[DONE]') {
          done = true;
          break;
        }
        let chunk: unknown;
        try {
          chunk = JSON.parse(message.data);
        } catch {
          throw invalid('an event that is not JSON');
        }
        if (!isObject(chunk)) throw invalid('an event that is not an object');
        if (isObject(chunk.error)) {
          const detail =
            typeof chunk.error.message === 'string' ? chunk.error.message.slice(0, 300) : 'an error';
          throw new AxAIError('server_error', `${provider} failed mid-stream: ${detail}`, { provider });
        }
        if (typeof chunk.model === 'string') model = chunk.model;
        if (typeof chunk.id === 'string') id = chunk.id;
        usage = parseUsage(chunk.usage) ?? usage;
        const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
        if (!isObject(choice)) continue;
        if (choice.finish_reason !== undefined && choice.finish_reason !== null)
          finish = choice.finish_reason;
        const delta = choice.delta;
        if (!isObject(delta)) continue;
        if (typeof delta.content === 'string' && delta.content !== '') {
          text += delta.content;
          sawText = true;
          yield { type: 'text', delta: delta.content };
        }
        if (typeof delta.refusal === 'string') refusal += delta.refusal;
        if (Array.isArray(delta.tool_calls)) {
          for (const call of delta.tool_calls) yield toolCallDelta(call, calls, invalid);
        }
      }
    }
  } finally {
    reader.cancel().catch(() => {});
    reader.releaseLock();
  }
  const toolCalls: AxAIToolCall[] = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
  for (const call of toolCalls) {
    if (call.id === '' || call.name === '') throw invalid('a tool call without id or name');
  }
  const response: AxAIChatResponse = {
    message: {
      role: 'assistant',
      content: sawText ? text : null,
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
      ...(refusal ? { refusal } : {}),
    },
    finishReason: finishReason(finish, toolCalls.length > 0),
  };
  if (usage) response.usage = usage;
  if (model) response.model = model;
  if (id) response.id = id;
  yield { type: 'finish', response };
}

function toolCallDelta(
  call: unknown,
  calls: Map<number, PartialCall>,
  invalid: (what: string) => AxAIError,
): AxAIChatStreamEvent {
  if (
    !isObject(call) ||
    typeof call.index !== 'number' ||
    !Number.isSafeInteger(call.index) ||
    call.index < 0
  ) {
    throw invalid('a tool call delta without an index');
  }
  if (call.index > 1024) throw invalid('more than 1024 tool calls');
  let partial = calls.get(call.index);
  if (!partial) calls.set(call.index, (partial = { id: '', name: '', arguments: '' }));
  const event: AxAIChatStreamEvent = { type: 'tool_call', index: call.index };
  if (typeof call.id === 'string' && call.id !== '') partial.id = event.id = call.id;
  const fn = call.function;
  if (isObject(fn)) {
    if (typeof fn.name === 'string' && fn.name !== '') {
      partial.name += fn.name;
      event.name = fn.name;
    }
    if (typeof fn.arguments === 'string' && fn.arguments !== '') {
      partial.arguments += fn.arguments;
      event.argumentsDelta = fn.arguments;
    }
  }
  return event;
}
