/**
 * An MCP Apps peer on the official v2 server SDK (`createMcpHandler`, 2026-07-28) with the
 * official `@modelcontextprotocol/ext-apps/server` helpers: an app tool whose `ui://` resource is a
 * small view speaking the Apps protocol over `postMessage`, an app-only tool, a model-only tool,
 * an ordinary tool that returns HTML, and a plain `text/html` resource. Records the client
 * capabilities each request declared and every tool call.
 */
import {
  RESOURCE_MIME_TYPE,
  registerAppResource,
  registerAppTool,
} from '@modelcontextprotocol/ext-apps/server';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import {
  disconnectSignal,
  listenLoopback,
  parseJson,
  readBody,
  rpcErrorResponse,
  toWebRequest,
  writeWebResponse,
} from './node-http.js';

/** What the peer saw. */
export interface AppsPeerStats {
  /** Tool calls by name, in order. */
  toolCalls: string[];
  /** The `clientCapabilities` of the last request that carried them. */
  clientCapabilities: unknown;
}

/** A running apps peer. */
export interface AppsPeer {
  readonly url: string;
  readonly stats: AppsPeerStats;
  close(): Promise<void>;
}

/**
 * The view: a dependency-free Apps client. It initializes, calls the app-only tool and the
 * model-only tool, asks for model context, then logs what happened (`notifications/message`).
 * A `<script src>` from `outsideScript` must be blocked by the host's CSP.
 */
export function viewHtml(outsideScript: string): string {
  return `<!doctype html>
<html><head><title>dashboard</title>
<script>
  window.__violations = [];
  document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.blockedURI));
</script>
<script src="${outsideScript}"></script>
</head><body><h1 id="status">loading</h1>
<script>
  let next = 1;
  const waiting = new Map();
  window.addEventListener('message', (event) => {
    const m = event.data;
    if (m && m.id !== undefined && waiting.has(m.id) && !m.method) { waiting.get(m.id)(m); waiting.delete(m.id); }
    if (m && m.method === 'ui/notifications/tool-result') window.__toolResult = m.params;
  });
  const request = (method, params) => new Promise((resolve) => {
    const id = next++;
    waiting.set(id, resolve);
    window.parent.postMessage({ jsonrpc: '2.0', id, method, params }, '*');
  });
  const notify = (method, params) => window.parent.postMessage({ jsonrpc: '2.0', method, params }, '*');
  (async () => {
    const early = await request('tools/call', { name: 'refresh_data', arguments: {} });
    const init = await request('ui/initialize', {
      protocolVersion: '2026-01-26', appInfo: { name: 'dashboard', version: '1' }, appCapabilities: {},
    });
    notify('ui/notifications/initialized', {});
    const allowed = await request('tools/call', { name: 'refresh_data', arguments: { region: 'eu' } });
    const refused = await request('tools/call', { name: 'delete_everything', arguments: {} });
    const context = await request('ui/update-model-context', { content: [{ type: 'text', text: 'user picked eu' }] });
    await new Promise((r) => setTimeout(r, 300));
    document.getElementById('status').textContent = 'done';
    notify('notifications/message', { level: 'info', data: {
      early, init: init.result, allowed, refused, context,
      evilRan: window.__evil === true, violations: window.__violations, toolResult: window.__toolResult || null,
    } });
  })();
</script></body></html>`;
}

/** Starts the peer; `outsideScript` is the URL the view tries (and must fail) to load. */
export async function startAppsServer(outsideScript: string): Promise<AppsPeer> {
  const stats: AppsPeerStats = { toolCalls: [], clientCapabilities: undefined };
  const build = () => {
    const mcp = new McpServer(
      { name: 'apps-peer', version: '1.0.0' },
      { capabilities: { tools: {}, resources: {} } },
    );
    registerAppTool(
      mcp,
      'show_dashboard',
      { description: 'Shows the dashboard app.', _meta: { ui: { resourceUri: 'ui://apps-peer/dashboard' } } },
      async () => ({ content: [{ type: 'text', text: 'dashboard shown' }] }),
    );
    registerAppTool(
      mcp,
      'refresh_data',
      {
        description: 'App-only: fresh numbers.',
        _meta: { ui: { resourceUri: 'ui://apps-peer/dashboard', visibility: ['app'] } },
      },
      async () => ({ content: [{ type: 'text', text: 'refreshed' }], structuredContent: { value: 42 } }),
    );
    registerAppTool(
      mcp,
      'delete_everything',
      {
        description: 'Model-only.',
        _meta: { ui: { resourceUri: 'ui://apps-peer/dashboard', visibility: ['model'] } },
      },
      async () => ({ content: [{ type: 'text', text: 'deleted' }] }),
    );
    mcp.registerTool('html_report', { description: 'An ordinary tool whose result is HTML.' }, async () => ({
      content: [{ type: 'text', text: '<html><body><script>window.__evil = true</script></body></html>' }],
    }));
    registerAppResource(
      mcp,
      'dashboard',
      'ui://apps-peer/dashboard',
      { mimeType: RESOURCE_MIME_TYPE },
      async () => ({
        contents: [
          {
            uri: 'ui://apps-peer/dashboard',
            mimeType: RESOURCE_MIME_TYPE,
            text: viewHtml(outsideScript),
            _meta: {
              ui: {
                csp: { connectDomains: ['https://api.example.com', "'unsafe-eval'"] },
                permissions: { camera: {} },
              },
            },
          },
        ],
      }),
    );
    mcp.registerResource('plain', 'ui://apps-peer/plain', { mimeType: 'text/html' }, async (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'text/html', text: '<p>not an app</p>' }],
    }));
    registerAppTool(
      mcp,
      'plain_app',
      { description: 'Names a text/html resource.', _meta: { ui: { resourceUri: 'ui://apps-peer/plain' } } },
      async () => ({ content: [{ type: 'text', text: 'plain' }] }),
    );
    return mcp;
  };
  const handler = createMcpHandler(build, { legacy: 'stateless' });
  const http = await listenLoopback((req, res) => {
    void (async () => {
      if (!req.url?.startsWith('/mcp'))
        return writeWebResponse(res, rpcErrorResponse(404, -32601, 'Not found'));
      const body = req.method === 'POST' ? await readBody(req) : undefined;
      const parsed = parseJson(body) as { method?: string; params?: Record<string, unknown> } | undefined;
      const meta = parsed?.params?._meta as Record<string, unknown> | undefined;
      const capabilities = meta?.['io.modelcontextprotocol/clientCapabilities'];
      if (capabilities !== undefined) stats.clientCapabilities = capabilities;
      if (parsed?.method === 'tools/call' && typeof parsed.params?.name === 'string')
        stats.toolCalls.push(parsed.params.name);
      await writeWebResponse(res, await handler.fetch(toWebRequest(req, body, disconnectSignal(res))));
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
  return {
    url: http.url('/mcp'),
    stats,
    async close() {
      await handler.close();
      await http.close();
    },
  };
}
