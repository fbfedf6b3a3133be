/**
 * AxMCPClient over stdio (`AxMCPStdioTransport` from ax-mcp/node) against
 * `@modelcontextprotocol/server-everything` as a child process: the handshake, lists, calls, a
 * server → client sampling round trip, and a close after which no process and no handle is left.
 */
import { describe, expect, it } from 'vitest';
import {
  AxMCPClient,
  type AxMCPClientOptions,
  type AxMCPCreateMessageParams,
  AxMCPMemoryEraStore,
  AxMCPTransportError,
} from '../src/index.js';
import { AxMCPStdioTransport } from '../src/node.js';
import { everythingStdioCommand } from './servers/everything.js';

/** Handles that a child process, its pipes and timers hold open. */
const HANDLE_KINDS = new Set(['ProcessWrap', 'PipeWrap', 'Timeout', 'Immediate']);

function openHandles(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) {
    if (HANDLE_KINDS.has(kind)) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return counts;
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function settle(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

function stdioClient(options: Partial<AxMCPClientOptions>, stderr: string[]) {
  const transport = new AxMCPStdioTransport({
    ...everythingStdioCommand(),
    killGraceMs: 1_000,
    onStderr: (line) => {
      if (stderr.length < 200) stderr.push(line);
    },
  });
  const client = new AxMCPClient(transport, {
    namespace: 'stdio',
    eraStore: new AxMCPMemoryEraStore(),
    timeoutMs: 15_000,
    ...options,
  });
  return { transport, client };
}

function texts(result: { content: ReadonlyArray<{ type: string; [key: string]: unknown }> }): string {
  return result.content
    .filter((block) => block.type === 'text')
    .map((block) => String(block.text))
    .join('\n');
}

describe.each(['legacy', 'auto'] as const)(
  'AxMCPClient over stdio against server-everything (era %s)',
  (era) => {
    it('initializes, lists, calls, answers sampling, and leaves no process or handle after close', async () => {
      // Let handles of earlier work (vitest's own) settle before counting.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const before = openHandles();
      const stderr: string[] = [];
      const sampled: AxMCPCreateMessageParams[] = [];
      const { transport, client } = stdioClient(
        {
          era,
          probeTimeoutMs: 8_000,
          sampling: (params) => {
            sampled.push(params);
            return {
              role: 'assistant',
              content: { type: 'text', text: 'stdio sample' },
              model: 'stdio-model',
            };
          },
        },
        stderr,
      );
      const sent: string[] = [];
      const request = transport.request.bind(transport);
      transport.request = (message, options) => {
        sent.push(message.method);
        return request(message, options);
      };
      let pid: number | undefined;
      try {
        const started = Date.now();
        await client.init();
        // `auto` over stdio probes server/discover; a legacy server answers -32601 at once, so the
        // fallback must not wait for the probe deadline.
        expect(Date.now() - started).toBeLessThan(8_000);
        expect(client.getEra()).toBe('legacy');
        // `auto` probed first and fell back; `legacy` went straight to initialize.
        expect(sent.slice(0, era === 'auto' ? 2 : 1)).toEqual(
          era === 'auto' ? ['server/discover', 'initialize'] : ['initialize'],
        );
        expect(client.protocolVersion).toBe('2025-11-25');
        expect(client.serverInfo).toMatchObject({ name: 'mcp-servers/everything' });
        pid = transport.pid;
        expect(pid).toBeGreaterThan(0);
        expect(processExists(pid as number)).toBe(true);
        // The handle count sees the child: the check after close() is able to fail.
        expect(openHandles().get('ProcessWrap') ?? 0).toBeGreaterThan(before.get('ProcessWrap') ?? 0);

        const catalog = await client.inspectCatalog();
        expect(catalog.tools.map((tool) => tool.name)).toEqual(
          expect.arrayContaining(['echo', 'get-sum', 'get-tiny-image']),
        );
        expect(catalog.prompts.map((prompt) => prompt.name)).toContain('simple-prompt');
        expect(catalog.resourceTemplates).toHaveLength(2);

        expect((await client.callTool('echo', { message: 'over stdio' })).content).toEqual([
          { type: 'text', text: 'Echo: over stdio' },
        ]);
        const image = await client.callTool('get-tiny-image');
        expect(image.content[1]).toMatchObject({ type: 'image', mimeType: 'image/png' });

        const sampledResult = await client.callTool('trigger-sampling-request', {
          prompt: 'ping',
          maxTokens: 5,
        });
        expect(sampled).toHaveLength(1);
        expect(sampled[0]).toMatchObject({
          maxTokens: 5,
          messages: [{ role: 'user', content: { type: 'text', text: expect.stringContaining('ping') } }],
        });
        expect(texts(sampledResult)).toContain('stdio sample');
        expect(texts(sampledResult)).toContain('stdio-model');
      } finally {
        await client.close();
      }
      expect(transport.pid).toBeUndefined();
      expect(pid).toBeDefined();
      expect(processExists(pid as number)).toBe(false);
      // The process group (npx-style wrappers would live there) is gone too.
      expect(processExists(-(pid as number))).toBe(false);
      // Nothing of the transport keeps the event loop alive.
      const settled = await settle(() => {
        const now = openHandles();
        return [...now].every(([kind, count]) => count <= (before.get(kind) ?? 0));
      }, 2_000);
      expect(settled, `open handles after close: ${JSON.stringify([...openHandles()])}`).toBe(true);
      // After close, the client refuses work with a typed error instead of respawning.
      await expect(client.ping()).rejects.toMatchObject({ code: 'closed' });
    });
  },
);

describe('AxMCPClient over stdio: close() during a call', () => {
  it('rejects the pending call with code closed and ends the server process', async () => {
    const stderr: string[] = [];
    const { transport, client } = stdioClient({ era: 'legacy' }, stderr);
    await client.inspectCatalog();
    const pid = transport.pid as number;
    expect(processExists(pid)).toBe(true);
    let progressed!: () => void;
    const firstProgress = new Promise<void>((resolve) => {
      progressed = resolve;
    });
    const call = client
      .callTool(
        'trigger-long-running-operation',
        { duration: 30, steps: 60 },
        { onProgress: () => progressed() },
      )
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    await firstProgress;
    const closing = Date.now();
    await client.close();
    const error = await call;
    expect(error).toMatchObject({ code: 'closed' });
    expect(error).toBeInstanceOf(AxMCPTransportError);
    // close() ended it well within the stdin-close + SIGTERM grace, not after the 30 s operation.
    expect(Date.now() - closing).toBeLessThan(5_000);
    expect(processExists(pid)).toBe(false);
  });
});
