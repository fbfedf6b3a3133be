/**
 * Declaring MCP Apps support to servers: `extensions["io.modelcontextprotocol/ui"]` in the
 * client capabilities — in `initialize` (2025-11-25) and in every request's `_meta` (2026-07-28).
 * Isomorphic: no `node:` imports.
 */
import { array, object, required, string } from '../options/check.js';
import { assertMCPOptions } from '../protocol/errors.js';
import { isObject } from '../protocol/json.js';
import type { JSONRPCRequest, JSONRPCResponse } from '../protocol/jsonrpc.js';
import { META } from '../protocol/meta.js';
import type { AxMCPSendOptions, AxMCPTransport } from '../transport/types.js';
import { AxMCPWrappingTransport } from '../transport/wrapping-transport.js';
import { AX_MCP_APP_MIME_TYPE, AX_MCP_APPS_EXTENSION } from './app-document.js';

/** The shape of the extension settings `{ mimeTypes }`. */
const APPS_EXTENSION_SETTINGS = object(
  { mimeTypes: required(array(string({ nonEmpty: true }), { minLength: 1 })) },
  { expected: 'an object { mimeTypes }', aliases: { mimeType: 'mimeTypes', types: 'mimeTypes' } },
);

/**
 * A transport that adds the MCP Apps extension to the client capabilities the client sends,
 * so servers offer their app tools. Everything else passes through to `inner` unchanged.
 * Build it with {@link withAxMCPAppsExtension}.
 */
export class AxMCPAppsExtensionTransport extends AxMCPWrappingTransport {
  /** The extension settings declared (`{ mimeTypes: [...] }`). */
  readonly settings: { mimeTypes: string[] };

  constructor(inner: AxMCPTransport, settings: { mimeTypes: string[] }) {
    super(inner);
    assertMCPOptions(APPS_EXTENSION_SETTINGS, settings, 'AxMCPAppsExtensionTransport settings');
    this.settings = settings;
  }

  override request(message: JSONRPCRequest, options?: AxMCPSendOptions): Promise<JSONRPCResponse> {
    return this.inner.request(this.#declare(message), options);
  }

  /** A copy of the request with the extension in its client capabilities (the original is not changed). */
  #declare(message: JSONRPCRequest): JSONRPCRequest {
    const params = message.params;
    if (!isObject(params)) return message;
    if (message.method === 'initialize' && isObject(params.capabilities)) {
      return { ...message, params: { ...params, capabilities: this.#with(params.capabilities) } };
    }
    const meta = isObject(params._meta) ? params._meta : undefined;
    const capabilities = meta?.[META.clientCapabilities];
    if (!meta || !isObject(capabilities)) return message;
    return {
      ...message,
      params: { ...params, _meta: { ...meta, [META.clientCapabilities]: this.#with(capabilities) } },
    };
  }

  #with(capabilities: Record<string, unknown>): Record<string, unknown> {
    const extensions = isObject(capabilities.extensions) ? capabilities.extensions : {};
    return {
      ...capabilities,
      extensions: { ...extensions, [AX_MCP_APPS_EXTENSION]: { mimeTypes: [...this.settings.mimeTypes] } },
    };
  }
}

/**
 * Wraps `transport` so the client declares MCP Apps support (`mimeTypes: ["text/html;profile=mcp-app"]`).
 * {@link AxMCPAppBridge} requires it: only a client that told the server it hosts apps renders them.
 *
 * @example
 * ```ts
 * const client = new AxMCPClient(withAxMCPAppsExtension(new AxMCPStreamableHTTPTransport(url)), { namespace: 'ui' });
 * ```
 */
export function withAxMCPAppsExtension(transport: AxMCPTransport): AxMCPAppsExtensionTransport {
  return new AxMCPAppsExtensionTransport(transport, { mimeTypes: [AX_MCP_APP_MIME_TYPE] });
}

/** True when `transport` (or one it wraps) declares the MCP Apps extension. */
export function declaresAxMCPApps(transport: AxMCPTransport): boolean {
  let current: unknown = transport;
  for (let depth = 0; depth < 8 && current; depth++) {
    if (current instanceof AxMCPAppsExtensionTransport) return true;
    current = (current as { inner?: unknown }).inner;
  }
  return false;
}
