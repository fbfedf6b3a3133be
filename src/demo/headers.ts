/**
 * The demo's own check of the 2026-07-28 standard request headers (`checkHeaders`): written
 * independently of our client's header codec, and kept consistent with the SDK's ladder
 * (presence of `MCP-Protocol-Version` and `Mcp-Method` on requests, `Mcp-Name` when the body
 * carries the mirrored value, `Mcp-Param-*` only when the argument is present and not null).
 */
import { isRecord, metaOf, PROTOCOL_VERSION_KEY, type RpcRequest } from './rpc.js';

/** One header the demo found wrong (recorded in `GET /control/state`). */
export interface AxMCPDemoHeaderViolation {
  readonly at: string;
  readonly method: string;
  /** Header name, e.g. `Mcp-Name`. */
  readonly header: string;
  /** What the body implies (`null` when the header was unexpected). */
  readonly expected: string | null;
  /** What arrived (`null` when missing, the raw value when undecodable). */
  readonly received: string | null;
}

/** Tool arguments mirrored into `Mcp-Param-*` headers, by tool name. */
export type ParamHeaderTable = ReadonlyMap<string, ReadonlyArray<{ header: string; argument: string }>>;

const NAME_SOURCE: Readonly<Record<string, 'name' | 'uri' | 'taskId'>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};
const SENTINEL_START = '=?base64?';
const SENTINEL_END = '?=';
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Decodes a header value (`=?base64?…?=` → UTF-8); `undefined` for a malformed sentinel. */
export function decodeHeaderValue(raw: string): string | undefined {
  const value = raw.trim();
  if (!(value.startsWith(SENTINEL_START) && value.endsWith(SENTINEL_END))) return value;
  const payload = value.slice(SENTINEL_START.length, value.length - SENTINEL_END.length);
  if (!CANONICAL_BASE64.test(payload)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(payload, 'base64'));
  } catch {
    return undefined;
  }
}

function primitiveText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

function violationOf(request: RpcRequest) {
  return (header: string, expected: string | null, received: string | null): AxMCPDemoHeaderViolation => ({
    at: new Date().toISOString(),
    method: request.method,
    header,
    expected,
    received,
  });
}

/**
 * Checks a modern request's `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` against its
 * body. Returns the first violation, or `undefined` when they agree.
 */
export function checkStandardHeaders(
  headers: Headers,
  request: RpcRequest,
): AxMCPDemoHeaderViolation | undefined {
  const violation = violationOf(request);
  const bodyVersion = metaOf(request)?.[PROTOCOL_VERSION_KEY];
  const version = headers.get('mcp-protocol-version')?.trim() ?? null;
  if (version === null || (typeof bodyVersion === 'string' && version !== bodyVersion)) {
    return violation('MCP-Protocol-Version', typeof bodyVersion === 'string' ? bodyVersion : null, version);
  }
  const method = headers.get('mcp-method')?.trim() ?? null;
  if (method !== request.method) return violation('Mcp-Method', request.method, method);

  const source = NAME_SOURCE[request.method];
  if (source !== undefined) {
    const bodyValue = request.params[source];
    const raw = headers.get('mcp-name');
    const expected = typeof bodyValue === 'string' ? bodyValue : null;
    if (raw === null) {
      if (expected !== null) return violation('Mcp-Name', expected, null);
    } else {
      const decoded = decodeHeaderValue(raw);
      if (decoded === undefined || (expected !== null && decoded !== expected)) {
        return violation('Mcp-Name', expected, raw);
      }
    }
  }
  return undefined;
}

/**
 * Checks the `Mcp-Param-*` headers of a `tools/call` against the arguments `paramHeaders`
 * declares for the tool. Returns the first violation, or `undefined`.
 */
export function checkParamHeaders(
  headers: Headers,
  request: RpcRequest,
  paramHeaders: ParamHeaderTable,
): AxMCPDemoHeaderViolation | undefined {
  const violation = violationOf(request);
  if (request.method === 'tools/call' && typeof request.params.name === 'string') {
    const declared = paramHeaders.get(request.params.name) ?? [];
    const args = isRecord(request.params.arguments) ? request.params.arguments : {};
    for (const { header, argument } of declared) {
      const name = `Mcp-Param-${header}`;
      const expected = Object.hasOwn(args, argument) ? primitiveText(args[argument]) : undefined;
      if (expected === undefined) continue;
      const raw = headers.get(name);
      if (raw === null) return violation(name, expected, null);
      const decoded = decodeHeaderValue(raw);
      const equal =
        decoded !== undefined &&
        (typeof args[argument] === 'number' ? Number(decoded) === args[argument] : decoded === expected);
      if (!equal) return violation(name, expected, raw);
    }
  }
  return undefined;
}

/** The `-32020` answer for a violation (HTTP 400, same `data.mismatch` shape as the SDK). */
export function headerMismatchBody(id: string | number, found: AxMCPDemoHeaderViolation): unknown {
  const body =
    found.expected === null
      ? `the ${found.header} header is malformed or unexpected`
      : `the body implies ${JSON.stringify(found.expected)} for ${found.header}`;
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: -32020,
      message: `Bad Request: the request headers and body disagree (${found.header})`,
      data: { mismatch: { header: found.header, body } },
    },
  };
}
