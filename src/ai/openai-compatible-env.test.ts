import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AxAIOptionsError } from './errors.js';
import { AxAIOpenAICompatible } from './openai-compatible.js';

const saved = { key: process.env.OPENAI_API_KEY, url: process.env.OPENAI_BASE_URL };

afterEach(() => {
  for (const [name, value] of [
    ['OPENAI_API_KEY', saved.key],
    ['OPENAI_BASE_URL', saved.url],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('AxAIOpenAICompatible and the environment', () => {
  it('reads OPENAI_BASE_URL and OPENAI_API_KEY by default', async () => {
    const seen: { url?: string; authorization?: string }[] = [];
    const server = createServer((req, res) => {
      seen.push({ url: req.url, authorization: req.headers.authorization });
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'hi' } }],
        }),
      );
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      process.env.OPENAI_BASE_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      process.env.OPENAI_API_KEY = 'sk-from-env';
      const llm = new AxAIOpenAICompatible({ model: 'm' });
      await llm.chat({ messages: [{ role: 'user', content: 'hello' }] });
      expect(seen).toEqual([{ url: '/v1/chat/completions', authorization: 'Bearer sk-from-env' }]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses the default OpenAI URL without a key, before any request, naming both ways to give one', () => {
    delete process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_BASE_URL;
    let error: unknown;
    try {
      new AxAIOpenAICompatible({ model: 'gpt-4.1-mini' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(AxAIOptionsError);
    expect(error).toMatchObject({ code: 'invalid_options', path: 'apiKey' });
    expect((error as Error).message).toContain('OPENAI_API_KEY');
    // A local server needs no key.
    expect(
      () => new AxAIOpenAICompatible({ model: 'm', baseURL: 'http://127.0.0.1:11434/v1' }),
    ).not.toThrow();
  });
});
