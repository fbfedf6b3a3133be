// @ts-check
/**
 * Errors as a program meets them: one root class (`AxError`), one stable `code` per failure,
 * and the fields each class adds. Run: `node examples/errors/handling.mjs` against
 * `npx ax-mcp demo --serve`.
 */
import {
  AxError,
  AxMCPClient,
  AxMCPError,
  AxMCPHTTPStatusError,
  AxMCPInvalidOptionsError,
  AxMCPProtocolError,
  AxMCPStreamableHTTPTransport,
  ax,
  axOpenAICompatible,
  eventRoute,
} from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const loopback = { ssrfProtection: { allowLoopback: true } };
const client = new AxMCPClient(new AxMCPStreamableHTTPTransport(endpoint, loopback), {
  namespace: 'inventory',
});

/**
 * Runs `attempt` and prints the code of what it threw.
 * @param {string} label
 * @param {() => unknown} attempt
 */
async function codeOf(label, attempt) {
  try {
    await attempt();
    console.log(`${label}: no error`);
  } catch (error) {
    if (!(error instanceof AxError)) throw error; // not ours: a bug to see, not to swallow
    console.log(`${label.padEnd(22)} ${error.name} ${error.code}`);
  }
}

// #region handle
try {
  await client.getPrompt('restock_plan', { warehouseId: 'mars' });
} catch (error) {
  if (error instanceof AxMCPProtocolError) {
    // The server's JSON-RPC error: rpcCode, the untrusted data, and where it happened.
    console.log(error.code, error.rpcCode, error.namespace, error.endpoint, error.message);
  } else if (error instanceof AxMCPError && (error.code === 'timeout' || error.code === 'transport_error')) {
    console.log('try again later:', error.message); // a read may be retried; a tool call is never replayed
  } else throw error;
}
// #endregion handle

// #region codes
// @ts-expect-error -- the misspelling is the point (TypeScript sees it too)
await codeOf('misspelled option', () => new AxMCPStreamableHTTPTransport(endpoint, { timeout: 5 }));
await codeOf('loopback not allowed', () =>
  new AxMCPClient(new AxMCPStreamableHTTPTransport(endpoint), { namespace: 'x' }).ping(),
);
await codeOf('unknown tool', () => client.callTool('no_such_tool'));
await codeOf('misspelt argument', () => client.callTool('get_stock', { skuu: 'widget-a' }));
await codeOf('template subscribed', () => client.subscribeResource('inventory://warehouse/{warehouseId}'));
await codeOf('unknown resource', () => client.readResource('inventory://warehouse/mars'));
await codeOf('deadline', () => client.readResource('inventory://warehouse/berlin', { timeoutMs: 1 }));
await codeOf('aborted', () =>
  client.readResource('inventory://warehouse/berlin', { signal: AbortSignal.abort() }),
);
await codeOf('not an MCP endpoint', () =>
  new AxMCPClient(new AxMCPStreamableHTTPTransport(endpoint.replace(/\/mcp$/, '/nope'), loopback), {
    namespace: 'x',
  }).ping(),
);
await codeOf('bad signature', () => ax('question:string -> '));
await codeOf('route without action', () => eventRoute('r').types('x').build());
await codeOf('AI without a model', () => axOpenAICompatible(/** @type {any} */ ({ apiKey: 'k' })));
// #endregion codes

// #region fields
try {
  // @ts-expect-error -- the misspelling is the point
  new AxMCPClient(new AxMCPStreamableHTTPTransport(endpoint, loopback), { namespace: 'x', maxConcurency: 2 });
} catch (error) {
  if (!(error instanceof AxMCPInvalidOptionsError)) throw error;
  console.log({
    code: error.code,
    path: error.path,
    suggestion: error.suggestion,
    issues: error.issues.length,
  });
}
try {
  await new AxMCPClient(new AxMCPStreamableHTTPTransport(endpoint.replace(/\/mcp$/, '/nope'), loopback), {
    namespace: 'x',
  }).ping();
} catch (error) {
  if (!(error instanceof AxMCPHTTPStatusError)) throw error;
  console.log({ code: error.code, status: error.status, body: error.bodySnippet.slice(0, 40) });
}
// #endregion fields

await client.close();
