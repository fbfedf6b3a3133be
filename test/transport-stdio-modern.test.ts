/**
 * The stdio transport in the 2026-07-28 era, against a server on the official v2 server SDK
 * (`serveStdio`, test/servers/stdio-v2-server.mjs): `era: 'auto'` probes `server/discover` and
 * stays modern, calls carry the per-request envelope, an aborted call is cancelled with
 * `notifications/cancelled`; `era: 'legacy'` gets the 2025-11-25 handshake from the same server.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AxMCPClient, type AxMCPClientOptions, AxMCPMemoryEraStore } from '../src/index.js';
import { AxMCPStdioTransport } from '../src/node.js';
import { eventually } from './helpers/clients.js';

const SERVER = fileURLToPath(new URL('./servers/stdio-v2-server.mjs', import.meta.url));

function stdioClient(options: Partial<AxMCPClientOptions>) {
  const stderr: string[] = [];
  const transport = new AxMCPStdioTransport({
    command: process.execPath,
    args: [SERVER],
    killGraceMs: 1_000,
    onStderr: (line) => stderr.push(line),
  });
  const sent: Array<{ method: string; meta: unknown }> = [];
  const request = transport.request.bind(transport);
  transport.request = (message, send) => {
    sent.push({ method: message.method, meta: message.params?._meta });
    return request(message, send);
  };
  const notify = transport.notify.bind(transport);
  transport.notify = (message, send) => {
    sent.push({ method: message.method, meta: message.params });
    return notify(message, send);
  };
  const client = new AxMCPClient(transport, {
    namespace: 'stdio_modern',
    eraStore: new AxMCPMemoryEraStore(),
    timeoutMs: 10_000,
    probeTimeoutMs: 8_000,
    ...options,
  });
  return { client, transport, stderr, sent };
}

function text(result: { content: ReadonlyArray<{ type: string; [key: string]: unknown }> }): string {
  return result.content.map((block) => (block.type === 'text' ? String(block.text) : '')).join('');
}

describe('AxMCPStdioTransport against the official v2 server SDK over stdio', () => {
  it("era 'auto' probes server/discover and speaks 2026-07-28", async () => {
    const { client, stderr, sent } = stdioClient({ era: 'auto' });
    try {
      await client.init();
      expect(sent[0]?.method).toBe('server/discover');
      expect(sent.some((s) => s.method === 'initialize')).toBe(false);
      expect(client.getEra()).toBe('modern');
      expect(client.protocolVersion).toBe('2026-07-28');
      expect(client.serverInfo).toMatchObject({ name: 'stdio-v2-peer' });
      expect(stderr).toContain('era modern');

      const catalog = await client.inspectCatalog();
      expect(catalog.tools.map((tool) => tool.name).sort()).toEqual(['echo', 'wait']);
      expect(text(await client.callTool('echo', { message: 'modern' }))).toBe('echo: modern');
      const call = sent.find((s) => s.method === 'tools/call');
      expect(call?.meta).toMatchObject({ 'io.modelcontextprotocol/protocolVersion': '2026-07-28' });
    } finally {
      await client.close();
    }
  });

  it('cancels an aborted call with notifications/cancelled', async () => {
    const { client, stderr, sent } = stdioClient({ era: 'modern' });
    try {
      await client.init();
      const stop = new AbortController();
      const call = client.callTool('wait', { ms: 10_000 }, { signal: stop.signal });
      await eventually(() => sent.some((s) => s.method === 'tools/call'), 5_000, 'the call to go out');
      await new Promise((resolve) => setTimeout(resolve, 100));
      stop.abort();
      await expect(call).rejects.toMatchObject({ code: 'aborted' });
      const cancel = sent.find((s) => s.method === 'notifications/cancelled');
      expect(cancel?.meta).toMatchObject({ requestId: expect.any(Number) });
      await eventually(() => stderr.includes('cancelled wait'), 5_000, 'the server to see the cancellation');
    } finally {
      await client.close();
    }
  });

  it("era 'legacy' gets the 2025-11-25 handshake from the same server", async () => {
    const { client, stderr, sent } = stdioClient({ era: 'legacy' });
    try {
      await client.init();
      expect(sent[0]?.method).toBe('initialize');
      expect(client.getEra()).toBe('legacy');
      expect(client.protocolVersion).toBe('2025-11-25');
      expect(stderr).toContain('era legacy');
      expect(text(await client.callTool('echo', { message: 'legacy' }))).toBe('echo: legacy');
    } finally {
      await client.close();
    }
  });
});
