/**
 * axMCPChat: the non-streaming tool loop without a signature, against the v2 SDK peer and
 * the scripted provider.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type AxAIMCPToolResult, AxAIOpenAICompatible } from '../src/ai/index.js';
import type { AxMCPClient } from '../src/index.js';
import { axMCPChat, toFunction } from '../src/program/index.js';
import { httpClient } from './helpers/clients.js';
import { TINY_PNG_BASE64 } from './servers/content.js';
import { type LegacyV2Server, startLegacyV2Server } from './servers/legacy-v2.js';
import { type ScriptedOpenAIServer, startScriptedOpenAI } from './servers/scripted-openai.js';

describe('axMCPChat', () => {
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

  it('runs the tool loop and returns the response with the whole conversation, raw results kept', async () => {
    llm.script(
      {
        toolCalls: [
          { name: 'echo', arguments: { message: 'one' } },
          { name: 'all_content', arguments: {} },
        ],
      },
      { content: 'All done.' },
    );
    const { response, messages, steps, usage } = await axMCPChat(
      ai,
      {
        messages: [
          { role: 'system', content: 'You help.' },
          { role: 'user', content: 'Echo one, then show content.' },
        ],
      },
      { mcp: docs, maxSteps: 4 },
    );
    expect(response.message.content).toBe('All done.');
    expect(steps).toBe(2);
    expect(usage?.totalTokens).toBe(30);
    expect(messages.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'tool',
      'assistant',
    ]);
    const raw = messages[4]?.role === 'tool' ? (messages[4].content as AxAIMCPToolResult) : undefined;
    expect(raw).toMatchObject({
      type: 'mcp_tool_result',
      namespace: 'docs',
      tool: 'all_content',
      componentId: 'mcp:docs:all_content',
    });
    expect(raw?.result.content.find((block) => block.type === 'image')).toMatchObject({
      data: TINY_PNG_BASE64,
    });
    expect(raw?.result.structuredContent).toMatchObject({ count: 6 });
    expect(llm.requests[0]?.body.tools?.map((tool) => tool.function.name)).toContain('echo');
    expect(llm.requests[0]?.body.response_format).toBeUndefined();
  });

  it('adds mcpContext after the system messages, and stops at maxSteps', async () => {
    llm.script({ toolCalls: [{ name: 'echo', arguments: { message: 'again' } }] });
    await expect(
      axMCPChat(
        ai,
        {
          messages: [
            { role: 'system', content: 'S' },
            { role: 'user', content: 'U' },
          ],
        },
        { mcp: docs, maxSteps: 1, mcpContext: [{ client: docs, resource: { uri: 'res://text/hello' } }] },
      ),
    ).rejects.toMatchObject({ code: 'max_steps' });
    const sent = llm.requests[0]?.body.messages ?? [];
    expect(sent.map((message) => message.role)).toEqual(['system', 'system', 'user', 'user']);
    expect(JSON.stringify(sent[2]?.content)).toContain('trust=\\"untrusted\\"');
    expect(JSON.stringify(sent[2]?.content)).toContain('Hello, world');
  });

  it('refuses request.tools (tools come from mcp and functions)', async () => {
    await expect(
      axMCPChat(ai, {
        messages: [{ role: 'user', content: 'x' }],
        tools: [{ name: 't', parameters: {} }],
      } as Parameters<typeof axMCPChat>[1]),
    ).rejects.toMatchObject({ code: 'invalid_options' });
  });

  it('toFunction is a lossy adapter: one string, media described', async () => {
    const fn = await toFunction(docs, 'all_content');
    llm.script({ toolCalls: [{ name: 'all_content' }] }, { content: 'ok' });
    const { messages } = await axMCPChat(
      ai,
      { messages: [{ role: 'user', content: 'x' }] },
      { functions: [fn] },
    );
    const tool = messages.find((message) => message.role === 'tool');
    expect(typeof tool?.content).toBe('string');
    expect(tool?.content).toContain('[image/png image from mcp:docs:all_content, 70 bytes — not shown');
    expect(tool?.content).not.toContain(TINY_PNG_BASE64);
  });
});
