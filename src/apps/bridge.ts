/**
 * `AxMCPAppBridge`: the host side of one MCP App view (SEP-1865). It loads the tool's `ui://`
 * resource as a sandboxed document and answers the view's JSON-RPC messages — every one through
 * `authorize` — proxying app-visible tool calls and resource reads to the same server.
 * Isomorphic: no `node:` imports; the caller moves messages (`postMessage`, a test harness, …).
 */
import type { AxMCPClient } from '../client/client.js';
import { anyOf, anything, func, instance, object, record, required, string } from '../options/check.js';
import { AxMCPError, AxMCPUnsupportedError, assertMCPOptions, RPC } from '../protocol/errors.js';
import { isObject, parseUntrustedJSON } from '../protocol/json.js';
import {
  type JSONRPCId,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type JSONRPCResponse,
  toJSONRPCMessage,
} from '../protocol/jsonrpc.js';
import type {
  AxMCPCallToolResult,
  AxMCPContentBlock,
  AxMCPImplementation,
  AxMCPTool,
} from '../protocol/messages.js';
import {
  AX_MCP_APPS_PROTOCOL_VERSIONS,
  type AxMCPAppDocument,
  appDocumentFrom,
  appResourceUri,
  appToolVisibility,
} from './app-document.js';
import { declaresAxMCPApps } from './apps-extension.js';

/** How the app is displayed. */
export type AxMCPAppDisplayMode = 'inline' | 'fullscreen' | 'pip';

/** Where a view's message came from: the server namespace, the tool and its `ui://` resource. */
export interface AxMCPAppSource {
  namespace: string;
  tool: string;
  resourceUri: string;
}

/** A view's request, as `authorize` sees it. Params are the view's (untrusted). */
export interface AxMCPAppRequest {
  method: string;
  params: Record<string, unknown>;
  /** For `tools/call`: the tool, from the server's catalog. */
  tool?: AxMCPTool;
  source: AxMCPAppSource;
}

/** Content from a view for the model. Always marked untrusted: it comes from server-supplied code. */
export interface AxMCPAppModelContent {
  content: AxMCPContentBlock[];
  structuredContent?: Record<string, unknown>;
  untrusted: true;
  source: AxMCPAppSource;
}

/** Options of {@link AxMCPAppBridge}. */
export interface AxMCPAppBridgeOptions {
  /** The client of the server the app belongs to; its transport must declare the extension ({@link withAxMCPAppsExtension}). */
  client: AxMCPClient;
  /** The tool whose `_meta.ui.resourceUri` names the app, or its name. */
  tool: AxMCPTool | string;
  /** Delivers a message to the view (for example `iframe.contentWindow.postMessage(message, '*')`). */
  sendToView(message: JSONRPCMessage): void | Promise<void>;
  /** Decides each request of the view; `false` refuses it. Default: allow (the visibility rules still apply). */
  authorize?(request: AxMCPAppRequest): boolean | Promise<boolean>;
  /** Opens a link for the user (`ui/open-link`); absent = refused. */
  openLink?(url: string, source: AxMCPAppSource): void | Promise<void>;
  /** Adds a message from the view to the conversation (`ui/message`); absent = refused. */
  sendMessage?(message: AxMCPAppModelContent & { role: 'user' }): void | Promise<void>;
  /** Replaces the view's model context (`ui/update-model-context`); absent = refused. */
  updateModelContext?(update: AxMCPAppModelContent): void | Promise<void>;
  /** Changes the display mode (`ui/request-display-mode`); returns the mode now in effect. Absent = stays `inline`. */
  requestDisplayMode?(
    mode: AxMCPAppDisplayMode,
    source: AxMCPAppSource,
  ): AxMCPAppDisplayMode | Promise<AxMCPAppDisplayMode>;
  /** Log messages of the view (`notifications/message`). */
  onLog?(params: Record<string, unknown>, source: AxMCPAppSource): void;
  /**
   * Errors nobody awaits: a failed send to the view, a message that could not be handled.
   * Refusals (by `authorize`, or of what the view may not ask) are answered to the view, not
   * reported here: `authorize` already saw them.
   */
  onError?(error: unknown): void;
  /** How this host introduces itself to the view (default `ax-mcp`). */
  hostInfo?: AxMCPImplementation;
  /** Extra host context for `ui/initialize` (theme, locale, container dimensions, …). */
  hostContext?: Record<string, unknown>;
}

