/**
 * Loud, never silent: options of programs, agents, flows, chats, evaluations, `toFunction`
 * and the OpenAI-compatible service that cannot work as written throw a typed
 * `invalid_options` error (the path as the user writes it, the nearest known name for a
 * misspelled key) before anything is sent: the counting AI service is never called, and the
 * MCP clients' transport never fetches.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { expectRefusal, refusalOf } from '../../test/helpers/options.js';
import { AxAIError, AxAIOptionsError } from '../ai/errors.js';
import { AxAIOpenAICompatible } from '../ai/openai-compatible.js';
import type { AxAIService } from '../ai/types.js';
import { AxMCPClient } from '../client/client.js';
import { AxMCPMemoryEraStore } from '../client/era-store.js';
import { AxMCPStreamableHTTPTransport } from '../transport/http/streamable-http.js';
import { agent } from './agent/agent.js';
import { axMCPChat } from './chat.js';
import { AxProgramOptionsError } from './errors.js';
import { axEvaluate } from './evaluate.js';
import { flow } from './flow.js';
import { ax } from './gen.js';
import { toFunction } from './to-function.js';

let modelCalls = 0;
let fetches = 0;

/** Counts calls; it is only here to prove that nothing reaches a model. */
const counting: AxAIService = {
  name: 'counting',
  capabilities: {
    tools: true,
    streaming: true,
    structuredOutputs: true,
    userParts: { image: true, audio: false, file: false },
    toolResultParts: { image: true, audio: false, file: false },
  },
  async chat() {
    modelCalls++;
    throw new Error('the model must not be called');
  },
  // biome-ignore lint/correctness/useYield: it throws before yielding, by design
  async *streamingChat() {
    modelCalls++;
    throw new Error('the model must not be called');
  },
};

/** A real client whose transport counts what it would send (and sends nothing). */
function client(namespace: string): AxMCPClient {
  const transport = new AxMCPStreamableHTTPTransport('http://127.0.0.1:9/mcp', {
    ssrfProtection: { allowHTTP: true, allowLoopback: true },
    fetch: async () => {
      fetches++;
      throw new Error('nothing may be sent');
    },
  });
  return new AxMCPClient(transport, { namespace, eraStore: new AxMCPMemoryEraStore() });
}

const docs = client('docs');
const tickets = client('tickets');
const fn = { name: 'lookup', description: 'Looks up', func: () => 'x' };
const metric = () => 1;
const io = 'question:string -> answer:string';
const guide = { uri: 'docs://guide' };

interface Case {
  name: string;
  run: () => unknown;
  path: string;
  suggestion?: string;
  /** The error is the AI layer's (`AxAIOptionsError`). */
  ai?: boolean;
  /** Words the message must contain. */
  message?: string;
}

