/**
 * The request headers of the 2026-07-28 Streamable HTTP transport: `MCP-Protocol-Version`,
 * `Mcp-Method` and `Mcp-Name` here; the `=?base64?…?=` value codec (`header-value.ts`) and
 * the tool-derived `Mcp-Param-{Name}` headers (`tool-param-headers.ts`,
 * `param-header-values.ts`) are re-exported, so that this stays the one module to import.
 *
 * Pure and isomorphic: web-standard `TextEncoder`/`TextDecoder` only, no `node:` imports.
 */
import { AxMCPError } from './errors.js';
import { encodeHeaderValue, isPlainASCII, quote } from './header-value.js';

export { decodeHeaderValue, encodeHeaderValue } from './header-value.js';
export { paramHeaderValues } from './param-header-values.js';
export {
  type ToolParamHeader,
  type ToolParamHeadersResult,
  type ToolParamHeaderType,
  toolParamHeaders,
} from './tool-param-headers.js';

/** The request field that `Mcp-Name` mirrors, per method. */
export type McpNameSource = 'name' | 'uri' | 'taskId';

/**
 * Methods whose requests carry `Mcp-Name`, and the `params` field it mirrors:
 * `tools/call` and `prompts/get` → `name`, `resources/read` → `uri` (core protocol), and
 * `tasks/get`, `tasks/update`, `tasks/cancel` → `taskId` (the tasks extension).
 */
export const MCP_NAME_SOURCES: ReadonlyMap<string, McpNameSource> = new Map<string, McpNameSource>([
  ['tools/call', 'name'],
  ['prompts/get', 'name'],
  ['resources/read', 'uri'],
  ['tasks/get', 'taskId'],
  ['tasks/update', 'taskId'],
  ['tasks/cancel', 'taskId'],
]);

/**
 * The raw (unencoded) `Mcp-Name` value for a request: `params.name` for `tools/call` and
 * `prompts/get`, `params.uri` for `resources/read`, `params.taskId` for `tasks/get`,
 * `tasks/update` and `tasks/cancel`.
 *
 * @returns `undefined` when the method carries no `Mcp-Name`, or when the source field is
 *   not an own string property of `params` ({@link modernHeaders} rejects the latter).
 */
export function mcpNameFor(method: string, params: Record<string, unknown> | undefined): string | undefined {
  const source = MCP_NAME_SOURCES.get(method);
  if (source === undefined || params === undefined || params === null) return undefined;
  if (!Object.hasOwn(params, source)) return undefined;
  const value = params[source];
  return typeof value === 'string' ? value : undefined;
}

/** The standard headers of one 2026-07-28 Streamable HTTP request (lowercase names). */
export interface ModernRequestHeaders {
  'mcp-protocol-version': string;
  'mcp-method': string;
  /** Present for the methods in {@link MCP_NAME_SOURCES}; already encoded. */
  'mcp-name'?: string;
}

function requirePlainValue(what: string, value: string): void {
  if (value.length === 0 || !isPlainASCII(value)) {
    throw new AxMCPError(
      'invalid_argument',
      `${what} ${quote(value)} cannot be sent as an HTTP header value`,
    );
  }
}

/**
 * The standard request headers for a 2026-07-28 Streamable HTTP POST:
 * `MCP-Protocol-Version`, `Mcp-Method` and, where the method has one, the encoded `Mcp-Name`.
 * `Mcp-Param-*` headers come from {@link paramHeaderValues}.
 *
 * @param protocolVersion - the value also sent in `_meta["io.modelcontextprotocol/protocolVersion"]`.
 * @throws {AxMCPError} `invalid_argument` when the method or version is empty or not plain
 *   ASCII (these two headers have no Base64 form), or when a method that needs `Mcp-Name`
 *   lacks its string source field.
 */
export function modernHeaders(
  method: string,
  params: Record<string, unknown> | undefined,
  protocolVersion: string,
): ModernRequestHeaders {
  requirePlainValue('Protocol version', protocolVersion);
  requirePlainValue('Method', method);
  const headers: ModernRequestHeaders = { 'mcp-protocol-version': protocolVersion, 'mcp-method': method };
  const source = MCP_NAME_SOURCES.get(method);
  if (source !== undefined) {
    const name = mcpNameFor(method, params);
    if (name === undefined) {
      throw new AxMCPError(
        'invalid_argument',
        `${method} needs a string params.${source} for the Mcp-Name header`,
      );
    }
    headers['mcp-name'] = encodeHeaderValue(name);
  }
  return headers;
}
