/**
 * flow() with real MCP servers (the v2 SDK peer and server-everything, whose
 * `simulate-research-query` tool runs as a task) and the scripted provider: inheritance,
 * parallel branches, nesting, and cancelling the tasks of a failed flow.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AxAIError, AxAIOpenAICompatible } from '../src/ai/index.js';
import type { AxMCPClient } from '../src/index.js';
import { ax, flow } from '../src/program/index.js';
import { httpClient } from './helpers/clients.js';
import { type EverythingServer, startEverythingServer } from './servers/everything.js';
import { type LegacyV2Server, startLegacyV2Server } from './servers/legacy-v2.js';
import {
  type RecordedRequest,
  type ScriptedOpenAIServer,
  type ScriptedReply,
  startScriptedOpenAI,
} from './servers/scripted-openai.js';

const final = (outputs: Record<string, unknown>) => ({ content: JSON.stringify(outputs) });
const toolNames = (request: RecordedRequest | undefined) =>
  request?.body.tools?.map((tool) => tool.function.name) ?? [];
const systemText = (request: RecordedRequest) => String(request.body.messages[0]?.content ?? '');
const inputText = (request: RecordedRequest) => String(request.body.messages.at(-1)?.content ?? '');

/** Answers by the `NODE:<name>` marker in the system message; `times` copies go into the script. */
function routed(
  llm: ScriptedOpenAIServer,
  times: number,
  routes: Record<string, (request: RecordedRequest) => ScriptedReply>,
) {
  const route: ScriptedReply = (request) => {
    for (const [node, reply] of Object.entries(routes)) {
      if (systemText(request).includes(`NODE:${node}`)) return reply(request);
    }
    return { status: 400, body: { error: { message: 'unrouted request' } } };
  };
  llm.script(...Array.from({ length: times }, () => route));
}

