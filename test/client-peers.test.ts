/**
 * AxMCPClient (legacy era, Streamable HTTP) against real peers we did not write: the v1 server SDK
 * (test/servers/legacy-v1.ts) and `@modelcontextprotocol/server-everything` as a child process.
 */
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AxMCPClient,
  type AxMCPClientEvent,
  type AxMCPCreateMessageParams,
  type AxMCPElicitParams,
  AxMCPProtocolError,
  AxMCPTimeoutError,
  AxMCPUnsupportedError,
  RPC,
} from '../src/index.js';
import { eventually, httpClient } from './helpers/clients.js';
import {
  ALL_CONTENT_META,
  ALL_CONTENT_STRUCTURED,
  allContentResult,
  GREETING_NAMES,
  TINY_PNG_BASE64,
} from './servers/content.js';
import { type EverythingServer, startEverythingServer } from './servers/everything.js';
import { LEGACY_V1_TOOL_NAMES, type LegacyV1Server, startLegacyV1Server } from './servers/legacy-v1.js';

/** Collects a client's events; `of(type)` narrows them. */
function recordEvents(client: AxMCPClient) {
  const events: AxMCPClientEvent[] = [];
  client.subscribeEvents((event) => events.push(event));
  return {
    events,
    of<T extends AxMCPClientEvent['type']>(type: T): Extract<AxMCPClientEvent, { type: T }>[] {
      return events.filter((event): event is Extract<AxMCPClientEvent, { type: T }> => event.type === type);
    },
  };
}

function texts(result: { content: ReadonlyArray<{ type: string; [key: string]: unknown }> }): string {
  return result.content
    .filter((block) => block.type === 'text')
    .map((block) => String(block.text))
    .join('\n');
}

