/**
 * Loud, never silent: every wrong AxMCPClient configuration is a typed `invalid_options` error
 * at construction, naming the path (and the nearest known name for a misspelling), and nothing
 * reaches the server. Then the specification's own forms, verbatim, against the demo server:
 * the destructive-tool guard, `subscribeTaskStatus` and `onTaskStatus`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AxMCPDemoServer } from '../src/demo/index.js';
import {
  AxMCPAuthorizationDeniedError,
  AxMCPClient,
  type AxMCPClientOptions,
  AxMCPInvalidOptionsError,
  AxMCPMemoryEraStore,
  AxMCPStreamableHTTPTransport,
  type AxMCPTask,
} from '../src/index.js';
import { eventually, LOOPBACK } from './helpers/clients.js';

let server: AxMCPDemoServer;
let url: string;

beforeAll(async () => {
  server = new AxMCPDemoServer({ era: 'dual', taskPollIntervalMs: 50, keepAliveMs: 0 });
  url = await server.start();
});

afterAll(async () => {
  await server?.close();
});

function totalRequests(): number {
  const counts = server.state().methodCounts;
  return [...Object.values(counts.modern), ...Object.values(counts.legacy)].reduce((a, b) => a + b, 0);
}

/** A transport that counts what it would send, on top of the real one. */
function countingTransport() {
  let sent = 0;
  const transport = new AxMCPStreamableHTTPTransport(url, {
    ssrfProtection: LOOPBACK,
    fetch: (input, init) => {
      sent += 1;
      return fetch(input, init);
    },
  });
  return { transport, sent: () => sent };
}

interface Case {
  name: string;
  options: unknown;
  path: string;
  suggestion?: string;
}

const handler = () => true;

const CASES: Case[] = [
  {
    name: 'misspelled authorizeToolCall',
    options: { namespace: 'inv', authorizeToolcall: () => false },
    path: 'authorizeToolcall',
    suggestion: 'authorizeToolCall',
  },
  {
    name: 'timeoutMS',
    options: { namespace: 'inv', timeoutMS: 10 },
    path: 'timeoutMS',
    suggestion: 'timeoutMs',
  },
  {
    // Declared as it was, a server ignored it and nothing said so.
    name: 'a known extension misspelt',
    options: { namespace: 'inv', extensions: { 'io.modelcontextprotocol/taks': {} } },
    path: 'extensions.io.modelcontextprotocol/taks',
    suggestion: 'io.modelcontextprotocol/tasks',
  },
  {
    name: 'extension settings that are not an object',
    options: { namespace: 'inv', extensions: { 'com.example/widgets': true } },
    path: 'extensions.com.example/widgets',
  },
  { name: 'no namespace', options: { era: 'auto' }, path: 'namespace' },
  { name: 'no options at all', options: undefined, path: '(options)' },
  { name: 'empty namespace', options: { namespace: '  ' }, path: 'namespace' },
  { name: 'namespace a number', options: { namespace: 7 }, path: 'namespace' },
  { name: 'namespace of symbols only', options: { namespace: '---' }, path: 'namespace' },
  { name: 'namespace constructor', options: { namespace: 'constructor' }, path: 'namespace' },
  { name: "era 'modrn'", options: { namespace: 'inv', era: 'modrn' }, path: 'era', suggestion: "'modern'" },
  {
    name: 'elicitation as a bare function',
    options: { namespace: 'inv', elicitation: async () => ({ action: 'accept' }) },
    path: 'elicitation',
  },
  {
    name: 'elicitation with a misspelled mode',
    options: { namespace: 'inv', elicitation: { forms: handler } },
    path: 'elicitation.forms',
    suggestion: 'form',
  },
  { name: 'sampling a string', options: { namespace: 'inv', sampling: 'gpt' }, path: 'sampling' },
  {
    name: 'sampling with a misspelled handler key',
    options: { namespace: 'inv', sampling: { createMesage: handler } },
    path: 'sampling.createMesage',
    suggestion: 'createMessage',
  },
  {
    name: 'sampling tools not a boolean',
    options: { namespace: 'inv', sampling: { createMessage: handler, tools: 'yes' } },
    path: 'sampling.tools',
  },
  {
    name: 'authorizeToolCall a boolean',
    options: { namespace: 'inv', authorizeToolCall: false },
    path: 'authorizeToolCall',
  },
  { name: 'roots without uri', options: { namespace: 'inv', roots: [{ name: 'x' }] }, path: 'roots[0].uri' },
  { name: 'maxConcurrency 0', options: { namespace: 'inv', maxConcurrency: 0 }, path: 'maxConcurrency' },
  { name: 'maxConcurrency 1.5', options: { namespace: 'inv', maxConcurrency: 1.5 }, path: 'maxConcurrency' },
  { name: 'timeoutMs a string', options: { namespace: 'inv', timeoutMs: '60s' }, path: 'timeoutMs' },
  {
    name: "logLevel 'warn'",
    options: { namespace: 'inv', logLevel: 'warn' },
    path: 'logLevel',
    suggestion: "'warning'",
  },
  {
    name: "sessionRecovery 'auto'",
    options: { namespace: 'inv', sessionRecovery: 'auto' },
    path: 'sessionRecovery',
  },
  { name: 'eraStore a Map-less object', options: { namespace: 'inv', eraStore: {} }, path: 'eraStore' },
  { name: 'onTaskStatus a string', options: { namespace: 'inv', onTaskStatus: 'log' }, path: 'onTaskStatus' },
  { name: 'readCache "yes"', options: { namespace: 'inv', readCache: 'yes' }, path: 'readCache' },
  {
    name: 'clientInfo without version',
    options: { namespace: 'inv', clientInfo: { name: 'me' } },
    path: 'clientInfo.version',
  },
  {
    name: 'extensions with a non-object setting',
    options: { namespace: 'inv', extensions: { 'io.example/x': true } },
    path: 'extensions.io.example/x',
  },
  {
    name: 'ssrfProtection given to the client',
    options: { namespace: 'inv', ssrfProtection: LOOPBACK },
    path: 'ssrfProtection',
  },
];

