/**
 * What the host answers to each request of an app view: `ui/initialize` first, then tool calls
 * and resource reads proxied to the app's server (app-visible tools only), links, messages and
 * model context for the user and the model (marked untrusted), display modes — every one
 * through the host's `authorize`. A refusal is a {@link BridgeRefusal}, answered to the view.
 */
import { describeAnswer } from '../options/hook-answers.js';
import { AxMCPError, AxMCPInvalidOptionsError, RPC } from '../protocol/errors.js';
import { isObject } from '../protocol/json.js';
import type { JSONRPCRequest } from '../protocol/jsonrpc.js';
import type { AxMCPContentBlock, AxMCPTool } from '../protocol/messages.js';
import { AX_MCP_APPS_PROTOCOL_VERSIONS, type AxMCPAppDocument, appToolVisibility } from './app-document.js';
import type {
  AxMCPAppBridgeOptions,
  AxMCPAppDisplayMode,
  AxMCPAppModelContent,
  AxMCPAppRequest,
  AxMCPAppSource,
} from './bridge-options.js';

/** What answering the view needs from its bridge. */
export interface ViewSession {
  readonly options: AxMCPAppBridgeOptions;
  readonly document: AxMCPAppDocument | undefined;
  readonly tool: AxMCPTool | undefined;
  /** The view sent `ui/initialize`. */
  initialized: boolean;
  mode: AxMCPAppDisplayMode;
  source(): AxMCPAppSource;
  /** Runs `run` with a signal that closing the bridge aborts. */
  withSignal<T>(run: (signal: AbortSignal) => Promise<T>): Promise<T>;
  /** Tells the host of an error nobody awaits (the bridge's `onError`). */
  report(error: unknown): void;
}

const DENIED = -32000;
const DISPLAY_MODES = new Set<AxMCPAppDisplayMode>(['inline', 'fullscreen', 'pip']);

/** The result for one request of the view; throws a {@link BridgeRefusal} (or a host error). */
export async function answerViewRequest(
  session: ViewSession,
  request: JSONRPCRequest,
): Promise<Record<string, unknown>> {
  const params = isObject(request.params) ? request.params : {};
  const method = request.method;
  if (!session.initialized && method !== 'ui/initialize' && method !== 'ping') {
    throw new BridgeRefusal(RPC.invalidRequest, `"${clip(method)}" before ui/initialize`);
  }
  switch (method) {
    case 'ping':
      return {};
    case 'ui/initialize':
      await authorize(session, method, params);
      return initialize(session, params);
    case 'tools/call':
      return callTool(session, params);
    case 'resources/read': {
      if (typeof params.uri !== 'string')
        throw new BridgeRefusal(RPC.invalidParams, 'resources/read needs a uri');
      await authorize(session, method, params);
      return {
        ...(await session.withSignal((signal) =>
          session.options.client.readResource(params.uri as string, { signal }),
        )),
      };
    }
    case 'ui/open-link':
      return openLink(session, params);
    case 'ui/message':
      return message(session, params);
    case 'ui/update-model-context':
      return updateModelContext(session, params);
    case 'ui/request-display-mode':
      return requestDisplayMode(session, params);
    default:
      throw new BridgeRefusal(RPC.methodNotFound, `The host does not offer "${clip(method)}" to apps`);
  }
}

function initialize(session: ViewSession, params: Record<string, unknown>): Record<string, unknown> {
  const asked = typeof params.protocolVersion === 'string' ? params.protocolVersion : '';
  const version = AX_MCP_APPS_PROTOCOL_VERSIONS.includes(asked)
    ? asked
    : (AX_MCP_APPS_PROTOCOL_VERSIONS[0] as string);
  const o = session.options;
  const capabilities: Record<string, unknown> = { serverTools: {}, serverResources: {}, logging: {} };
  if (o.openLink) capabilities.openLinks = {};
  if (o.sendMessage) capabilities.message = { text: {}, structuredContent: {} };
  if (o.updateModelContext) capabilities.updateModelContext = { text: {}, structuredContent: {} };
  if (session.document) capabilities.sandbox = structuredClone(session.document.accepted);
  session.initialized = true;
  const tool = session.tool ? { toolInfo: { tool: structuredClone(session.tool) } } : {};
  return {
    protocolVersion: version,
    hostInfo: o.hostInfo ?? { name: 'ax-mcp', version: '0.1.0' },
    hostCapabilities: capabilities,
    hostContext: {
      ...o.hostContext,
      ...tool,
      displayMode: session.mode,
      availableDisplayModes: o.requestDisplayMode ? [...DISPLAY_MODES] : ['inline'],
    },
  };
}