describe('AxMCPClient against the v1 server SDK (sessionful 2025-11-25)', () => {
  let server: LegacyV1Server;
  let client: AxMCPClient;

  beforeAll(async () => {
    server = await startLegacyV1Server({ retryInterval: 200 });
    client = httpClient(server.url, { era: 'legacy', timeoutMs: 10_000 });
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it('initializes: legacy era, 2025-11-25, the server identity and capabilities', async () => {
    await client.init();
    expect(client.getEra()).toBe('legacy');
    expect(client.protocolVersion).toBe('2025-11-25');
    expect(client.serverInfo).toMatchObject({ name: 'legacy-v1-peer', version: '1.0.0' });
    expect(client.serverCapabilities).toMatchObject({
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
    });
    expect(server.stats.methods.get('notifications/initialized')).toBeGreaterThanOrEqual(1);
  });

  it("era 'auto' classifies the v1 server as legacy", async () => {
    const auto = httpClient(server.url, { era: 'auto', timeoutMs: 10_000 });
    try {
      const before = server.stats.initializeCount;
      await auto.init();
      expect(auto.getEra()).toBe('legacy');
      expect(auto.protocolVersion).toBe('2025-11-25');
      expect(server.stats.initializeCount - before).toBe(1);
      expect((await auto.callTool('echo', { message: 'auto' })).content).toEqual([
        { type: 'text', text: 'auto' },
      ]);
    } finally {
      await auto.close();
    }
  });

  it('lists every list into the catalog', async () => {
    const catalog = await client.inspectCatalog();
    expect(catalog.era).toBe('legacy');
    expect(catalog.tools.map((tool) => tool.name)).toEqual([...LEGACY_V1_TOOL_NAMES]);
    expect(catalog.tools.find((tool) => tool.name === 'echo')?.inputSchema).toMatchObject({
      type: 'object',
      properties: { message: { type: 'string' } },
    });
    expect(catalog.prompts.map((prompt) => prompt.name)).toEqual(['greeting']);
    expect(catalog.prompts[0]?.arguments).toEqual([
      expect.objectContaining({ name: 'name', required: true }),
    ]);
    expect(catalog.resources.map((resource) => resource.uri).sort()).toEqual(
      [
        'res://blob/pixel',
        'res://item/0001',
        'res://item/0002',
        'res://item/0003',
        'res://text/hello',
      ].sort(),
    );
    expect(catalog.resourceTemplates.map((template) => template.uriTemplate)).toEqual(['res://item/{id}']);
    // The one-page list methods agree with the catalog.
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([...LEGACY_V1_TOOL_NAMES]);
    expect((await client.listPrompts()).prompts).toHaveLength(1);
    expect((await client.listResources()).resources).toHaveLength(5);
    expect((await client.listResourceTemplates()).resourceTemplates).toHaveLength(1);
  });

  it('returns every content block kind raw, with structuredContent and _meta', async () => {
    const result = await client.callTool('all_content');
    expect(result.content).toEqual(allContentResult().content);
    expect(result.content.map((block) => block.type)).toEqual([...ALL_CONTENT_STRUCTURED.kinds]);
    expect(result.structuredContent).toEqual(ALL_CONTENT_STRUCTURED);
    expect(result._meta).toEqual(ALL_CONTENT_META);
    expect(result.isError).toBeUndefined();
    const failed = await client.callTool('fail');
    expect(failed).toEqual({ content: [{ type: 'text', text: 'deliberate failure' }], isError: true });
  });

  it('gets a prompt with arguments, reads text, blob and templated resources, and completes', async () => {
    const prompt = await client.getPrompt('greeting', { name: 'Grace' });
    expect(prompt.messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'Say hello to Grace.' } },
    ]);
    expect((await client.readResource('res://text/hello')).contents).toEqual([
      { uri: 'res://text/hello', mimeType: 'text/plain', text: 'Hello, world' },
    ]);
    expect((await client.readResource('res://blob/pixel')).contents).toEqual([
      { uri: 'res://blob/pixel', mimeType: 'image/png', blob: TINY_PNG_BASE64 },
    ]);
    expect((await client.readResource('res://item/0002')).contents[0]).toMatchObject({ text: 'Item 0002' });
    const names = await client.complete(
      { type: 'ref/prompt', name: 'greeting' },
      { name: 'name', value: 'A' },
    );
    expect(names.completion.values).toEqual(GREETING_NAMES.filter((name) => name.startsWith('A')));
    const ids = await client.complete(
      { type: 'ref/resource', uri: 'res://item/{id}' },
      { name: 'id', value: '000' },
    );
    expect(ids.completion.values).toEqual(['0001', '0002', '0003']);
  });

  it('an unknown resource is an AxMCPProtocolError with rpcCode -32002 and the server data', async () => {
    const error = await client.readResource('res://item/9999').then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(AxMCPProtocolError);
    expect(error).toMatchObject({
      code: 'protocol_error',
      rpcCode: RPC.resourceNotFound,
      data: { uri: 'res://item/9999' },
      namespace: 'test',
      endpoint: server.url,
    });
    // Protocol errors are answers, not session failures: the session is still the same.
    expect((await client.readResource('res://item/0001')).contents[0]).toMatchObject({ text: 'Item 0001' });
  });

  it('reports progress, and progress extends the deadline', async () => {
    const seen: Array<{ progress: number; total?: number; message?: string }> = [];
    const result = await client.callTool(
      'slow',
      { steps: 4, delayMs: 150 },
      { timeoutMs: 400, onProgress: (progress) => seen.push(progress) },
    );
    expect(result.content).toEqual([{ type: 'text', text: 'completed 4 steps' }]);
    expect(seen.map((progress) => progress.progress)).toEqual([1, 2, 3, 4]);
    expect(seen[3]).toMatchObject({ total: 4, message: 'step 4/4' });
  });

  it('cancels a running call: a typed abort, and the server hears notifications/cancelled', async () => {
    const cancelled = server.stats.cancellations.length;
    const stopped = server.stats.cancelledToolCalls;
    const controller = new AbortController();
    const call = client.callTool(
      'slow',
      { steps: 50, delayMs: 100 },
      { signal: controller.signal, onProgress: () => controller.abort() },
    );
    const error = await call.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(AxMCPTimeoutError);
    expect(error).toMatchObject({ code: 'aborted' });
    await eventually(() => server.stats.cancellations.length > cancelled, 3_000, 'notifications/cancelled');
    expect(server.stats.cancellations.at(-1)).toMatchObject({ requestId: expect.any(Number) });
    await eventually(() => server.stats.cancelledToolCalls > stopped, 3_000, 'the tool to stop');
  });

  it('subscribes, receives resources/updated on the standalone stream, and unsubscribes on close', async () => {
    const subscriber = httpClient(server.url, { era: 'legacy', timeoutMs: 10_000 });
    const recorded = recordEvents(subscriber);
    try {
      const listening = subscriber.startListening();
      await listening.ready;
      await subscriber.subscribeResource('res://text/hello');
      expect(subscriber.subscriptions).toEqual([{ uri: 'res://text/hello', owners: ['manual'] }]);
      expect(await server.emitResourceUpdated('res://text/hello')).toBe(1);
      await eventually(() => recorded.of('resource_updated').length === 1, 5_000, 'resources/updated');
      expect(recorded.of('resource_updated')[0]).toMatchObject({
        namespace: 'test',
        uri: 'res://text/hello',
      });
    } finally {
      const unsubscribes = server.stats.methods.get('resources/unsubscribe') ?? 0;
      await subscriber.close();
      expect((server.stats.methods.get('resources/unsubscribe') ?? 0) - unsubscribes).toBe(1);
    }
  });

  it('refreshes the catalog after tools/list_changed', async () => {
    const watcher = httpClient(server.url, { era: 'legacy', timeoutMs: 10_000 });
    const recorded = recordEvents(watcher);
    try {
      await watcher.inspectCatalog();
      const listening = watcher.startListening();
      await listening.ready;
      const lists = server.stats.methods.get('tools/list') ?? 0;
      const revision = watcher.catalogRevision;
      await server.emitListChanged('tools');
      await eventually(() => recorded.of('catalog_changed').length > 0, 5_000, 'catalog_changed');
      expect(recorded.of('catalog_changed')[0]?.kinds).toEqual(['tools']);
      expect(watcher.catalogRevision).toBeGreaterThan(revision);
      expect(server.stats.methods.get('tools/list') ?? 0).toBeGreaterThan(lists);
    } finally {
      await watcher.close();
    }
  });

  it('refuses setLoggingLevel with AxMCPUnsupportedError: the v1 peer has no logging capability', async () => {
    await expect(client.setLoggingLevel('debug')).rejects.toBeInstanceOf(AxMCPUnsupportedError);
    expect(server.stats.methods.get('logging/setLevel')).toBeUndefined();
  });
});

