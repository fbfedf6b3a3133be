/**
 * MCP Apps: AxMCPAppBridge against an official-SDK peer built with `@modelcontextprotocol/ext-apps`.
 * First without a browser (negotiation, document, CSP, refusals), then in headless Chromium: the
 * host page embeds the sandboxed view served with the generated headers from another origin; the
 * view calls an app-visible tool (allowed), a model-only tool (refused), updates model context
 * (marked untrusted), and its outside script is blocked by the CSP.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  AX_MCP_APP_MIME_TYPE,
  AX_MCP_APPS_EXTENSION,
  AxMCPAppBridge,
  type AxMCPAppModelContent,
  type AxMCPAppRequest,
  withAxMCPAppsExtension,
} from '../src/apps/index.js';
import {
  AxMCPClient,
  AxMCPMemoryEraStore,
  AxMCPStreamableHTTPTransport,
  AxMCPUnsupportedError,
  type JSONRPCMessage,
} from '../src/index.js';
import { CHROMIUM, HAVE_CHROMIUM, launchChromium } from './helpers/chromium.js';
import { eventually, LOOPBACK } from './helpers/clients.js';
import { type AppsPeer, startAppsServer } from './servers/apps.js';
import { type LoopbackServer, listenLoopback } from './servers/node-http.js';

if (!HAVE_CHROMIUM) {
  console.warn(
    `apps.test.ts: the headless Chromium test is skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`,
  );
}

let evil: LoopbackServer;
let evilHits = 0;
let peer: AppsPeer;
beforeAll(async () => {
  evil = await listenLoopback((_req: IncomingMessage, res: ServerResponse) => {
    evilHits++;
    res.writeHead(200, { 'content-type': 'text/javascript' }).end('window.__evil = true;');
  });
  peer = await startAppsServer(evil.url('/evil.js'));
});
afterAll(async () => {
  await peer?.close();
  await evil?.close();
});

function appsClient(declare = true): AxMCPClient {
  const http = new AxMCPStreamableHTTPTransport(peer.url, { ssrfProtection: LOOPBACK });
  return new AxMCPClient(declare ? withAxMCPAppsExtension(http) : http, {
    namespace: 'apps',
    eraStore: new AxMCPMemoryEraStore(),
    timeoutMs: 10_000,
  });
}

describe('AxMCPAppBridge: negotiation, document, refusals', () => {
  it('declares the extension in client capabilities; without it, no app is loaded', async () => {
    const plain = appsClient(false);
    const refused = new AxMCPAppBridge({ client: plain, tool: 'show_dashboard', sendToView: () => {} });
    await expect(refused.load()).rejects.toBeInstanceOf(AxMCPUnsupportedError);
    await plain.close();

    const client = appsClient();
    try {
      await client.inspectCatalog();
      expect(client.getEra()).toBe('modern');
      expect(peer.stats.clientCapabilities).toMatchObject({
        extensions: { [AX_MCP_APPS_EXTENSION]: { mimeTypes: [AX_MCP_APP_MIME_TYPE] } },
      });
    } finally {
      await client.close();
    }
  });

  it('without onError, writes the first unreadable view message of each kind to the console', async () => {
    const client = appsClient();
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const bridge = new AxMCPAppBridge({ client, tool: 'show_dashboard', sendToView: () => {} });
      await bridge.receive('this is not json');
      await bridge.receive('{"still": "not json');
      // Before, with no onError, both were dropped without a trace.
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]?.[0])).toContain('ax-mcp: app bridge: ');
    } finally {
      warn.mockRestore();
      await client.close();
    }
  });

  it('an authorize hook that answers other than true or false denies the view and tells the host why', async () => {
    const client = appsClient();
    const sent: JSONRPCMessage[] = [];
    const errors: unknown[] = [];
    const bridge = new AxMCPAppBridge({
      client,
      tool: 'show_dashboard',
      sendToView: (message) => {
        sent.push(message);
      },
      authorize: (() => 'allow') as never,
      onError: (error) => errors.push(error),
    });
    try {
      await bridge.load();
      await bridge.receive({
        jsonrpc: '2.0',
        id: 1,
        method: 'ui/initialize',
        params: { protocolVersion: '2026-01-26' },
      });
      expect(sent.at(-1)).toMatchObject({ id: 1, error: { code: -32000 } });
      // Before, the view was refused and the host heard nothing of why.
      expect(errors).toHaveLength(1);
      expect(String((errors[0] as Error).message)).toBe(
        `AxMCPAppBridge authorize answered the string 'allow' for "ui/initialize", not true or false: denied`,
      );
    } finally {
      await client.close();
    }
  });

  it('builds a sandboxed document with a generated CSP and Permissions-Policy', async () => {
    const client = appsClient();
    try {
      const app = await new AxMCPAppBridge({ client, tool: 'show_dashboard', sendToView: () => {} }).load();
      expect(app.resourceUri).toBe('ui://apps-peer/dashboard');
      expect(app.sandbox).toBe('allow-scripts');
      expect(app.csp).toContain("default-src 'none'");
      expect(app.csp).toContain('connect-src https://api.example.com');
      expect(app.csp).toContain("frame-src 'none'");
      expect(app.csp).toContain("object-src 'none'");
      expect(app.csp).not.toContain('unsafe-eval');
      expect(app.refused).toEqual([`connectDomains: "'unsafe-eval'"`]);
      expect(app.permissionsPolicy).toContain('camera=(self)');
      expect(app.permissionsPolicy).toContain('microphone=()');
      expect(app.allow).toBe('camera');
      expect(app.headers['content-security-policy']).toBe(app.csp);
      expect(app.html.indexOf('http-equiv="Content-Security-Policy"')).toBeLessThan(
        app.html.indexOf('<script'),
      );
    } finally {
      await client.close();
    }
  });

  it('never renders HTML from an ordinary tool result or a plain text/html resource', async () => {
    const client = appsClient();
    try {
      const ordinary = new AxMCPAppBridge({ client, tool: 'html_report', sendToView: () => {} });
      await expect(ordinary.load()).rejects.toThrow(/names no ui:\/\/ app resource/);
      const plain = new AxMCPAppBridge({ client, tool: 'plain_app', sendToView: () => {} });
      await expect(plain.load()).rejects.toThrow(/not text\/html;profile=mcp-app/);
    } finally {
      await client.close();
    }
  });

  it('answers only after ui/initialize, and passes every request through authorize', async () => {
    const client = appsClient();
    const sent: JSONRPCMessage[] = [];
    const asked: string[] = [];
    const bridge = new AxMCPAppBridge({
      client,
      tool: 'show_dashboard',
      sendToView: (message) => {
        sent.push(message);
      },
      authorize: (request: AxMCPAppRequest) => {
        asked.push(request.method);
        return request.method !== 'resources/read';
      },
    });
    try {
      await bridge.load();
      await bridge.receive({
        jsonrpc: '2.0',
        id: 1,
        method: 'resources/read',
        params: { uri: 'ui://apps-peer/dashboard' },
      });
      expect(sent.at(-1)).toMatchObject({ id: 1, error: { code: -32600 } });
      await bridge.receive({
        jsonrpc: '2.0',
        id: 2,
        method: 'ui/initialize',
        params: { protocolVersion: '2026-01-26' },
      });
      expect(sent.at(-1)).toMatchObject({ id: 2, result: { protocolVersion: '2026-01-26' } });
      await bridge.receive({
        jsonrpc: '2.0',
        id: 3,
        method: 'resources/read',
        params: { uri: 'ui://apps-peer/dashboard' },
      });
      expect(sent.at(-1)).toMatchObject({
        id: 3,
        error: { code: -32000, message: '"resources/read" was not authorized' },
      });
      await bridge.receive({
        jsonrpc: '2.0',
        id: 4,
        method: 'ui/open-link',
        params: { url: 'javascript:alert(1)' },
      });
      expect(sent.at(-1)).toMatchObject({ id: 4, error: { code: -32000 } });
      await bridge.receive('{"jsonrpc":"2.0","id":5,"method":"sampling/createMessage","params":{}}');
      expect(sent.at(-1)).toMatchObject({ id: 5, error: { code: -32601 } });
      expect(asked).toEqual(['ui/initialize', 'resources/read']);
    } finally {
      bridge.close();
      await client.close();
    }
  });
});

describe.skipIf(!HAVE_CHROMIUM)(
  `AxMCPAppBridge in headless Chromium (skipped when ${CHROMIUM} is missing)`,
  () => {
    it('hosts the app: an allowed tool call, a refused one, untrusted model context, the CSP blocks an outside script', async () => {
      const client = appsClient();
      const logs: Record<string, unknown>[] = [];
      const contexts: AxMCPAppModelContent[] = [];
      const authorized: string[] = [];
      let deliver: (message: JSONRPCMessage) => Promise<void> = async () => {};
      const bridge = new AxMCPAppBridge({
        client,
        tool: 'show_dashboard',
        sendToView: (message) => deliver(message),
        authorize: (request) => {
          authorized.push(request.tool ? `${request.method}:${request.tool.name}` : request.method);
          return true;
        },
        updateModelContext: (update) => {
          contexts.push(update);
        },
        onLog: (params) => logs.push(params),
      });
      const app = await bridge.load();
      await bridge.sendToolResult({ content: [{ type: 'text', text: 'dashboard shown' }] });

      const view = await listenLoopback((_req, res) => res.writeHead(200, app.headers).end(app.html));
      const viewURL = view.url('/view');
      const host = await listenLoopback((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><html><body>
<iframe id="app" sandbox="${app.sandbox}" allow="${app.allow}" src="${viewURL}"></iframe>
<script>
  const frame = document.getElementById('app');
  window.addEventListener('message', (event) => {
    if (event.source === frame.contentWindow) window.toBridge(JSON.stringify(event.data));
  });
  window.fromBridge = (message) => frame.contentWindow.postMessage(message, '*');
</script></body></html>`);
      });
      const browser = await launchChromium([
        '--disable-quic',
        '--disable-component-update',
        '--disable-sync',
      ]);
      try {
        const page = await browser.newPage();
        await page.exposeFunction('toBridge', (text: string) => bridge.receive(text));
        deliver = async (message) => {
          await page.evaluate(
            (m) => (window as unknown as { fromBridge(m: unknown): void }).fromBridge(m),
            message,
          );
        };
        await page.goto(host.url('/'));
        await eventually(() => logs.length > 0, 20_000, 'the view to report');
        const report = (logs[0] as { data: Record<string, unknown> }).data;

        // Nothing before ui/initialize.
        expect(report.early).toMatchObject({ error: { code: -32600 } });
        expect(report.init).toMatchObject({
          protocolVersion: '2026-01-26',
          hostCapabilities: {
            serverTools: {},
            sandbox: { csp: { connectDomains: ['https://api.example.com'] } },
          },
          hostContext: { toolInfo: { tool: { name: 'show_dashboard' } }, displayMode: 'inline' },
        });
        // The app-only tool ran on the server; the model-only one was refused and never sent.
        expect(report.allowed).toMatchObject({ result: { structuredContent: { value: 42 } } });
        expect(report.refused).toMatchObject({
          error: { code: -32000, message: expect.stringContaining('not visible to apps') },
        });
        expect(peer.stats.toolCalls).toContain('refresh_data');
        expect(peer.stats.toolCalls).not.toContain('delete_everything');
        expect(authorized).toEqual(['ui/initialize', 'tools/call:refresh_data', 'ui/update-model-context']);
        // Model context from the view is marked untrusted and attributed.
        expect(report.context).toMatchObject({ result: {} });
        expect(contexts).toEqual([
          {
            content: [{ type: 'text', text: 'user picked eu' }],
            untrusted: true,
            source: { namespace: 'apps', tool: 'show_dashboard', resourceUri: 'ui://apps-peer/dashboard' },
          },
        ]);
        // The host's notifications waited for initialized.
        expect(report.toolResult).toMatchObject({ content: [{ type: 'text', text: 'dashboard shown' }] });
        // The CSP blocked the outside script: it never ran, the browser never fetched it.
        expect(report.evilRan).toBe(false);
        expect(report.violations).toEqual(expect.arrayContaining([evil.url('/evil.js')]));
        expect(evilHits).toBe(0);
      } finally {
        await browser.close();
        bridge.close();
        await client.close();
        await view.close();
        await host.close();
      }
    }, 60_000);
  },
);
