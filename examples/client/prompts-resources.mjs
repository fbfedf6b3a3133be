// @ts-check
/**
 * Prompts, resources and completion. Run: `node examples/client/prompts-resources.mjs` against
 * `npx ax-mcp demo --serve`.
 */
import { AxMCPClient, AxMCPStreamableHTTPTransport } from 'ax-mcp';

const endpoint = process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp';
const client = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(endpoint, { ssrfProtection: { allowLoopback: true } }),
  {
    namespace: 'inventory',
  },
);

// #region prompt
const prompt = await client.getPrompt('restock_plan', { warehouseId: 'berlin' });
for (const message of prompt.messages) {
  const { content } = message;
  console.log(message.role, content.type === 'text' ? content.text : `${content.type} block`);
}
// #endregion prompt

// #region resource
const read = await client.readResource('inventory://warehouse/berlin');
for (const contents of read.contents) {
  console.log(
    contents.uri,
    contents.mimeType,
    'text' in contents && typeof contents.text === 'string' ? contents.text.slice(0, 60) : '(binary)',
  );
}
// A template is never expanded by the client: build the URI yourself and read it.
const lisbon = await client.readResource('inventory://warehouse/lisbon');
console.log(lisbon.contents.length, 'content(s) for lisbon');
// #endregion resource

// #region complete
// Completion of a prompt argument, and of a resource template variable.
const warehouses = await client.complete(
  { type: 'ref/prompt', name: 'restock_plan' },
  { name: 'warehouseId', value: 'b' },
);
console.log('prompt argument:', warehouses.completion.values);
const variables = await client.complete(
  { type: 'ref/resource', uri: 'inventory://warehouse/{warehouseId}' },
  { name: 'warehouseId', value: 'l' },
);
console.log('template variable:', variables.completion.values);
// #endregion complete

// #region pages
// One page at a time (inspectCatalog follows every page for you, up to maxPaginationPages).
const page = await client.listResources();
console.log(page.resources.length, 'resources on the first page, next cursor:', page.nextCursor ?? 'none');
// #endregion pages

await client.close();