async function callTool(
  session: ViewSession,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const name = params.name;
  if (typeof name !== 'string') throw new BridgeRefusal(RPC.invalidParams, 'tools/call needs a tool name');
  const args = isObject(params.arguments) ? params.arguments : {};
  const { client } = session.options;
  const catalog = await client.inspectCatalog();
  const tool = catalog.tools.find((entry) => entry.name === name);
  if (!tool) throw new BridgeRefusal(RPC.invalidParams, `No tool "${clip(name)}" on this app's server`);
  if (!appToolVisibility(tool).includes('app')) {
    throw new BridgeRefusal(DENIED, `Tool "${clip(name)}" is not visible to apps`);
  }
  await authorize(session, 'tools/call', { name, arguments: args }, tool);
  return { ...(await session.withSignal((signal) => client.callTool(name, args, { signal }))) };
}

async function openLink(
  session: ViewSession,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  let url: URL;
  try {
    url = new URL(String(params.url));
  } catch {
    throw new BridgeRefusal(RPC.invalidParams, 'ui/open-link needs an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new BridgeRefusal(DENIED, `Links with scheme ${url.protocol} are not opened`);
  }
  const open = session.options.openLink;
  if (!open) throw new BridgeRefusal(DENIED, 'This host does not open links');
  await authorize(session, 'ui/open-link', { url: url.href });
  await open(url.href, session.source());
  return {};
}

async function message(
  session: ViewSession,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const send = session.options.sendMessage;
  if (!send) throw new BridgeRefusal(DENIED, 'This host does not take messages from apps');
  if (params.role !== 'user')
    throw new BridgeRefusal(RPC.invalidParams, 'ui/message supports role "user" only');
  const content = contentBlocks(params.content);
  await authorize(session, 'ui/message', params);
  await send({ role: 'user', content, untrusted: true, source: session.source() });
  return {};
}

async function updateModelContext(
  session: ViewSession,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const update = session.options.updateModelContext;
  if (!update) throw new BridgeRefusal(DENIED, 'This host does not take model context from apps');
  const content = params.content === undefined ? [] : contentBlocks(params.content);
  await authorize(session, 'ui/update-model-context', params);
  const value: AxMCPAppModelContent = { content, untrusted: true, source: session.source() };
  if (isObject(params.structuredContent)) value.structuredContent = structuredClone(params.structuredContent);
  await update(value);
  return {};
}

async function requestDisplayMode(
  session: ViewSession,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const mode = params.mode as AxMCPAppDisplayMode;
  if (!DISPLAY_MODES.has(mode)) throw new BridgeRefusal(RPC.invalidParams, 'Unknown display mode');
  await authorize(session, 'ui/request-display-mode', { mode });
  const change = session.options.requestDisplayMode;
  if (change) {
    const now = await change(mode, session.source());
    if (DISPLAY_MODES.has(now)) session.mode = now;
  }
  return { mode: session.mode };
}

async function authorize(
  session: ViewSession,
  method: string,
  params: Record<string, unknown>,
  tool?: AxMCPTool,
): Promise<void> {
  const check = session.options.authorize;
  if (!check) return;
  const request: AxMCPAppRequest = { method, params: structuredClone(params), source: session.source() };
  if (tool) request.tool = structuredClone(tool);
  const allowed = await check(request);
  if (allowed === true) return;
  if (allowed !== false) {
    // Denied all the same (fail closed), but the host hears why: the view only sees a refusal.
    session.report(
      new AxMCPInvalidOptionsError({
        issues: [{ path: 'authorize', expected: 'true or false', received: describeAnswer(allowed) }],
        message: `AxMCPAppBridge authorize answered ${describeAnswer(allowed)} for "${clip(method)}", not true or false: denied`,
      }),
    );
  }
  throw new BridgeRefusal(DENIED, `"${clip(method)}" was not authorized`);
}

/** A refusal the view is told about (not a host error). */
export class BridgeRefusal extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** The JSON-RPC error the view gets: a refusal as is, a host error without its details. */
export function errorObject(error: unknown): { code: number; message: string } {
  if (error instanceof BridgeRefusal) return { code: error.code, message: error.message };
  if (error instanceof AxMCPError) return { code: DENIED, message: error.message };
  return { code: RPC.internalError, message: 'The host failed to handle the request' };
}

function contentBlocks(value: unknown): AxMCPContentBlock[] {
  const list = Array.isArray(value) ? value : [value];
  if (!list.every((block) => isObject(block) && typeof block.type === 'string')) {
    throw new BridgeRefusal(RPC.invalidParams, 'content must be MCP content blocks');
  }
  return structuredClone(list) as AxMCPContentBlock[];
}

/** A name from the view, bounded for an error message. */
export function clip(text: string): string {
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}
