/**
 * Program targets of the event runtime: an event wake runs an `ax()` program end to end
 * (real MCP peer, scripted provider), cancelling a run aborts its MCP call, and a program
 * that fails after calling a tool is never replayed.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AxAIOpenAICompatible } from '../src/ai/index.js';
import {
  type AxEventProgram,
  AxMemoryEventStore,
  eventInput,
  eventPath,
  eventRoute,
  eventRuntime,
  eventTarget,
} from '../src/events/index.js';
import type { AxMCPClient } from '../src/index.js';
import { type AxMCPProgramEvent, ax } from '../src/program/index.js';
import { eventually, httpClient } from './helpers/clients.js';
import { type LegacyV2Server, startLegacyV2Server } from './servers/legacy-v2.js';
import { type ScriptedOpenAIServer, startScriptedOpenAI } from './servers/scripted-openai.js';

const final = (outputs: Record<string, unknown>) => ({ content: JSON.stringify(outputs) });
const ticketInput = eventInput()
  .field('ticket', eventPath.data('text'))
  .field('customer', eventPath.data('from'));
let n = 0;
const ticket = (text: string) => ({
  event: { id: `t${++n}`, source: 'app://helpdesk', type: 'ticket.created', data: { text, from: 'ada' } },
});

describe('program targets', () => {
  let server: LegacyV2Server;
  let llm: ScriptedOpenAIServer;
  let ai: AxAIOpenAICompatible;
  let docs: AxMCPClient;

  beforeAll(async () => {
    [server, llm] = await Promise.all([startLegacyV2Server({ toolCount: 1 }), startScriptedOpenAI()]);
    ai = new AxAIOpenAICompatible({ baseURL: llm.baseURL, model: 'scripted', maxRetries: 0 });
    docs = httpClient(server.url, { namespace: 'docs', era: 'legacy' });
  });
  afterEach(() => {
    llm.requests.length = 0;
    expect(llm.pending).toBe(0);
  });
  afterAll(async () => {
    await docs?.close();
    await Promise.all([server?.close(), llm?.close()]);
  });

  const triage = () =>
    ax('ticket:string, customer:string -> reply:string, priority:class "low, high"', {
      mcp: docs,
      instructions: 'Triage support tickets.',
    });

  it('an event wake runs the program end to end: input plan, MCP tool, typed output on the run', async () => {
    const program = triage();
    const asProgram: AxEventProgram = program;
    const target = eventTarget('triage').program(asProgram).ai(ai).input(ticketInput).build();
    expect(target.inputFields?.map((field) => field.name)).toEqual(['ticket', 'customer']);
    const runtime = eventRuntime({
      routes: [eventRoute('tickets').types('ticket.created').wake(target).build()],
      store: new AxMemoryEventStore(),
      scheduling: 'host',
    });
    llm.script(
      { toolCalls: [{ name: 'echo', arguments: { message: 'Printer on fire' } }] },
      final({ reply: 'On it.', priority: 'high' }),
    );
    const calls = server.stats.methods.get('tools/call') ?? 0;
    const receipt = await runtime.publish(ticket('Printer on fire'));
    await runtime.runDue();
    const run = await runtime.getRun(receipt.deliveryIds[0] as string);
    expect(run).toMatchObject({ status: 'succeeded', output: { reply: 'On it.', priority: 'high' } });
    expect((server.stats.methods.get('tools/call') ?? 0) - calls).toBe(1);
    const input = String(llm.requests[0]?.body.messages.at(-1)?.content);
    expect(input).toContain('ticket: Printer on fire\ncustomer: ada');
    expect(input).toContain('the event "ticket.created" from app://helpdesk; its sender is untrusted');
    await runtime.close();
  });

  it('cancelling the run aborts the MCP call it is waiting on', async () => {
    let progressed = false;
    const target = eventTarget('slow')
      .program(triage())
      .ai(ai)
      .input(ticketInput)
      .forwardOptions({
        onMCPEvent: (event: AxMCPProgramEvent) => {
          if (event.type === 'progress') progressed = true;
        },
      })
      .build();
    const runtime = eventRuntime({
      routes: [eventRoute('tickets').types('ticket.created').wake(target).build()],
      store: new AxMemoryEventStore(),
      scheduling: 'host',
    });
    llm.script({ toolCalls: [{ name: 'slow', arguments: { steps: 100, delayMs: 50 } }] });
    const cancelled = server.stats.cancelledToolCalls;
    const receipt = await runtime.publish(ticket('slow one'));
    const running = runtime.runDue();
    await eventually(() => progressed, 5000, 'tool progress');
    await runtime.cancelRun(receipt.deliveryIds[0] as string);
    await running;
    expect((await runtime.getRun(receipt.deliveryIds[0] as string))?.status).toBe('cancelled');
    await eventually(() => server.stats.cancelledToolCalls > cancelled, 5000, 'the server-side cancellation');
    await runtime.close();
  });

  it('a program that fails after a tool call is an unknown outcome and is never replayed', async () => {
    const target = eventTarget('fragile').program(triage()).ai(ai).input(ticketInput).build();
    const runtime = eventRuntime({
      routes: [eventRoute('tickets').types('ticket.created').wake(target).build()],
      store: new AxMemoryEventStore(),
      scheduling: 'host',
    });
    llm.script(
      { toolCalls: [{ name: 'echo', arguments: { message: 'side effect' } }] },
      { status: 500, body: { error: { message: 'provider down' } } },
    );
    const calls = server.stats.methods.get('tools/call') ?? 0;
    const receipt = await runtime.publish(ticket('fragile'));
    await runtime.runDue();
    await runtime.runDue();
    const run = await runtime.getRun(receipt.deliveryIds[0] as string);
    expect(run?.status).toBe('outcome_unknown');
    expect(llm.requests).toHaveLength(2);
    expect((server.stats.methods.get('tools/call') ?? 0) - calls).toBe(1);
    expect(await runtime.listDeadLetters()).toEqual([expect.objectContaining({ reason: 'outcome_unknown' })]);
    await runtime.close();
  });
});
