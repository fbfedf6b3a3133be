/**
 * agent(): the actor writes JavaScript steps that run in the QuickJS sandbox, reaching MCP
 * only as `mcp.<namespace>.…` on a real server (the official v2 server SDK on loopback),
 * with the scripted OpenAI-compatible provider. Multi-turn state, raw results with media
 * references, discovery over 2,000 tools, catalog changes, escape attempts, streaming.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AxAIOpenAICompatible } from '../src/ai/index.js';
import type { AxMCPClient } from '../src/index.js';
import { type AxAgentEvent, agent } from '../src/program/index.js';
import { eventually, httpClient } from './helpers/clients.js';
import { TINY_PNG_BASE64 } from './servers/content.js';
import { type LegacyV2Server, startLegacyV2Server } from './servers/legacy-v2.js';
import { type ScriptedOpenAIServer, startScriptedOpenAI } from './servers/scripted-openai.js';

const step = (code: string) => ({ content: `Next step:\n\`\`\`js\n${code}\n\`\`\`` });
const answer = (outputs: Record<string, unknown>) => ({ content: JSON.stringify(outputs) });
const bodyText = (index: number, llm: ScriptedOpenAIServer) =>
  JSON.stringify(llm.requests[index]?.body ?? {});
const lastUser = (index: number, llm: ScriptedOpenAIServer) =>
  String(llm.requests[index]?.body.messages.findLast((m) => m.role === 'user')?.content ?? '');
const systemOf = (index: number, llm: ScriptedOpenAIServer) =>
  String(llm.requests[index]?.body.messages[0]?.content);

describe('agent() with MCP and the sandbox', () => {
  let server: LegacyV2Server;
  let llm: ScriptedOpenAIServer;
  let ai: AxAIOpenAICompatible;
  const clients: AxMCPClient[] = [];
  const client = (namespace: string, url = server.url) => {
    const made = httpClient(url, { namespace, era: 'legacy' });
    clients.push(made);
    return made;
  };

  beforeAll(async () => {
    [server, llm] = await Promise.all([startLegacyV2Server({ toolCount: 3 }), startScriptedOpenAI()]);
    ai = new AxAIOpenAICompatible({
      baseURL: llm.baseURL,
      model: 'scripted',
      apiKey: 'sk-test',
      maxRetries: 0,
    });
  });
  afterEach(async () => {
    llm.requests.length = 0;
    expect(llm.pending).toBe(0);
    await Promise.all(clients.splice(0).map((made) => made.close()));
  });
  afterAll(async () => {
    await Promise.all([server?.close(), llm?.close()]);
  });

  it('keeps a variable of step 1 for step 2, then the responder writes the outputs', async () => {
    const solver = agent('question:string -> answer:number', { maxTurns: 4 });
    llm.script(
      step('const base = 21\nconsole.log("base is", base)'),
      step('const doubled = base * 2\nconsole.log(doubled)\nfinal("Give the doubled value", { doubled })'),
      answer({ answer: 42 }),
    );
    const events: AxAgentEvent[] = [];
    const outputs = await solver.forward(
      ai,
      { question: 'Double 21' },
      { onAgentEvent: (e) => events.push(e) },
    );
    expect(outputs).toEqual({ answer: 42 });
    expect(llm.requests).toHaveLength(3);
    expect(lastUser(1, llm)).toContain('Step 1 result:\nbase is 21');
    expect(systemOf(0, llm)).toContain('Top-level const, let, var, function and class declarations persist');
    const responder = bodyText(2, llm);
    expect(responder).toContain('agentTask: Give the doubled value');
    expect(responder).toContain('agentEvidence: {\\"doubled\\":42}');
    expect(
      events.filter((e) => e.type === 'observation').map((e) => e.type === 'observation' && e.entry.output),
    ).toEqual(['base is 21', '42']);
    for (const request of llm.requests) expect(request.body.tools).toBeUndefined();
    await solver.close();
  });

  it('calls mcp.<ns>.tools.<tool> on a real server; results stay raw, media is referenced', async () => {
    const docs = client('docs');
    const researcher = agent('question:string -> answer:string', { mcp: docs });
    llm.script(
      step(
        [
          'const echoed = await mcp.docs.tools.echo({ message: "ping" })',
          'const all = await mcp.docs.tools.all_content({})',
          'const hello = await mcp.docs.resources.read("res://text/hello")',
          'const prompt = await mcp.docs.prompts.get("greeting", { name: "Ada" })',
          'const done = await mcp.docs.complete({ type: "ref/prompt", name: "greeting" }, { name: "name", value: "A" })',
          'console.log(echoed.content[0].text, all.structuredContent.count, hello.contents[0].text)',
          'console.log(JSON.stringify(all.content.find((block) => block.type === "image")))',
          'console.log(prompt.messages[0].content.text, done.completion.values.join(","))',
        ].join('\n'),
      ),
      step('final("Answer with the echo", { echo: echoed.content[0].text })'),
      answer({ answer: 'ping' }),
    );
    const calls = server.stats.methods.get('tools/call') ?? 0;
    expect(await researcher.forward(ai, { question: 'Echo ping' })).toEqual({ answer: 'ping' });
    expect((server.stats.methods.get('tools/call') ?? 0) - calls).toBe(2);
    const observed = lastUser(1, llm);
    expect(observed).toContain('ping 6 Hello, world');
    expect(observed).toMatch(/\{"type":"image","ref":"media:\d+","bytes":\d+,"mimeType":"image\/png"/);
    expect(observed).toContain('Say hello to Ada.');
    expect(observed).toContain('Ada');
    for (const index of [0, 1, 2]) expect(bodyText(index, llm)).not.toContain(TINY_PNG_BASE64);
    expect(systemOf(0, llm)).toContain('- mcp.docs.tools.echo({ message: string })');
    expect(systemOf(0, llm)).toContain('<mcp_documentation source="mcp:docs" trust="untrusted">');
    for (const request of llm.requests) expect(request.body.tools).toBeUndefined();
    await researcher.close();
  });

  it('hands the media the evidence refers to to the responder as media, never to the actor', async () => {
    const docs = client('docs');
    const describer = agent('question:string -> description:string', { mcp: docs });
    llm.script(
      step(
        [
          'const all = await mcp.docs.tools.all_content({})',
          'const image = all.content.find((block) => block.type === "image")',
          'final("Describe the image", { image })',
        ].join('\n'),
      ),
      answer({ description: 'a tiny picture' }),
    );
    expect(await describer.forward(ai, { question: 'What does the tool draw?' })).toEqual({
      description: 'a tiny picture',
    });
    // The actor saw a reference only; the responder gets the picture itself, after its ref.
    expect(bodyText(0, llm)).not.toContain(TINY_PNG_BASE64);
    const responder = llm.requests[1]?.body.messages.findLast((m) => m.role === 'user');
    const parts = responder?.content as { type: string; text?: string; image_url?: { url: string } }[];
    expect(Array.isArray(parts)).toBe(true);
    const ref = /media:\d+/.exec(String(parts[0]?.text))?.[0];
    expect(ref).toMatch(/^media:\d+$/);
    // The text naming the ref (the adapter joins adjacent text parts), then the image.
    const image = parts.findIndex((part) => part.type === 'image_url');
    expect(String(parts[image - 1]?.text).endsWith(`${ref}:`)).toBe(true);
    expect(parts[image]).toMatchObject({ image_url: { url: `data:image/png;base64,${TINY_PNG_BASE64}` } });
    await describer.close();
  });

  it('an error, a refused call and a timed-out step are shown to the next turn', async () => {
    const docs = httpClient(server.url, {
      namespace: 'docs',
      era: 'legacy',
      authorizeToolCall: ({ tool }) => tool.name !== 'fail',
    });
    clients.push(docs);
    const worker = agent('task:string -> done:boolean', { mcp: docs, limits: { stepTimeoutMs: 300 } });
    llm.script(
      step(
        'try { await mcp.docs.tools.fail({}) } catch (e) { console.log("refused:", e.message) }\nmissing()',
      ),
      step('await mcp.docs.tools.slow({ steps: 50, delayMs: 100 })'),
      step('final("Report", { ok: true })'),
      answer({ done: true }),
    );
    const cancelled = server.stats.cancelledToolCalls;
    expect(await worker.forward(ai, { task: 'try' })).toEqual({ done: true });
    expect(lastUser(1, llm)).toContain(
      'refused: mcp.docs.tools.fail failed: The host refused the call to mcp:docs:fail',
    );
    expect(lastUser(1, llm)).toContain("Error: ReferenceError: 'missing' is not defined (line 2)");
    expect(lastUser(2, llm)).toContain('Error: The step exceeded its time limit of 300 ms');
    await eventually(() => server.stats.cancelledToolCalls > cancelled, 5000, 'the aborted slow call');
    await worker.close();
  });

  it('escape attempts fail inside the sandbox and the run goes on', async () => {
    const probe = agent('question:string -> verdict:string', {
      limits: { stepTimeoutMs: 500, memoryLimitBytes: 16 << 20 },
    });
    llm.script(
      step(
        [
          'console.log(typeof globalThis.process, typeof require, typeof fetch, typeof setTimeout)',
          'console.log(typeof ({}).constructor.constructor("return this")().process)',
          'Object.prototype.pwned = "yes"; Object.freeze = null',
          'try { await import("node:fs") } catch (e) { console.log("import:", e.message) }',
        ].join('\n'),
      ),
      step('while (true) {}'),
      step('const hog = []; for (let i = 0; ; i++) hog.push(("x" + i).repeat(1 << 14))'),
      step('JSON.parse("[".repeat(300000))'),
      step('final("Say what happened", { survived: true })'),
      answer({ verdict: 'contained' }),
    );
    expect(await probe.forward(ai, { question: 'escape?' })).toEqual({ verdict: 'contained' });
    expect(lastUser(1, llm)).toContain(
      'undefined undefined undefined undefined\nundefined\nimport: could not load module',
    );
    expect(lastUser(2, llm)).toContain('time limit of 500 ms');
    expect(lastUser(3, llm)).toMatch(/out of memory.*16 MiB/);
    expect(lastUser(4, llm)).toMatch(/Error: .*(stack|memory)/);
    expect(({} as Record<string, unknown>).pwned).toBeUndefined();
    expect(typeof Object.freeze).toBe('function');
    await probe.close();
  });

  it('discover() keeps a 2,000-tool catalog out of the prompt and adds what it finds, marked untrusted', async () => {
    const big = await startLegacyV2Server({ toolCount: 2000, pageSize: 500 });
    try {
      const catalog = client('big', big.url);
      const finder = agent('need:string -> result:string', { mcp: catalog, functionDiscovery: true });
      llm.script(
        step('const found = await discover("bulk 1234")\nconsole.log(found.map((f) => f.path).join(","))'),
        step(
          'const called = await mcp.big.tools.bulk_1234({})\nfinal("Report the result", called.content[0].text)',
        ),
        answer({ result: 'bulk_1234 called' }),
      );
      expect(await finder.forward(ai, { need: 'tool 1234' })).toEqual({ result: 'bulk_1234 called' });
      expect(lastUser(1, llm)).toMatch(/^Step 1 result:\nmcp\.big\.tools\.bulk_1234,/m);
      expect(systemOf(0, llm)).toContain('mcp.big (server "legacy-v2-peer"): 2009 tools');
      expect(systemOf(0, llm)).not.toContain('bulk_1234');
      expect(systemOf(1, llm)).toMatch(
        /<mcp_documentation source="mcp:big" trust="untrusted">\n- mcp\.big\.tools\.bulk_1234\(\{ note\?: string \}\) — Bulk tool 1234\./,
      );
      for (const index of [0, 1, 2]) expect(bodyText(index, llm).length).toBeLessThan(12_000);

      const listing = agent('need:string -> result:string', { mcp: catalog, maxTurns: 1 });
      llm.script(step('console.log(1)'), answer({ result: 'none' }));
      await listing.forward(ai, { need: 'x' });
      expect(bodyText(3, llm).length).toBeGreaterThan(100_000);
      await Promise.all([finder.close(), listing.close()]);
    } finally {
      await big.close();
    }
  });

  it('a catalog revision change between turns refreshes what the actor can call', async () => {
    const live = await startLegacyV2Server({ toolCount: 0 });
    try {
      const docs = client('live', live.url);
      const listening = docs.startListening();
      await listening.ready;
      const watcher = agent('need:string -> result:string', { mcp: docs });
      const revision = () => docs.catalogRevision;
      let before = 0;
      llm.script(
        step('console.log(Object.keys(mcp.live.tools).includes("fresh_tool"))'),
        async () => {
          before = revision();
          live.addTool('fresh_tool', 'fresh!');
          await eventually(() => revision() > before, 5000, 'tools/list_changed');
          return step(
            'const r = await mcp.live.tools.fresh_tool({})\nconsole.log(r.content[0].text)\nfinal("t", r.content[0].text)',
          );
        },
        answer({ result: 'fresh!' }),
      );
      expect(await watcher.forward(ai, { need: 'fresh' })).toEqual({ result: 'fresh!' });
      expect(lastUser(1, llm)).toContain('Step 1 result:\nfalse');
      expect(systemOf(0, llm)).not.toContain('fresh_tool');
      await listening.close();
      await watcher.close();
    } finally {
      await live.close();
    }
  });

  it('streamingForward yields steps, then the responder output', async () => {
    const streamer = agent('question:string -> answer:string');
    llm.script(step('final("Answer", { text: "streamed" })'), answer({ answer: 'streamed' }));
    const seen: string[] = [];
    let final: unknown;
    for await (const chunk of streamer.streamingForward(ai, { question: 'stream?' })) {
      if (chunk.channel === 'agent') seen.push(`agent:${chunk.event.type}`);
      else if (chunk.channel === 'output') seen.push(`output:${chunk.type}`);
      else seen.push(`mcp:${chunk.event.type}`);
      if (chunk.channel === 'output' && chunk.type === 'final') final = chunk.output;
    }
    expect(final).toEqual({ answer: 'streamed' });
    expect(seen.slice(0, 3)).toEqual(['agent:step', 'agent:observation', 'agent:final']);
    expect(seen).toContain('output:delta');
    expect(seen.at(-1)).toBe('output:final');
    await streamer.close();
  });
});
