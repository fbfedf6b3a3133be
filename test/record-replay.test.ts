/**
 * Record and replay (`ax-mcp/testing`): a program recorded against real servers — the v2 SDK
 * legacy peer (Streamable HTTP, classified by probe) and the modern peer (2026-07-28, MRTR) —
 * is replayed offline after the server is gone and returns the same result; the replay takes
 * the era from the recording (no probe, no era store); mismatches name the step; secrets never
 * reach the recording; `ax-mcp record` writes a replayable file; evaluation refuses live MCP
 * unless asked.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { recordCommand } from '../src/cli/record.js';
import {
  AxMCPClient,
  type AxMCPClientOptions,
  AxMCPMemoryEraStore,
  AxMCPStreamableHTTPTransport,
} from '../src/index.js';
import {
  type AxMCPRecording,
  AxMCPReplayMismatchError,
  AxMCPReplayTransport,
  assertAxMCPEvaluationTransport,
  axMCPEvaluationTransport,
  parseAxMCPRecording,
  recordAxMCPSession,
} from '../src/testing.js';
import { LOOPBACK } from './helpers/clients.js';
import { startLegacyV2Server } from './servers/legacy-v2.js';
import { startModernServer } from './servers/modern.js';

type Content = { content: ReadonlyArray<{ type: string; [key: string]: unknown }> };
const text = (result: Content) =>
  result.content.map((b) => (b.type === 'text' ? String(b.text) : '')).join('');

/** The same options live and in replay: handlers are part of the program. */
const CLIENT: Partial<AxMCPClientOptions> = {
  era: 'auto',
  timeoutMs: 10_000,
  onWarning: () => {},
  elicitation: { form: () => ({ action: 'accept', content: { name: 'Ada', age: 36 } }) },
};

/** A program over the 2025-11-25 peer: catalog, a call, progress, a server request, a read. */
async function legacyProgram(client: AxMCPClient) {
  const catalog = await client.inspectCatalog();
  const echo = await client.callTool('echo', { message: 'hello replay' });
  const progress: number[] = [];
  const slow = await client.callTool(
    'slow',
    { steps: 3, delayMs: 20 },
    { onProgress: (p) => progress.push(p.progress) },
  );
  const elicited = await client.callTool('elicit');
  const read = await client.readResource('res://text/hello');
  return {
    era: client.getEra(),
    version: client.protocolVersion,
    tools: catalog.tools.slice(0, 5).map((tool) => tool.name),
    echo: text(echo),
    slow: text(slow),
    progress,
    elicited: text(elicited),
    read: read.contents[0],
  };
}

/** A program over the 2026-07-28 peer: discover, catalog, a call, an MRTR round, a read. */
async function modernProgram(client: AxMCPClient) {
  const catalog = await client.inspectCatalog();
  const echo = await client.callTool('echo', { message: 'modern replay' });
  const greeted = await client.callTool('mrtr_one_round');
  const read = await client.readResource('res://modern/hello');
  return {
    era: client.getEra(),
    version: client.protocolVersion,
    tools: catalog.tools.map((tool) => tool.name).sort(),
    echo: text(echo),
    greeted: text(greeted),
    read: read.contents[0],
  };
}

async function replay<T>(
  recording: AxMCPRecording,
  program: (client: AxMCPClient) => Promise<T>,
  options: { strict?: boolean; client?: Partial<AxMCPClientOptions> } = {},
) {
  const transport = new AxMCPReplayTransport(
    JSON.parse(JSON.stringify(recording)),
    options.strict === undefined ? {} : { strict: options.strict },
  );
  const eraStore = new AxMCPMemoryEraStore();
  const client = new AxMCPClient(transport, {
    namespace: 'replayed',
    ...(options.client ?? CLIENT),
    eraStore,
  });
  try {
    const result = await program(client);
    return { result, transport, eraStore };
  } finally {
    await client.close();
  }
}