describe('AxMCPClient options are checked before anything is sent', () => {
  it.each(CASES)('$name → invalid_options at $path', ({ options, path, suggestion }) => {
    const { transport, sent } = countingTransport();
    const before = totalRequests();
    let thrown: unknown;
    try {
      new AxMCPClient(transport, options as AxMCPClientOptions);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AxMCPInvalidOptionsError);
    const error = thrown as AxMCPInvalidOptionsError;
    expect(error.code).toBe('invalid_options');
    expect(error.path).toBe(path);
    expect(error.suggestion).toBe(suggestion);
    expect(error.message).toContain(path);
    if (suggestion) expect(error.message).toContain(`did you mean ${suggestion}?`);
    expect(sent()).toBe(0);
    expect(totalRequests()).toBe(before);
  });

  it('the demo server checks its options too: a misspelled key names the nearest one', () => {
    expect(() => new AxMCPDemoServer({ prot: 3000 } as never)).toThrow(
      expect.objectContaining({ code: 'invalid_options', message: expect.stringMatching(/port/) }),
    );
    expect(() => new AxMCPDemoServer({ era: 'both' } as never)).toThrow(
      expect.objectContaining({ code: 'invalid_options' }),
    );
  });

  it('a transport that is not one is refused with the same code', () => {
    expect(() => new AxMCPClient({ url } as never, { namespace: 'inv' })).toThrow(
      expect.objectContaining({ code: 'invalid_options', path: '(options)' }),
    );
  });

  it('every issue is listed, not only the first', () => {
    const { transport } = countingTransport();
    const error = (() => {
      try {
        new AxMCPClient(transport, { namespace: 'inv', timeoutMS: 1, era: 'x' } as never);
      } catch (caught) {
        return caught as AxMCPInvalidOptionsError;
      }
    })();
    expect(error?.issues.map((issue) => issue.path).sort()).toEqual(['era', 'timeoutMS']);
  });

  it('documented configurations construct', () => {
    const { transport } = countingTransport();
    const client = new AxMCPClient(transport, {
      namespace: 'inventory',
      era: 'auto',
      eraStore: new AxMCPMemoryEraStore(),
      authorizeToolCall: ({ tool }) => tool.annotations?.readOnlyHint === true,
      elicitation: { form: () => ({ action: 'decline' }), applyDefaults: false },
      roots: [{ uri: 'file:///tmp', name: 'tmp' }],
      maxConcurrency: 4,
      timeoutMs: 0,
      logLevel: 'warning',
      extensions: { 'io.modelcontextprotocol/ui': {}, 'com.example/widgets': { version: 2 } },
    });
    expect(client.namespace).toBe('inventory');
  });
});