const requestsOf = (llm: ScriptedOpenAIServer, node: string) =>
  llm.requests.filter((request) => systemText(request).includes(`NODE:${node}`));

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('flow() with MCP clients', () => {
  let legacy: LegacyV2Server;
  let everything: EverythingServer;
  let llm: ScriptedOpenAIServer;
  let ai: AxAIOpenAICompatible;
  let docs: AxMCPClient;
  let lab: AxMCPClient;

  beforeAll(async () => {
    [legacy, everything, llm] = await Promise.all([
      startLegacyV2Server({ toolCount: 1 }),
      startEverythingServer({ mode: 'streamableHttp' }),
      startScriptedOpenAI(),
    ]);
    ai = new AxAIOpenAICompatible({ baseURL: llm.baseURL, model: 'scripted', maxRetries: 0 });
    docs = httpClient(legacy.url, { namespace: 'docs', era: 'legacy' });
    lab = httpClient(everything.url, { namespace: 'lab', era: 'legacy', timeoutMs: 15_000 });
  }, 60_000);
  afterEach(() => {
    llm.requests.length = 0;
    expect(llm.pending).toBe(0);
  });
  afterAll(async () => {
    await Promise.all([docs?.close(), lab?.close()]);
    await Promise.all([legacy?.close(), everything?.close(), llm?.close()]);
  });

  it('runs parallel branches with restricted inheritance and joins their outputs', async () => {
    let arrived = 0;
    let release: () => void = () => {};
    const bothArrived = new Promise<void>((resolve) => {
      release = resolve;
    });
    const parallel =
      (reply: ScriptedReply): ScriptedReply =>
      async () => {
        if (++arrived === 2) release();
        await bothArrived;
        return reply;
      };
    routed(llm, 4, {
      docsOnly: () =>
        requestsOf(llm, 'docsOnly').length === 1
          ? parallel({ toolCalls: [{ name: 'echo', arguments: { message: 'from docs' } }] })
          : final({ notes: 'N' }),
      none: () => parallel(final({ title: 'T' })),
      join: () => final({ report: 'R' }),
    });
    const pipeline = flow({ mcp: [docs, lab] })
      .node('research', ax('topic:string -> notes:string', { instructions: 'NODE:docsOnly' }), {
        mcpInheritance: ['docs'],
      })
      .node('title', ax('topic:string -> title:string', { instructions: 'NODE:none' }), {
        mcpInheritance: 'none',
      })
      .node(
        'report',
        ax('notes:string, title:string -> report:string', {
          instructions: 'NODE:join',
          mcpToolNames: 'namespaced',
        }),
      )
      .edge('research', 'report')
      .edge('title', 'report');
    const result = await pipeline.forward(ai, { topic: 'MCP' });
    expect(result).toEqual({ research: { notes: 'N' }, title: { title: 'T' }, report: { report: 'R' } });

    const [researchFirst] = requestsOf(llm, 'docsOnly');
    expect(toolNames(researchFirst)).toContain('echo');
    expect(toolNames(researchFirst)).not.toContain('simulate-research-query');
    expect(requestsOf(llm, 'none')[0]?.body.tools).toBeUndefined();
    const [join] = requestsOf(llm, 'join');
    expect(toolNames(join)).toEqual(
      expect.arrayContaining(['docs__echo', 'lab__echo', 'lab__simulate-research-query']),
    );
    expect(inputText(join as RecordedRequest)).toBe('notes: N\ntitle: T');
    // The join ran only after both branches.
    expect(llm.requests.indexOf(join as RecordedRequest)).toBe(3);
  });

  it('nests flows; a nested node inherits only what mcpInheritance lets through', async () => {
    routed(llm, 1, { leaf: () => final({ b: 'leaf' }) });
    const inner = flow().node('leaf', ax('a:string -> b:string', { instructions: 'NODE:leaf' }));
    const outer = flow({ mcp: [docs, lab] })
      .node('inner', inner, { mcpInheritance: ['lab'] })
      .output((state) => state.outputs.inner);
    await expect(outer.forward(ai, { a: 'x' })).resolves.toEqual({ leaf: { b: 'leaf' } });
    const names = toolNames(llm.requests[0]);
    expect(names).toContain('simulate-research-query');
    expect(names).not.toContain('all_content');
  });

  it('rejects unknown and repeated namespaces in mcpInheritance before any model call; [] inherits nothing', async () => {
    const node = ax('a:string -> b:string', { instructions: 'NODE:leaf' });
    await expect(
      flow({ mcp: docs })
        .node('n', node, { mcpInheritance: ['nope'] })
        .forward(ai, { a: 'x' }),
    ).rejects.toMatchObject({
      code: 'invalid_inheritance',
      message: expect.stringContaining('"nope"'),
    });
    await expect(
      flow({ mcp: docs })
        .node('n', node, { mcpInheritance: ['docs', 'docs'] })
        .forward(ai, { a: 'x' }),
    ).rejects.toMatchObject({ code: 'invalid_inheritance' });
    await expect(node.forward(ai, { a: 'x' }, { mcpInheritance: ['docs'] })).rejects.toMatchObject({
      code: 'invalid_inheritance',
    });
    expect(llm.requests).toHaveLength(0);
    routed(llm, 1, { leaf: () => final({ b: 'none' }) });
    await flow({ mcp: [docs, lab] })
      .node('n', node, { mcpInheritance: [] })
      .forward(ai, { a: 'x' });
    expect(llm.requests[0]?.body.tools).toBeUndefined();
  });

  it('a failed branch aborts the flow and its tasks are cancelled on the server', async () => {
    let taskId: string | undefined;
    routed(llm, 2, {
      research: () => ({ toolCalls: [{ name: 'simulate-research-query', arguments: { topic: 'quantum' } }] }),
      broken: () => async () => {
        await until(async () => {
          const { tasks } = await lab.listTasks();
          taskId = tasks.find((task) => task.status === 'working')?.taskId;
          return taskId !== undefined;
        }, 'the research task');
        return { status: 400, body: { error: { message: 'broken branch' } } };
      },
    });
    const started = Date.now();
    const pipeline = flow({ mcp: lab })
      .node('research', ax('topic:string -> findings:string', { instructions: 'NODE:research' }))
      .node('judge', ax('topic:string -> verdict:string', { instructions: 'NODE:broken' }));
    const failure = await pipeline.forward(ai, { topic: 'quantum' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AxAIError);
    expect(failure).toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('broken branch'),
    });
    expect(taskId).toBeDefined();
    await until(
      async () => (await lab.getTask(taskId as string)).status === 'cancelled',
      'the task cancellation',
    );
    // The research would take four seconds; the flow did not wait for it.
    expect(Date.now() - started).toBeLessThan(4000);
  });
});
