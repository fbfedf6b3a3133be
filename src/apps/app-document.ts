/**
 * MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865): finding a tool's app resource and turning it
 * into a document a host can render safely — a sandbox, a Content-Security-Policy generated from
 * the resource's declared domains (restrictive by default) and a Permissions-Policy that grants
 * only the declared features. Isomorphic: no `node:` imports.
 */
import { AxMCPProtocolError, AxMCPUnsupportedError, RPC } from '../protocol/errors.js';
import { isObject } from '../protocol/json.js';
import type { AxMCPResourceContents, AxMCPTool } from '../protocol/messages.js';

/** The MCP Apps extension id, negotiated through client capabilities `extensions`. */
export { AX_MCP_APPS_EXTENSION } from '../protocol/meta.js';
/** The one MIME type an app resource may have. */
export const AX_MCP_APP_MIME_TYPE = 'text/html;profile=mcp-app';
/** The Apps protocol versions this host speaks (newest first). */
export const AX_MCP_APPS_PROTOCOL_VERSIONS: readonly string[] = ['2026-01-26', '2025-11-21'];

/** Domains an app resource declares (`_meta.ui.csp`). */
export interface AxMCPAppCSP {
  connectDomains?: string[];
  resourceDomains?: string[];
  frameDomains?: string[];
  baseUriDomains?: string[];
}

/** Browser features an app resource asks for (`_meta.ui.permissions`). */
export interface AxMCPAppPermissions {
  camera?: object;
  microphone?: object;
  geolocation?: object;
  clipboardWrite?: object;
}

/** Who may call a tool: the model, the app, or both (default). */
export type AxMCPAppToolVisibility = 'model' | 'app';

/** An app resource ready to render. Serve `html` with `headers` in an iframe with `sandbox` and `allow`. */
export interface AxMCPAppDocument {
  /** The `ui://` resource it came from. */
  resourceUri: string;
  /** The HTML, with the CSP also set by a `<meta http-equiv>` at the top of the document. */
  html: string;
  /** The generated Content-Security-Policy. */
  csp: string;
  /** The generated Permissions-Policy header (every feature denied unless declared). */
  permissionsPolicy: string;
  /** The iframe `sandbox` attribute: scripts only, an opaque origin (no `allow-same-origin`). */
  sandbox: string;
  /** The iframe `allow` attribute for the declared features. */
  allow: string;
  /** Headers to serve the document with (CSP, Permissions-Policy, no sniffing, no referrer). */
  headers: Record<string, string>;
  /** The domains and features that were accepted (invalid entries dropped), for the view's host capabilities. */
  accepted: { csp: AxMCPAppCSP; permissions: AxMCPAppPermissions };
  /** Entries of the resource's `_meta.ui` that were refused, with why. */
  refused: string[];
}

/** The `ui://` resource a tool names in `_meta.ui.resourceUri` (or the deprecated `_meta["ui/resourceUri"]`). */
export function appResourceUri(tool: AxMCPTool): string | undefined {
  const meta = isObject(tool._meta) ? tool._meta : undefined;
  if (!meta) return undefined;
  const ui = isObject(meta.ui) ? meta.ui : undefined;
  const uri = ui?.resourceUri ?? meta['ui/resourceUri'];
  return typeof uri === 'string' && uri.startsWith('ui://') ? uri : undefined;
}

/** Who may call `tool`; `['model', 'app']` when it says nothing. */
export function appToolVisibility(tool: AxMCPTool): AxMCPAppToolVisibility[] {
  const ui = isObject(tool._meta) && isObject(tool._meta.ui) ? tool._meta.ui : undefined;
  const visibility = ui?.visibility;
  if (!Array.isArray(visibility)) return ['model', 'app'];
  return visibility.filter((v): v is AxMCPAppToolVisibility => v === 'model' || v === 'app');
}

/**
 * Builds the renderable document from a `resources/read` content item. Refuses anything but
 * `text/html;profile=mcp-app` under the expected `ui://` URI: HTML from elsewhere (an ordinary
 * tool result, a `text/html` resource) is never rendered as an app.
 */
export function appDocumentFrom(
  resourceUri: string,
  contents: readonly AxMCPResourceContents[],
): AxMCPAppDocument {
  const item = contents.find((entry) => entry.uri === resourceUri);
  if (!item) throw invalid(`the read of ${resourceUri} returned no contents for that URI`);
  const mime = (item.mimeType ?? '').replace(/\s+/g, '').toLowerCase();
  if (mime !== AX_MCP_APP_MIME_TYPE) {
    throw new AxMCPUnsupportedError(
      `${resourceUri} is ${JSON.stringify(item.mimeType ?? 'untyped').slice(0, 60)}, not ${AX_MCP_APP_MIME_TYPE}: not rendered as an app`,
    );
  }
  const html = htmlOf(item);
  const ui = isObject(item._meta) && isObject(item._meta.ui) ? item._meta.ui : {};
  const refused: string[] = [];
  const csp = acceptedCSP(ui.csp, refused);
  const permissions = acceptedPermissions(ui.permissions);
  const policy = contentSecurityPolicy(csp);
  const permissionsPolicy = permissionsPolicyOf(permissions);
  const allow = allowAttribute(permissions);
  return {
    resourceUri,
    html: withCSPMeta(html, policy),
    csp: policy,
    permissionsPolicy,
    sandbox: 'allow-scripts',
    allow,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': policy,
      'permissions-policy': permissionsPolicy,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
    },
    accepted: { csp, permissions },
    refused,
  };
}

