/**
 * Each era's wire on its own, against a scripted transport: what it sends for the operations
 * the facade leaves to it, and what it refuses.
 */
import { describe, expect, it } from 'vitest';
import { InFlightRequests } from './in-flight.js';
import { LegacyWire } from './legacy-wire.js';
import { ModernWire } from './modern-wire.js';
import { type Script, scriptedTransport } from './scripted-transport.fixture.js';
import { TaskWakers } from './tasks/task.js';
import type { Wire } from './wire.js';

const taskDeps = {
  fulfil: async () => ({}),
  wakers: new TaskWakers(),
  namespace: 'ns',
};

const LEGACY: Script = {
  initialize: () => ({
    protocolVersion: '2025-11-25',
    capabilities: { logging: {}, resources: { subscribe: true } },
    serverInfo: { name: 's', version: '1' },
  }),
  ping: () => ({}),
  'logging/setLevel': () => ({}),
  'resources/subscribe': () => ({}),
  'resources/unsubscribe': () => ({}),
};

const MODERN: Script = {
  'server/discover': () => ({
    supportedVersions: ['2026-07-28'],
    capabilities: { logging: {} },
    resultType: 'complete',
  }),
  'tools/list': () => ({ tools: [], resultType: 'complete' }),
};

function legacy(script: Script = LEGACY) {
  const rig = scriptedTransport(script);
  const wire: Wire = new LegacyWire({
    transport: rig.transport,
    requests: new InFlightRequests(rig.transport, 5_000, () => {}),
    clientInfo: { name: 'c', version: '1' },
    capabilities: () => ({}),
    sessionRecovery: 'safe',
    onReinitialized: async () => {},
    taskDeps,
  });
  return { ...rig, wire };
}

function modern(warnings: string[] = []) {
  const rig = scriptedTransport(MODERN);
  const wire: Wire = new ModernWire({
    transport: rig.transport,
    requests: new InFlightRequests(rig.transport, 5_000, () => {}),
    clientInfo: { name: 'c', version: '1' },
    capabilities: () => ({}),
    logLevel: undefined,
    fulfil: async () => ({}),
    namespace: 'ns',
    maxInputRounds: 5,
    onWarning: (message) => warnings.push(message),
    onHeaderMismatch: async () => {},
    taskDeps,
  });
  return { ...rig, wire };
}

describe('LegacyWire (2025-11-25)', () => {
  it('pings, sets the level and subscribes by request; has no discover, no read cache, no draft-less tasks', async () => {
    const { wire, methods } = legacy();
    await wire.connect();
    await wire.ping({});
    await wire.setLogLevel('warning', {});
    await wire.subscribe('res://a', false);
    await wire.unsubscribe('res://a');
    expect(methods()).toEqual([
      'initialize',
      'ping',
      'logging/setLevel',
      'resources/subscribe',
      'resources/unsubscribe',
    ]);
    await expect(wire.discover()).rejects.toMatchObject({ code: 'unsupported' });
    expect(wire.cachesReads).toBe(false);
    expect(wire.serverRequestsOnStream).toBe(true);
    expect(wire.tasks.draft).toBeDefined();
    expect(
      wire.tasks.extensionNegotiated({ extensions: { 'io.modelcontextprotocol/tasks': {} } }, true),
    ).toBe(false);
    const tools = [{ name: 't', inputSchema: { type: 'object' as const } }];
    expect(wire.admitTools(tools, 1)).toBe(tools);
  });

  it('says the roots changed with the notification', async () => {
    const { wire, notified } = legacy();
    await wire.notifyRootsChanged();
    expect(notified.map((message) => message.method)).toEqual(['notifications/roots/list_changed']);
  });
});

describe('ModernWire (2026-07-28)', () => {
  it('pings with server/discover, carries the level in _meta, subscribes by the stream filter only', async () => {
    const { wire, sent, methods } = modern();
    await wire.connect();
    await wire.ping({});
    await wire.setLogLevel('error', {});
    await wire.subscribe('res://a', false);
    await wire.unsubscribe('res://a');
    await wire.notifyRootsChanged();
    await wire.request({ method: 'tools/list', idempotent: true });
    expect(methods()).toEqual(['server/discover', 'server/discover', 'tools/list']);
    const meta = sent.at(-1)?.params?._meta as Record<string, unknown>;
    expect(meta['io.modelcontextprotocol/logLevel']).toBe('error');
    expect(wire.cachesReads).toBe(true);
    expect(wire.serverRequestsOnStream).toBe(false);
    expect(wire.tasks.draft).toBeUndefined();
    expect(
      wire.tasks.extensionNegotiated({ extensions: { 'io.modelcontextprotocol/tasks': {} } }, true),
    ).toBe(true);
    expect(
      wire.tasks.extensionNegotiated({ extensions: { 'io.modelcontextprotocol/tasks': {} } }, false),
    ).toBe(false);
  });

  it('admits only tools whose x-mcp-header annotations are valid, warning once per revision', () => {
    const warnings: string[] = [];
    const { wire } = modern(warnings);
    const good = {
      name: 'good',
      inputSchema: {
        type: 'object' as const,
        properties: { scope: { type: 'string', 'x-mcp-header': 'Scope' } },
      },
    };
    const bad = {
      name: 'bad',
      inputSchema: { type: 'object' as const, properties: { n: { type: 'number', 'x-mcp-header': 'N' } } },
    };
    expect(wire.admitTools([good, bad], 3).map((tool) => tool.name)).toEqual(['good']);
    expect(wire.droppedToolReason('bad')).toBeDefined();
    expect(wire.droppedToolReason('good')).toBeUndefined();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('revision 3');
  });
});
