/**
 * One UCP REST exchange: headers (`UCP-Agent`, `Request-Id`, `Idempotency-Key`), the
 * application's authentication, the RFC 9421 signature (last, so it covers what was set),
 * the guarded fetch (SSRF policy on every hop), a deadline, a size-capped body read, JSON
 * parsing that refuses `__proto__`, and the mapping of every failure to an `AxUCPError`.
 */
import { type AxMCPAuthentication, applyAuthentication } from '../auth/index.js';
import { type AxMCPFetch, readBodyLimited } from '../net/guarded-fetch.js';
import { AxMCPError, AxMCPSSRFError } from '../protocol/errors.js';
import { parseUntrustedJSON } from '../protocol/json.js';
import { AxUCPError, type AxUCPErrorContext, type AxUCPMessage, AxUCPResponseError } from './errors.js';
import { type AxUCPMessageParts, type AxUCPSigner, signMessage } from './signatures.js';

/** What every exchange of one client shares. */
export interface ExchangeSettings {
  fetch: AxMCPFetch;
  /** The `UCP-Agent` header value (`profile="…"`). */
  agent: string;
  authentication: AxMCPAuthentication | AxMCPAuthentication[] | undefined;
  signer: AxUCPSigner | undefined;
  timeoutMs: number;
  maxResponseBytes: number;
  headers: Record<string, string>;
  namespace: string | undefined;
}

/** One request. */
export interface ExchangeRequest {
  method: 'GET' | 'POST' | 'PUT';
  url: URL;
  /** The serialized body: serialized once per logical call, so a retry sends the same bytes. */
  body?: Uint8Array;
  idempotencyKey?: string;
  operation: string;
  signal?: AbortSignal;
}

/** A response with its parsed body. */
export interface ExchangeResponse {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
  json: unknown;
  /** For response-signature verification. */
  parts: AxUCPMessageParts;
}

/** Whether a failure happened before any response arrived (network), so a retry might help. */
export function isNetworkFailure(error: unknown): boolean {
  return error instanceof AxUCPError && error.code === 'transport_error';
}