/**
 * The CSP of SEP-1865: `default-src 'none'`, inline scripts and styles, and exactly the declared
 * origins per directive; no plugins; no frames unless declared; `base-uri 'self'` unless declared.
 */
export function contentSecurityPolicy(csp: AxMCPAppCSP): string {
  const list = (domains: string[] | undefined) =>
    domains && domains.length > 0 ? ` ${domains.join(' ')}` : '';
  const resources = list(csp.resourceDomains);
  const connect =
    csp.connectDomains && csp.connectDomains.length > 0 ? csp.connectDomains.join(' ') : "'none'";
  const frames = csp.frameDomains && csp.frameDomains.length > 0 ? csp.frameDomains.join(' ') : "'none'";
  const base = csp.baseUriDomains && csp.baseUriDomains.length > 0 ? csp.baseUriDomains.join(' ') : "'self'";
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline'${resources}`,
    `style-src 'self' 'unsafe-inline'${resources}`,
    `img-src 'self' data:${resources}`,
    `font-src 'self'${resources}`,
    `media-src 'self' data:${resources}`,
    `connect-src ${connect}`,
    `frame-src ${frames}`,
    "object-src 'none'",
    `base-uri ${base}`,
    "form-action 'none'",
  ].join('; ');
}

const FEATURES: ReadonlyArray<[keyof AxMCPAppPermissions, string]> = [
  ['camera', 'camera'],
  ['microphone', 'microphone'],
  ['geolocation', 'geolocation'],
  ['clipboardWrite', 'clipboard-write'],
];

function permissionsPolicyOf(permissions: AxMCPAppPermissions): string {
  const denied = ['payment', 'usb', 'serial', 'bluetooth', 'hid', 'display-capture', 'fullscreen'];
  const features = FEATURES.map(([key, name]) => `${name}=${permissions[key] ? '(self)' : '()'}`);
  return [...features, ...denied.map((name) => `${name}=()`)].join(', ');
}

function allowAttribute(permissions: AxMCPAppPermissions): string {
  return FEATURES.filter(([key]) => permissions[key])
    .map(([, name]) => name)
    .join('; ');
}

/** A CSP source a server may declare: a scheme and host (wildcard subdomain allowed), an optional port, nothing else. */
const SOURCE = /^(https|wss|http|ws):\/\/(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*(:\d{1,5})?$/i;

function acceptedCSP(value: unknown, refused: string[]): AxMCPAppCSP {
  const out: AxMCPAppCSP = {};
  if (!isObject(value)) return out;
  for (const key of ['connectDomains', 'resourceDomains', 'frameDomains', 'baseUriDomains'] as const) {
    const entries = value[key];
    if (!Array.isArray(entries)) continue;
    const good: string[] = [];
    for (const entry of entries) {
      if (typeof entry === 'string' && SOURCE.test(entry)) good.push(entry.toLowerCase());
      else refused.push(`${key}: ${JSON.stringify(entry).slice(0, 80)}`);
    }
    if (good.length > 0) out[key] = [...new Set(good)];
  }
  return out;
}

function acceptedPermissions(value: unknown): AxMCPAppPermissions {
  const out: AxMCPAppPermissions = {};
  if (!isObject(value)) return out;
  for (const [key] of FEATURES) if (isObject(value[key])) out[key] = {};
  return out;
}

function htmlOf(item: AxMCPResourceContents): string {
  if ('text' in item && typeof item.text === 'string') return item.text;
  if ('blob' in item && typeof item.blob === 'string') {
    try {
      const binary = atob(item.blob);
      const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch (error) {
      throw invalid(`the blob of ${item.uri} is not base64 UTF-8 HTML`, error);
    }
  }
  throw invalid(`${item.uri} has neither text nor blob`);
}

/** Puts the CSP first in `<head>`, before anything that could load. */
function withCSPMeta(html: string, policy: string): string {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy.replace(/"/g, '&quot;')}">`;
  const head = /<head(\s[^>]*)?>/i.exec(html);
  if (head)
    return `${html.slice(0, head.index + head[0].length)}${meta}${html.slice(head.index + head[0].length)}`;
  const htmlTag = /<html(\s[^>]*)?>/i.exec(html);
  if (htmlTag) {
    const at = htmlTag.index + htmlTag[0].length;
    return `${html.slice(0, at)}<head>${meta}</head>${html.slice(at)}`;
  }
  const doctype = /^\s*<!doctype[^>]*>/i.exec(html);
  const at = doctype ? doctype[0].length : 0;
  return `${html.slice(0, at)}<head>${meta}</head>${html.slice(at)}`;
}

function invalid(message: string, cause?: unknown): AxMCPProtocolError {
  return new AxMCPProtocolError(RPC.invalidParams, `Invalid MCP App resource: ${message}`, undefined, {
    code: 'invalid_message',
    cause,
  });
}
