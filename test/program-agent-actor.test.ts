/**
 * What the actor of agent() sees, against real MCP servers (the official v2 server SDK and our
 * dual-era demo server on loopback) with the scripted OpenAI-compatible provider: the inline
 * tool lists of every server (discovery off) word for word; the library's own errors for a
 * namespace that is not attached, for arguments carrying a `__proto__` key and for refused
 * calls (never `Error: Error:`); and the turn count across a clarification and its resume.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AxAIOpenAICompatible } from '../src/ai/index.js';
import { AxMCPDemoServer } from '../src/demo.js';
import {
  AxMemoryEventStore,
  eventInput,
  eventPath,
  eventRoute,
  eventRuntime,
  eventTarget,
} from '../src/events/index.js';
import type { AxMCPClient } from '../src/index.js';
import { agent } from '../src/program/index.js';
import { httpClient } from './helpers/clients.js';
import { type LegacyV2Server, startLegacyV2Server } from './servers/legacy-v2.js';
import { type ScriptedOpenAIServer, startScriptedOpenAI } from './servers/scripted-openai.js';

const step = (code: string) => ({ content: `\`\`\`js\n${code}\n\`\`\`` });
const answer = (outputs: Record<string, unknown>) => ({ content: JSON.stringify(outputs) });
const systemOf = (index: number, llm: ScriptedOpenAIServer) =>
  String(llm.requests[index]?.body.messages[0]?.content);
const lastUser = (index: number, llm: ScriptedOpenAIServer) =>
  String(llm.requests[index]?.body.messages.findLast((m) => m.role === 'user')?.content ?? '');

/** The `<mcp_documentation>` block of one namespace in a system prompt. */
function documentation(system: string, namespace: string): string | undefined {
  const open = `<mcp_documentation source="mcp:${namespace}" trust="untrusted">`;
  const start = system.indexOf(open);
  if (start < 0) return undefined;
  const end = system.indexOf('</mcp_documentation>', start);
  return system.slice(start, end + '</mcp_documentation>'.length);
}