const cases: Case[] = [
  // ax() / AxGen options
  {
    name: 'ax: misspelled maxSteps',
    run: () => ax(io, { maxStep: 3 } as never),
    path: 'maxStep',
    suggestion: 'maxSteps',
  },
  {
    name: 'ax: misspelled instructions',
    run: () => ax(io, { instruction: 'Be brief.' } as never),
    path: 'instruction',
    suggestion: 'instructions',
  },
  { name: 'ax: maxSteps is not a positive integer', run: () => ax(io, { maxSteps: 0 }), path: 'maxSteps' },
  {
    name: 'ax: a temperature as a string',
    run: () => ax(io, { temperature: '0.2' as never }),
    path: 'temperature',
  },
  { name: 'ax: mcp as a namespace string', run: () => ax(io, { mcp: 'docs' as never }), path: 'mcp' },
  {
    name: 'ax: the second client is not one',
    run: () => ax(io, { mcp: [docs, {} as never] }),
    path: 'mcp[1]',
  },
  {
    name: 'ax: a function whose handler key is misspelled',
    run: () => ax(io, { functions: [{ name: 'f', description: 'd', fnc: () => 1 } as never] }),
    path: 'functions[0].fnc',
    suggestion: 'func',
  },
  {
    name: 'ax: a function whose handler is not a function',
    run: () => ax(io, { functions: [{ name: 'f', description: 'd', func: 'f' as never }] }),
    path: 'functions[0].func',
  },
  {
    name: 'ax: a function without a description',
    run: () => ax(io, { functions: [{ name: 'f', func: () => 1 } as never] }),
    path: 'functions[0].description',
  },
  {
    name: 'ax: an MCP client in functions',
    run: () => ax(io, { functions: [docs as never] }),
    path: 'functions[0]',
    message: 'attach MCP clients with the mcp option',
  },
  {
    name: 'ax: a misspelled mcpContext resource key',
    run: () =>
      ax(io, { mcp: docs, mcpContext: [{ client: docs, resource: { url: 'docs://guide' } as never }] }),
    path: 'mcpContext[0].resource.url',
    suggestion: 'uri',
  },
  {
    name: 'ax: an mcpContext entry with neither prompt nor resource',
    run: () => ax(io, { mcpContext: [{ client: 'docs' } as never] }),
    path: 'mcpContext[0]',
  },
  {
    name: 'ax: mcpToolNames outside its enumeration',
    run: () => ax(io, { mcpToolNames: 'namespace' as never }),
    path: 'mcpToolNames',
    suggestion: "'namespaced'",
  },
  // AxGen forward options
  {
    name: 'ax forward: misspelled abortSignal',
    run: () =>
      ax(io).forward(counting, { question: 'q' }, { abortSignl: new AbortController().signal } as never),
    path: 'abortSignl',
    suggestion: 'abortSignal',
  },
  {
    name: 'ax forward: a misspelled mcpInheritance mode',
    run: () => ax(io).forward(counting, { question: 'q' }, { mcpInheritance: 'al' as never }),
    path: 'mcpInheritance',
    suggestion: "'all'",
  },
  {
    name: 'ax forward: an unknown mcpContext namespace, before any MCP or model call',
    run: () =>
      ax(io, { mcp: [docs, tickets] }).forward(
        counting,
        { question: 'q' },
        { mcpContext: [{ client: 'billing', resource: guide }] },
      ),
    path: 'mcpContext[0].client',
    message: "'docs', 'tickets'",
  },
  {
    name: 'ax forward: a misspelled mcpContext namespace gets a suggestion',
    run: () =>
      ax(io, { mcp: docs, mcpContext: [{ client: 'doc', resource: guide }] }).forward(counting, {
        question: 'q',
      }),
    path: 'mcpContext[0].client',
    suggestion: "'docs'",
  },
  {
    name: 'ax forward: an mcpContext namespace with no client attached',
    run: () =>
      ax(io, { mcpContext: [{ client: 'docs', resource: guide }] }).forward(counting, { question: 'q' }),
    path: 'mcpContext[0].client',
    message: 'no client is attached',
  },
  {
    name: 'ax forward: an attachment without its mimeType',
    run: () =>
      ax(io).forward(
        counting,
        { question: 'q' },
        { attachments: [{ type: 'image', data: 'AAAA' } as never] },
      ),
    path: 'attachments[0].mimeType',
  },
  {
    name: 'ax forward: something that is not an AI service',
    run: () => ax(io).forward({} as never, { question: 'q' }),
    path: 'ai',
  },
  {
    name: 'ax streamingForward: misspelled maxSteps',
    run: async () => {
      for await (const _ of ax(io).streamingForward(counting, { question: 'q' }, { maxStep: 2 } as never));
    },
    path: 'maxStep',
    suggestion: 'maxSteps',
  },
  // agent() options, limits and forward options
  {
    name: 'agent: misspelled maxTurns',
    run: () => agent(io, { maxTurn: 3 } as never),
    path: 'maxTurn',
    suggestion: 'maxTurns',
  },
  {
    name: 'agent: maxSteps is maxTurns for agents',
    run: () => agent(io, { maxSteps: 3 } as never),
    path: 'maxSteps',
    suggestion: 'maxTurns',
  },
  {
    name: 'agent: maxTurns placed in limits',
    run: () => agent(io, { limits: { maxTurns: 3 } as never }),
    path: 'limits.maxTurns',
  },
  {
    name: 'agent: a misspelled limit',
    run: () => agent(io, { limits: { stepTimeout: 1000 } as never }),
    path: 'limits.stepTimeout',
    suggestion: 'stepTimeoutMs',
  },
  {
    name: 'agent: a memory limit below 1 MiB',
    run: () => agent(io, { limits: { memoryLimitBytes: 1024 } }),
    path: 'limits.memoryLimitBytes',
  },
  {
    name: 'agent: a misspelled functionDiscovery key',
    run: () => agent(io, { functionDiscovery: { maxResult: 5 } as never }),
    path: 'functionDiscovery.maxResult',
    suggestion: 'maxResults',
  },
  {
    name: 'agent: a context field that is not an input',
    run: () => agent(io, { contextFields: ['document'] }),
    path: 'contextFields[0]',
  },
  { name: 'agent: a name with a dash', run: () => agent(io, { name: 're-searcher' }), path: 'name' },
  {
    name: 'agent: a child that is not an agent',
    run: () => agent(io, { agents: [ax(io) as never] }),
    path: 'agents[0]',
  },
  {
    name: 'agent forward: misspelled onAgentEvent',
    run: () => agent(io).forward(counting, { question: 'q' }, { onAgentEvents: () => {} } as never),
    path: 'onAgentEvents',
    suggestion: 'onAgentEvent',
  },
  {
    name: 'agent forward: maxTurns of zero',
    run: () => agent(io).forward(counting, { question: 'q' }, { maxTurns: 0 }),
    path: 'maxTurns',
  },
  // flow() options and node definitions
  {
    name: 'flow: misspelled maxConcurrency',
    run: () => flow({ maxConcurency: 2 } as never),
    path: 'maxConcurency',
    suggestion: 'maxConcurrency',
  },
  {
    name: 'flow: a misspelled node option',
    run: () => flow({ mcp: docs }).node('n', ax(io), { mcpInheritence: ['docs'] } as never),
    path: 'mcpInheritence',
    suggestion: 'mcpInheritance',
  },
  {
    name: 'flow: a node input mapping that is not a function',
    run: () => flow().node('n', ax(io), { input: { question: 'q' } as never }),
    path: 'input',
  },
  { name: 'flow: a node program without forward', run: () => flow().node('n', {} as never), path: 'program' },
  {
    name: 'flow forward: misspelled abortSignal',
    run: () =>
      flow()
        .node('n', ax(io))
        .forward(counting, {}, { signal: new AbortController().signal } as never),
    path: 'signal',
    suggestion: 'abortSignal',
  },
  // axMCPChat options and request
  {
    name: 'axMCPChat: misspelled maxSteps',
    run: () => axMCPChat(counting, { messages: [] }, { maxStep: 1 } as never),
    path: 'maxStep',
    suggestion: 'maxSteps',
  },
  {
    name: 'axMCPChat: a misspelled role',
    run: () => axMCPChat(counting, { messages: [{ role: 'usr', content: 'hi' } as never] }),
    path: 'messages[0].role',
    suggestion: "'user'",
  },
  {
    name: 'axMCPChat: message instead of messages',
    run: () => axMCPChat(counting, { message: [] } as never),
    path: 'message',
    suggestion: 'messages',
  },
  {
    name: 'axMCPChat: request.tools',
    run: () =>
      axMCPChat(counting, { messages: [], tools: [{ name: 't', parameters: {} }] } as never, { mcp: docs }),
    path: 'tools',
    message: 'takes tools from mcp and functions',
  },
  {
    name: 'axMCPChat: functions that are not an array',
    run: () => axMCPChat(counting, { messages: [] }, { functions: fn as never }),
    path: 'functions',
  },
  // axEvaluate
  {
    name: 'axEvaluate: misspelled metric',
    run: () => axEvaluate(ax(io), counting, { examples: [], metrik: metric } as never),
    path: 'metrik',
    suggestion: 'metric',
  },
  {
    name: 'axEvaluate: an evaluationMode outside its enumeration',
    run: () =>
      axEvaluate(ax(io), counting, {
        examples: [{ input: { question: 'q' } }],
        metric,
        evaluationMode: 'replai' as never,
      }),
    path: 'evaluationMode',
    suggestion: "'replay'",
  },
  {
    name: 'axEvaluate: an example without its input',
    run: () => axEvaluate(ax(io), counting, { examples: [{ inputs: { question: 'q' } } as never], metric }),
    path: 'examples[0].inputs',
    suggestion: 'input',
  },
  // toFunction
  {
    name: 'toFunction: misspelled signal',
    run: () => toFunction(docs, 'echo', { sigal: new AbortController().signal } as never),
    path: 'options.sigal',
    suggestion: 'signal',
  },
  {
    name: 'toFunction: a namespace instead of a client',
    run: () => toFunction('docs' as never, 'echo'),
    path: 'client',
  },
  // AxAIOpenAICompatible
  {
    name: 'AxAIOpenAICompatible: baseUrl',
    run: () => new AxAIOpenAICompatible({ model: 'm', baseUrl: 'http://127.0.0.1:9/v1' } as never),
    path: 'baseUrl',
    suggestion: 'baseURL',
    ai: true,
  },
  {
    name: 'AxAIOpenAICompatible: no model',
    run: () => new AxAIOpenAICompatible({ baseURL: 'http://127.0.0.1:9/v1' } as never),
    path: 'model',
    ai: true,
  },
  {
    name: 'AxAIOpenAICompatible: a misspelled capability',
    run: () => new AxAIOpenAICompatible({ model: 'm', capabilities: { maxTool: 5 } as never }),
    path: 'capabilities.maxTool',
    suggestion: 'maxTools',
    ai: true,
  },
  {
    name: 'AxAIOpenAICompatible: a baseURL that is not http(s)',
    run: () => new AxAIOpenAICompatible({ model: 'm', baseURL: 'ftp://127.0.0.1/v1' }),
    path: 'baseURL',
    ai: true,
  },
  {
    name: 'AxAIOpenAICompatible: timeout, and the API key stays out of the message',
    run: () => new AxAIOpenAICompatible({ model: 'm', apiKey: 'sk-secret-1234', timeout: 5 } as never),
    path: 'timeout',
    suggestion: 'timeoutMs',
    ai: true,
  },
];