describe('record against a real server, replay offline', () => {
  let legacy: { result: Awaited<ReturnType<typeof legacyProgram>>; recording: AxMCPRecording };
  let modern: { result: Awaited<ReturnType<typeof modernProgram>>; recording: AxMCPRecording };

  beforeAll(async () => {
    const legacyServer = await startLegacyV2Server({ toolCount: 10 });
    try {
      legacy = await recordAxMCPSession({
        transport: new AxMCPStreamableHTTPTransport(legacyServer.url, { ssrfProtection: LOOPBACK }),
        client: { ...CLIENT, eraStore: new AxMCPMemoryEraStore() },
        run: legacyProgram,
      });
    } finally {
      await legacyServer.close();
    }
    const modernServer = await startModernServer();
    try {
      modern = await recordAxMCPSession({
        transport: new AxMCPStreamableHTTPTransport(modernServer.url, { ssrfProtection: LOOPBACK }),
        client: { ...CLIENT, eraStore: new AxMCPMemoryEraStore() },
        run: modernProgram,
      });
    } finally {
      await modernServer.close();
    }
  });

  it('records both directions with timing and era, as plain JSON', () => {
    expect(legacy.result.era).toBe('legacy');
    expect(legacy.recording).toMatchObject({
      format: 'ax-mcp-recording',
      era: 'legacy',
      protocolVersion: '2025-11-25',
    });
    const steps = legacy.recording.steps;
    expect(
      steps.some(
        (s) =>
          s.direction === 'send' && s.message && 'method' in s.message && s.message.method === 'tools/call',
      ),
    ).toBe(true);
    expect(
      steps.some(
        (s) =>
          s.direction === 'receive' &&
          s.message &&
          'method' in s.message &&
          s.message.method === 'notifications/progress',
      ),
    ).toBe(true);
    // The server's elicitation request and the client's answer are both there.
    expect(steps.some((s) => s.direction === 'receive' && s.type === 'request')).toBe(true);
    expect(steps.some((s) => s.direction === 'send' && s.type === 'response')).toBe(true);
    // Era classification probed first; the probe is marked so a replay skips it.
    expect(steps.filter((s) => s.probe).length).toBeGreaterThan(0);
    expect(steps.every((s, i) => s.index === i && s.atMs >= 0)).toBe(true);
    expect(parseAxMCPRecording(JSON.parse(JSON.stringify(legacy.recording)))).toEqual(legacy.recording);
    expect(modern.recording).toMatchObject({ era: 'modern', protocolVersion: '2026-07-28' });
  });

  it('replays the legacy program offline (strict) with the same result, without probing or remembering an era', async () => {
    const { result, transport, eraStore } = await replay(legacy.recording, legacyProgram, { strict: true });
    expect(result).toEqual(legacy.result);
    expect(result.progress).toEqual([1, 2, 3]);
    transport.assertComplete();
    expect(transport.firstMismatch).toBeUndefined();
    expect(transport.eraHint).toBe('legacy');
    expect(await eraStore.get(transport.endpointKey)).toBeUndefined();
  });

  it('replays the modern program offline (strict) with the same result, MRTR included', async () => {
    const { result, transport } = await replay(modern.recording, modernProgram, { strict: true });
    expect(result).toEqual(modern.result);
    expect(result.greeted).toBe('Hello, Ada');
    transport.assertComplete();
  });

  it('replays the same program twice with the same result (deterministic)', async () => {
    const first = await replay(legacy.recording, legacyProgram);
    const second = await replay(legacy.recording, legacyProgram);
    expect(second.result).toEqual(first.result);
  });

  it('a strict params mismatch names the step and the path', async () => {
    const changed = async (client: AxMCPClient) => {
      await client.inspectCatalog();
      return client.callTool('echo', { message: 'something else' });
    };
    const error = await replay(legacy.recording, changed, { strict: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AxMCPReplayMismatchError);
    const mismatch = error as AxMCPReplayMismatchError;
    const step = legacy.recording.steps[mismatch.stepIndex];
    expect(step?.message).toMatchObject({ method: 'tools/call', params: { name: 'echo' } });
    expect(mismatch.message).toContain(`step ${mismatch.stepIndex} (send request "tools/call")`);
    expect(mismatch.mismatch.path).toBe('$.params.arguments.message');
    expect(mismatch.message).toContain('"hello replay"');
    expect(mismatch.message).toContain('"something else"');
  });

  it('without strict, params may differ, but another method is a mismatch naming the expected step', async () => {
    const lenient = await replay(legacy.recording, async (client) => {
      await client.inspectCatalog();
      return text(await client.callTool('echo', { message: 'something else' }));
    });
    expect(lenient.result).toBe('hello replay');

    const error = await replay(legacy.recording, async (client) => {
      await client.inspectCatalog();
      return client.getPrompt('greeting', { name: 'x' });
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AxMCPReplayMismatchError);
    const mismatch = error as AxMCPReplayMismatchError;
    expect(mismatch.message).toMatch(
      /^Replay mismatch at step \d+ \(send request "tools\/call"\): the program sent request "prompts\/get" instead/,
    );
  });

  it('a program that skipped a step fails at once, naming the skipped request and the one sent', async () => {
    // The default client timeout (60 s): a replay waiting for the skipped step would hang that long.
    const options = { client: { ...CLIENT, timeoutMs: undefined } };
    for (const strict of [false, true]) {
      const started = Date.now();
      const error = await replay(
        legacy.recording,
        async (client) => {
          await client.inspectCatalog();
          // Skips the tool calls the recording makes before this read.
          return client.readResource('res://text/hello');
        },
        { ...options, strict },
      ).catch((e: unknown) => e);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(error).toBeInstanceOf(AxMCPReplayMismatchError);
      const mismatch = error as AxMCPReplayMismatchError;
      expect(legacy.recording.steps[mismatch.stepIndex]?.message).toMatchObject({
        method: 'tools/call',
        params: { name: 'echo' },
      });
      expect(mismatch.mismatch.sent).toBe('request "resources/read"');
      expect(mismatch.message).toMatch(
        /^Replay mismatch at step \d+ \(send request "tools\/call"\): the program sent request "resources\/read" \(recorded at step \d+\) without sending this first/,
      );
    }
    // Strict: the same method, other params — the call that was skipped is named, not matched.
    const skippedEcho = await replay(
      legacy.recording,
      async (client) => {
        await client.inspectCatalog();
        return client.callTool('slow', { steps: 3, delayMs: 20 });
      },
      { ...options, strict: true },
    ).catch((e: unknown) => e);
    expect(skippedEcho).toBeInstanceOf(AxMCPReplayMismatchError);
    const named = legacy.recording.steps[(skippedEcho as AxMCPReplayMismatchError).stepIndex];
    expect(named?.message).toMatchObject({ method: 'tools/call', params: { name: 'echo' } });
  });

  it('a program that stops early leaves steps that assertComplete names', async () => {
    const { transport } = await replay(legacy.recording, (client) => client.inspectCatalog());
    expect(() => transport.assertComplete()).toThrow(/the program ended before sending it/);
  });
});

describe('concurrent requests replay in any order', () => {
  it('requests recorded in flight together may be sent again in another order', async () => {
    const server = await startLegacyV2Server({ toolCount: 10 });
    const calls = (order: string[]) => async (client: AxMCPClient) => {
      await client.inspectCatalog();
      const results = await Promise.all(order.map((message) => client.callTool('echo', { message })));
      return results.map(text).sort();
    };
    let recorded: { result: string[]; recording: AxMCPRecording };
    try {
      recorded = await recordAxMCPSession({
        transport: new AxMCPStreamableHTTPTransport(server.url, { ssrfProtection: LOOPBACK }),
        client: { ...CLIENT, eraStore: new AxMCPMemoryEraStore() },
        run: calls(['a', 'b', 'c']),
      });
    } finally {
      await server.close();
    }
    const { result, transport } = await replay(recorded.recording, calls(['c', 'a', 'b']), { strict: true });
    expect(result).toEqual(recorded.result);
    transport.assertComplete();
  });
});

describe('redaction', () => {
  it('keeps secrets (named values, credential-like keys and token formats) out of the recording', async () => {
    const server = await startLegacyV2Server({ toolCount: 1 });
    try {
      const { recording } = await recordAxMCPSession({
        transport: new AxMCPStreamableHTTPTransport(server.url, { ssrfProtection: LOOPBACK }),
        client: { era: 'legacy', eraStore: new AxMCPMemoryEraStore() },
        secrets: ['hunter2-password'],
        run: async (client) =>
          text(
            await client.callTool('echo', {
              message: 'pw hunter2-password, key sk-abcdefghijklmnopqrstu',
              apiKey: 'plain-key-value',
            }),
          ),
      });
      const json = JSON.stringify(recording);
      expect(json).not.toContain('hunter2-password');
      expect(json).not.toContain('sk-abcdefghijklmnopqrstu');
      expect(json).not.toContain('plain-key-value');
      expect(json).toContain('[REDACTED]');
      expect(recording.result).toBe('pw [REDACTED], key [REDACTED]');
    } finally {
      await server.close();
    }
  });
});

describe('ax-mcp record', () => {
  it('records a script against a server into a file that replays', async () => {
    const server = await startLegacyV2Server({ toolCount: 1 });
    const dir = await mkdtemp(join(tmpdir(), 'ax-mcp-record-'));
    try {
      const script = join(dir, 'script.mjs');
      await writeFile(
        script,
        `export default async function (client, { args }) {
           const result = await client.callTool('echo', { message: args.join(' ') });
           return result.content[0].text;
         }\n`,
      );
      const out = join(dir, 'session.json');
      const said: string[] = [];
      const code = await recordCommand(
        [
          server.url,
          '--out',
          out,
          '--allow-localhost',
          '--era',
          'legacy',
          '--',
          script,
          'from',
          'the',
          'cli',
        ],
        (line) => said.push(line),
      );
      expect(code).toBe(0);
      expect(said[0]).toMatch(/^Recorded \d+ messages \(legacy\) to /);
      const recording = parseAxMCPRecording(JSON.parse(await readFile(out, 'utf8')));
      expect(recording.result).toBe('from the cli');
      await server.close();
      const { result } = await replay(
        recording,
        async (client) => {
          const echoed = await client.callTool('echo', { message: 'from the cli' });
          return echoed.content[0]?.text;
        },
        { strict: true, client: { era: 'auto' } },
      );
      expect(result).toBe(recording.result);
    } finally {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('evaluation uses replay unless live MCP is asked for', () => {
  it('refuses a live transport by default and accepts it with evaluationMode live', async () => {
    const live = new AxMCPStreamableHTTPTransport('https://mcp.example.com/mcp');
    expect(() => assertAxMCPEvaluationTransport(live)).toThrow(/every run would repeat its side effects/);
    expect(() => assertAxMCPEvaluationTransport(live, { evaluationMode: 'live' })).not.toThrow();
    expect(() => axMCPEvaluationTransport({ live: () => live })).toThrow(/needs a recording/);
    const recording: AxMCPRecording = {
      format: 'ax-mcp-recording',
      version: 1,
      endpoint: 'https://mcp.example.com/mcp',
      transportKind: 'http',
      era: 'modern',
      recordedAt: new Date(0).toISOString(),
      steps: [],
    };
    const chosen = axMCPEvaluationTransport({ recording, live: () => live });
    expect(chosen).toBeInstanceOf(AxMCPReplayTransport);
    expect(() => assertAxMCPEvaluationTransport(chosen)).not.toThrow();
    expect(axMCPEvaluationTransport({ recording, live: () => live, evaluationMode: 'live' })).toBe(live);
    await live.close();
  });
});