describe("the specification's forms, verbatim, against the demo", () => {
  it('the destructive-tool guard denies adjust_stock (nothing reaches the server) and lets get_stock run', async () => {
    const client = new AxMCPClient(new AxMCPStreamableHTTPTransport(url, { ssrfProtection: LOOPBACK }), {
      namespace: 'inventory',
      eraStore: new AxMCPMemoryEraStore(),
      authorizeToolCall: async ({ tool }) => tool.annotations?.destructiveHint !== true,
    });
    try {
      const before = await client.callTool('get_stock', { sku: 'widget-a' });
      const calls = () => {
        const counts = server.state().methodCounts;
        return (counts.modern['tools/call'] ?? 0) + (counts.legacy['tools/call'] ?? 0);
      };
      const sentBefore = calls();
      await expect(
        client.callTool('adjust_stock', { warehouseId: 'berlin', sku: 'widget-a', delta: 1 }),
      ).rejects.toBeInstanceOf(AxMCPAuthorizationDeniedError);
      expect(calls()).toBe(sentBefore);
      const after = await client.callTool('get_stock', { sku: 'widget-a' });
      expect(after.structuredContent).toEqual(before.structuredContent);
    } finally {
      await client.close();
    }
  });

  it('a guard that answers other than true or false still denies, and the error says what it answered', async () => {
    const client = new AxMCPClient(new AxMCPStreamableHTTPTransport(url, { ssrfProtection: LOOPBACK }), {
      namespace: 'inventory',
      eraStore: new AxMCPMemoryEraStore(),
      authorizeToolCall: (() => 'allow') as never,
    });
    try {
      const denied = client.callTool('get_stock', { sku: 'widget-a' });
      await expect(denied).rejects.toBeInstanceOf(AxMCPAuthorizationDeniedError);
      // Before, only "was denied": every call refused, and nothing said the guard answered a string.
      await expect(denied).rejects.toThrow(
        `Call to tool "get_stock" was denied by authorizeToolCall: it answered the string 'allow', not true or false`,
      );
    } finally {
      await client.close();
    }
  });

  it('the guard sees the frozen catalog tool and cannot change it', async () => {
    const seen: unknown[] = [];
    const client = new AxMCPClient(new AxMCPStreamableHTTPTransport(url, { ssrfProtection: LOOPBACK }), {
      namespace: 'inventory',
      eraStore: new AxMCPMemoryEraStore(),
      authorizeToolCall: ({ tool, annotations }) => {
        seen.push(tool);
        expect(Object.isFrozen(tool)).toBe(true);
        expect(annotations).toEqual(tool.annotations);
        return true;
      },
    });
    try {
      await client.callTool('get_stock', { sku: 'widget-a' });
      expect(seen[0]).toMatchObject({
        name: 'get_stock',
        title: 'Get stock',
        annotations: { readOnlyHint: true },
        inputSchema: { type: 'object' },
      });
    } finally {
      await client.close();
    }
  });

  it('subscribeTaskStatus(taskId, listener) and onTaskStatus see a task through to completed; unsubscribe stops it', async () => {
    const fromOption: AxMCPTask[] = [];
    const client = new AxMCPClient(new AxMCPStreamableHTTPTransport(url, { ssrfProtection: LOOPBACK }), {
      namespace: 'inventory',
      eraStore: new AxMCPMemoryEraStore(),
      onTaskStatus: (task) => fromOption.push(task),
    });
    try {
      const outcome = await client.callToolOutcome('start_reindex', { scope: 'berlin' });
      if (outcome.kind !== 'task') throw new Error('start_reindex made no task');
      const seen: AxMCPTask[] = [];
      const other: AxMCPTask[] = [];
      const stop = client.subscribeTaskStatus(outcome.task.taskId, (task) => seen.push(task));
      const stopOther = client.subscribeTaskStatus({ taskId: 'no-such-task' }, (task) => other.push(task));
      const onlyDone: AxMCPTask[] = [];
      const stopDone = client.subscribeTaskStatus({ status: 'completed' }, (task) => onlyDone.push(task));
      const waiting = client.waitForTask(outcome.task, { pollIntervalMs: 50 });
      server.completeTask(outcome.task.taskId);
      await waiting;
      await eventually(() => seen.some((task) => task.status === 'completed'), 5_000, 'completed status');
      expect(seen.every((task) => task.taskId === outcome.task.taskId)).toBe(true);
      expect(other).toEqual([]);
      expect(onlyDone.map((task) => task.status)).toEqual(['completed']);
      expect(fromOption.some((task) => task.status === 'completed')).toBe(true);
      stop();
      stop();
      stopOther();
      stopDone();
      const count = seen.length;
      const second = await client.callToolOutcome('start_reindex', { scope: 'porto' });
      if (second.kind !== 'task') throw new Error('start_reindex made no task');
      const waitingAgain = client.waitForTask(second.task, { pollIntervalMs: 50 });
      server.completeTask(second.task.taskId);
      await waitingAgain;
      expect(seen.length).toBe(count);
    } finally {
      await client.close();
    }
  });

  it('subscribeTaskStatus refuses a wrong filter or listener with invalid_options', async () => {
    const client = new AxMCPClient(new AxMCPStreamableHTTPTransport(url, { ssrfProtection: LOOPBACK }), {
      namespace: 'inventory',
    });
    try {
      expect(() => client.subscribeTaskStatus({ taskID: 'x' } as never, () => {})).toThrow(
        expect.objectContaining({ code: 'invalid_options', path: 'taskID', suggestion: 'taskId' }),
      );
      expect(() => client.subscribeTaskStatus('x', undefined as never)).toThrow(
        expect.objectContaining({ code: 'invalid_options' }),
      );
      expect(() => client.subscribeTaskStatus({ status: 'done' } as never, () => {})).toThrow(
        expect.objectContaining({ code: 'invalid_options', path: 'status' }),
      );
      // Caught when called, so never heard from: refused when subscribed.
      expect(() => client.subscribeEvents('log' as never)).toThrow(
        expect.objectContaining({
          code: 'invalid_options',
          message: expect.stringContaining('subscribeEvents listener'),
        }),
      );
    } finally {
      await client.close();
    }
  });
});

