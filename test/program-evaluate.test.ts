/**
 * axEvaluate: a program over MCP evaluated from a recording by default. Recorded once live
 * (evaluationMode 'live', through AxMCPRecordingTransport against the v2 SDK peer), the same
 * evaluation then replays offline with the server gone and scores the same; a live client —
 * given to the evaluation or owned by the program — stops it before anything reaches a server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AxAIOpenAICompatible } from '../src/ai/index.js';
import { withAxMCPAppsExtension } from '../src/apps/index.js';
import { AxMCPClient, AxMCPMemoryEraStore, AxMCPStreamableHTTPTransport } from '../src/index.js';
import { AxProgramError, ax, axEvaluate } from '../src/program/index.js';
import { type AxMCPRecording, AxMCPRecordingTransport, AxMCPReplayTransport } from '../src/testing.js';
import { httpClient, LOOPBACK } from './helpers/clients.js';
import { type LegacyV2Server, startLegacyV2Server } from './servers/legacy-v2.js';
import { type ScriptedOpenAIServer, startScriptedOpenAI } from './servers/scripted-openai.js';

const final = (outputs: Record<string, unknown>) => ({ content: JSON.stringify(outputs) });
const EXAMPLES = [
  { input: { question: 'Echo alpha' }, expected: { answer: 'alpha' } },
  { input: { question: 'Echo beta' }, expected: { answer: 'beta' } },
];
const metric = ({ output, expected }: { output: { answer: string }; expected?: { answer?: string } }) =>
  output.answer === expected?.answer ? 1 : 0;

/** Per example: the model calls echo with the word, then answers with what the tool said. */
function scriptEvaluation(llm: ScriptedOpenAIServer, answers: string[]) {
  for (const [i, word] of ['alpha', 'beta'].entries()) {
    llm.script({ toolCalls: [{ name: 'echo', arguments: { message: word } }] }, (request) => {
      const tool = request.body.messages.find((message) => message.role === 'tool');
      return final({ answer: answers[i] ?? String(tool?.content) });
    });
  }
}

describe('axEvaluate replays MCP unless live is asked for', () => {
  let server: LegacyV2Server;
  let llm: ScriptedOpenAIServer;
  let ai: AxAIOpenAICompatible;
  let recording: AxMCPRecording;
  let liveScore: number;

  beforeAll(async () => {
    [server, llm] = await Promise.all([startLegacyV2Server({ toolCount: 1 }), startScriptedOpenAI()]);
    ai = new AxAIOpenAICompatible({
      baseURL: llm.baseURL,
      model: 'scripted',
      apiKey: 'sk-test',
      maxRetries: 0,
    });
    // Once, on purpose, against the live server — recorded.
    const recorder = new AxMCPRecordingTransport(
      new AxMCPStreamableHTTPTransport(server.url, { ssrfProtection: LOOPBACK }),
    );
    const live = new AxMCPClient(recorder, {
      namespace: 'docs',
      era: 'legacy',
      eraStore: new AxMCPMemoryEraStore(),
    });
    scriptEvaluation(llm, []);
    const result = await axEvaluate(ax('question:string -> answer:string'), ai, {
      mcp: live,
      examples: EXAMPLES,
      metric,
      evaluationMode: 'live',
    });
    liveScore = result.score;
    await live.close();
    recording = recorder.recording();
  });
  afterAll(async () => {
    await Promise.all([server?.close(), llm?.close()]);
  });

  it('the live evaluation scored every example and called the server for each', () => {
    expect(liveScore).toBe(1);
    const calls = recording.steps.filter(
      (step) => step.direction === 'send' && (step.message as { method?: string }).method === 'tools/call',
    );
    expect(calls).toHaveLength(2);
  });

  it('replays the same evaluation offline, the server gone, with the same score', async () => {
    await server.close();
    const replayed = new AxMCPClient(new AxMCPReplayTransport(recording, { strict: true }), {
      namespace: 'docs',
      eraStore: new AxMCPMemoryEraStore(),
    });
    expect(replayed.replaysRecording).toBe(true);
    // A wrapping transport (the Apps extension, a recorder) says what it wraps.
    expect(withAxMCPAppsExtension(new AxMCPReplayTransport(recording)).replaysRecording).toBe(true);
    expect(new AxMCPRecordingTransport(new AxMCPReplayTransport(recording)).replaysRecording).toBe(true);
    scriptEvaluation(llm, []);
    const result = await axEvaluate(ax('question:string -> answer:string'), ai, {
      mcp: replayed,
      examples: EXAMPLES,
      metric,
    });
    expect(result.score).toBe(liveScore);
    expect(result.runs.map((run) => run.output)).toEqual([{ answer: 'alpha' }, { answer: 'beta' }]);
    await replayed.close();
  });

  it('a wrong answer scores 0 and the mean says so', async () => {
    const replayed = new AxMCPClient(new AxMCPReplayTransport(recording), {
      namespace: 'docs',
      eraStore: new AxMCPMemoryEraStore(),
    });
    scriptEvaluation(llm, ['alpha', 'not beta']);
    const result = await axEvaluate(ax('question:string -> answer:string'), ai, {
      mcp: replayed,
      examples: EXAMPLES,
      metric,
    });
    expect(result.runs.map((run) => run.score)).toEqual([1, 0]);
    expect(result.score).toBe(0.5);
    await replayed.close();
  });

  it('refuses a live client by default, given to the evaluation or owned by the program, before any request', async () => {
    const restarted = await startLegacyV2Server({ toolCount: 1 });
    const live = httpClient(restarted.url, { namespace: 'docs', era: 'legacy' });
    const requests = llm.requests.length;
    try {
      const given = await axEvaluate(ax('question:string -> answer:string'), ai, {
        mcp: live,
        examples: EXAMPLES,
        metric,
      }).catch((error: unknown) => error);
      expect(given).toBeInstanceOf(AxProgramError);
      expect(given).toMatchObject({
        code: 'live_mcp_in_evaluation',
        message: expect.stringContaining('"docs"'),
      });

      const owned = await axEvaluate(ax('question:string -> answer:string', { mcp: live }), ai, {
        examples: EXAMPLES,
        metric,
      }).catch((error: unknown) => error);
      expect(owned).toMatchObject({ code: 'live_mcp_in_evaluation' });
      // Nothing reached the MCP server or the model.
      expect(restarted.stats.methods.get('tools/call') ?? 0).toBe(0);
      expect(restarted.stats.methods.get('initialize') ?? 0).toBe(0);
      expect(llm.requests.length).toBe(requests);
    } finally {
      await live.close();
      await restarted.close();
    }
  });
});
