/**
 * Every method the client can send exists in the era it is sent in. 2026-07-28 removed
 * `ping` and `logging/setLevel`: `ping()` asks `server/discover` instead, and
 * `setLoggingLevel()` makes every later request carry the level in `_meta`. Against the
 * official v2 server SDK (2026-07-28) and the demo's 2025-11-25 leg.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type Context,
  type ContextManager,
  context,
  createTraceState,
  ROOT_CONTEXT,
  trace,
} from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AxMCPDemoServer } from '../src/demo/index.js';
import {
  type AxMCPClient,
  type AxMCPClientOptions,
  type AxMCPCreateMessageParams,
  AxMCPInvalidOptionsError,
  AxMCPToolOutputError,
} from '../src/index.js';
import { httpClient } from './helpers/clients.js';
import { type ModernPeer, startModernServer } from './servers/modern.js';

const LOG_LEVEL_KEY = 'io.modelcontextprotocol/logLevel';

describe('2026-07-28 (official v2 server SDK)', () => {
  let peer: ModernPeer;
  let client: AxMCPClient;

  beforeAll(async () => {
    peer = await startModernServer();
    client = httpClient(peer.url, { era: 'modern' });
    await client.init();
  });

  afterAll(async () => {
    await client?.close();
    await peer?.close();
  });

  it('ping() asks server/discover and never sends the removed ping', async () => {
    const before = peer.stats.methods.get('server/discover') ?? 0;
    await client.ping();
    await client.ping();
    expect(peer.stats.methods.get('server/discover')).toBe(before + 2);
    expect(peer.stats.methods.get('ping')).toBeUndefined();
  });

  it('setLoggingLevel() sends no logging/setLevel; later requests carry the level in _meta', async () => {
    await client.inspectCatalog();
    const first = peer.stats.requests.at(-1);
    expect(first?.meta).toBeDefined();
    expect((first?.meta as Record<string, unknown> | undefined)?.[LOG_LEVEL_KEY]).toBeUndefined();
    await client.setLoggingLevel('warning');
    expect(peer.stats.methods.get('logging/setLevel')).toBeUndefined();
    await client.callTool('echo', { message: 'hi' });
    const call = peer.stats.requests.filter((request) => request.method === 'tools/call').at(-1);
    expect((call?.meta as Record<string, unknown> | undefined)?.[LOG_LEVEL_KEY]).toBe('warning');
  });

  it('setLoggingLevel refuses a level that does not exist before sending anything', async () => {
    const count = peer.stats.requests.length;
    await expect(client.setLoggingLevel('warn' as never)).rejects.toBeInstanceOf(AxMCPInvalidOptionsError);
    await expect(client.setLoggingLevel('warn' as never)).rejects.toMatchObject({
      path: 'level',
      suggestion: "'warning'",
    });
    expect(peer.stats.requests.length).toBe(count);
  });
});

describe('2025-11-25 (the demo, legacy only)', () => {
  let server: AxMCPDemoServer;
  let client: AxMCPClient;

  beforeAll(async () => {
    server = new AxMCPDemoServer({ era: 'legacy', keepAliveMs: 0 });
    await server.start();
    client = httpClient(server.url, { era: 'legacy' });
    await client.init();
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it('ping() sends ping', async () => {
    const before = server.state().methodCounts.legacy.ping ?? 0;
    await client.ping();
    expect(server.state().methodCounts.legacy.ping).toBe(before + 1);
  });
});

describe('SEP-2106: structuredContent may be any JSON value (official v2 server SDK)', () => {
  let peer: ModernPeer;
  let client: AxMCPClient;

  beforeAll(async () => {
    peer = await startModernServer();
    client = httpClient(peer.url, { era: 'modern' });
  });

  afterAll(async () => {
    await client?.close();
    await peer?.close();
  });

  it('an array and a scalar reach the caller raw', async () => {
    const squares = await client.callTool('numbers', { count: 4 });
    expect(squares.structuredContent).toEqual([1, 4, 9, 16]);
    expect(squares.content).toEqual([{ type: 'text', text: '1, 4, 9, 16' }]);
    const answer = await client.callTool('answer', {});
    expect(answer.structuredContent).toBe(42);
  });
});

describe('outputSchema: structuredContent is checked against the declared schema (official v2 server SDK)', () => {
  let peer: ModernPeer;

  beforeAll(async () => {
    peer = await startModernServer();
  });

  afterAll(async () => {
    await peer?.close();
  });

  /** A client that sees `numbers` declare an array of strings: the server's own data then breaks it. */
  function declaringStrings(options: Partial<AxMCPClientOptions> = {}) {
    return httpClient(
      peer.url,
      { era: 'modern', ...options },
      {
        fetch: async (input, init) => {
          const response = await fetch(input, init);
          const body = typeof init?.body === 'string' ? init.body : '';
          if (!body.includes('"tools/list"')) return response;
          const text = (await response.text()).replace(
            /"outputSchema":\{"\$schema":"[^"]*","type":"array","items":\{"type":"number"\}\}/,
            '"outputSchema":{"type":"array","items":{"type":"string"}}',
          );
          return new Response(text, { status: response.status, headers: response.headers });
        },
      },
    );
  }

  it('the official SDK declares the schema its data fits: the call passes the check', async () => {
    const client = httpClient(peer.url, { era: 'modern' });
    try {
      const catalog = await client.inspectCatalog();
      expect(catalog.tools.find((tool) => tool.name === 'numbers')?.outputSchema).toMatchObject({
        type: 'array',
      });
      expect((await client.callTool('numbers', { count: 2 })).structuredContent).toEqual([1, 4]);
    } finally {
      await client.close();
    }
  });

  it('a mismatch is output_schema_mismatch carrying the raw result; validateToolOutput: false lets it through', async () => {
    const strict = declaringStrings();
    const lenient = declaringStrings({ validateToolOutput: false });
    try {
      const declared = (await strict.inspectCatalog()).tools.find((tool) => tool.name === 'numbers');
      expect(declared?.outputSchema).toEqual({ type: 'array', items: { type: 'string' } });
      const error = await strict.callTool('numbers', { count: 3 }).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(AxMCPToolOutputError);
      expect(error).toMatchObject({
        code: 'output_schema_mismatch',
        tool: 'numbers',
        result: { structuredContent: [1, 4, 9] },
      });
      expect((await lenient.callTool('numbers', { count: 3 })).structuredContent).toEqual([1, 4, 9]);
    } finally {
      await strict.close();
      await lenient.close();
    }
  });
});

