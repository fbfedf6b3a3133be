/**
 * Programs against the demo server (our dual-era MCP server on the official server SDK) with
 * the scripted OpenAI-compatible provider: an `mcpContext` entry that names its client by
 * namespace, and the agent's task modules — `mcp.<ns>.tasks.update` on a 2026-07-28 server,
 * `mcp.<ns>.tasks.list` / `.result` on the 2025-11-25 task draft, each rejected with a typed
 * `unsupported` error by the other era.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AxAIOpenAICompatible } from '../src/ai/index.js';
import { AxMCPDemoServer, type AxMCPDemoTask } from '../src/demo/index.js';
import type { AxMCPClient } from '../src/index.js';
import { type AxAgentEvent, AxProgramOptionsError, agent, ax, axMCPChat } from '../src/program/index.js';
import { httpClient } from './helpers/clients.js';
import { type ScriptedOpenAIServer, startScriptedOpenAI } from './servers/scripted-openai.js';

const REINDEX = 'start_reindex';
const BERLIN = 'inventory://warehouse/berlin';

const final = (outputs: Record<string, unknown>) => ({ content: JSON.stringify(outputs) });
const step = (code: string) => ({ content: `Next step:\n\`\`\`js\n${code}\n\`\`\`` });
const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((part) => (part as { text?: string }).text ?? '').join('\n')
      : '';
/** Runs an agent and returns the console output of its steps. */
async function observe(run: (onAgentEvent: (event: AxAgentEvent) => void) => Promise<unknown>) {
  const outputs: string[] = [];
  const result = await run((event) => {
    if (event.type === 'observation') outputs.push(event.entry.output, event.entry.error ?? '');
  });
  return { result, output: outputs.join('\n') };
}
const systemOf = (llm: ScriptedOpenAIServer, index: number) =>
  textOf(llm.requests[index]?.body.messages[0]?.content);

function demoTask(server: AxMCPDemoServer, taskId: string): AxMCPDemoTask {
  const task = server.state().tasks.find((candidate) => candidate.taskId === taskId);
  if (!task) throw new Error(`the demo has no task ${taskId}`);
  return task;
}

let llm: ScriptedOpenAIServer;
let ai: AxAIOpenAICompatible;

beforeAll(async () => {
  llm = await startScriptedOpenAI();
  ai = new AxAIOpenAICompatible({ baseURL: llm.baseURL, model: 'scripted', maxRetries: 0 });
});
afterEach(() => {
  llm.requests.length = 0;
  expect(llm.pending).toBe(0);
});
afterAll(async () => {
  await llm?.close();
});

