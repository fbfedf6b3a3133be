// @ts-check
/**
 * The checks of the troubleshooting list: does the server offer subscriptions, does the policy
 * select anything, and why does an event wake no target. Run:
 * `node examples/subscriptions/troubleshooting.mjs` against `npx ax-mcp demo --serve`.
 */
import {
  AxMCPClient,
  AxMCPEventSource,
  AxMCPStreamableHTTPTransport,
  eventRoute,
  eventRuntime,
  eventTarget,
  MCP_EVENT_TYPES,
} from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const client = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  {
    namespace: 'inventory',
  },
);

// #region catalog
const catalog = await client.inspectCatalog();
console.log(`subscriptions offered: ${catalog.capabilities.resources?.subscribe === true}`);
console.log(
  `concrete resources: ${catalog.resources.length}, templates: ${catalog.resourceTemplates.length}`,
);
console.log(`held now: ${JSON.stringify(client.subscriptions)}`);
// #endregion catalog

// #region warnings
// A policy that selects nothing, next to a route that waits for resource updates: the runtime says so.
/** @type {string[]} the codes onWarning was given */
const warned = [];
const agent = eventTarget('agent')
  .invoke(() => 'ok')
  .build();
const runtime = eventRuntime({
  sources: [
    new AxMCPEventSource({
      client,
      resourceSubscriptions: { select: (resource) => resource.uri.startsWith('inventory://warehouse/porto') },
      identity: { tenantId: 'demo' },
      trust: 'authenticated',
    }),
  ],
  allowVolatile: true,
  onWarning: (message, details) => {
    console.log(`warning ${details.code}: ${message}`);
    warned.push(details.code);
  },
  routes: [
    eventRoute('wake-agent').types(MCP_EVENT_TYPES.resourceUpdated).authenticated().wake(agent).build(),
    // Misspelled: no MCP source publishes it, and the runtime says so, with the likely type.
    eventRoute('stock-log')
      .types('mcp.resource.update')
      .observe(() => {})
      .build(),
  ],
});
await runtime.start();
// #endregion warnings
// The page shows both warnings: a run without them is a broken example, not a quiet one.
if (warned.join() !== 'unknown_type,withheld_type')
  throw new Error(`expected two warnings, got ${warned.join()}`);

// #region explain
// Why would an event wake nothing? explain() answers per route, with the code that routes.
const event = {
  id: 'check-1',
  source: 'mcp://inventory',
  type: 'mcp.resource.updated',
  subject: 'inventory://warehouse/berlin',
};
for (const ingress of [{}, { identity: { tenantId: 'demo' }, trust: /** @type {const} */ ('untrusted') }]) {
  for (const route of await runtime.explain(event, ingress)) {
    console.log(
      `${route.routeId}: ${route.matches ? 'matches' : `${route.reason?.code}: ${route.reason?.message}`}`,
    );
  }
}
const typo = await runtime.explain(
  { ...event, type: 'mcp.resources.updated' },
  { identity: { tenantId: 'demo' }, trust: 'authenticated' },
);
console.log(`${typo[0]?.routeId}: ${typo[0]?.reason?.code}: ${typo[0]?.reason?.message}`);
// #endregion explain

await runtime.close();
await client.close();
