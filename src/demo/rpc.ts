/** Narrowing helpers for the JSON-RPC bodies the demo inspects before handing them to the SDK. */

/** The 2026-07-28 protocol version (the only modern one the SDK serves). */
export const MODERN_VERSION = '2026-07-28';
/** `_meta` key of the per-request protocol version. */
export const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
/** `_meta` key of the per-request client capabilities. */
export const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
/** `_meta` key of the listen subscription id. */
export const SUBSCRIPTION_ID_KEY = 'io.modelcontextprotocol/subscriptionId';
/** `_meta` key of the server identity on results. */
export const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
/** The Tasks extension id. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** `_meta` key that ties a legacy message to a task. */
export const RELATED_TASK_KEY = 'io.modelcontextprotocol/related-task';

/** A JSON object. */
export type JsonObject = Record<string, unknown>;

/** True for a non-null, non-array object. */
export function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A JSON-RPC request (has `method` and a string or number `id`). */
export interface RpcRequest {
  readonly id: string | number;
  readonly method: string;
  readonly params: JsonObject;
}

/** The JSON-RPC request in `body`, or `undefined` for notifications, responses, batches, junk. */
export function asRequest(body: unknown): RpcRequest | undefined {
  if (!isRecord(body) || typeof body.method !== 'string') return undefined;
  if (typeof body.id !== 'string' && typeof body.id !== 'number') return undefined;
  return { id: body.id, method: body.method, params: isRecord(body.params) ? body.params : {} };
}

/** The methods named by a body (a message or a batch). */
export function methodsOf(body: unknown): string[] {
  const messages = Array.isArray(body) ? body : [body];
  const out: string[] = [];
  for (const message of messages) {
    if (isRecord(message) && typeof message.method === 'string') out.push(message.method);
  }
  return out;
}

/** `params._meta` of a request. */
export function metaOf(request: RpcRequest): JsonObject | undefined {
  return isRecord(request.params._meta) ? request.params._meta : undefined;
}

/** True when the request's per-request capabilities declare the Tasks extension. */
export function declaresTasks(request: RpcRequest): boolean {
  const capabilities = metaOf(request)?.[CLIENT_CAPABILITIES_KEY];
  if (!isRecord(capabilities) || !isRecord(capabilities.extensions)) return false;
  return isRecord(capabilities.extensions[TASKS_EXTENSION]);
}

/** `-32021`: the capability a request needs is missing (always HTTP 400). */
export function missingTasksCapability(id: string | number): {
  status: number;
  body: JsonObject;
} {
  return {
    status: 400,
    body: {
      jsonrpc: '2.0',
      id,
      error: {
        code: -32021,
        message: 'Missing required client capability: the io.modelcontextprotocol/tasks extension',
        data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      },
    },
  };
}
