// @ts-check
/**
 * Loud, never silent: a misspelled option is refused before anything is sent; the guard of the
 * specification denies the demo's destructive tool; an input plan in the callback form feeds a
 * target; `runtime.explain()` says why an anonymous notification wakes no authenticated route
 * (and that a verified one does), and `onWarning` says so once, naming what to set.
 * The last line is what it observed, as JSON.
 *
 * Run: `node examples/security/guarded-and-explained.mjs` with the demo server up
 * (`npx ax-mcp demo --serve`; `adjust_stock` is destructive, `get_stock` read-only).
 */
import {
  AxMCPAuthorizationDeniedError,
  AxMCPClient,
  AxMCPEventSource,
  AxMCPInvalidOptionsError,
  AxMCPStreamableHTTPTransport,
  eventPath,
  eventRoute,
  eventRuntime,
  eventTarget,
} from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const transport = () =>
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } });

// #region misspelled
// A misspelled guard is refused at construction: nothing is sent, nothing runs unguarded.
let misspelled = { code: '', path: '', suggestion: /** @type {string | undefined} */ (undefined) };
try {
  // @ts-expect-error -- the misspelling is the point
  new AxMCPClient(transport(), { namespace: 'inventory', authorizeToolcall: () => false });
} catch (error) {
  if (!(error instanceof AxMCPInvalidOptionsError)) throw error;
  misspelled = { code: error.code, path: error.path, suggestion: error.suggestion };
  console.log(`refused: ${error.message}`);
}
// #endregion misspelled

// #region guard
// The tool as the catalog lists it (frozen): its annotations are hints from the server.
const client = new AxMCPClient(transport(), {
  namespace: 'inventory',
  authorizeToolCall: async ({ tool }) => tool.annotations?.destructiveHint !== true,
});
let destructiveDenied = false;
try {
  await client.callTool('adjust_stock', { warehouseId: 'berlin', sku: 'widget-a', delta: 1 });
} catch (error) {
  destructiveDenied = error instanceof AxMCPAuthorizationDeniedError; // nothing was sent
  console.log(`denied: ${error instanceof Error ? error.message : error}`);
}
const stock = await client.callTool('get_stock', { sku: 'widget-a' }); // read-only: runs
const stockTotal = /** @type {{ total: number }} */ (stock.structuredContent).total;
console.log(`get_stock allowed: total ${stockTotal}`);
// #endregion guard

// #region explain
// An input plan in the callback form, and an authenticated wake route next to an anonymous source.
/** @type {unknown} */
let planned;
const stockAgent = eventTarget('stock-agent')
  .inputFields([{ name: 'uri', type: 'string' }])
  .input((input) => input.field('uri', eventPath.data('uri')))
  .invoke((input) => {
    planned = input;
    return 'done';
  })
  .build();
/** @type {string[]} */
const warnings = [];
const runtime = eventRuntime({
  sources: [new AxMCPEventSource({ client, resourceSubscriptions: ['inventory://warehouse/berlin'] })],
  allowVolatile: true,
  onWarning: (message) => warnings.push(message), // the default is console.warn
  routes: [
    eventRoute('wake-on-stock').types('mcp.resource.updated').authenticated().wake(stockAgent).build(),
  ],
});
await runtime.start();
for (const warning of warnings) console.log(`warning: ${warning}`);

// Why an anonymous update wakes nothing, and the same update from a verified tenant does.
const update = {
  id: 'example-1',
  source: 'mcp://inventory',
  type: 'mcp.resource.updated',
  subject: 'inventory://warehouse/berlin',
  data: { uri: 'inventory://warehouse/berlin' },
};
/** @type {{ identity: { tenantId: string }, trust: 'authenticated' }} */
const verified = { identity: { tenantId: 'acme' }, trust: 'authenticated' };
const explained = [...(await runtime.explain(update)), ...(await runtime.explain(update, verified))];
for (const route of explained) {
  console.log(
    `${route.routeId}: ${route.matches ? 'would match' : `${route.reason?.code} — ${route.reason?.message}`}`,
  );
}
// #endregion explain

await runtime.publish({ event: update, ...verified });
await runtime.waitForIdle({ timeoutMs: 5_000 });
console.log(`the target received ${JSON.stringify(planned)}`);

await runtime.close();
await client.close();
console.log(JSON.stringify({ misspelled, destructiveDenied, stockTotal, planned, explained, warnings }));
