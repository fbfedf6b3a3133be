/**
 * Agent state and event targets: subscriptions an agent's code takes are owned by it and
 * kept in `getState()` (never credentials); `setState()` on another agent and client
 * re-acquires them and revalidates known tasks. As an event target, a clarification parks
 * the run as `waiting_event` with an `ax.clarification` continuation that a later event resumes.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AxAIOpenAICompatible } from '../src/ai/index.js';
import {
  AxMemoryEventStore,
  eventInput,
  eventPath,
  eventRoute,
  eventRuntime,
  eventTarget,
} from '../src/events/index.js';
import { AxAgentClarificationError, type AxAgentState, agent } from '../src/program/index.js';
import { eventually, httpClient } from './helpers/clients.js';
import { type LegacyV2Server, startLegacyV2Server } from './servers/legacy-v2.js';
import { type ScriptedOpenAIServer, startScriptedOpenAI } from './servers/scripted-openai.js';

const step = (code: string) => ({ content: `\`\`\`js\n${code}\n\`\`\`` });
const answer = (outputs: Record<string, unknown>) => ({ content: JSON.stringify(outputs) });
const HELLO = 'res://text/hello';

describe('agent state and event targets', () => {
  let server: LegacyV2Server;
  let llm: ScriptedOpenAIServer;
  let ai: AxAIOpenAICompatible;

  beforeAll(async () => {
    [server, llm] = await Promise.all([startLegacyV2Server({ toolCount: 1 }), startScriptedOpenAI()]);
    ai = new AxAIOpenAICompatible({ baseURL: llm.baseURL, model: 'scripted', maxRetries: 0 });
  });
  afterEach(() => {
    llm.requests.length = 0;
    expect(llm.pending).toBe(0);
  });
  afterAll(async () => {
    await Promise.all([server?.close(), llm?.close()]);
  });

  const subscribedSessions = () =>
    [...server.stats.subscriptions.entries()].filter(([, uris]) => uris.has(HELLO)).map(([id]) => id);

  it('saves owned subscriptions without credentials; a restore re-acquires them and drops unknown tasks', async () => {
    const first = httpClient(
      server.url,
      { namespace: 'docs', era: 'legacy' },
      { headers: { authorization: 'Bearer s3cret-token' } },
    );
    const watcher = agent('question:string -> answer:string', { mcp: first, id: 'watcher' });
    llm.script(
      step(`await mcp.docs.resources.subscribe("${HELLO}")\nfinal("ok", {})`),
      answer({ answer: 'subscribed' }),
    );
    await watcher.forward(ai, { question: 'watch hello' });
    expect(first.subscriptions).toEqual([{ uri: HELLO, owners: ['ax-agent:watcher'] }]);
    expect(subscribedSessions()).toHaveLength(1);
    const state = watcher.getState();
    expect(state).toEqual({
      schema: 1,
      mcp: { clients: [{ namespace: 'docs', subscriptions: [HELLO], tasks: [] }] },
    });
    expect(JSON.stringify(state)).not.toMatch(/s3cret|authorization|Bearer/i);

    await watcher.close();
    expect(first.subscriptions).toEqual([]);
    await eventually(() => subscribedSessions().length === 0, 5000, 'the released subscription');
    await first.close();

    const second = httpClient(server.url, { namespace: 'docs', era: 'legacy' });
    const restored = agent('question:string -> answer:string', { mcp: second, id: 'watcher' });
    const saved: AxAgentState = JSON.parse(JSON.stringify(state));
    saved.mcp.clients[0]?.tasks.push({ taskId: 'task-that-is-gone', status: 'working' });
    const errors: unknown[] = [];
    const other = agent('question:string -> answer:string', {
      mcp: second,
      id: 'other',
      onError: (e) => errors.push(e),
    });
    await other.setState(saved);
    // Without onError, the task that is gone was dropped without a word; now it is told once.
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      await restored.setState(saved);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]?.[0])).toContain('ax-mcp: agent watcher: ');
      expect(String(warn.mock.calls[0]?.[0])).toContain('Pass onError to agent()');
    } finally {
      warn.mockRestore();
    }
    expect(second.subscriptions).toEqual([{ uri: HELLO, owners: ['ax-agent:other', 'ax-agent:watcher'] }]);
    expect(subscribedSessions()).toHaveLength(1);
    expect(errors.length).toBeGreaterThan(0);
    expect(restored.getState().mcp.clients).toEqual([
      { namespace: 'docs', subscriptions: [HELLO], tasks: [] },
    ]);
    await expect(restored.setState({ schema: 2 })).rejects.toMatchObject({ code: 'invalid_state' });
    await Promise.all([restored.close(), other.close()]);
    expect(second.subscriptions).toEqual([]);
    await second.close();
  });

  it('a direct run that asks for clarification throws and parks in state', async () => {
    const asker = agent('request:string -> reply:string');
    llm.script(step('askClarification("Which order?")'));
    const run = asker.forward(ai, { request: 'Where is my order?' });
    await expect(run).rejects.toBeInstanceOf(AxAgentClarificationError);
    await expect(run).rejects.toMatchObject({ code: 'clarification_needed', question: 'Which order?' });
    expect(asker.getState().parked).toMatchObject({
      question: 'Which order?',
      inputs: { request: 'Where is my order?' },
    });
    await asker.close();
  });

  it('as an event target a clarification waits as waiting_event and a correlated event resumes it', async () => {
    const helper = agent('request:string -> reply:string');
    const target = eventTarget('helper')
      .program(helper)
      .ai(ai)
      .input(eventInput().field('request', eventPath.data('text')))
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
    llm.script(
      step('const request = inputs.request\naskClarification("Which order number?")'),
      step(
        'console.log(typeof request)\nfinal("Reply with the order status", { order: "1042", status: "shipped" })',
      ),
      answer({ reply: 'Order 1042 has shipped.' }),
    );
    const wake = await runtime.publish({
      event: { id: 'm1', source: 'app://chat', type: 'chat.message', data: { text: 'Where is my order?' } },
    });
    await runtime.runDue();
    const parked = await runtime.getRun(wake.deliveryIds[0] as string);
    expect(parked).toMatchObject({
      status: 'waiting_event',
      output: { clarification: { question: 'Which order number?' } },
    });
    const runId =
      (parked?.output as { clarification?: { value?: string } } | undefined)?.clarification?.value ?? '';
    expect(runId).not.toBe('');

    const resume = await runtime.publish({
      event: {
        id: 'm2',
        source: 'app://chat',
        type: 'chat.answer',
        data: { runId, text: 'It is order 1042' },
      },
    });
    await runtime.runDue();
    expect(await runtime.getRun(resume.deliveryIds[0] as string)).toMatchObject({
      status: 'succeeded',
      output: { reply: 'Order 1042 has shipped.' },
    });
    const resumedPrompt = JSON.stringify(llm.requests[1]?.body.messages);
    expect(resumedPrompt).toContain('You asked: Which order number?');
    expect(resumedPrompt).toContain('It is order 1042');
    expect(resumedPrompt).toContain('its sender is untrusted');
    expect(String(llm.requests[1]?.body.messages[1]?.content)).toContain('request: Where is my order?');
    expect(helper.getState().parked).toBeUndefined();
    await runtime.close();
    await helper.close();
  });
});