describe('AxMCPClient against @modelcontextprotocol/server-everything (Streamable HTTP)', () => {
  let server: EverythingServer;
  let client: AxMCPClient;
  const sampled: AxMCPCreateMessageParams[] = [];
  const elicited: AxMCPElicitParams[] = [];

  beforeAll(async () => {
    server = await startEverythingServer({ mode: 'streamableHttp' });
    client = httpClient(server.url, {
      era: 'legacy',
      timeoutMs: 15_000,
      sampling: (params) => {
        sampled.push(params);
        return {
          role: 'assistant',
          content: { type: 'text', text: 'sampled by the test' },
          model: 'test-model',
          stopReason: 'endTurn',
        };
      },
      elicitation: {
        form: (params) => {
          elicited.push(params);
          return { action: 'accept', content: { name: 'Ada Lovelace', check: true } };
        },
      },
      roots: [{ uri: 'file:///work/project', name: 'project' }],
    });
    // The server asks for roots and sends logs and updates on the standalone GET stream.
    const listening = client.startListening();
    await listening.ready;
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it('initializes: legacy era, identity, instructions and capabilities', async () => {
    await client.init();
    expect(client.getEra()).toBe('legacy');
    expect(client.protocolVersion).toBe('2025-11-25');
    expect(client.serverInfo).toMatchObject({ name: 'mcp-servers/everything', version: '2.0.0' });
    expect(client.instructions?.length).toBeGreaterThan(0);
    expect(client.serverCapabilities).toMatchObject({
      logging: {},
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
    });
  });

  it("era 'auto' classifies server-everything as legacy", async () => {
    const auto = httpClient(server.url, { era: 'auto', timeoutMs: 15_000 });
    try {
      await auto.init();
      expect(auto.getEra()).toBe('legacy');
      expect(auto.protocolVersion).toBe('2025-11-25');
      expect((await auto.callTool('get-sum', { a: 2, b: 40 })).content[0]).toMatchObject({
        type: 'text',
        text: expect.stringContaining('42'),
      });
    } finally {
      await auto.close();
    }
  });

  it('lists every list, including the tools registered for our capabilities', async () => {
    // Capability-dependent tools are registered after `initialized` and announced with
    // tools/list_changed; the catalog follows that notification without being asked to refresh.
    let names: string[] = [];
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline) {
      names = (await client.inspectCatalog()).tools.map((tool) => tool.name);
      if (names.includes('trigger-sampling-request')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(names).toEqual(
      expect.arrayContaining([
        'echo',
        'get-annotated-message',
        'get-resource-links',
        'get-resource-reference',
        'get-structured-content',
        'get-sum',
        'get-tiny-image',
        'gzip-file-as-resource',
        'toggle-simulated-logging',
        'toggle-subscriber-updates',
        'trigger-long-running-operation',
        'get-roots-list',
        'trigger-elicitation-request',
        'trigger-sampling-request',
      ]),
    );
    const catalog = await client.inspectCatalog();
    expect(catalog.prompts.map((prompt) => prompt.name).sort()).toEqual([
      'args-prompt',
      'completable-prompt',
      'resource-prompt',
      'simple-prompt',
    ]);
    expect(catalog.resources.map((resource) => resource.uri)).toContain(
      'demo://resource/static/document/features.md',
    );
    expect(catalog.resourceTemplates.map((template) => template.uriTemplate).sort()).toEqual([
      'demo://resource/dynamic/blob/{resourceId}',
      'demo://resource/dynamic/text/{resourceId}',
    ]);
    expect(catalog.tools.find((tool) => tool.name === 'echo')?.annotations).toMatchObject({
      readOnlyHint: true,
    });
  });

  it('returns image, annotated text, resource_link and embedded text/blob resources raw', async () => {
    const image = await client.callTool('get-tiny-image');
    expect(image.content.map((block) => block.type)).toEqual(['text', 'image', 'text']);
    const png = image.content[1] as { type: string; data: string; mimeType: string };
    expect(Object.keys(png).sort()).toEqual(['data', 'mimeType', 'type']);
    expect(png.mimeType).toBe('image/png');
    expect(Buffer.from(png.data, 'base64').subarray(0, 8)).toEqual(
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    );

    const annotated = await client.callTool('get-annotated-message', {
      messageType: 'error',
      includeImage: true,
    });
    expect(annotated.content).toEqual([
      {
        type: 'text',
        text: 'Error: Operation failed',
        annotations: { priority: 1, audience: ['user', 'assistant'] },
      },
      {
        type: 'image',
        data: png.data,
        mimeType: 'image/png',
        annotations: { priority: 0.5, audience: ['user'] },
      },
    ]);

    const links = await client.callTool('get-resource-links', { count: 2 });
    expect(links.content.slice(1)).toEqual([
      {
        type: 'resource_link',
        uri: 'demo://resource/dynamic/blob/1',
        name: 'Blob Resource 1',
        description: 'Resource 1: plaintext resource',
        mimeType: 'text/plain',
      },
      {
        type: 'resource_link',
        uri: 'demo://resource/dynamic/text/2',
        name: 'Text Resource 2',
        description: 'Resource 2: plaintext resource',
        mimeType: 'text/plain',
      },
    ]);

    const blob = await client.callTool('get-resource-reference', { resourceType: 'Blob', resourceId: 4 });
    const embedded = blob.content.find((block) => block.type === 'resource') as {
      resource: { uri: string; mimeType: string; blob: string };
    };
    expect(embedded.resource).toMatchObject({
      uri: 'demo://resource/dynamic/blob/4',
      mimeType: 'text/plain',
    });
    expect(Buffer.from(embedded.resource.blob, 'base64').toString('utf8')).toMatch(
      /^Resource 4: This is a base64 blob/,
    );
    const text = await client.callTool('get-resource-reference', { resourceType: 'Text', resourceId: 5 });
    expect(text.content.find((block) => block.type === 'resource')).toMatchObject({
      resource: { uri: 'demo://resource/dynamic/text/5', text: expect.stringMatching(/^Resource 5: /) },
    });

    const structured = await client.callTool('get-structured-content', { location: 'Chicago' });
    expect(structured.structuredContent).toEqual({
      temperature: 36,
      conditions: 'Light rain / drizzle',
      humidity: 82,
    });
    expect(JSON.parse(texts(structured))).toEqual(structured.structuredContent);
  });

  it('gets prompts with arguments and an embedded resource', async () => {
    const simple = await client.getPrompt('simple-prompt');
    expect(simple.messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'This is a simple prompt without arguments.' } },
    ]);
    const args = await client.getPrompt('args-prompt', { city: 'Paris', state: 'Texas' });
    expect(args.messages[0]?.content).toEqual({ type: 'text', text: "What's weather in Paris, Texas?" });
    const resource = await client.getPrompt('resource-prompt', { resourceType: 'Blob', resourceId: '3' });
    expect(resource.messages[1]?.content).toMatchObject({
      type: 'resource',
      resource: { uri: 'demo://resource/dynamic/blob/3', blob: expect.any(String) },
    });
  });

  it('reads text and blob resources', async () => {
    const doc = await client.readResource('demo://resource/static/document/features.md');
    expect(doc.contents[0]).toMatchObject({
      uri: 'demo://resource/static/document/features.md',
      mimeType: 'text/markdown',
      text: expect.stringContaining('# Everything Server - Features'),
    });
    const text = await client.readResource('demo://resource/dynamic/text/7');
    expect(text.contents[0]).toMatchObject({
      mimeType: 'text/plain',
      text: expect.stringMatching(/^Resource 7: /),
    });
    const blob = await client.readResource('demo://resource/dynamic/blob/8');
    const contents = blob.contents[0] as { blob: string };
    expect(Buffer.from(contents.blob, 'base64').toString('utf8')).toMatch(
      /^Resource 8: This is a base64 blob/,
    );
  });

  it('completes prompt arguments (with context) and template variables', async () => {
    const departments = await client.complete(
      { type: 'ref/prompt', name: 'completable-prompt' },
      { name: 'department', value: 'S' },
    );
    expect(departments.completion.values.sort()).toEqual(['Sales', 'Support']);
    const leads = await client.complete(
      { type: 'ref/prompt', name: 'completable-prompt' },
      { name: 'name', value: '' },
      { arguments: { department: 'Engineering' } },
    );
    expect(leads.completion.values).toEqual(['Alice', 'Bob', 'Charlie']);
    const ids = await client.complete(
      { type: 'ref/resource', uri: 'demo://resource/dynamic/text/{resourceId}' },
      { name: 'resourceId', value: '12' },
    );
    expect(ids.completion.values).toEqual(['12']);
  });

  it('reports progress of the long-running operation, and progress extends the deadline', async () => {
    const seen: Array<{ progress: number; total?: number }> = [];
    const result = await client.callTool(
      'trigger-long-running-operation',
      { duration: 1.2, steps: 4 },
      { timeoutMs: 800, onProgress: (progress) => seen.push(progress) },
    );
    expect(texts(result)).toContain('Long running operation completed');
    expect(seen.map((progress) => [progress.progress, progress.total])).toEqual([
      [1, 4],
      [2, 4],
      [3, 4],
      [4, 4],
    ]);
  });

  it('answers a sampling request raised by a tool', async () => {
    const before = sampled.length;
    const result = await client.callTool('trigger-sampling-request', { prompt: 'two words', maxTokens: 17 });
    expect(sampled.length - before).toBe(1);
    expect(sampled.at(-1)).toMatchObject({
      maxTokens: 17,
      systemPrompt: 'You are a helpful test server.',
      messages: [
        {
          role: 'user',
          content: { type: 'text', text: 'Resource trigger-sampling-request context: two words' },
        },
      ],
    });
    const echoed = JSON.parse(texts(result).replace(/^LLM sampling result: \n/, ''));
    expect(echoed).toMatchObject({
      role: 'assistant',
      model: 'test-model',
      content: { type: 'text', text: 'sampled by the test' },
    });
  });

  it('answers a form elicitation raised by a tool, filling schema defaults', async () => {
    const before = elicited.length;
    const result = await client.callTool('trigger-elicitation-request');
    expect(elicited.length - before).toBe(1);
    expect(elicited.at(-1)).toMatchObject({
      message: 'Please provide inputs for the following fields:',
      requestedSchema: { type: 'object', required: ['name'] },
    });
    const output = texts(result);
    expect(output).toContain('- Name: Ada Lovelace');
    expect(output).toContain('- Agreed to terms: true');
    // Not given by the handler: filled from the schema defaults (applyDefaults).
    expect(output).toContain('- Favorite Integer: 42');
    expect(output).toContain('- Favorite Number: 3.14');
  });

  it('answers roots/list', async () => {
    const result = await client.callTool('get-roots-list');
    expect(texts(result)).toContain('Current MCP Roots (1 total)');
    expect(texts(result)).toContain('URI: file:///work/project');
  });

  it('honours setLoggingLevel and receives log messages on the standalone stream', async () => {
    const messages: Array<{ level: string; data: unknown }> = [];
    const logged = httpClient(server.url, {
      era: 'legacy',
      timeoutMs: 15_000,
      onLoggingMessage: (message) => messages.push(message),
    });
    const recorded = recordEvents(logged);
    const said = (fragment: string) => messages.filter((message) => String(message.data).includes(fragment));
    try {
      const listening = logged.startListening();
      await listening.ready;
      // The server logs every subscribe at level info: filtered at warning, delivered at info.
      await logged.setLoggingLevel('warning');
      await logged.subscribeResource('demo://resource/dynamic/text/101');
      await logged.setLoggingLevel('info');
      await logged.subscribeResource('demo://resource/dynamic/text/102');
      await eventually(() => said('text/102').length === 1, 4_000, 'the info log of the second subscribe');
      // Both went out on the same stream in order: the first one would have arrived already.
      expect(said('text/101')).toEqual([]);
      expect(said('text/102')[0]?.level).toBe('info');
      expect(recorded.of('logging').map((event) => event.message)).toEqual(messages);

      // Simulated logging: one message at once (random level, all pass at debug), then every 5 s.
      await logged.setLoggingLevel('debug');
      const started = await logged.callTool('toggle-simulated-logging');
      expect(texts(started)).toContain('Started simulated');
      await eventually(() => said('-level').length + said('level-').length >= 1, 4_000, 'a simulated log');
      const stopped = await logged.callTool('toggle-simulated-logging');
      expect(texts(stopped)).toContain('Stopped simulated');
    } finally {
      await logged.close();
    }
  });

  it('subscribes and receives resources/updated (toggle-subscriber-updates)', async () => {
    const uri = 'demo://resource/dynamic/text/1';
    const recorded = recordEvents(client);
    await client.subscribeResource(uri);
    try {
      const started = await client.callTool('toggle-subscriber-updates');
      expect(texts(started)).toContain('Started simulated resource updated');
      // The first update goes out at once; later ones every 5 s.
      await eventually(() => recorded.of('resource_updated').length >= 1, 4_000, 'resources/updated');
      expect(recorded.of('resource_updated')[0]).toMatchObject({ namespace: 'test', uri });
      const stopped = await client.callTool('toggle-subscriber-updates');
      expect(texts(stopped)).toContain('Stopped simulated resource updates');
    } finally {
      await client.unsubscribeResource(uri);
    }
    expect(client.subscriptions).toEqual([]);
  });

  it('follows resources/list_changed after gzip-file-as-resource registers a session resource', async () => {
    const recorded = recordEvents(client);
    const name = `peer-test-${process.pid}.txt.gz`;
    const original = 'hello from the ax-mcp peer test\n'.repeat(8);
    const revision = client.catalogRevision;
    const result = await client.callTool('gzip-file-as-resource', {
      name,
      data: `data:text/plain;base64,${Buffer.from(original).toString('base64')}`,
    });
    const uri = `demo://resource/session/${name}`;
    expect(result.content).toEqual([{ type: 'resource_link', uri, name, mimeType: 'application/gzip' }]);
    await eventually(
      () => recorded.of('catalog_changed').some((event) => event.kinds.includes('resources')),
      5_000,
      'catalog_changed for resources',
    );
    expect(client.catalogRevision).toBeGreaterThan(revision);
    const catalog = await client.inspectCatalog();
    expect(catalog.resources.map((resource) => resource.uri)).toContain(uri);
    const read = await client.readResource(uri);
    const contents = read.contents[0] as { blob: string; mimeType: string };
    expect(contents.mimeType).toBe('application/gzip');
    expect(gunzipSync(Buffer.from(contents.blob, 'base64')).toString('utf8')).toBe(original);
  });

  it('cancels a long-running call with a typed abort; the client stays usable', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const error = await client
      .callTool(
        'trigger-long-running-operation',
        { duration: 20, steps: 20 },
        { signal: controller.signal, onProgress: () => controller.abort() },
      )
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    expect(error).toBeInstanceOf(AxMCPTimeoutError);
    expect(error).toMatchObject({ code: 'aborted' });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await client.callTool('echo', { message: 'still here' })).content).toEqual([
      { type: 'text', text: 'Echo: still here' },
    ]);
  });
});