describe('per-call options are checked on every call, and nothing of a refused call is sent', () => {
  type Call = [method: string, call: (client: AxMCPClient) => unknown, path: string, suggestion?: string];
  const CALLS: Call[] = [
    // The misspelt deadline left the call on the client's 60 s default.
    [
      'callTool',
      (c) => c.callTool('get_stock', { sku: 'widget-a' }, { timeoutMS: 50 } as never),
      'timeoutMS',
      'timeoutMs',
    ],
    ['callTool', (c) => c.callTool('get_stock', {}, { timeoutMs: Number.NaN }), 'timeoutMs'],
    [
      'callTool',
      (c) => c.callTool('get_stock', {}, { taskHandling: 'expsoe' } as never),
      'taskHandling',
      "'expose'",
    ],
    ['callToolOutcome', (c) => c.callToolOutcome('start_reindex', {}, { timeoutMs: -1 }), 'timeoutMs'],
    [
      'waitForTask',
      (c) => c.waitForTask('t1', { pollIntervalMS: 10 } as never),
      'pollIntervalMS',
      'pollIntervalMs',
    ],
    ['getTask', (c) => c.getTask('t1', { signal: 'stop' } as never), 'signal'],
    [
      'readResource',
      (c) => c.readResource('inventory://warehouse/berlin', { timeout: 5 } as never),
      'timeout',
      'timeoutMs',
    ],
    [
      'getPrompt',
      (c) => c.getPrompt('restock_plan', {}, { onProgres: () => {} } as never),
      'onProgres',
      'onProgress',
    ],
    ['listTools', (c) => c.listTools(undefined, { timeoutMs: '5s' } as never), 'timeoutMs'],
    // The misspelt refresh served the cached lists.
    ['inspectCatalog', (c) => c.inspectCatalog({ refrsh: true } as never), 'refrsh', 'refresh'],
    ['refresh', (c) => c.refresh({ forced: true } as never), 'forced', 'force'],
    ['ping', (c) => c.ping({ timeoutMS: 5 } as never), 'timeoutMS', 'timeoutMs'],
    [
      'setLoggingLevel',
      (c) => c.setLoggingLevel('info', { timeoutMS: 5 } as never),
      'timeoutMS',
      'timeoutMs',
    ],
    ['discover', (c) => c.discover({ signals: undefined } as never), 'signals', 'signal'],
  ];

  it.each(CALLS)('%s: a rejected promise naming the option', async (method, call, path, suggestion) => {
    const { transport, sent } = countingTransport();
    const client = new AxMCPClient(transport, { namespace: 'inventory' });
    try {
      const before = totalRequests();
      const result = call(client);
      expect(result).toBeInstanceOf(Promise);
      const error = await (result as Promise<unknown>).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(AxMCPInvalidOptionsError);
      expect(error).toMatchObject({ code: 'invalid_options', path, namespace: 'inventory' });
      if (suggestion !== undefined) expect((error as AxMCPInvalidOptionsError).suggestion).toBe(suggestion);
      expect((error as Error).message).toContain(`${method} options`);
      expect(sent()).toBe(0);
      expect(totalRequests()).toBe(before);
    } finally {
      await client.close();
    }
  });

  it('startListening throws at once, before anything listens; the right spellings still work', async () => {
    const { transport } = countingTransport();
    const client = new AxMCPClient(transport, { namespace: 'inventory' });
    try {
      expect(() => client.startListening({ retryDelayMS: 10 } as never)).toThrow(
        expect.objectContaining({
          code: 'invalid_options',
          path: 'retryDelayMS',
          suggestion: 'retryDelayMs',
        }),
      );
      const result = await client.callTool('get_stock', { sku: 'widget-a' }, { timeoutMs: 5_000 });
      expect(result.isError).not.toBe(true);
      const catalog = await client.inspectCatalog({ refresh: true });
      expect(catalog.tools.map((tool) => tool.name)).toContain('get_stock');
      await client.ping({ timeoutMs: 5_000, signal: new AbortController().signal });
    } finally {
      await client.close();
    }
  });
});
