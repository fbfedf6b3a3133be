// @ts-check
/**
 * Era classification and the era store: the same client code against a dual-era server, a
 * 2025-11-25-only server and a pinned era. This example starts two demo servers of its own
 * (`ax-mcp/demo`), so it needs nothing running. Run: `node examples/eras/classification.mjs`.
 */
import { AxMCPClient, AxMCPMemoryEraStore, AxMCPStreamableHTTPTransport } from 'ax-mcp';
import { AxMCPDemoServer } from 'ax-mcp/demo';

const loopback = { ssrfProtection: { allowLoopback: true } };
const dual = new AxMCPDemoServer({ era: 'dual' });
const legacyOnly = new AxMCPDemoServer({ era: 'legacy' });
const [dualURL, legacyURL] = await Promise.all([dual.start(), legacyOnly.start()]);

// #region auto
const eraStore = new AxMCPMemoryEraStore(); // the default is one process-wide memory store
for (const url of [dualURL, legacyURL]) {
  const client = new AxMCPClient(new AxMCPStreamableHTTPTransport(url, loopback), {
    namespace: 'inventory',
    eraStore,
  });
  await client.ping(); // ping works in both eras (2026-07-28 has no ping: it asks server/discover)
  console.log(`${url}: ${client.getEra()} ${client.protocolVersion}`);
  await client.close();
}
// The verdicts, per endpoint URL: a later client for the same URL sends no probe.
const verdict = await eraStore.get(legacyURL);
console.log('remembered:', verdict?.era, verdict?.protocolVersion);
// #endregion auto

// #region pinned
// Pinning skips classification: 'legacy' speaks 2025-11-25 even to a server that has both.
const pinned = new AxMCPClient(new AxMCPStreamableHTTPTransport(dualURL, loopback), {
  namespace: 'inventory',
  era: 'legacy',
});
const catalog = await pinned.inspectCatalog();
console.log(
  `pinned: ${catalog.era} ${catalog.protocolVersion}, session ${pinned.transport.sessionId ? 'yes' : 'no'}`,
);
await pinned.close();
// #endregion pinned

await Promise.all([dual.close(), legacyOnly.close()]);
