import {
  AxMCPProtocolError,
  type AxMCPURLElicitation,
  AxMCPURLElicitationRequiredError,
  RPC,
} from './errors.js';
import { isObject, parseUntrustedJSON } from './json.js';

/** A JSON-RPC request id. */
export type JSONRPCId = string | number;

/** Parameters of a request or notification: always an object in MCP. */
export type JSONRPCParams = Record<string, unknown>;

export interface JSONRPCRequest {
  jsonrpc: '2.0';
  id: JSONRPCId;
  method: string;
  params?: JSONRPCParams;
}

export interface JSONRPCNotification {
  jsonrpc: '2.0';
  method: string;
  params?: JSONRPCParams;
}

export interface JSONRPCErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export interface JSONRPCResultResponse {
  jsonrpc: '2.0';
  id: JSONRPCId;
  result: Record<string, unknown>;
}

export interface JSONRPCErrorResponse {
  jsonrpc: '2.0';
  id: JSONRPCId | null;
  error: JSONRPCErrorObject;
}

export type JSONRPCResponse = JSONRPCResultResponse | JSONRPCErrorResponse;

/** Any message that crosses the wire. */
export type JSONRPCMessage = JSONRPCRequest | JSONRPCNotification | JSONRPCResponse;

export function isResponse(message: JSONRPCMessage): message is JSONRPCResponse {
  return !('method' in message);
}

export function isErrorResponse(message: JSONRPCResponse): message is JSONRPCErrorResponse {
  return 'error' in message;
}

function invalid(reason: string): AxMCPProtocolError {
  return new AxMCPProtocolError(RPC.invalidRequest, `Invalid JSON-RPC message: ${reason}`, undefined, {
    code: 'invalid_message',
  });
}

function isId(value: unknown): value is JSONRPCId {
  return (
    (typeof value === 'string' && value.length <= 1024) ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}

/**
 * Validates one decoded JSON value as a JSON-RPC 2.0 message.
 * Throws {@link AxMCPProtocolError} with code `invalid_message` otherwise.
 */
export function toJSONRPCMessage(value: unknown): JSONRPCMessage {
  if (!isObject(value)) throw invalid('not an object');
  if (value.jsonrpc !== '2.0') throw invalid('"jsonrpc" must be "2.0"');
  if ('method' in value) {
    if (typeof value.method !== 'string' || value.method.length === 0)
      throw invalid('"method" must be a string');
    if (value.params !== undefined && !isObject(value.params)) throw invalid('"params" must be an object');
    if ('id' in value) {
      if (!isId(value.id)) throw invalid('"id" must be a string or number');
      return value as unknown as JSONRPCRequest;
    }
    return value as unknown as JSONRPCNotification;
  }
  if ('result' in value) {
    if (!isId(value.id)) throw invalid('response "id" must be a string or number');
    if (!isObject(value.result)) throw invalid('"result" must be an object');
    if ('error' in value) throw invalid('response has both "result" and "error"');
    return value as unknown as JSONRPCResultResponse;
  }
  if ('error' in value) {
    if (value.id !== null && !isId(value.id)) throw invalid('response "id" must be a string, number or null');
    const error = value.error;
    if (!isObject(error) || typeof error.code !== 'number' || !Number.isInteger(error.code)) {
      throw invalid('"error.code" must be an integer');
    }
    if (typeof error.message !== 'string') throw invalid('"error.message" must be a string');
    return value as unknown as JSONRPCErrorResponse;
  }
  throw invalid('neither a request, a notification nor a response');
}

/** Decodes one JSON-RPC message from text (one JSON document). */
export function parseJSONRPCMessage(text: string): JSONRPCMessage {
  return toJSONRPCMessage(parseUntrustedJSON(text));
}

/**
 * Decodes a body that may hold one message or a batch (2025-03-26 servers may batch).
 * Each element is validated on its own.
 */
export function parseJSONRPCBody(text: string): JSONRPCMessage[] {
  const messages = parseJSONRPCMessageOrBatch(text);
  return Array.isArray(messages) ? messages : [messages];
}

/** {@link parseJSONRPCBody} without wrapping a lone message in an array (the common case on a hot path). */
export function parseJSONRPCMessageOrBatch(text: string): JSONRPCMessage | JSONRPCMessage[] {
  const value = parseUntrustedJSON(text);
  return Array.isArray(value) ? value.map(toJSONRPCMessage) : toJSONRPCMessage(value);
}

/** Turns a JSON-RPC error object into a typed error. */
export function rpcError(error: JSONRPCErrorObject): AxMCPProtocolError {
  const message = typeof error.message === 'string' ? error.message.slice(0, 2000) : 'Unknown error';
  if (error.code === RPC.urlElicitationRequired) {
    const elicitations = urlElicitations(error.data);
    if (elicitations) return new AxMCPURLElicitationRequiredError(message, elicitations, error.data);
  }
  return new AxMCPProtocolError(error.code, message, error.data);
}

/** The URL-mode elicitations of a `-32042` error's data, or undefined when malformed. */
function urlElicitations(data: unknown): AxMCPURLElicitation[] | undefined {
  const list =
    typeof data === 'object' && data !== null ? (data as { elicitations?: unknown }).elicitations : undefined;
  if (!Array.isArray(list) || list.length === 0 || list.length > 16) return undefined;
  const out: AxMCPURLElicitation[] = [];
  for (const entry of list) {
    if (typeof entry !== 'object' || entry === null) return undefined;
    const { elicitationId, url, message } = entry as Record<string, unknown>;
    if (typeof elicitationId !== 'string' || typeof url !== 'string') return undefined;
    out.push({ elicitationId, url, message: typeof message === 'string' ? message.slice(0, 2000) : '' });
  }
  return out;
}