describe('what the actor sees', () => {
  let server: LegacyV2Server;
  let demo: AxMCPDemoServer;
  let demoURL: string;
  let llm: ScriptedOpenAIServer;
  let ai: AxAIOpenAICompatible;
  const clients: AxMCPClient[] = [];
  const client = (namespace: string, url = server.url, extra: Parameters<typeof httpClient>[1] = {}) => {
    const made = httpClient(url, { namespace, era: 'legacy', ...extra });
    clients.push(made);
    return made;
  };

  beforeAll(async () => {
    demo = new AxMCPDemoServer({ era: 'legacy', keepAliveMs: 0 });
    [server, llm, demoURL] = await Promise.all([
      startLegacyV2Server({ toolCount: 2 }),
      startScriptedOpenAI(),
      demo.start(),
    ]);
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
    await Promise.all([server?.close(), llm?.close(), demo?.close()]);
  });

  it('lists every tool of every server with its full description when discovery is off', async () => {
    const lister = agent('question:string -> answer:string', {
      mcp: [client('docs'), client('inv', demoURL)],
      maxTurns: 1,
    });
    llm.script(step('final("Say ok", {})'), answer({ answer: 'ok' }));
    await lister.forward(ai, { question: 'What can you call?' });
    const system = systemOf(0, llm);
    expect(documentation(system, 'docs')).toBe(
      [
        '<mcp_documentation source="mcp:docs" trust="untrusted">',
        '- mcp.docs.tools.echo({ message: string }) — Echoes `message`.',
        '- mcp.docs.tools.all_content({}) — Returns every content block kind, structuredContent and _meta.',
        '- mcp.docs.tools.fail({}) — Returns a tool error (isError: true).',
        '- mcp.docs.tools.slow({ steps?: number, delayMs?: number }) — Runs `steps` steps of `delayMs`, reporting progress; honours cancellation.',
        '- mcp.docs.tools.sample({ prompt?: string, standalone?: boolean }) — Asks the client for `sampling/createMessage`; returns its answer as JSON text.',
        '- mcp.docs.tools.elicit({}) — Form elicitation (name, age); returns the answer as JSON text.',
        '- mcp.docs.tools.elicit_defaults({}) — Form elicitation whose schema has defaults; returns the answer.',
        '- mcp.docs.tools.roots({}) — Asks the client for `roots/list`; returns it.',
        '- mcp.docs.tools.log({}) — Emits notifications/message at six levels (filtered by logging/setLevel).',
        '- mcp.docs.tools.bulk_0000({ note?: string }) — Bulk tool 0.',
        '- mcp.docs.tools.bulk_0001({ note?: string }) — Bulk tool 1.',
        '</mcp_documentation>',
      ].join('\n'),
    );
    expect(documentation(system, 'inv')).toBe(DEMO_TOOLS);
    await lister.close();
  });

  it('a call to a namespace that is not attached fails with the library error naming the attached ones', async () => {
    const caller = agent('question:string -> answer:string', {
      mcp: [client('docs'), client('inv', demoURL)],
      maxTurns: 3,
    });
    llm.script(
      step('try { await mcp.inventory.tools.list({}) } catch (e) { console.log("caught:", e.message) }'),
      step('await mcp.tickets.resources.read("res://x")'),
      step('final("Say ok", {})'),
      answer({ answer: 'ok' }),
    );
    await caller.forward(ai, { question: 'q' });
    expect(lastUser(1, llm)).toContain(
      'caught: mcp.inventory is not attached to this agent (attached: mcp.docs, mcp.inv)',
    );
    expect(lastUser(2, llm)).toContain(
      'Error: mcp.tickets is not attached to this agent (attached: mcp.docs, mcp.inv) (line 1)',
    );
    expect(JSON.stringify(llm.requests.map((request) => request.body.messages))).not.toContain(
      'cannot read property',
    );
    await caller.close();
  });

  it('arguments with their own __proto__ key are refused catchably and the next step still runs', async () => {
    const docs = client('docs');
    const worker = agent('question:string -> answer:string', { mcp: docs, maxTurns: 3 });
    llm.script(
      step(
        [
          'const args = JSON.parse(\'{"__proto__": {"admin": true}, "message": "hi"}\')',
          'try { await mcp.docs.tools.echo(args) } catch (e) { console.log("refused:", e.message) }',
          'const echoed = await mcp.docs.tools.echo({ message: "still here" })',
          'console.log(echoed.content[0].text)',
        ].join('\n'),
      ),
      step('console.log(echoed.content[0].text, ({}).admin)\nawait mcp.docs.tools.echo(args)'),
      step('final("Say ok", {})'),
      answer({ answer: 'ok' }),
    );
    const calls = server.stats.methods.get('tools/call') ?? 0;
    await worker.forward(ai, { question: 'q' });
    const refusal = 'mcp.docs.tools.echo was not called: "__proto__" cannot be used as a key';
    expect(lastUser(1, llm)).toContain(`Step 1 result:\nrefused: ${refusal}\nstill here`);
    expect(lastUser(2, llm)).toContain(`Step 2 result:\nstill here undefined\nError: ${refusal} (line 2)`);
    expect(lastUser(2, llm)).not.toContain('restarted');
    expect(JSON.stringify(llm.requests.map((request) => request.body.messages))).not.toContain('Lifetime');
    // Only the clean call reached the server.
    expect((server.stats.methods.get('tools/call') ?? 0) - calls).toBe(1);
    await worker.close();
  });

  it('a refused call is shown once as an error, never as "Error: Error:"', async () => {
    const docs = client('docs', server.url, { authorizeToolCall: ({ tool }) => tool.name !== 'fail' });
    const worker = agent('question:string -> answer:string', { mcp: docs, maxTurns: 3 });
    llm.script(
      step('await mcp.docs.tools.fail({})'),
      step('try { await mcp.docs.tools.fail({}) } catch (e) { console.log(e) }'),
      step('final("Say ok", {})'),
      answer({ answer: 'ok' }),
    );
    await worker.forward(ai, { question: 'q' });
    const refused =
      'mcp.docs.tools.fail failed: The host refused the call to mcp:docs:fail; it was not run. Do not retry it.';
    expect(lastUser(1, llm)).toContain(`Step 1 result:\n(no console output)\nError: ${refused} (line 1)`);
    expect(lastUser(2, llm)).toContain(`Step 2 result:\nError: ${refused}`);
    const everything = JSON.stringify(llm.requests.map((request) => request.body.messages));
    expect(everything).not.toContain('Error: Error:');
    await worker.close();
  });

  it('counts turns across a clarification and its resume against maxTurns', async () => {
    const helper = agent('request:string -> reply:string', { maxTurns: 8 });
    const target = eventTarget('helper')
      .program(helper)
      .ai(ai)
      .input(eventInput().field('request', eventPath.data('request')))
      .build();
    const runtime = eventRuntime({
      routes: [
        eventRoute('asked').types('chat.message').wake(target).build(),
        eventRoute('answered')
          .types('chat.answer')
          .correlate('ax.clarification', eventPath.data('runId'))
          .resume(target)
          .build(),
      ],
      store: new AxMemoryEventStore(),
      scheduling: 'host',
    });
    // Turn 1 asks; after the resume, turns 2..8 never call final(): the run stops at 8 in all.
    llm.script(step('askClarification("Which order?")'));
    const wake = await runtime.publish({
      event: { id: 'm1', source: 'app://chat', type: 'chat.message', data: { request: 'Where is it?' } },
    });
    await runtime.runDue();
    const parked = await runtime.getRun(wake.deliveryIds[0] as string);
    expect(parked?.status).toBe('waiting_event');
    const runId =
      (parked?.output as { clarification?: { value?: string } } | undefined)?.clarification?.value ?? '';
    expect(runId).not.toBe('');
    expect(lastUser(0, llm)).toContain('Turn 1 of 8:');

    for (let turn = 2; turn <= 8; turn++) llm.script(step(`console.log("turn ${turn}")`));
    llm.script(answer({ reply: 'Still looking.' }));
    const resume = await runtime.publish({
      event: { id: 'm2', source: 'app://chat', type: 'chat.answer', data: { runId, request: '1042' } },
    });
    await runtime.runDue();
    expect(await runtime.getRun(resume.deliveryIds[0] as string)).toMatchObject({
      status: 'succeeded',
      output: { reply: 'Still looking.' },
    });
    // 1 actor turn, then 7 after the resume, then the responder.
    expect(llm.requests).toHaveLength(9);
    for (let turn = 2; turn <= 8; turn++) {
      expect(lastUser(turn - 1, llm)).toContain(`Turn ${turn} of 8: reply with the next JavaScript step`);
    }
    const responder = JSON.stringify(llm.requests[8]?.body.messages);
    expect(responder).toContain('The turn limit (8) was reached before final() was called.');
    expect(responder).not.toContain('of 9');
    await runtime.close();
    await helper.close();
  });
});

/** The demo server's tools (src/demo/mcp-surface.ts) as the actor sees them: title, description, hints. */
const DEMO_TOOLS = [
  '<mcp_documentation source="mcp:inv" trust="untrusted">',
  '- mcp.inv.tools.get_stock({ sku: string }) — Get stock: Stock of one SKU in every warehouse, with the total. [read-only]',
  '- mcp.inv.tools.adjust_stock({ warehouseId: string, sku: string, delta: number }) — Adjust stock: Adds (positive delta) or removes (negative delta) stock of a SKU in a warehouse. [destructive]',
  '- mcp.inv.tools.start_reindex({ scope: string }) — Start reindex: Reindexes the search index of a scope; runs as a task (poll tasks/get). [runs as a task]',
  '- mcp.inv.tools.count_stock({ sku: string, delayMs?: number }) — Count stock: Counts the stock of one SKU warehouse by warehouse, reporting progress after each (notifications/progress). [read-only]',
  '</mcp_documentation>',
].join('\n');
