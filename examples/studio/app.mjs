// @ts-check
/**
 * The studio on an application's own objects: a client recorded from the page and answering
 * form elicitations there, and the runtime whose events and runs the page shows. This example
 * starts a demo server of its own (`ax-mcp/demo`) and drives the studio's JSON API the way the
 * page does, so it needs nothing running. Run: `node examples/studio/app.mjs`.
 */
import { AxMCPClient, AxMCPStreamableHTTPTransport, eventRuntime } from 'ax-mcp';
import { AxMCPDemoServer } from 'ax-mcp/demo';
import { AxStudioRecordingTransport, axStudioElicitation, startStudio } from 'ax-mcp/node';

const demo = new AxMCPDemoServer();
const endpoint = await demo.start();

// #region wire
// Both are wired into the client when it is made: the studio cannot add them afterwards.
const bridge = axStudioElicitation({ timeoutMs: 60_000 }); // unanswered: `cancel` after a minute
const recorder = new AxStudioRecordingTransport(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  { maxSteps: 5_000 },
);
const client = new AxMCPClient(recorder, { namespace: 'inventory', elicitation: bridge.handlers });
const runtime = eventRuntime({ routes: [] });
await runtime.start();

const studio = await startStudio({ clients: [client], runtime, elicitation: bridge });
console.log('open', studio.url.replace(/token=.*/, 'token=…'));
// #endregion wire

// What the page does, through its API (the token goes in a header or the page's cookie).
const token = new URL(studio.url).searchParams.get('token') ?? '';
/** @param {string} path @param {unknown} [body] a POST's body; none for a GET */
const api = async (path, body) => {
  const response = await fetch(`${studio.origin}/api/${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'x-ax-studio-token': token, 'x-ax-studio': '1', 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return response.json();
};
await api('recordings/inventory/start', {});
const call = await api('servers/inventory/call', { tool: 'get_stock', arguments: { sku: 'widget-a' } });
console.log('get_stock:', call.ok ? call.result.structuredContent.total : call.error.message);
await api('recordings/inventory/stop', {});
const recording = await api('recordings/inventory/download');
console.log('recorded', recording.steps.length, 'steps:', recording.format, recording.era);
const [revision] = (await api('servers/inventory/revisions')).revisions;
console.log('catalog revision', revision.revision, 'tools', revision.changes.tools.added.join(', '));

await studio.close();
bridge.close();
await runtime.close();
await client.close();
await demo.close();
