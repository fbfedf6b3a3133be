// @ts-check
/**
 * stdio: a local server as a child process. This one runs the reference server
 * `@modelcontextprotocol/server-everything` (`npm install @modelcontextprotocol/server-everything`),
 * found from this file; with npx it would be `command: 'npx', args: ['-y',
 * '@modelcontextprotocol/server-everything', 'stdio']`. Run: `node examples/transports/stdio.mjs`.
 */
import { createRequire } from 'node:module';
import { AxMCPClient } from 'ax-mcp';
import { AxMCPStdioTransport } from 'ax-mcp/node';

const entry = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');

// #region stdio
const transport = new AxMCPStdioTransport({
  command: process.execPath, // no shell: the command and its arguments as a vector
  args: [entry, 'stdio'],
  env: { LOG_LEVEL: 'info' }, // on top of HOME, LOGNAME, PATH, SHELL, TERM, USER only
  onStderr: (line) => console.error(`[server] ${line}`),
  killGraceMs: 2_000, // close(): stdin closed, then SIGTERM, then SIGKILL to the process group
});
const client = new AxMCPClient(transport, { namespace: 'everything' });
const catalog = await client.inspectCatalog(); // era auto: server/discover first, silence means 2025-11-25
console.log(`${catalog.serverInfo?.name} over stdio: ${catalog.era}, ${catalog.tools.length} tools`);
const echoed = await client.callTool('echo', { message: 'hello over stdio' });
console.log(echoed.content[0]?.type === 'text' ? echoed.content[0].text : echoed.content[0]);
await client.close(); // ends the whole process tree
// #endregion stdio
