// @ts-check
// timeout: 60000
/**
 * The deprecated 2024-11-05 HTTP+SSE transport, for servers that speak nothing newer, and the
 * Streamable HTTP transport that falls back to it. This example starts the reference server
 * (`@modelcontextprotocol/server-everything`) in its SSE mode on a free port.
 * Run: `node examples/transports/http-sse.mjs`.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { AxMCPClient, AxMCPHTTPSSETransport, axMCPHTTPTransport } from 'ax-mcp';

const entry = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
const port = await new Promise((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const address = probe.address();
    probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
  });
});
const server = spawn(process.execPath, [entry, 'sse'], {
  env: { ...process.env, PORT: String(port) },
  stdio: 'ignore',
});
const loopback = { ssrfProtection: { allowLoopback: true } };
for (let attempt = 0; ; attempt++) {
  const up = await fetch(`http://127.0.0.1:${port}/`).then(
    () => true,
    () => false,
  );
  if (up) break;
  if (attempt > 100) throw new Error('server-everything did not start');
  await new Promise((resolve) => setTimeout(resolve, 100));
}

// #region sse
// Pinned: GET opens the stream; its `endpoint` event names where every message is POSTed
// (it must be on the same origin). Always the 2025-11-25 era, with no probe.
const sse = new AxMCPClient(new AxMCPHTTPSSETransport(`http://127.0.0.1:${port}/sse`, loopback), {
  namespace: 'old',
});
console.log('pinned:', sse.transport.kind, (await sse.inspectCatalog()).era);
await sse.close();
// #endregion sse

// #region fallback
// Streamable HTTP first; after the endpoint refused both eras (400, 404 or 405), HTTP+SSE.
const old = new AxMCPClient(
  axMCPHTTPTransport(`http://127.0.0.1:${port}/mcp`, {
    ...loopback,
    legacySSEFallback: { url: `http://127.0.0.1:${port}/sse` },
  }),
  { namespace: 'old' },
);
const catalog = await old.inspectCatalog();
console.log('fallback:', old.transport.kind, catalog.era, `${catalog.tools.length} tools`);
await old.close();
// #endregion fallback

server.kill('SIGTERM');
