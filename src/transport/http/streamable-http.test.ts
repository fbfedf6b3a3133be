import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AxMCPStreamableHTTPTransport } from './streamable-http.js';

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A loopback server answering every POST with one fixed body. */
async function answering(contentType: string, body: string): Promise<string> {
  server = createServer((_req, res) => {
    _req.resume();
    res.writeHead(200, { 'content-type': contentType });
    res.end(body);
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

const request = { jsonrpc: '2.0' as const, id: 7, method: 'tools/list' };
const loopback = { ssrfProtection: { allowHTTP: true, allowLoopback: true } };

describe('AxMCPStreamableHTTPTransport answers', () => {
  it.each([
    ['JSON', 'application/json', '{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"boom"}}'],
    [
      'SSE',
      'text/event-stream',
      'data: {"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"boom"}}\n\n',
    ],
  ])(
    'takes an id-less error on a 200 %s answer as the answer to the one request sent',
    async (_kind, type, body) => {
      const transport = new AxMCPStreamableHTTPTransport(await answering(type, body), loopback);
      const response = await transport.request(request);
      expect(response).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32603, message: 'boom' } });
      await transport.close();
    },
  );

  it('reads a batch carried in one SSE event', async () => {
    const notes: string[] = [];
    const url = await answering(
      'text/event-stream',
      'data: [{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}},{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}]\n\n',
    );
    const transport = new AxMCPStreamableHTTPTransport(url, loopback);
    transport.setHandlers({ onMessage: (message) => notes.push(message.method) });
    expect(await transport.request(request)).toEqual({ jsonrpc: '2.0', id: 7, result: { tools: [] } });
    expect(notes).toEqual(['notifications/message']);
    await transport.close();
  });
});

describe('AxMCPStreamableHTTPTransport SSE answers and connections', () => {
  it('reads away the end of an answered stream, so the next request reuses the connection', async () => {
    const ports: number[] = [];
    server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => {
        body += chunk;
      });
      req.on('end', () => {
        const { id } = JSON.parse(body) as { id: number };
        ports.push(req.socket.remotePort as number);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result: {} })}\n\n`);
        // The end of the stream a moment after the answer, as servers do.
        setTimeout(() => res.end(), 5);
      });
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', () => resolve()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const transport = new AxMCPStreamableHTTPTransport(url, loopback);
    try {
      for (let id = 1; id <= 3; id++) {
        expect(await transport.request({ jsonrpc: '2.0', id, method: 'ping' })).toMatchObject({ id });
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(new Set(ports).size).toBe(1);
    } finally {
      await transport.close();
      server.closeAllConnections();
    }
  });
});