describe('sampling with tools (official v2 server SDK, in-band on 2026-07-28)', () => {
  let peer: ModernPeer;

  beforeAll(async () => {
    peer = await startModernServer();
  });

  afterAll(async () => {
    await peer?.close();
  });

  it('a handler that declares tools receives tools and toolChoice typed, and its answer goes back', async () => {
    const seen: AxMCPCreateMessageParams[] = [];
    const client = httpClient(peer.url, {
      era: 'modern',
      sampling: {
        tools: true,
        createMessage: (params) => {
          seen.push(params);
          return {
            role: 'assistant',
            content: [{ type: 'tool_use', id: 'call-1', name: 'get_weather', input: { city: 'Lisbon' } }],
            model: 'test-model',
            stopReason: 'toolUse',
          };
        },
      },
    });
    try {
      const result = await client.callTool('sample_with_tools', {});
      expect(seen[0]?.tools?.[0]).toMatchObject({ name: 'get_weather' });
      expect(seen[0]?.toolChoice).toEqual({ mode: 'auto' });
      expect(JSON.stringify(result.content)).toContain('get_weather');
    } finally {
      await client.close();
    }
  });

  it('a handler that did not declare tools does not get them: the server sees no sampling.tools and refuses typed', async () => {
    const client = httpClient(peer.url, {
      era: 'modern',
      sampling: () => ({ role: 'assistant', content: { type: 'text', text: 'no' }, model: 'm' }),
    });
    try {
      // The client declared no sampling.tools, so the server itself refuses to ask (-32021).
      await expect(client.callTool('sample_with_tools', {})).rejects.toMatchObject({
        rpcCode: -32021,
        data: { requiredCapabilities: { sampling: { tools: {} } } },
      });
    } finally {
      await client.close();
    }
  });
});

