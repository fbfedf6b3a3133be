/**
 * A stdio MCP server on the official v2 server SDK (`serveStdio`), run as a child process by
 * test/transport-stdio-modern.test.ts. `serveStdio` picks the era from the opening exchange:
 * `server/discover` (or any request with the 2026-07-28 `_meta` envelope) pins 2026-07-28,
 * `initialize` pins 2025-11-25. Diagnostics go to stderr, one line each: `cancelled <tool>`
 * when a call's signal aborts (the client sent `notifications/cancelled`), `era <era>` when
 * an instance is built.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

serveStdio(
  ({ era }) => {
    process.stderr.write(`era ${era}\n`);
    const server = new McpServer(
      { name: 'stdio-v2-peer', version: '2.4.0' },
      { capabilities: { tools: {} } },
    );
    server.registerTool('echo', { inputSchema: z.object({ message: z.string() }) }, async ({ message }) => ({
      content: [{ type: 'text', text: `echo: ${message}` }],
    }));
    server.registerTool('wait', { inputSchema: z.object({ ms: z.number() }) }, async ({ ms }, ctx) => {
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
    return server;
  },
  { onerror: (error) => process.stderr.write(`error ${error.message}\n`) },
);