describe('options are checked before anything is sent', () => {
  afterEach(() => {
    expect(modelCalls).toBe(0);
    expect(fetches).toBe(0);
  });

  it('has a case per kind of mistake', () => {
    expect(cases.length).toBeGreaterThanOrEqual(15);
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  it.each(cases)('$name', async ({ run, path, suggestion, ai, message }) => {
    const error = await refusalOf(run);
    expectRefusal(
      error,
      ai ? AxAIOptionsError : AxProgramOptionsError,
      { path, suggestion, message },
      /sk-secret-1234/,
    );
    if (ai) expect(error).toBeInstanceOf(AxAIError);
    expect((error as Error).message).toContain(path);
  });

  it('accepts what the interfaces declare', () => {
    expect(() =>
      ax(io, {
        mcp: [docs, tickets],
        functions: [fn],
        mcpContext: [
          { client: 'docs', resource: guide },
          { client: tickets, prompt: { name: 'triage', arguments: { id: '1' } } },
        ],
        mcpInheritance: ['docs'],
        mcpToolNames: 'namespaced',
        instructions: 'Be brief.',
        maxSteps: 3,
        maxCorrections: 0,
        model: 'm',
        temperature: 0,
        maxTokens: 100,
      }),
    ).not.toThrow();
    expect(() =>
      agent(io, {
        ai: counting,
        name: 'researcher',
        description: 'Researches',
        id: 'r-1',
        mcp: docs,
        mcpInheritance: 'none',
        functionDiscovery: { maxResults: 5 },
        functions: [fn],
        contextFields: ['question'],
        maxTurns: 2,
        instructions: 'x',
        limits: {
          stepTimeoutMs: 1000,
          memoryLimitBytes: 2 * 1024 * 1024,
          maxStackBytes: 65536,
          maxOutputChars: 100,
        },
        maxCorrections: 1,
        onError: () => {},
      }),
    ).not.toThrow();
    expect(() =>
      flow({ mcp: docs, mcpInheritance: 'all', maxConcurrency: 2, onError: () => {} }).node('n', ax(io), {
        input: (state) => ({ question: String(state.input.question) }),
        mcpInheritance: [],
      }),
    ).not.toThrow();
    expect(
      () =>
        new AxAIOpenAICompatible({
          model: 'm',
          baseURL: 'http://127.0.0.1:9/v1',
          apiKey: 'k',
          headers: { 'x-a': 'b' },
          name: 'local',
          timeoutMs: 10,
          maxRetries: 0,
          retryBaseDelayMs: 1,
          maxRetryDelayMs: 2,
          maxResponseBytes: 1000,
          fetch: globalThis.fetch,
          capabilities: {
            tools: true,
            streaming: false,
            structuredOutputs: false,
            userParts: { audio: true },
            toolResultParts: { file: true },
            maxTools: Number.POSITIVE_INFINITY,
          },
        }),
    ).not.toThrow();
  });
});