const HOOK = func('a function');

/** The shape of {@link AxMCPAppBridgeOptions}, every key of it; checked once in the constructor. */
const APP_BRIDGE_OPTIONS = object(
  {
    client: required(
      instance('an AxMCPClient', (value) => {
        if (typeof value !== 'object' || value === null) return false;
        const client = value as Record<string, unknown>;
        return (
          typeof client.readResource === 'function' &&
          typeof client.callTool === 'function' &&
          typeof client.transport === 'object' &&
          client.transport !== null
        );
      }),
    ),
    tool: required(
      anyOf(
        string({ nonEmpty: true }),
        object({ name: required(string({ nonEmpty: true })) }, { open: true }),
      ),
    ),
    sendToView: required(func('a function (message) => void')),
    authorize: func('a function (request) => boolean'),
    openLink: HOOK,
    sendMessage: HOOK,
    updateModelContext: HOOK,
    requestDisplayMode: HOOK,
    onLog: HOOK,
    onError: HOOK,
    hostInfo: object({ name: required(string()), version: required(string()) }, { open: true }),
    hostContext: record(anything(), 'an object of host context'),
  },
  {
    expected: 'an options object { client, tool, sendToView, … }',
    aliases: {
      send: 'sendToView',
      postMessage: 'sendToView',
      onMessage: 'sendMessage',
      authorizeRequest: 'authorize',
      toolName: 'tool',
      onOpenLink: 'openLink',
    },
  },
);

const DENIED = -32000;
const DISPLAY_MODES = new Set<AxMCPAppDisplayMode>(['inline', 'fullscreen', 'pip']);

/**
 * The host side of one app view. Call {@link AxMCPAppBridge.load} to get the document to render,
 * hand every message the view posts to {@link AxMCPAppBridge.receive}, and send the tool's input
 * and result with {@link AxMCPAppBridge.sendToolInput} / {@link AxMCPAppBridge.sendToolResult}.
 *
 * Rules: the view must send `ui/initialize` first; it may call only tools whose visibility
 * includes `app`, on this server; every request passes `authorize`; what it sends for the model
 * (`ui/message`, `ui/update-model-context`) is marked untrusted. HTML is only ever rendered from a
 * `ui://` resource of MIME `text/html;profile=mcp-app` named by the tool — never from a tool result.
 *
 * @example
 * ```ts
 * const bridge = new AxMCPAppBridge({ client, tool: 'show_dashboard', sendToView: (m) => frame.postMessage(m, '*') });
 * const app = await bridge.load();
 * iframe.sandbox.value = app.sandbox; iframe.allow = app.allow; iframe.srcdoc = app.html;
 * window.addEventListener('message', (e) => { if (e.source === frame) void bridge.receive(e.data); });
 * ```
 */
export class AxMCPAppBridge {
  readonly #options: AxMCPAppBridgeOptions;
  #tool: AxMCPTool | undefined;
  #document: AxMCPAppDocument | undefined;
  #initialized = false;
  #ready = false;
  #mode: AxMCPAppDisplayMode = 'inline';
  #queued: JSONRPCMessage[] = [];
  #nextId = 1;
  readonly #waiting = new Map<JSONRPCId, (response: JSONRPCResponse) => void>();
  readonly #inFlight = new Set<AbortController>();
  #closed = false;

  constructor(options: AxMCPAppBridgeOptions) {
    assertMCPOptions(APP_BRIDGE_OPTIONS, options, 'AxMCPAppBridge options');
    this.#options = options;
  }

  /** The loaded document, once {@link AxMCPAppBridge.load} succeeded. */
  get document(): AxMCPAppDocument | undefined {
    return this.#document;
  }

  /** True once the view sent `ui/notifications/initialized`. */
  get ready(): boolean {
    return this.#ready;
  }

