// @ts-check
/**
 * A script for `ax-mcp record`: its default export gets a connected client and the arguments
 * after the script's name; what it returns is stored as the recording's `result`.
 *
 *   npx ax-mcp record http://127.0.0.1:3000/mcp --allow-localhost --out session.json \
 *     -- examples/cli/record-script.mjs widget-b
 */

/**
 * @param {import('ax-mcp').AxMCPClient} client
 * @param {{ args: string[] }} context
 */
export default async function (client, { args }) {
  const result = await client.callTool('get_stock', { sku: args[0] ?? 'widget-a' });
  return result.structuredContent;
}
