/**
 * `AxMCPAppBridge`: the host side of one MCP App view (SEP-1865). It loads the tool's `ui://`
 * resource as a sandboxed document and answers the view's JSON-RPC messages — every one through
 * `authorize` — proxying app-visible tool calls and resource reads to the same server.
 * Isomorphic: no `node:` imports; the caller moves messages (`postMessage`, a test harness, …).
 * This file is the bridge's lifecycle and message plumbing; what it answers to each request is
 * `view-requests.ts`, its options `bridge-options.ts`.
 */
import { UnheardErrors } from '../errors/unheard.js';
import { AxMCPError, AxMCPUnsupportedError, assertMCPOptions } from '../protocol/errors.js';
import { isObject, parseUntrustedJSON } from '../protocol/json.js';
import {
  type JSONRPCId,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type JSONRPCResponse,
  toJSONRPCMessage,
} from '../protocol/jsonrpc.js';
import type { AxMCPCallToolResult, AxMCPTool } from '../protocol/messages.js';
import { type AxMCPAppDocument, appDocumentFrom, appResourceUri } from './app-document.js';
import { declaresAxMCPApps } from './apps-extension.js';
import { APP_BRIDGE_OPTIONS, type AxMCPAppBridgeOptions, type AxMCPAppSource } from './bridge-options.js';
import { answerViewRequest, BridgeRefusal, clip, errorObject, type ViewSession } from './view-requests.js';

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
  /** What answering the view's requests reads and changes (see `view-requests.ts`). */
  readonly #session: ViewSession;
  #ready = false;
  #queued: JSONRPCMessage[] = [];
  #nextId = 1;
  readonly #waiting = new Map<JSONRPCId, (response: JSONRPCResponse) => void>();
  readonly #inFlight = new Set<AbortController>();
  #closed = false;
  /** Errors nobody awaits: `onError`, else the first of each kind to the console. */
  readonly #report: (error: unknown) => void;

  constructor(options: AxMCPAppBridgeOptions) {
    assertMCPOptions(APP_BRIDGE_OPTIONS, options, 'AxMCPAppBridge options');
    this.#options = options;
    // A view that never got its message looked like a view that never answered.
    this.#report = new UnheardErrors('app bridge', 'onError to AxMCPAppBridge', (message) =>
      console.warn(message),
    ).reporter(options.onError ? (error) => options.onError?.(error) : undefined);
    const bridge = this;
    this.#session = {
      options,
      get document() {
        return bridge.#document;
      },
      get tool() {
        return bridge.#tool;
      },
      initialized: false,
      mode: 'inline',
      source: () => this.#source(),
      withSignal: <T>(run: (signal: AbortSignal) => Promise<T>) => this.#withSignal(run),
      report: (error: unknown) => this.#report(error),
    };
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
      answer = { jsonrpc: '2.0', id: request.id, result: await answerViewRequest(this.#session, request) };
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

  #notified(method: string, params: Record<string, unknown>): void {
    if (method === 'ui/notifications/initialized') {
      if (!this.#session.initialized || this.#ready) return;
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
}
