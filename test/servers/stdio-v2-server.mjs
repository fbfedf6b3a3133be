/**
 * A stdio MCP server on the official v2 server SDK (`serveStdio`), run as a child process by
 * test/transport-stdio-modern.test.ts and test/transport-recovery.test.ts. `serveStdio` picks
 * the era from the opening exchange: `server/discover` (or any request with the 2026-07-28
 * `_meta` envelope) pins 2026-07-28, `initialize` pins 2025-11-25. Diagnostics go to stderr, one
 * line each: `era <era>` when an instance is built (so, over 2025-11-25, once per `initialize`),
 * `call <tool>` when a tool starts, `cancelled <tool>` when a call's signal aborts (the client
 * sent `notifications/cancelled`), `subscribe <uri>` / `unsubscribe <uri>` for the 2025-11-25
 * resource subscriptions (the resource `mem://counter`, offered in that era only).
 */
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

serveStdio(
  ({ era }) => {
    process.stderr.write(`era ${era}\n`);
    const legacy = era === 'legacy';
    const server = new McpServer(
      { name: 'stdio-v2-peer', version: '2.4.0' },
      { capabilities: legacy ? { tools: {}, resources: { subscribe: true } } : { tools: {} } },
    );
    server.registerTool('echo', { inputSchema: z.object({ message: z.string() }) }, async ({ message }) => {
      process.stderr.write('call echo\n');
      return { content: [{ type: 'text', text: `echo: ${message}` }] };
    });
    server.registerTool('wait', { inputSchema: z.object({ ms: z.number() }) }, async ({ ms }, ctx) => {
      process.stderr.write('call wait\n');
      const cancelled = await new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), ms);
        ctx.mcpReq.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve(true);
        });
      });
      if (cancelled) process.stderr.write('cancelled wait\n');
      return { content: [{ type: 'text', text: cancelled ? 'cancelled' : 'waited' }] };
    });
    if (legacy) {
      server.registerResource('counter', 'mem://counter', { mimeType: 'text/plain' }, async (uri) => ({
        contents: [{ uri: uri.href, text: '0' }],
      }));
      server.server.setRequestHandler('resources/subscribe', async (request) => {
        process.stderr.write(`subscribe ${request.params.uri}\n`);
        return {};
      });
      server.server.setRequestHandler('resources/unsubscribe', async (request) => {
        process.stderr.write(`unsubscribe ${request.params.uri}\n`);
        return {};
      });
    }
    return server;
  },
  { onerror: (error) => process.stderr.write(`error ${error.message}\n`) },
);
