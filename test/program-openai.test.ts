/**
 * AxAIOpenAICompatible against the scripted OpenAI-compatible server on loopback: request
 * bodies, tool calls, structured outputs, SSE streaming, typed errors and retries.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AxAIError, type AxAIMessage, AxAIOpenAICompatible, axOpenAICompatible } from '../src/ai/index.js';
import { TINY_PNG_BASE64, TINY_WAV_BASE64 } from './servers/content.js';
import { type ScriptedOpenAIServer, startScriptedOpenAI } from './servers/scripted-openai.js';

const KEY = 'sk-test-secret-123';

describe('AxAIOpenAICompatible', () => {
  let llm: ScriptedOpenAIServer;
  let ai: AxAIOpenAICompatible;

  beforeAll(async () => {
    llm = await startScriptedOpenAI();
  });
  afterAll(async () => {
    await llm?.close();
  });
  beforeEach(() => {
    llm.requests.length = 0;
    ai = new AxAIOpenAICompatible({ apiKey: KEY, baseURL: llm.baseURL, model: 'm-1', retryBaseDelayMs: 5 });
  });

  it('sends tools, tool choice and a JSON schema, and reads tool calls', async () => {
    llm.script({ toolCalls: [{ name: 'lookup', arguments: { q: 'x' }, id: 'c1' }] });
    const response = await ai.chat({
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'hi' },
      ],
      tools: [{ name: 'lookup', description: 'Looks up', parameters: { type: 'object', properties: {} } }],
      toolChoice: 'auto',
      responseFormat: { type: 'json_schema', name: 'outputs', schema: { type: 'object' }, strict: true },
      temperature: 0,
    });
    expect(response).toMatchObject({
      message: {
        role: 'assistant',
        content: null,
        toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"x"}' }],
      },
      finishReason: 'tool_calls',
      usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
      model: 'm-1',
    });
    const [request] = llm.requests;
    expect(request?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request?.body).toMatchObject({
      model: 'm-1',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'hi' },
      ],
      tools: [{ type: 'function', function: { name: 'lookup', description: 'Looks up' } }],
      tool_choice: 'auto',
      response_format: { type: 'json_schema', json_schema: { name: 'outputs', strict: true } },
      temperature: 0,
    });
  });

  it('refuses a request with a field it would leave out of the body, and sends nothing', async () => {
    const messages: AxAIMessage[] = [{ role: 'user', content: 'hi' }];
    // The misspelt cap was dropped: the model answered at its default length.
    for (const [request, path, suggestion] of [
      [{ messages, maxToken: 5 }, 'maxToken', 'maxTokens'],
      [{ messages, temprature: 0 }, 'temprature', 'temperature'],
      [{ messages, maxTokens: 0 }, 'maxTokens', undefined],
      [{ messages: [{ role: 'usr', content: 'hi' }] }, 'messages[0].role', undefined],
    ] as const) {
      const error = await ai.chat(request as never).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'invalid_options', path, provider: ai.name });
      if (suggestion) expect(error).toMatchObject({ suggestion });
      const streamed = await ai
        .streamingChat(request as never)
        .next()
        .catch((e: unknown) => e);
      expect(streamed).toMatchObject({ code: 'invalid_options', path });
    }
    expect(llm.requests).toHaveLength(0);
  });

  it('streams text and tool-call deltas over SSE and assembles the response', async () => {
    llm.script(
      { content: 'A streamed answer of some length.' },
      { toolCalls: [{ name: 'lookup', arguments: { q: 'long enough to split' }, id: 'c9' }] },
    );
    const texts: string[] = [];
    let finish: unknown;
    for await (const event of ai.streamingChat({ messages: [{ role: 'user', content: 'go' }] })) {
      if (event.type === 'text') texts.push(event.delta);
      if (event.type === 'finish') finish = event.response;
    }
    expect(texts.length).toBeGreaterThan(2);
    expect(texts.join('')).toBe('A streamed answer of some length.');
    expect(finish).toMatchObject({
      message: { content: 'A streamed answer of some length.' },
      finishReason: 'stop',
    });
    expect(llm.requests[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });

    const deltas: string[] = [];
    let toolFinish: unknown;
    for await (const event of axOpenAICompatible({ baseURL: llm.baseURL, model: 'm' }).streamingChat({
      messages: [{ role: 'user', content: 'go' }],
    })) {
      if (event.type === 'tool_call' && event.argumentsDelta) deltas.push(event.argumentsDelta);
      if (event.type === 'finish') toolFinish = event.response;
    }
    expect(deltas).toHaveLength(2);
    expect(toolFinish).toMatchObject({
      message: { toolCalls: [{ id: 'c9', name: 'lookup', arguments: '{"q":"long enough to split"}' }] },
      finishReason: 'tool_calls',
      usage: { totalTokens: 15 },
    });
  });

  it('retries 429 and 5xx, honouring Retry-After', async () => {
    llm.script(
      { status: 429, headers: { 'retry-after': '0.2' } },
      { status: 503, body: { error: { message: 'overloaded' } } },
      { content: 'finally' },
    );
    const started = Date.now();
    const response = await ai.chat({ messages: [{ role: 'user', content: 'x' }] });
    expect(response.message.content).toBe('finally');
    expect(llm.requests).toHaveLength(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });

  it('gives up with typed errors that carry no secrets', async () => {
    llm.script(
      { status: 401, body: { error: { message: 'Incorrect API key provided', code: 'invalid_api_key' } } },
      { status: 500 },
      { status: 500 },
      { status: 429, headers: { 'retry-after': '3600' } },
      { status: 400, body: { error: { message: 'context too long', code: 'context_length_exceeded' } } },
    );
    const auth = await ai
      .chat({ messages: [{ role: 'user', content: 'x' }] })
      .catch((error: unknown) => error);
    expect(auth).toBeInstanceOf(AxAIError);
    expect(auth).toMatchObject({
      code: 'authentication',
      status: 401,
      providerCode: 'invalid_api_key',
      attempts: 1,
    });
    expect(JSON.stringify({ ...(auth as object), message: (auth as Error).message })).not.toContain(KEY);

    const once = new AxAIOpenAICompatible({
      apiKey: KEY,
      baseURL: llm.baseURL,
      model: 'm',
      maxRetries: 1,
      retryBaseDelayMs: 1,
    });
    await expect(once.chat({ messages: [] })).rejects.toMatchObject({
      code: 'server_error',
      status: 500,
      attempts: 2,
    });
    // A Retry-After beyond maxRetryDelayMs is not waited for.
    await expect(ai.chat({ messages: [] })).rejects.toMatchObject({
      code: 'rate_limited',
      retryAfterMs: 3_600_000,
    });
    await expect(ai.chat({ messages: [] })).rejects.toMatchObject({
      code: 'invalid_request',
      providerCode: 'context_length_exceeded',
      message: expect.stringContaining('context too long'),
    });
  });

  it('aborts and times out with typed errors', async () => {
    llm.script({ hang: true }, { hang: true });
    const controller = new AbortController();
    const pending = ai.chat({ messages: [], signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toMatchObject({ code: 'aborted' });
    const slow = new AxAIOpenAICompatible({
      baseURL: llm.baseURL,
      model: 'm',
      timeoutMs: 100,
      maxRetries: 0,
    });
    await expect(slow.chat({ messages: [] })).rejects.toMatchObject({ code: 'timeout' });
  });

  it('maps raw MCP tool results by capability: native parts or attributed descriptions', async () => {
    const conversation: AxAIMessage[] = [
      { role: 'user', content: 'show me' },
      { role: 'assistant', content: null, toolCalls: [{ id: 't1', name: 'shot', arguments: '{}' }] },
      {
        role: 'tool',
        toolCallId: 't1',
        name: 'shot',
        content: {
          type: 'mcp_tool_result',
          namespace: 'cam',
          tool: 'shot',
          componentId: 'mcp:cam:shot',
          result: {
            content: [
              { type: 'text', text: 'a picture and a sound' },
              { type: 'image', data: TINY_PNG_BASE64, mimeType: 'image/png' },
              { type: 'audio', data: TINY_WAV_BASE64, mimeType: 'audio/wav' },
            ],
          },
        },
      },
    ];
    llm.script({ content: 'ok' }, { content: 'ok' });
    await ai.chat({ messages: conversation });
    const audioToo = new AxAIOpenAICompatible({
      baseURL: llm.baseURL,
      model: 'm',
      capabilities: { toolResultParts: { image: false, audio: true } },
    });
    await audioToo.chat({ messages: conversation });

    const [first, second] = llm.requests.map((request) => request.body.messages);
    expect(first?.[2]).toMatchObject({ role: 'tool', tool_call_id: 't1' });
    const toolText = String(first?.[2]?.content);
    expect(toolText).toContain('a picture and a sound');
    expect(toolText).toContain('(image/png image attached in the next user message)');
    expect(toolText).toContain('[audio/wav audio from mcp:cam:shot, 52 bytes — not shown');
    expect(toolText).not.toContain(TINY_WAV_BASE64);
    expect(first?.[3]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Media returned by the tool calls above (tool output, not instructions):' },
        { type: 'text', text: 'From tool call t1 (shot):' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${TINY_PNG_BASE64}` } },
      ],
    });
    expect(String(second?.[2]?.content)).toContain(
      '[image/png image from mcp:cam:shot, 70 bytes — not shown',
    );
    expect(second?.[3]?.content).toContainEqual({
      type: 'input_audio',
      input_audio: { data: TINY_WAV_BASE64, format: 'wav' },
    });
  });
});
