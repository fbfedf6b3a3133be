/**
 * Child agents: callable as `agents.<name>(inputs)` from the parent's code, inheriting the
 * parent's MCP clients by `mcpInheritance` ('all', 'none', an allowlist). Unknown or repeated
 * namespaces fail before any model call; restricting a child leaves the parent its clients.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AxAIOpenAICompatible } from '../src/ai/index.js';
import type { AxMCPClient } from '../src/index.js';
import { AxProgramError, agent } from '../src/program/index.js';
import { httpClient } from './helpers/clients.js';
import { type LegacyV2Server, startLegacyV2Server } from './servers/legacy-v2.js';
import { type ScriptedOpenAIServer, startScriptedOpenAI } from './servers/scripted-openai.js';

const step = (code: string) => ({ content: `\`\`\`js\n${code}\n\`\`\`` });
const answer = (outputs: Record<string, unknown>) => ({ content: JSON.stringify(outputs) });
const systemOf = (llm: ScriptedOpenAIServer, index: number) =>
  String(llm.requests[index]?.body.messages[0]?.content);

describe('child agents and mcpInheritance', () => {
  let server: LegacyV2Server;
  let llm: ScriptedOpenAIServer;
  let ai: AxAIOpenAICompatible;
  let docs: AxMCPClient;
  let tickets: AxMCPClient;

  beforeAll(async () => {
    [server, llm] = await Promise.all([startLegacyV2Server({ toolCount: 1 }), startScriptedOpenAI()]);
    ai = new AxAIOpenAICompatible({ baseURL: llm.baseURL, model: 'scripted', maxRetries: 0 });
    docs = httpClient(server.url, { namespace: 'docs', era: 'legacy' });
    tickets = httpClient(server.url, { namespace: 'tickets', era: 'legacy' });
  });
  afterEach(() => {
    llm.requests.length = 0;
    expect(llm.pending).toBe(0);
  });
  afterAll(async () => {
    await Promise.all([docs?.close(), tickets?.close()]);
    await Promise.all([server?.close(), llm?.close()]);
  });

  const researcher = (mcpInheritance?: 'all' | 'none' | string[]) =>
    agent('topic:string -> note:string', {
      name: 'researcher',
      description: 'Looks a topic up',
      ...(mcpInheritance === undefined ? {} : { mcpInheritance }),
    });

  it('a child restricted to one namespace sees only it; the parent keeps both', async () => {
    const child = researcher(['docs']);
    const lead = agent('question:string -> answer:string', { mcp: [docs, tickets], agents: [child] });
    llm.script(
      step('const found = await agents.researcher({ topic: "reindex" })\nconsole.log(found.note)'),
      // the child's actor: its own turn, with only mcp.docs
      step(
        'const seen = Object.keys(mcp).join(",")\nconst r = await mcp.docs.tools.echo({ message: "from child" })\nfinal("note", { seen, text: r.content[0].text })',
      ),
      answer({ note: 'child saw docs' }),
      step(
        'const t = await mcp.tickets.tools.echo({ message: "parent still has tickets" })\nconsole.log(t.content[0].text)',
      ),
      step('final("answer", { ok: true })'),
      answer({ answer: 'done' }),
    );
    expect(await lead.forward(ai, { question: 'q' })).toEqual({ answer: 'done' });
    expect(systemOf(llm, 0)).toContain(
      'agents.researcher({ topic: string }) → { note: string } — Looks a topic up',
    );
    expect(systemOf(llm, 0)).toMatch(/- mcp\.docs .*\n[\s\S]*- mcp\.tickets /);
    expect(systemOf(llm, 1)).toContain('- mcp.docs');
    expect(systemOf(llm, 1)).not.toContain('mcp.tickets');
    expect(JSON.stringify(llm.requests[2]?.body)).toContain('\\"seen\\":\\"docs\\"');
    expect(String(llm.requests[3]?.body.messages.at(-1)?.content)).toContain('child saw docs');
    expect(String(llm.requests[4]?.body.messages.at(-1)?.content)).toContain('parent still has tickets');
    await lead.close();
  });

  it("an empty allowlist and 'none' inherit nothing; 'all' inherits every client", async () => {
    for (const [inheritance, expected] of [
      [[], ''],
      ['none', ''],
      ['all', 'docs,tickets'],
    ] as const) {
      const lead = agent('question:string -> answer:string', {
        mcp: [docs, tickets],
        agents: [researcher(inheritance as 'all' | 'none' | string[])],
      });
      llm.script(
        step('const r = await agents.researcher({ topic: "t" })\nfinal("a", r)'),
        step('final("n", { seen: Object.keys(mcp).join(",") })'),
        answer({ note: 'x' }),
        answer({ answer: 'ok' }),
      );
      await lead.forward(ai, { question: 'q' });
      expect(JSON.stringify(llm.requests.at(-2)?.body)).toContain(`\\"seen\\":\\"${expected}\\"`);
      llm.requests.length = 0;
      await lead.close();
    }
  });

  it('unknown or repeated namespaces fail before any model call', async () => {
    for (const inheritance of [['billing'], ['docs', 'docs']]) {
      const lead = agent('question:string -> answer:string', {
        mcp: [docs, tickets],
        agents: [researcher(inheritance)],
      });
      const run = lead.forward(ai, { question: 'q' });
      await expect(run).rejects.toBeInstanceOf(AxProgramError);
      await expect(run).rejects.toMatchObject({ code: 'invalid_inheritance' });
      expect(llm.requests).toHaveLength(0);
      await lead.close();
    }
    expect(() => agent('a:string -> b:string', { agents: [agent('x:string -> y:string')] })).toThrow(
      /needs a name and a description/,
    );
  });
});