/** Sends one request and reads its response. Throws `AxUCPError` only. */
export async function exchange(
  settings: ExchangeSettings,
  request: ExchangeRequest,
): Promise<ExchangeResponse> {
  const endpoint = `${request.url.origin}${request.url.pathname}`;
  const context: AxUCPErrorContext = { endpoint, operation: request.operation };
  if (settings.namespace !== undefined) context.namespace = settings.namespace;
  const deadline = AbortSignal.timeout(settings.timeoutMs);
  const signal = request.signal ? AbortSignal.any([request.signal, deadline]) : deadline;
  const failure = (error: unknown, during: string): AxUCPError => {
    if (request.signal?.aborted)
      return new AxUCPError('aborted', `${request.operation} was aborted`, context);
    if (deadline.aborted) {
      return new AxUCPError(
        'timeout',
        `${request.operation}: no response within ${settings.timeoutMs} ms`,
        context,
      );
    }
    if (error instanceof AxUCPError) return error;
    if (error instanceof AxMCPSSRFError) {
      return new AxUCPError('ssrf_blocked', error.message, { ...context, cause: error });
    }
    if (error instanceof AxMCPError && error.code === 'message_too_large') {
      return new AxUCPError('message_too_large', `${request.operation}: ${error.message}`, context);
    }
    return new AxUCPError('transport_error', `${request.operation}: ${during} failed`, {
      ...context,
      cause: error,
    });
  };

  const headers = new Headers(settings.headers);
  headers.set('accept', 'application/json');
  headers.set('ucp-agent', settings.agent);
  headers.set('request-id', crypto.randomUUID());
  if (request.idempotencyKey !== undefined) headers.set('idempotency-key', request.idempotencyKey);
  if (request.body !== undefined) headers.set('content-type', 'application/json');
  let url = request.url;
  let response: Response;
  try {
    const authInput: Parameters<typeof applyAuthentication>[1] = {
      method: request.method,
      url,
      headers,
      signal,
    };
    if (request.body !== undefined) authInput.body = new TextDecoder().decode(request.body);
    const authenticated = await applyAuthentication(settings.authentication, authInput);
    url = authenticated.url;
    const finalHeaders = authenticated.headers;
    if (settings.signer) {
      const parts: AxUCPMessageParts = { method: request.method, url, headers: finalHeaders };
      if (request.body !== undefined) parts.body = request.body;
      await signMessage(parts, settings.signer);
    }
    const init: RequestInit = { method: request.method, headers: finalHeaders, signal, redirect: 'error' };
    if (request.body !== undefined) init.body = request.body as BodyInit;
    response = await settings.fetch(url, init);
  } catch (error) {
    throw failure(error, 'the request');
  }
  let bytes: Uint8Array;
  try {
    bytes = await readBodyLimited(response, settings.maxResponseBytes, signal);
  } catch (error) {
    throw failure(error, 'reading the response');
  }
  const parts: AxUCPMessageParts = { status: response.status, headers: response.headers };
  if (bytes.byteLength > 0) parts.body = bytes;
  const ok = response.status >= 200 && response.status < 300;
  let json: unknown;
  if (bytes.byteLength > 0) {
    try {
      json = parseUntrustedJSON(new TextDecoder().decode(bytes));
    } catch (error) {
      const unsafe = error instanceof AxMCPError && error.code === 'unsafe_key';
      if (ok || unsafe) {
        throw new AxUCPError(
          unsafe ? 'unsafe_key' : 'invalid_response',
          unsafe
            ? `${request.operation}: the response carries a "__proto__" key`
            : `${request.operation}: the response is not JSON`,
          { ...context, cause: error },
        );
      }
    }
  } else if (ok) {
    throw new AxUCPError('invalid_response', `${request.operation}: the response has no body`, context);
  }
  if (!ok) throw statusError(response, json, context);
  return { status: response.status, headers: response.headers, bytes, json, parts };
}

/** The business refused with a non-2xx status. */
function statusError(response: Response, json: unknown, context: AxUCPErrorContext): AxUCPResponseError {
  const body = typeof json === 'object' && json !== null ? (json as Record<string, unknown>) : {};
  const list = readMessages(body.messages);
  const ucpCode = typeof body.code === 'string' ? body.code : list.find((m) => m.type === 'error')?.code;
  const details: ConstructorParameters<typeof AxUCPResponseError>[2] = {
    status: response.status,
    messages: list,
    body: json,
  };
  if (ucpCode !== undefined) details.ucpCode = ucpCode.slice(0, 100);
  if (typeof body.continue_url === 'string') details.continueURL = body.continue_url;
  const retryAfter = Number(response.headers.get('retry-after'));
  if (Number.isFinite(retryAfter) && retryAfter >= 0) details.retryAfterMs = retryAfter * 1000;
  const code = response.status === 409 ? 'idempotency_conflict' : 'http_status';
  const what = ucpCode ? ` (${ucpCode.slice(0, 100)})` : '';
  return new AxUCPResponseError(
    code,
    `${context.operation ?? 'request'}: the business answered HTTP ${response.status}${what}`,
    details,
    context,
  );
}

/** The business's `messages[]`, shape-checked and capped (strings cut to 500 characters). */
export function readMessages(value: unknown): AxUCPMessage[] {
  if (!Array.isArray(value)) return [];
  const out: AxUCPMessage[] = [];
  for (const item of value.slice(0, 20)) {
    if (typeof item !== 'object' || item === null) continue;
    const record = item as Record<string, unknown>;
    const message: AxUCPMessage = {};
    for (const key of ['type', 'code', 'content', 'severity', 'path'] as const) {
      const v = record[key];
      if (typeof v === 'string') message[key] = v.slice(0, 500);
    }
    out.push(message);
  }
  return out;
}
