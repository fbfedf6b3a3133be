/**
 * What a 2025-11-25 server may ask of the client, end to end against
 * `@modelcontextprotocol/server-everything`: task-augmented sampling and elicitation answered as
 * tasks the server polls (`tasks/get`, `tasks/result`), URL-mode elicitation through the
 * `-32042` error path retried once the user is done, roots that change (`roots.listChanged`,
 * `notifyRootsChanged`), and the capabilities each handler declares.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AxMCPClient,
  type AxMCPCreateMessageParams,
  type AxMCPElicitParams,
  AxMCPURLElicitationRequiredError,
} from '../src/index.js';
import { eventually, httpClient } from './helpers/clients.js';
import { type EverythingServer, startEverythingServer } from './servers/everything.js';

function texts(result: { content: ReadonlyArray<{ type: string; [key: string]: unknown }> }): string {
  return result.content
    .filter((block) => block.type === 'text')
    .map((block) => String(block.text))
    .join('\n');
}

let server: EverythingServer;

beforeAll(async () => {
  server = await startEverythingServer({ mode: 'streamableHttp' });
});

afterAll(async () => {
  await server?.close();
});

describe('the client as a task receiver (2025-11-25)', () => {
  let client: AxMCPClient;
  const sampled: AxMCPCreateMessageParams[] = [];
  const elicited: AxMCPElicitParams[] = [];

  beforeAll(async () => {
    client = httpClient(server.url, {
      era: 'legacy',
      timeoutMs: 30_000,
      sampling: {
        createMessage: async (params) => {
          sampled.push(params);
          await new Promise((resolve) => setTimeout(resolve, 300));
          return {
            role: 'assistant',
            content: { type: 'text', text: 'sampled in the background' },
            model: 'test-model',
          };
        },
        tasks: true,
      },
      elicitation: {
        form: (params) => {
          elicited.push(params);
          return { action: 'accept', content: { name: 'Ada' } };
        },
        tasks: true,
      },
    });
    await client.init();
  });

  afterAll(async () => {
    await client?.close();
  });

  it('declares tasks.requests for the handlers that opted in, and the async tools appear', async () => {
    const tools = (await client.inspectCatalog()).tools.map((tool) => tool.name);
    expect(tools).toContain('trigger-sampling-request-async');
    expect(tools).toContain('trigger-elicitation-request-async');
  });

  it('task-augmented sampling: answered with a task, polled by the server to completed, result fetched', async () => {
    const result = await client.callTool('trigger-sampling-request-async', {
      prompt: 'hello',
      maxTokens: 20,
    });
    const text = texts(result);
    expect(sampled.at(-1)?.task).toBeUndefined();
    expect(text).not.toContain('[SYNC]');
    expect(text).toMatch(/Task created/);
    expect(text).toMatch(/completed/);
    expect(text).toContain('sampled in the background');
  });

  it('task-augmented elicitation reaches the form handler and completes', async () => {
    const before = elicited.length;
    const result = await client.callTool('trigger-elicitation-request-async', {});
    expect(elicited.length).toBe(before + 1);
    expect(texts(result)).toMatch(/completed/);
    expect(texts(result)).toContain('Ada');
  });
});

describe('a client that did not opt in', () => {
  it('declares no tasks capability, so the server does not offer the async tools', async () => {
    const plain = httpClient(server.url, {
      era: 'legacy',
      sampling: () => ({ role: 'assistant', content: { type: 'text', text: 'x' }, model: 'm' }),
    });
    try {
      const tools = (await plain.inspectCatalog()).tools.map((tool) => tool.name);
      expect(tools).toContain('trigger-sampling-request');
      expect(tools).not.toContain('trigger-sampling-request-async');
    } finally {
      await plain.close();
    }
  });
});

describe('URL-mode elicitation through the -32042 error path', () => {
  it('with a url handler: the user is asked with the URL, then the call is retried once and succeeds', async () => {
    const shown: AxMCPElicitParams[] = [];
    const client = httpClient(server.url, {
      era: 'legacy',
      timeoutMs: 30_000,
      urlElicitationTimeoutMs: 100,
      elicitation: {
        url: (params) => {
          shown.push(params);
          return { action: 'accept' };
        },
      },
    });
    try {
      const result = await client.callTool('trigger-url-elicitation', {
        url: 'https://example.com/connect',
        errorPath: true,
      });
      // The error path's prerequisite, then the tool's own elicitation/create on the retry.
      expect(shown[0]).toMatchObject({ mode: 'url', url: 'https://modelcontextprotocol.io' });
      expect(typeof shown[0]?.elicitationId).toBe('string');
      expect(shown[1]).toMatchObject({ mode: 'url', url: 'https://example.com/connect' });
      expect(texts(result)).toContain('User completed the URL elicitation flow');
    } finally {
      await client.close();
    }
  });

  it('a declined elicitation reaches the caller as AxMCPURLElicitationRequiredError with the URL, not retried', async () => {
    const client = httpClient(server.url, {
      era: 'legacy',
      timeoutMs: 30_000,
      elicitation: { url: () => ({ action: 'decline' }) },
    });
    try {
      const error = await client
        .callTool('trigger-url-elicitation', { url: 'https://example.com/declined', errorPath: true })
        .then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
      expect(error).toBeInstanceOf(AxMCPURLElicitationRequiredError);
      expect(error).toMatchObject({
        code: 'url_elicitation_required',
        rpcCode: -32042,
        elicitations: [{ url: 'https://modelcontextprotocol.io' }],
      });
    } finally {
      await client.close();
    }
  });
});

describe('roots that change', () => {
  it('a roots function declares listChanged; notifyRootsChanged makes the server list them again', async () => {
    let roots = [{ uri: 'file:///first', name: 'first' }];
    let asked = 0;
    const client = httpClient(server.url, {
      era: 'legacy',
      roots: () => {
        asked += 1;
        return roots;
      },
    });
    try {
      await client.init();
      await eventually(() => asked >= 1, 5_000, 'the server to list roots');
      expect(texts(await client.callTool('get-roots-list', {}))).toContain('file:///first');
      roots = [{ uri: 'file:///second', name: 'second' }];
      const before = asked;
      await client.notifyRootsChanged();
      await eventually(() => asked > before, 5_000, 'the server to list roots again');
      const listed = texts(await client.callTool('get-roots-list', {}));
      expect(listed).toContain('file:///second');
    } finally {
      await client.close();
    }
  });

  it('a fixed list cannot change: notifyRootsChanged is a typed unsupported error', async () => {
    const client = httpClient(server.url, { era: 'legacy', roots: [{ uri: 'file:///fixed' }] });
    try {
      await expect(client.notifyRootsChanged()).rejects.toMatchObject({ code: 'unsupported' });
    } finally {
      await client.close();
    }
  });
});