/** A context manager on AsyncLocalStorage, as an OpenTelemetry SDK installs one. */
class AsyncLocalContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#storage.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.#storage.disable();
    return this;
  }
}

describe('trace context reaches the server (official v2 server SDK)', () => {
  let peer: ModernPeer;
  const manager = new AsyncLocalContextManager();

  beforeAll(async () => {
    peer = await startModernServer();
    context.setGlobalContextManager(manager);
  });

  afterAll(async () => {
    context.disable();
    await peer?.close();
  });

  it('an active span puts traceparent and tracestate in _meta of every request; none without one', async () => {
    const client = httpClient(peer.url, { era: 'modern' });
    const spanContext = {
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      traceFlags: 1,
      traceState: createTraceState('vendor=opaque'),
    };
    try {
      await client.callTool('echo', { message: 'untraced' });
      const untraced = peer.stats.requests.filter((request) => request.method === 'tools/call').at(-1);
      expect(untraced?.meta).toBeDefined();
      expect(untraced?.meta).not.toHaveProperty('traceparent');
      await context.with(trace.setSpanContext(context.active(), spanContext), async () => {
        await client.callTool('echo', { message: 'traced' });
        await client.readResource('res://modern/hello');
      });
      const traced = peer.stats.requests
        .filter((request) => ['tools/call', 'resources/read'].includes(request.method))
        .slice(-2);
      for (const request of traced) {
        expect(request.meta).toMatchObject({
          traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
          tracestate: 'vendor=opaque',
        });
      }
    } finally {
      await client.close();
    }
  });
});

describe('2026-07-28: a response stream that breaks before its answer (official v2 server SDK)', () => {
  let peer: ModernPeer;

  beforeAll(async () => {
    peer = await startModernServer();
  });

  afterAll(async () => {
    await peer?.close();
  });

  /** A client whose first answer to `method` arrives as an SSE stream that ends with nothing in it. */
  function breakingFirst(method: string) {
    let broken = 0;
    const client = httpClient(
      peer.url,
      { era: 'modern' },
      {
        fetch: async (input, init) => {
          const response = await fetch(input, init);
          const body = typeof init?.body === 'string' ? init.body : '';
          if (broken > 0 || !body.includes(`"method":"${method}"`)) return response;
          broken++;
          await response.body?.cancel();
          return new Response(': the connection drops here\n\n', {
            status: 200,
            headers: { 'content-type': 'text/event-stream' },
          });
        },
      },
    );
    return { client, broken: () => broken };
  }

  it('a safe read goes again as a new request', async () => {
    const { client, broken } = breakingFirst('resources/read');
    try {
      await client.init();
      const before = peer.stats.methods.get('resources/read') ?? 0;
      const read = await client.readResource('res://modern/hello');
      expect(broken()).toBe(1);
      expect(read.contents[0]).toMatchObject({ text: 'Hello from the modern peer' });
      expect(peer.stats.methods.get('resources/read')).toBe(before + 2);
    } finally {
      await client.close();
    }
  });

  it('tools/call is never re-issued: the caller gets stream_ended and the server saw it once', async () => {
    const { client } = breakingFirst('tools/call');
    try {
      await client.init();
      const before = peer.stats.methods.get('tools/call') ?? 0;
      await expect(client.callTool('echo', { message: 'once' })).rejects.toMatchObject({
        code: 'stream_ended',
      });
      expect(peer.stats.methods.get('tools/call')).toBe(before + 1);
    } finally {
      await client.close();
    }
  });
});
