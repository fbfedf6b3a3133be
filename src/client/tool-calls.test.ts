import { describe, expect, it } from 'vitest';
import type { AxMCPTool } from '../protocol/messages.js';
import { CallSlots } from './call-slots.js';
import { DraftTaskMethods } from './draft-tasks.js';
import type { AxMCPClientOptions } from './options.js';
import { LEGACY_INITIALIZE, scriptedCatalog, scriptedConnection } from './scripted-transport.fixture.js';
import { ToolCalls } from './tool-calls.js';

const ECHO: AxMCPTool = {
  name: 'echo',
  inputSchema: { type: 'object' },
  outputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  annotations: { destructiveHint: false },
};

function rigWith(options: Partial<AxMCPClientOptions> = {}, structured: unknown = { text: 'hi' }) {
  let listed = 0;
  const rig = scriptedConnection(
    {
      initialize: () => LEGACY_INITIALIZE({ tools: {}, tasks: { requests: { tools: { call: {} } } } }),
      'tools/list': () => {
        listed++;
        return { tools: [ECHO] };
      },
      'tools/call': () => ({ content: [{ type: 'text', text: 'hi' }], structuredContent: structured }),
    },
    options,
  );
  const catalog = scriptedCatalog(rig.connection);
  rig.connection.setHooks({
    adopted: (identity) => catalog.reset(identity.capabilities),
    replaced: () => {},
    restored: async () => {},
    serverRequestsNeedStream: () => {},
    headerMismatch: async () => {},
  });
  const calls = new ToolCalls({
    connection: rig.connection,
    catalog,
    taskWakers: rig.taskWakers,
    slots: undefined,
  });
  return { ...rig, calls, listed: () => listed };
}

describe('ToolCalls', () => {
  it('calls a catalog tool and returns the raw result', async () => {
    const rig = rigWith();
    const result = await rig.calls.call('echo', { text: 'hi' }, {});
    expect(result.structuredContent).toEqual({ text: 'hi' });
    expect(rig.methods()).toEqual(['initialize', 'tools/list', 'tools/call']);
  });

  it('asks the guard with a frozen copy of the tool, and sends nothing when it denies', async () => {
    const asked: unknown[] = [];
    const rig = rigWith({
      authorizeToolCall: (request) => {
        asked.push(request);
        expect(Object.isFrozen(request.tool)).toBe(true);
        return false;
      },
    });
    await expect(rig.calls.call('echo', {}, {})).rejects.toMatchObject({ code: 'authorization_denied' });
    expect(asked).toHaveLength(1);
    expect(rig.methods()).not.toContain('tools/call');
  });

  it('looks again once for an unknown tool, then refuses it typed', async () => {
    const rig = rigWith();
    await expect(rig.calls.call('missing', {}, {})).rejects.toMatchObject({ code: 'invalid_argument' });
    expect(rig.listed()).toBe(2);
    expect(rig.methods()).not.toContain('tools/call');
  });

  it('checks structuredContent against the outputSchema unless told not to', async () => {
    await expect(rigWith({}, { text: 7 }).calls.call('echo', {}, {})).rejects.toMatchObject({
      code: 'output_schema_mismatch',
    });
    const unchecked = await rigWith({ validateToolOutput: false }, { text: 7 }).calls.call('echo', {}, {});
    expect(unchecked.structuredContent).toEqual({ text: 7 });
  });
});

describe('DraftTaskMethods', () => {
  it('refuses a draft task call that the server answered directly', async () => {
    const rig = rigWith();
    const draft = new DraftTaskMethods(rig.connection, rig.calls);
    await expect(draft.callToolTask('echo', {}, {})).rejects.toMatchObject({ code: 'unsupported' });
    const call = rig.sent.find((message) => message.method === 'tools/call');
    expect(call?.params?.task).toEqual({});
  });
});

describe('DraftTaskMethods on a 2026-07-28 endpoint', () => {
  it('refuses every draft method with unsupported, sending nothing for it', async () => {
    const rig = scriptedConnection(
      {
        'server/discover': () => ({
          supportedVersions: ['2026-07-28'],
          capabilities: {},
          resultType: 'complete',
        }),
      },
      { era: 'modern' },
    );
    const catalog = scriptedCatalog(rig.connection);
    const draft = new DraftTaskMethods(
      rig.connection,
      new ToolCalls({ connection: rig.connection, catalog, taskWakers: rig.taskWakers, slots: undefined }),
    );
    await expect(draft.list(undefined)).rejects.toMatchObject({ code: 'unsupported' });
    await expect(draft.result('t1')).rejects.toMatchObject({ code: 'unsupported' });
    await expect(draft.callToolTask('echo', {}, {})).rejects.toMatchObject({ code: 'unsupported' });
    expect(rig.methods().every((method) => method === 'server/discover')).toBe(true);
  });
});

describe('ToolCalls with maxConcurrency', () => {
  it('a call aborted while it waits for a slot fails typed (aborted, attributed), and never reaches the server', async () => {
    const rig = scriptedConnection(
      {
        initialize: () => LEGACY_INITIALIZE({ tools: {} }),
        'tools/list': () => ({ tools: [ECHO] }),
        'tools/call': () => ({ content: [], structuredContent: { text: 'hi' } }),
      },
      { maxConcurrency: 1 },
    );
    const catalog = scriptedCatalog(rig.connection);
    rig.connection.setHooks({
      adopted: (identity) => catalog.reset(identity.capabilities),
      replaced: () => {},
      restored: async () => {},
      serverRequestsNeedStream: () => {},
      headerMismatch: async () => {},
    });
    const slots = new CallSlots(1);
    const calls = new ToolCalls({ connection: rig.connection, catalog, taskWakers: rig.taskWakers, slots });
    const release = await slots.acquire();
    const controller = new AbortController();
    const waiting = calls.call('echo', {}, { signal: controller.signal });
    controller.abort();
    await expect(waiting).rejects.toMatchObject({
      code: 'aborted',
      namespace: 'ns',
      endpoint: 'scripted://test',
    });
    release();
    expect(rig.methods()).not.toContain('tools/call');
  });
});