describe('mcpContext names its client by namespace (dual-era demo)', () => {
  let server: AxMCPDemoServer;
  let inventory: AxMCPClient;

  beforeAll(async () => {
    server = new AxMCPDemoServer({ keepAliveMs: 0 });
    await server.start();
    inventory = httpClient(server.url, { namespace: 'inventory', timeoutMs: 10_000 });
  });
  afterAll(async () => {
    await inventory?.close();
    await server?.close();
  });

  it('reads the resource of the attached client and gives its text to the model', async () => {
    const program = ax('question:string -> answer:string', {
      mcp: inventory,
      mcpContext: [{ client: 'inventory', resource: { uri: BERLIN } }],
    });
    llm.script(final({ answer: 'plenty of widget-a' }));
    await expect(program.forward(ai, { question: 'What is in Berlin?' })).resolves.toEqual({
      answer: 'plenty of widget-a',
    });
    const document = (await inventory.readResource(BERLIN)).contents[0];
    const expected = document && 'text' in document ? document.text : undefined;
    expect(expected).toContain('widget-a');
    expect(llm.requests).toHaveLength(1);
    const context = llm.requests[0]?.body.messages.find(
      (message) => message.role === 'user' && textOf(message.content).includes('<mcp_context'),
    );
    const text = textOf(context?.content);
    expect(text).toContain(
      `<mcp_context source="mcp:inventory" kind="resource" uri="${BERLIN}" trust="untrusted">`,
    );
    expect(text).toContain(expected as string);
  });

  it('axMCPChat takes its own conversation back (raw tool results, MCP context) as a valid request', async () => {
    llm.script(
      { toolCalls: [{ name: 'get_stock', arguments: { sku: 'widget-a' } }] },
      { content: 'Plenty.' },
    );
    const first = await axMCPChat(
      ai,
      { messages: [{ role: 'user', content: 'How many widget-a?' }] },
      { mcp: inventory, mcpContext: [{ client: 'inventory', resource: { uri: BERLIN } }] },
    );
    expect(first.messages.map((message) => message.role)).toEqual([
      'system',
      'user',
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    llm.script({ content: 'Still plenty.' });
    const second = await axMCPChat(
      ai,
      { messages: [...first.messages, { role: 'user', content: 'And now?' }] },
      { mcp: inventory },
    );
    expect(second.response.message.content).toBe('Still plenty.');
  });

  it('an unknown namespace is invalid_options naming the attached ones, before any model call', async () => {
    const program = ax('question:string -> answer:string', { mcp: inventory });
    const run = program.forward(
      ai,
      { question: 'q' },
      { mcpContext: [{ client: 'inventroy', resource: { uri: BERLIN } }] },
    );
    await expect(run).rejects.toBeInstanceOf(AxProgramOptionsError);
    await expect(run).rejects.toMatchObject({
      code: 'invalid_options',
      path: 'mcpContext[0].client',
      suggestion: "'inventory'",
      message: expect.stringContaining("'inventory'"),
    });
    expect(llm.requests).toHaveLength(0);
  });
});

describe('agent task modules on a 2026-07-28 demo', () => {
  let server: AxMCPDemoServer;
  let inventory: AxMCPClient;

  beforeAll(async () => {
    server = new AxMCPDemoServer({ era: 'modern', taskPollIntervalMs: 50, keepAliveMs: 0 });
    await server.start();
    inventory = httpClient(server.url, { namespace: 'inventory', timeoutMs: 10_000 });
    await inventory.init();
  });
  afterAll(async () => {
    await inventory?.close();
    await server?.close();
  });

  it('tasks.update answers input requests; tasks.list and tasks.result reject with code unsupported', async () => {
    expect(inventory.getEra()).toBe('modern');
    const outcome = await inventory.callToolOutcome(REINDEX, { scope: 'porto' });
    if (outcome.kind !== 'task') throw new Error('expected a task');
    const { taskId } = outcome.task;
    server.requestTaskInput(taskId);
    const worker = agent('taskId:string -> status:string', { mcp: inventory, maxTurns: 3 });
    llm.script(
      step(
        [
          'const before = await mcp.inventory.tasks.get(inputs.taskId)',
          'console.log("before", before.status, Object.keys(before.inputRequests).join(","))',
          'const updated = await mcp.inventory.tasks.update(inputs.taskId, { "confirm-1": { action: "accept", content: { confirm: true } } })',
          'console.log("updated", JSON.stringify(updated))',
          'const after = await mcp.inventory.tasks.get(inputs.taskId)',
          'console.log("after", after.status)',
          'try { await mcp.inventory.tasks.list() } catch (error) { console.log("list", error.code, error.message) }',
          'try { await mcp.inventory.tasks.result(inputs.taskId) } catch (error) { console.log("result", error.code) }',
          'final("Report the status", { status: after.status })',
        ].join('\n'),
      ),
      final({ status: 'working' }),
    );
    try {
      const { result, output: observed } = await observe((onAgentEvent) =>
        worker.forward(ai, { taskId }, { onAgentEvent }),
      );
      expect(result).toEqual({ status: 'working' });
      expect(demoTask(server, taskId)).toMatchObject({
        status: 'working',
        pendingInputKeys: [],
        inputResponses: { 'confirm-1': { action: 'accept', content: { confirm: true } } },
      });
      expect(observed).toContain('before input_required confirm-1');
      expect(observed).toContain(`updated {"updated":"${taskId}","keys":["confirm-1"]}`);
      expect(observed).toContain('after working');
      expect(observed).toMatch(
        /list unsupported mcp\.inventory\.tasks\.list failed: unsupported: .*2025-11-25/,
      );
      expect(observed).toContain('result unsupported');
      const system = systemOf(llm, 0);
      expect(system).toContain('mcp.inventory.tasks.get(id) / .cancel(id) / .update(id, inputResponses)');
      expect(system).toContain('.list(cursor?) / .result(id)');
    } finally {
      server.completeTask(taskId);
      await worker.close();
    }
  });
});

describe('agent task modules on the 2025-11-25 task draft (legacy leg of the demo)', () => {
  let server: AxMCPDemoServer;
  let inventory: AxMCPClient;

  beforeAll(async () => {
    server = new AxMCPDemoServer({ era: 'dual', taskPollIntervalMs: 50, keepAliveMs: 0 });
    await server.start();
    inventory = httpClient(server.url, { namespace: 'inventory', era: 'legacy', timeoutMs: 10_000 });
    await inventory.init();
  });
  afterAll(async () => {
    await inventory?.close();
    await server?.close();
  });

  it('tasks.list and tasks.result reach the draft; tasks.update rejects with code unsupported', async () => {
    const task = await inventory.callToolTask(REINDEX, { scope: 'manual' });
    server.completeTask(task.taskId);
    const worker = agent('taskId:string -> documents:number', { mcp: inventory, maxTurns: 3 });
    llm.script(
      step(
        [
          'const listed = await mcp.inventory.tasks.list()',
          'console.log("listed", listed.tasks.some((t) => t.taskId === inputs.taskId))',
          'const result = await mcp.inventory.tasks.result(inputs.taskId)',
          'console.log("result", JSON.stringify(result.structuredContent))',
          'try { await mcp.inventory.tasks.update(inputs.taskId, { "confirm-1": {} }) } catch (error) { console.log("update", error.code) }',
          'final("Report the documents", { documents: result.structuredContent.documents })',
        ].join('\n'),
      ),
      final({ documents: 1_000 + 'manual'.length * 37 }),
    );
    try {
      const { result, output: observed } = await observe((onAgentEvent) =>
        worker.forward(ai, { taskId: task.taskId }, { onAgentEvent }),
      );
      expect(result).toEqual({ documents: 1_000 + 'manual'.length * 37 });
      expect(observed).toContain('listed true');
      expect(observed).toContain(`result {"scope":"manual","documents":${1_000 + 'manual'.length * 37}}`);
      expect(observed).toContain('update unsupported');
      // The finished task is not remembered as open.
      expect(worker.getState().mcp.clients.flatMap((client) => client.tasks)).toEqual([]);
    } finally {
      await worker.close();
    }
  });
});
