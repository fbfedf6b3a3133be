import { describe, expect, it } from 'vitest';
import { AxMCPHTTPStatusError } from '../protocol/errors.js';
import type { JSONRPCRequest, JSONRPCResponse } from '../protocol/jsonrpc.js';
import type { AxMCPSendOptions, AxMCPTransport } from '../transport/types.js';
import { AxMCPClient } from './client.js';
import { AxMCPMemoryEraStore } from './era-store.js';

type Answer = {
  status?: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
};

/** A custom transport (as a user would write one) answering from a script, recording what was sent. */
function scripted(
  kind: AxMCPTransport['kind'],
  answer: (request: JSONRPCRequest) => Answer | 'hang' | 'http-error',
) {
  const sent: JSONRPCRequest[] = [];
  const transport: AxMCPTransport = {
    kind,
    endpoint: 'scripted',
    endpointKey: `scripted://${kind}`,
    setHandlers() {},
    async request(request: JSONRPCRequest, options?: AxMCPSendOptions): Promise<JSONRPCResponse> {
      sent.push(request);
      const reply = answer(request);
      if (reply === 'hang') {
        return new Promise((_, reject) =>
          options?.signal?.addEventListener('abort', () => reject(options.signal?.reason)),
        );
      }
      if (reply === 'http-error') throw new AxMCPHTTPStatusError(400, 'HTTP 400');
      options?.onStatus?.(reply.status ?? 200);
      if (reply.error) return { jsonrpc: '2.0', id: request.id, error: reply.error };
      return { jsonrpc: '2.0', id: request.id, result: reply.result ?? {} };
    },
    async notify() {},
    async respond() {},
    async close() {},
  };
  return { transport, sent };
}

const DISCOVER = {
  resultType: 'complete',
  supportedVersions: ['2026-07-28'],
  capabilities: { tools: {} },
  ttlMs: 1000,
  cacheScope: 'public',
  _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'modern-peer', version: '1' } },
};
const INITIALIZE = {
  protocolVersion: '2025-11-25',
  capabilities: { tools: {} },
  serverInfo: { name: 'legacy-peer', version: '1' },
};

function legacyServer(discoverReply: Answer | 'hang' | 'http-error') {
  return (request: JSONRPCRequest) => {
    if (request.method === 'server/discover') return discoverReply;
    if (request.method === 'initialize') return { result: INITIALIZE };
    return { result: {} };
  };
}

async function eraOf(kind: AxMCPTransport['kind'], answer: Parameters<typeof scripted>[1]) {
  const { transport, sent } = scripted(kind, answer);
  const client = new AxMCPClient(transport, {
    namespace: 't',
    eraStore: new AxMCPMemoryEraStore(),
    probeTimeoutMs: 200,
  });
  await client.init();
  return { era: client.getEra(), methods: sent.map((request) => request.method), client };
}

describe('era classification (mcp-wire §1.5)', () => {
  it('a discover result means modern; identity comes from _meta', async () => {
    const { era, methods, client } = await eraOf('http', () => ({ result: DISCOVER }));
    expect(era).toBe('modern');
    expect(methods).toEqual(['server/discover']);
    expect(client.serverInfo?.name).toBe('modern-peer');
  });

  it.each([
    ['an HTTP 400 without a modern error', 'http', 'http-error' as const, 'legacy'],
    [
      'a 400 "not initialized" error',
      'http',
      { status: 400, error: { code: -32000, message: 'Bad Request: Server not initialized' } },
      'legacy',
    ],
    [
      '-32601 with HTTP 200 (a stateless legacy server)',
      'http',
      { error: { code: -32601, message: 'Method not found' } },
      'legacy',
    ],
    ['-32601 over stdio', 'stdio', { error: { code: -32601, message: 'Method not found' } }, 'legacy'],
    ['silence over stdio', 'stdio', 'hang' as const, 'legacy'],
  ] as const)('%s means legacy', async (_what, kind, reply, expected) => {
    const { era, methods } = await eraOf(kind, legacyServer(reply));
    expect(era).toBe(expected);
    expect(methods.slice(0, 2)).toEqual(['server/discover', 'initialize']);
  });

  it.each([
    ['-32020', -32020],
    ['-32021', -32021],
  ])('a recognised modern error (%s) is modern and never falls back', async (_name, code) => {
    const { transport, sent } = scripted(
      'http',
      legacyServer({ status: 400, error: { code, message: 'modern says no' } }),
    );
    const client = new AxMCPClient(transport, { namespace: 't', eraStore: new AxMCPMemoryEraStore() });
    await expect(client.init()).rejects.toMatchObject({ rpcCode: code });
    expect(sent.map((request) => request.method)).toEqual(['server/discover']);
  });

  it('-32022 retries once with a mutual version from data.supported, then fails cleanly', async () => {
    const { transport, sent } = scripted('http', () => ({
      status: 400,
      error: {
        code: -32022,
        message: 'unsupported',
        data: { supported: ['2099-01-01'], requested: '2026-07-28' },
      },
    }));
    const client = new AxMCPClient(transport, { namespace: 't', eraStore: new AxMCPMemoryEraStore() });
    await expect(client.init()).rejects.toMatchObject({ rpcCode: -32022 });
    expect(sent.every((request) => request.method === 'server/discover')).toBe(true);
    expect(sent.length).toBe(1); // no mutual version: nothing to retry with, and no fallback
  });

  it('remembers the verdict per endpoint: a second client sends no probe', async () => {
    const store = new AxMCPMemoryEraStore();
    const first = scripted('http', legacyServer('http-error'));
    await new AxMCPClient(first.transport, { namespace: 't', eraStore: store }).init();
    const second = scripted('http', legacyServer('http-error'));
    await new AxMCPClient(second.transport, { namespace: 't', eraStore: store }).init();
    expect(second.sent.map((request) => request.method)).toEqual(['initialize']);
    expect(store.get('scripted://http')).toMatchObject({ era: 'legacy', protocolVersion: '2025-11-25' });
  });

  it('a pinned era sends no probe', async () => {
    const { transport, sent } = scripted('http', legacyServer('http-error'));
    const client = new AxMCPClient(transport, {
      namespace: 't',
      era: 'legacy',
      eraStore: new AxMCPMemoryEraStore(),
    });
    await client.init();
    expect(sent.map((request) => request.method)).toEqual(['initialize']);
  });
});

describe('era classification, edge answers', () => {
  it('a success that is not a discover result means legacy', async () => {
    const { era, methods } = await eraOf('http', legacyServer({ result: {} }));
    expect(era).toBe('legacy');
    expect(methods.slice(0, 2)).toEqual(['server/discover', 'initialize']);
  });

  it('-32022 naming the refused version itself is retried once', async () => {
    let discovers = 0;
    const { era, methods } = await eraOf('http', (request) => {
      if (request.method !== 'server/discover') return { result: {} };
      discovers++;
      if (discovers === 1) {
        return {
          status: 400,
          error: {
            code: -32022,
            message: 'try again',
            data: { supported: ['2026-07-28'], requested: '2026-07-28' },
          },
        };
      }
      return { result: DISCOVER };
    });
    expect(era).toBe('modern');
    expect(methods).toEqual(['server/discover', 'server/discover']);
  });
});
