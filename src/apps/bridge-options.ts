/** What a host configures for an `AxMCPAppBridge`: the options and their schema. */
import type { AxMCPClient } from '../client/client.js';
import { anyOf, anything, func, instance, object, record, required, string } from '../options/check.js';
import type { JSONRPCMessage } from '../protocol/jsonrpc.js';
import type { AxMCPContentBlock, AxMCPImplementation, AxMCPTool } from '../protocol/messages.js';

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
  /** Decides each request of the view; anything but `true` refuses it. Default: allow (the visibility rules still apply). */
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
   * reported here: `authorize` already saw them. Without it, the first error of each kind is
   * written to the console.
   */
  onError?(error: unknown): void;
  /** How this host introduces itself to the view (default `ax-mcp`). */
  hostInfo?: AxMCPImplementation;
  /** Extra host context for `ui/initialize` (theme, locale, container dimensions, …). */
  hostContext?: Record<string, unknown>;
}

const HOOK = func('a function');

/** The shape of {@link AxMCPAppBridgeOptions}, every key of it; checked once in the constructor. */
export const APP_BRIDGE_OPTIONS = object(
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
