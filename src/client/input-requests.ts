import { AxMCPHandlerResultError, AxMCPProtocolError, RPC } from '../protocol/errors.js';
import { isObject } from '../protocol/json.js';
import type { AxMCPServerRequestContext } from './server-requests.js';

/** Fulfils one server-style request (`elicitation/create`, `sampling/createMessage`, `roots/list`). */
export type InputFulfiller = (
  method: string,
  params: Record<string, unknown>,
  context: AxMCPServerRequestContext,
) => Promise<Record<string, unknown>>;

const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Answers a map of input requests (multi round-trip requests and task input)
 * concurrently with the client's handlers. A request without a handler is a protocol
 * error: the server asked for something the client never declared.
 */
export async function answerInputRequests(
  inputRequests: unknown,
  fulfil: InputFulfiller,
  context: AxMCPServerRequestContext,
  skip?: ReadonlySet<string>,
): Promise<Record<string, unknown>> {
  if (!isObject(inputRequests)) {
    throw new AxMCPProtocolError(RPC.invalidParams, 'Server sent invalid inputRequests', undefined, {
      code: 'invalid_message',
    });
  }
  const entries = Object.entries(inputRequests).filter(([key]) => !skip?.has(key));
  const answers: Record<string, unknown> = Object.create(null);
  await Promise.all(
    entries.map(async ([key, request]) => {
      if (FORBIDDEN.has(key)) {
        throw new AxMCPProtocolError(RPC.invalidParams, `Refused input request key "${key}"`, undefined, {
          code: 'unsafe_key',
        });
      }
      if (!isObject(request) || typeof request.method !== 'string') {
        throw new AxMCPProtocolError(RPC.invalidParams, `Input request "${key}" has no method`, undefined, {
          code: 'invalid_message',
        });
      }
      const params = isObject(request.params) ? request.params : {};
      try {
        answers[key] = await fulfil(request.method, params, context);
      } catch (error) {
        // The caller's own handler is at fault, not the server: its typed error, as it is.
        if (error instanceof AxMCPHandlerResultError) throw error;
        const message = error instanceof Error ? error.message : String(error);
        throw new AxMCPProtocolError(
          RPC.methodNotFound,
          `Could not answer input request "${key}": ${message}`,
          undefined,
          {
            cause: error,
          },
        );
      }
    }),
  );
  // A plain object again for the wire; keys were checked above.
  return { ...answers };
}