  /**
   * Reads the tool's app resource and builds the document to render. Throws
   * {@link AxMCPUnsupportedError} when the client did not declare the extension, the tool names
   * no `ui://` resource, or the resource is not `text/html;profile=mcp-app`.
   */
  async load(options: { signal?: AbortSignal } = {}): Promise<AxMCPAppDocument> {
    const { client } = this.#options;
    if (!declaresAxMCPApps(client.transport)) {
      throw new AxMCPUnsupportedError(
        'The client does not declare the MCP Apps extension: build its transport with withAxMCPAppsExtension()',
        { namespace: client.namespace },
      );
    }
    const tool = await this.#resolveTool(options.signal);
    const uri = appResourceUri(tool);
    if (!uri) {
      throw new AxMCPUnsupportedError(
        `Tool "${tool.name}" names no ui:// app resource; its results are not rendered as an app`,
        {
          namespace: client.namespace,
        },
      );
    }
    const read = await client.readResource(uri, options.signal ? { signal: options.signal } : {});
    this.#document = appDocumentFrom(uri, read.contents);
    return this.#document;
  }

  /**
   * Handles one message from the view. Never throws: what the view gets wrong is answered with a
   * JSON-RPC error (requests) or dropped (notifications), and reported to `onError`.
   */
  async receive(data: unknown): Promise<void> {
    if (this.#closed) return;
    let message: JSONRPCMessage;
    try {
      message = toJSONRPCMessage(typeof data === 'string' ? parseUntrustedJSON(data) : data);
    } catch (error) {
      this.#report(error);
      return;
    }
    if (!('method' in message)) {
      this.#waiting.get(message.id as JSONRPCId)?.(message);
      this.#waiting.delete(message.id as JSONRPCId);
      return;
    }
    if (!('id' in message)) {
      this.#notified(message.method, isObject(message.params) ? message.params : {});
      return;
    }
    const request = message as JSONRPCRequest;
    let answer: JSONRPCResponse;
    try {
      answer = { jsonrpc: '2.0', id: request.id, result: await this.#handle(request) };
    } catch (error) {
      if (!(error instanceof BridgeRefusal)) this.#report(error);
      answer = { jsonrpc: '2.0', id: request.id, error: errorObject(error) };
    }
    await this.#send(answer);
  }

  /** Sends the tool's complete arguments (`ui/notifications/tool-input`), once the view is ready. */
  sendToolInput(args: Record<string, unknown>): Promise<void> {
    return this.#notify('ui/notifications/tool-input', { arguments: args });
  }

  /** Sends the tool's result (`ui/notifications/tool-result`), once the view is ready. */
  sendToolResult(result: AxMCPCallToolResult): Promise<void> {
    return this.#notify('ui/notifications/tool-result', { ...result });
  }

  /** Tells the view the tool call was cancelled. */
  sendToolCancelled(reason?: string): Promise<void> {
    return this.#notify('ui/notifications/tool-cancelled', reason === undefined ? {} : { reason });
  }

  /** Tells the view that host context changed (theme, display mode, …). */
  sendHostContextChanged(context: Record<string, unknown>): Promise<void> {
    return this.#notify('ui/notifications/host-context-changed', context);
  }

  /**
   * Asks the view to tear down (`ui/resource-teardown`) and waits for its answer (at most
   * `timeoutMs`, default 3000), then closes the bridge.
   */
  async teardown(reason = 'closed by the host', timeoutMs = 3000): Promise<void> {
    if (this.#ready && !this.#closed) {
      const id = `teardown-${this.#nextId++}`;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const answered = new Promise<void>((resolve) => {
        this.#waiting.set(id, () => resolve());
        timer = setTimeout(resolve, timeoutMs);
      });
      await this.#send({ jsonrpc: '2.0', id, method: 'ui/resource-teardown', params: { reason } });
      await answered;
      clearTimeout(timer);
      this.#waiting.delete(id);
    }
    this.close();
  }

  /** Stops answering the view and aborts the calls it started. Idempotent. */
  close(): void {
    this.#closed = true;
    this.#queued = [];
    for (const controller of this.#inFlight) controller.abort();
    this.#inFlight.clear();
    this.#waiting.clear();
  }

  async #handle(request: JSONRPCRequest): Promise<Record<string, unknown>> {
    const params = isObject(request.params) ? request.params : {};
    const method = request.method;
    if (!this.#initialized && method !== 'ui/initialize' && method !== 'ping') {
      throw new BridgeRefusal(RPC.invalidRequest, `"${clip(method)}" before ui/initialize`);
    }
    switch (method) {
      case 'ping':
        return {};
      case 'ui/initialize':
        await this.#authorize(method, params);
        return this.#initialize(params);
      case 'tools/call':
        return this.#callTool(params);
      case 'resources/read': {
        if (typeof params.uri !== 'string')
          throw new BridgeRefusal(RPC.invalidParams, 'resources/read needs a uri');
        await this.#authorize(method, params);
        return {
          ...(await this.#withSignal((signal) =>
            this.#options.client.readResource(params.uri as string, { signal }),
          )),
        };
      }
      case 'ui/open-link':
        return this.#openLink(params);
      case 'ui/message':
        return this.#message(params);
      case 'ui/update-model-context':
        return this.#updateModelContext(params);
      case 'ui/request-display-mode':
        return this.#requestDisplayMode(params);
      default:
        throw new BridgeRefusal(RPC.methodNotFound, `The host does not offer "${clip(method)}" to apps`);
    }
  }

  #initialize(params: Record<string, unknown>): Record<string, unknown> {
    const asked = typeof params.protocolVersion === 'string' ? params.protocolVersion : '';
    const version = AX_MCP_APPS_PROTOCOL_VERSIONS.includes(asked)
      ? asked
      : (AX_MCP_APPS_PROTOCOL_VERSIONS[0] as string);
    const o = this.#options;
    const capabilities: Record<string, unknown> = { serverTools: {}, serverResources: {}, logging: {} };
    if (o.openLink) capabilities.openLinks = {};
    if (o.sendMessage) capabilities.message = { text: {}, structuredContent: {} };
    if (o.updateModelContext) capabilities.updateModelContext = { text: {}, structuredContent: {} };
    if (this.#document) capabilities.sandbox = structuredClone(this.#document.accepted);
    this.#initialized = true;
    const tool = this.#tool ? { toolInfo: { tool: structuredClone(this.#tool) } } : {};
    return {
      protocolVersion: version,
      hostInfo: o.hostInfo ?? { name: 'ax-mcp', version: '0.1.0' },
      hostCapabilities: capabilities,
      hostContext: {
        ...o.hostContext,
        ...tool,
        displayMode: this.#mode,
        availableDisplayModes: o.requestDisplayMode ? [...DISPLAY_MODES] : ['inline'],
      },
    };
  }

  async #callTool(params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const name = params.name;
    if (typeof name !== 'string') throw new BridgeRefusal(RPC.invalidParams, 'tools/call needs a tool name');
    const args = isObject(params.arguments) ? params.arguments : {};
    const catalog = await this.#options.client.inspectCatalog();
    const tool = catalog.tools.find((entry) => entry.name === name);
    if (!tool) throw new BridgeRefusal(RPC.invalidParams, `No tool "${clip(name)}" on this app's server`);
    if (!appToolVisibility(tool).includes('app')) {
      throw new BridgeRefusal(DENIED, `Tool "${clip(name)}" is not visible to apps`);
    }
    await this.#authorize('tools/call', { name, arguments: args }, tool);
    return { ...(await this.#withSignal((signal) => this.#options.client.callTool(name, args, { signal }))) };
  }

  async #openLink(params: Record<string, unknown>): Promise<Record<string, unknown>> {
    let url: URL;
    try {
      url = new URL(String(params.url));
    } catch {
      throw new BridgeRefusal(RPC.invalidParams, 'ui/open-link needs an absolute URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new BridgeRefusal(DENIED, `Links with scheme ${url.protocol} are not opened`);
    }
    const open = this.#options.openLink;
    if (!open) throw new BridgeRefusal(DENIED, 'This host does not open links');
    await this.#authorize('ui/open-link', { url: url.href });
    await open(url.href, this.#source());
    return {};
  }

  async #message(params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const send = this.#options.sendMessage;
    if (!send) throw new BridgeRefusal(DENIED, 'This host does not take messages from apps');
    if (params.role !== 'user')
      throw new BridgeRefusal(RPC.invalidParams, 'ui/message supports role "user" only');
    const content = contentBlocks(params.content);
    await this.#authorize('ui/message', params);
    await send({ role: 'user', content, untrusted: true, source: this.#source() });
    return {};
  }

  async #updateModelContext(params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const update = this.#options.updateModelContext;
    if (!update) throw new BridgeRefusal(DENIED, 'This host does not take model context from apps');
    const content = params.content === undefined ? [] : contentBlocks(params.content);
    await this.#authorize('ui/update-model-context', params);
    const value: AxMCPAppModelContent = { content, untrusted: true, source: this.#source() };
    if (isObject(params.structuredContent))
      value.structuredContent = structuredClone(params.structuredContent);
    await update(value);
    return {};
  }

  async #requestDisplayMode(params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const mode = params.mode as AxMCPAppDisplayMode;
    if (!DISPLAY_MODES.has(mode)) throw new BridgeRefusal(RPC.invalidParams, 'Unknown display mode');
    await this.#authorize('ui/request-display-mode', { mode });
    const change = this.#options.requestDisplayMode;
    if (change) {
      const now = await change(mode, this.#source());
      if (DISPLAY_MODES.has(now)) this.#mode = now;
    }
    return { mode: this.#mode };
  }

  #notified(method: string, params: Record<string, unknown>): void {
    if (method === 'ui/notifications/initialized') {
      if (!this.#initialized || this.#ready) return;
      this.#ready = true;
      const queued = this.#queued;
      this.#queued = [];
      for (const message of queued) void this.#send(message);
      return;
    }
    if (method === 'notifications/message') {
      try {
        this.#options.onLog?.(structuredClone(params), this.#source());
      } catch (error) {
        this.#report(error);
      }
    }
  }

  async #authorize(method: string, params: Record<string, unknown>, tool?: AxMCPTool): Promise<void> {
    const authorize = this.#options.authorize;
    if (!authorize) return;
    const request: AxMCPAppRequest = { method, params: structuredClone(params), source: this.#source() };
    if (tool) request.tool = structuredClone(tool);
    if ((await authorize(request)) !== true)
      throw new BridgeRefusal(DENIED, `"${clip(method)}" was not authorized`);
  }

  async #withSignal<T>(run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    this.#inFlight.add(controller);
    try {
      return await run(controller.signal);
    } finally {
      this.#inFlight.delete(controller);
    }
  }

  async #notify(method: string, params: Record<string, unknown>): Promise<void> {
    const message: JSONRPCMessage = { jsonrpc: '2.0', method, params };
    if (this.#closed) return;
    if (!this.#ready) {
      this.#queued.push(message);
      return;
    }
    await this.#send(message);
  }

  async #send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return;
    try {
      await this.#options.sendToView(message);
    } catch (error) {
      this.#report(error);
    }
  }

  async #resolveTool(signal: AbortSignal | undefined): Promise<AxMCPTool> {
    const wanted = this.#options.tool;
    if (typeof wanted !== 'string') {
      this.#tool = wanted;
      return wanted;
    }
    const catalog = await this.#options.client.inspectCatalog(signal ? { signal } : {});
    const tool = catalog.tools.find((entry) => entry.name === wanted);
    if (!tool) throw new AxMCPError('invalid_argument', `The server has no tool named "${clip(wanted)}"`);
    this.#tool = tool;
    return tool;
  }

  #source(): AxMCPAppSource {
    const tool =
      this.#tool?.name ??
      (typeof this.#options.tool === 'string' ? this.#options.tool : this.#options.tool.name);
    return {
      namespace: this.#options.client.namespace,
      tool,
      resourceUri: this.#document?.resourceUri ?? '',
    };
  }

  #report(error: unknown): void {
    try {
      this.#options.onError?.(error);
    } catch {
      // The error sink failed; nothing is left to tell.
    }
  }
}

/** A refusal the view is told about (not a host error). */
class BridgeRefusal extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

function errorObject(error: unknown): { code: number; message: string } {
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

function clip(text: string): string {
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}
