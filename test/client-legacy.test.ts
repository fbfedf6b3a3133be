import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AxMCPAuthorizationDeniedError,
  type AxMCPClient,
  type AxMCPClientEvent,
  AxMCPError,
  AxMCPTimeoutError,
} from '../src/index.js';
import { eventually, httpClient } from './helpers/clients.js';
import {
  ALL_CONTENT_META,
  ALL_CONTENT_STRUCTURED,
  EMBEDDED_BLOB_BASE64,
  TINY_PNG_BASE64,
} from './servers/content.js';
import { type LegacyV2Server, LOG_TOOL_LEVELS, startLegacyV2Server } from './servers/legacy-v2.js';

describe('AxMCPClient against the official v2 server SDK (sessionful 2025-11-25)', () => {
  let server: LegacyV2Server;
  let client: AxMCPClient;

  beforeAll(async () => {
    server = await startLegacyV2Server({ toolCount: 1000, pageSize: 50 });
    client = httpClient(server.url, {
      era: 'legacy',
      sampling: (params) => ({
        role: 'assistant',
        content: { type: 'text', text: `sampled: ${JSON.stringify(params.messages[0]?.content)}` },
        model: 'test-model',
      }),
      elicitation: {
        form: (params) => ({
          action: 'accept',
          content: params.message === 'Who are you?' ? { name: 'Grace', age: 85 } : {},
        }),
      },
      roots: [{ uri: 'file:///work', name: 'work' }],
    });
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it('initializes lazily once, even for concurrent first calls', async () => {
    const fresh = httpClient(server.url, { era: 'legacy' });
    const before = server.stats.initializeCount;
    await Promise.all([fresh.ping(), fresh.ping(), fresh.inspectCatalog()]);
    expect(server.stats.initializeCount - before).toBe(1);
    expect(fresh.getEra()).toBe('legacy');
    expect(fresh.protocolVersion).toBe('2025-11-25');
    expect(fresh.serverInfo?.name).toBe('legacy-v2-peer');
    await fresh.close();
  });

  it('lists a 1,000-tool catalog across many pages into an isolated snapshot', async () => {
    const listsBefore = server.stats.methods.get('tools/list') ?? 0;
    const catalog = await client.inspectCatalog();
    expect(catalog.tools.length).toBe(1000 + 9);
    expect(catalog.tools.filter((tool) => tool.name.startsWith('bulk_'))).toHaveLength(1000);
    expect((server.stats.methods.get('tools/list') ?? 0) - listsBefore).toBeGreaterThanOrEqual(21);
    expect(catalog.prompts.map((prompt) => prompt.name).sort()).toEqual(['greeting', 'plain']);
    expect(catalog.resources.map((r) => r.uri)).toContain('res://text/hello');
    expect(catalog.resourceTemplates.map((t) => t.uriTemplate)).toEqual(['res://item/{id}']);
    catalog.tools.length = 0;
    (catalog.capabilities as Record<string, unknown>).tools = undefined;
    const again = await client.inspectCatalog();
    expect(again.tools.length).toBe(1009);
    expect(again.capabilities.tools).toBeDefined();
  });

  it('returns every content block kind raw', async () => {
    const result = await client.callTool('all_content');
    const kinds = result.content.map((block) => block.type);
    expect(kinds).toEqual(expect.arrayContaining(['text', 'image', 'audio', 'resource_link', 'resource']));
    const image = result.content.find((block) => block.type === 'image');
    expect(image).toMatchObject({ data: TINY_PNG_BASE64, mimeType: 'image/png' });
    const blob = result.content.find(
      (block) => block.type === 'resource' && 'blob' in (block.resource as Record<string, unknown>),
    );
    expect(blob).toMatchObject({ resource: { blob: EMBEDDED_BLOB_BASE64 } });
    expect(result.structuredContent).toEqual(ALL_CONTENT_STRUCTURED);
    expect(result._meta).toMatchObject(ALL_CONTENT_META);
    const failed = await client.callTool('fail');
    expect(failed.isError).toBe(true);
  });

  it('refuses a tool argument that looks like a misspelt declared one, before sending; other extra keys pass', async () => {
    const calls = () => server.stats.methods.get('tools/call') ?? 0;
    const before = calls();
    // The SDK server strips an undeclared key: `mesage` would have been dropped without a word.
    await expect(client.callTool('echo', { mesage: 'hi' })).rejects.toThrow(
      expect.objectContaining({
        code: 'invalid_argument',
        message: '"mesage" is not an argument of tool "echo" (it takes message): did you mean message?',
      }),
    );
    expect(calls()).toBe(before);
    const passed = await client.callTool('echo', { message: 'hi', traceTag: 'x' });
    expect(passed.content).toEqual([{ type: 'text', text: 'hi' }]);
  });

  it('refuses prompt arguments the prompt does not declare, or that are not strings, before sending', async () => {
    // The SDK server drops an undeclared argument without a word: `stlye` changed nothing, said nothing.
    await expect(client.getPrompt('greeting', { name: 'Ada', stlye: 'formal' })).rejects.toThrow(
      expect.objectContaining({
        code: 'invalid_argument',
        message:
          '"stlye" is not an argument of prompt "greeting" (it takes name, style): did you mean style?',
      }),
    );
    await expect(client.getPrompt('greeting', { name: 7 } as never)).rejects.toMatchObject({
      code: 'invalid_argument',
    });
    await expect(client.getPrompt('greeting', { style: 'formal' })).rejects.toThrow(
      'Prompt "greeting" needs the argument "name"',
    );
  });

  it('gets prompts, reads text and blob resources, and completes', async () => {
    const prompt = await client.getPrompt('greeting', { name: 'Ada', style: 'formal' });
    expect(prompt.messages[0]?.content).toMatchObject({ type: 'text', text: 'Say hello to Ada (formal).' });
    const text = await client.readResource('res://text/hello');
    expect(text.contents[0]).toMatchObject({ text: 'Hello, world' });
    const blob = await client.readResource('res://blob/pixel');
    expect(blob.contents[0]).toMatchObject({ blob: TINY_PNG_BASE64 });
    const names = await client.complete(
      { type: 'ref/prompt', name: 'greeting' },
      { name: 'name', value: 'Al' },
    );
    expect(names.completion.values.sort()).toEqual(['Alan', 'Alonzo']);
    await expect(client.readResource('res://item/nope')).rejects.toBeInstanceOf(AxMCPError);
  });

  it('delivers log messages filtered by level', async () => {
    const levels: string[] = [];
    const logged = httpClient(server.url, {
      era: 'legacy',
      logLevel: 'warning',
      onLoggingMessage: (message) => levels.push(message.level),
    });
    await logged.callTool('log');
    await eventually(() => levels.length >= 3, 2000, 'log messages');
    expect(levels).toEqual(
      LOG_TOOL_LEVELS.filter((level) => ['warning', 'error', 'critical'].includes(level)),
    );
    await logged.close();
  });

  it('reports progress and lets progress extend the deadline', async () => {
    const seen: number[] = [];
    const result = await client.callTool(
      'slow',
      { steps: 5, delayMs: 150 },
      { timeoutMs: 400, onProgress: (progress) => seen.push(progress.progress) },
    );
    expect(result.isError).toBeFalsy();
    expect(seen.length).toBeGreaterThanOrEqual(4);
    // Without progress extending it, 5 × 150 ms would blow a 400 ms deadline.
  });

  it('answers sampling, elicitation and roots requests from the server', async () => {
    const sampled = await client.callTool('sample', { prompt: 'hi' });
    expect(JSON.stringify(sampled.content)).toContain('sampled:');
    const elicited = await client.callTool('elicit');
    expect(JSON.stringify(elicited.content)).toContain('Grace');
    const defaults = await client.callTool('elicit_defaults');
    const answer = JSON.parse((defaults.content[0] as { text: string }).text);
    expect(answer.content).toMatchObject({ name: 'Ada', newsletter: true, color: 'green', count: 3 });
    const roots = await client.callTool('roots');
    expect(JSON.stringify(roots.content)).toContain('file:///work');
  });

  it('cancels a running call: the server hears notifications/cancelled', async () => {
    const controller = new AbortController();
    const call = client.callTool('slow', { steps: 50, delayMs: 100 }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 250);
    await expect(call).rejects.toMatchObject({ code: 'aborted' });
    await eventually(() => server.stats.cancellations.length > 0, 3000, 'notifications/cancelled');
    const timed = client.callTool('slow', { steps: 50, delayMs: 200 }, { timeoutMs: 100 });
    await expect(timed).rejects.toBeInstanceOf(AxMCPTimeoutError);
  });

  it('denies a tool call before anything reaches the transport', async () => {
    const guarded = httpClient(server.url, {
      era: 'legacy',
      authorizeToolCall: ({ tool, arguments: args }) => !(tool.name === 'echo' && args.message === 'rm -rf'),
    });
    await guarded.inspectCatalog();
    const calls = server.stats.toolCalls.length;
    await expect(guarded.callTool('echo', { message: 'rm -rf' })).rejects.toBeInstanceOf(
      AxMCPAuthorizationDeniedError,
    );
    expect(server.stats.toolCalls.length).toBe(calls);
    expect((await guarded.callTool('echo', { message: 'ok' })).content[0]).toMatchObject({ text: 'ok' });
    await guarded.close();
  });

  it('holds calls beyond maxConcurrency and grants them first-in first-out', async () => {
    const limited = httpClient(server.url, { era: 'legacy', maxConcurrency: 2 });
    await limited.inspectCatalog();
    const running = new Set<number>();
    const started: number[] = [];
    let peak = 0;
    await Promise.all(
      [0, 1, 2, 3, 4].map(async (i) => {
        await limited.callTool(
          'slow',
          { steps: 3, delayMs: 60 },
          {
            onProgress: () => {
              if (!started.includes(i)) started.push(i);
              running.add(i);
              peak = Math.max(peak, running.size);
            },
          },
        );
        running.delete(i);
      }),
    );
    expect(peak).toBe(2);
    expect(started.slice(0, 2).sort()).toEqual([0, 1]);
    expect(started[4]).toBe(4); // the last caller waited for a slot freed after the third started
    await limited.close();
  });

  it('refreshes the catalog on list_changed and bumps the revision', async () => {
    const events: AxMCPClientEvent[] = [];
    const watcher = httpClient(server.url, { era: 'legacy' });
    watcher.subscribeEvents((event) => events.push(event));
    await watcher.inspectCatalog();
    const listening = watcher.startListening();
    await listening.ready;
    const revision = watcher.catalogRevision;
    server.addTool('added_later', 'hello');
    await eventually(() => events.some((event) => event.type === 'catalog_changed'), 5000, 'catalog_changed');
    expect(watcher.catalogRevision).toBeGreaterThan(revision);
    expect((await watcher.inspectCatalog()).tools.map((tool) => tool.name)).toContain('added_later');
    await watcher.close();
  });

  it('subscribes, receives updates on the standalone stream, and unsubscribes on close', async () => {
    const updates: string[] = [];
    const subscriber = httpClient(server.url, { era: 'legacy' });
    subscriber.subscribeEvents((event) => {
      if (event.type === 'resource_updated') updates.push(event.uri);
    });
    const listening = subscriber.startListening();
    await listening.ready;
    await subscriber.subscribeResource('res://text/hello');
    await subscriber.acquireResourceSubscription('res://text/hello', 'second-owner');
    expect(server.stats.methods.get('resources/subscribe')).toBeGreaterThanOrEqual(1);
    expect(await server.emitResourceUpdated('res://text/hello')).toBeGreaterThanOrEqual(1);
    await eventually(() => updates.length === 1, 5000, 'resources/updated');
    const unsubscribes = server.stats.methods.get('resources/unsubscribe') ?? 0;
    await subscriber.close();
    expect((server.stats.methods.get('resources/unsubscribe') ?? 0) - unsubscribes).toBe(1);
  });

  it('survives a server restart: re-initializes, retries safe calls, never replays tools/call', async () => {
    const survivor = httpClient(server.url, { era: 'legacy' });
    await survivor.inspectCatalog();
    const initializes = server.stats.initializeCount;
    await server.restart();
    const catalog = await survivor.inspectCatalog({ refresh: true });
    expect(catalog.tools.length).toBeGreaterThan(0);
    expect(server.stats.initializeCount).toBe(initializes + 1);

    await server.restart();
    const echoes = server.stats.toolCalls.filter((name) => name === 'echo').length;
    await expect(survivor.callTool('echo', { message: 'once' })).rejects.toMatchObject({
      code: 'session_expired',
    });
    // Exactly one attempt reached the server (and was refused there for its dead session): no replay.
    expect(server.stats.toolCalls.filter((name) => name === 'echo').length).toBe(echoes + 1);
    // The session came back for the next call.
    expect((await survivor.callTool('echo', { message: 'after' })).content[0]).toMatchObject({
      text: 'after',
    });
    await survivor.close();
  });
});
