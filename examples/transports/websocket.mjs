// @ts-check
/**
 * WebSocket: one JSON-RPC message per text frame, subprotocol `mcp`. Node 20 has no global
 * WebSocket, so pass the `ws` package's (`npm install ws`); browsers, Deno, Bun and Node 22+
 * need no option. This example builds the transport and closes it without connecting: point it
 * at your own `wss:` server. Run: `node examples/transports/websocket.mjs`.
 */
import { AxMCPClient, AxMCPSSRFError, AxMCPWebSocketTransport } from 'ax-mcp';
import { WebSocket } from 'ws';

// #region websocket
const transport = new AxMCPWebSocketTransport('wss://mcp.example.com/ws', {
  WebSocket, // Node 20 only; elsewhere leave it out
  protocols: ['mcp'], // the default; the server must pick one
  openTimeoutMs: 30_000,
  maxMessageBytes: 16 * 1024 * 1024,
});
const remote = new AxMCPClient(transport, { namespace: 'remote' }); // both eras; era 'auto' probes
console.log(transport.kind, transport.endpoint);
await remote.close();
// #endregion websocket

// #region ssrf
// The same SSRF policy as HTTP: ws: (unencrypted) and loopback need an explicit opt-in.
try {
  const local = new AxMCPClient(new AxMCPWebSocketTransport('ws://127.0.0.1:9/ws', { WebSocket }), {
    namespace: 'l',
  });
  await local.ping();
} catch (error) {
  if (!(error instanceof AxMCPSSRFError)) throw error;
  console.log(`${error.code}: ${error.message}`);
}
// #endregion ssrf
