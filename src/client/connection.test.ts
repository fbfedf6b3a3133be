import { describe, expect, it } from 'vitest';
import { AxMCPProtocolError, AxMCPTransportError } from '../protocol/errors.js';
import { LEGACY_INITIALIZE, scriptedConnection } from './scripted-transport.fixture.js';

describe('Connection', () => {
  it('shares one handshake among concurrent callers and adopts the identity once', async () => {
    const rig = scriptedConnection({ initialize: () => LEGACY_INITIALIZE({ logging: {} }) });
    await Promise.all([rig.connection.init(), rig.connection.init(), rig.connection.wireReady()]);
    expect(rig.methods().filter((method) => method === 'initialize')).toHaveLength(1);
    expect(rig.connection.identity?.serverInfo?.name).toBe('scripted');
    expect(rig.connection.wire?.era).toBe('legacy');
    expect(rig.hookCalls).toEqual(['adopted 2025-11-25']);
  });

  it('forgets a failed handshake so the next call tries again, with the error attributed', async () => {
    let attempts = 0;
    const rig = scriptedConnection({
      initialize: () => {
        attempts++;
        return attempts === 1 ? { error: { code: -32603, message: 'not yet' } } : LEGACY_INITIALIZE();
      },
    });
    await expect(rig.connection.init()).rejects.toMatchObject({
      namespace: 'ns',
      endpoint: 'scripted://test',
    });
    await rig.connection.init();
    expect(attempts).toBe(2);
  });

  it('sends the asked log level after the handshake and again with every later setLogLevel', async () => {
    const rig = scriptedConnection(
      { initialize: () => LEGACY_INITIALIZE({ logging: {} }), 'logging/setLevel': () => ({}) },
      { logLevel: 'warning' },
    );
    await rig.connection.init();
    await rig.connection.setLogLevel('error', {});
    expect(rig.sent.filter((m) => m.method === 'logging/setLevel').map((m) => m.params?.level)).toEqual([
      'warning',
      'error',
    ]);
  });

  it('asks for the stream when the era sends server requests on it and a handler could answer', async () => {
    const rig = scriptedConnection(
      { initialize: () => LEGACY_INITIALIZE() },
      { roots: [{ uri: 'file:///work', name: 'work' }] },
    );
    await rig.connection.init();
    expect(rig.hookCalls).toContain('serverRequestsNeedStream');
    const plain = scriptedConnection({ initialize: () => LEGACY_INITIALIZE() });
    await plain.connection.init();
    expect(plain.hookCalls).not.toContain('serverRequestsNeedStream');
  });

  it('refuses calls once closing began, and closing begins once', async () => {
    const rig = scriptedConnection({ initialize: () => LEGACY_INITIALIZE() });
    await expect(rig.connection.onWire(async () => 1)).rejects.toMatchObject({ code: 'closed' });
    await rig.connection.init();
    expect(rig.connection.beginClose()).toBe(true);
    expect(rig.connection.beginClose()).toBe(false);
    expect(rig.connection.lifetime.signal.aborted).toBe(true);
    expect(() => rig.connection.init()).toThrow(expect.objectContaining({ code: 'closed' }));
  });

  it('without onError, tells the first error of each kind through onWarning, and only the first', () => {
    const warnings: string[] = [];
    const rig = scriptedConnection(
      {},
      { onWarning: (message) => warnings.push(message), onError: undefined },
    );
    const restore = () => new AxMCPTransportError('closed', 'restoring res://a failed');
    rig.connection.report(restore());
    rig.connection.report(restore());
    rig.connection.report(new AxMCPProtocolError(-32602, 'Server sent an invalid progress notification'));
    rig.connection.report(new TypeError('a listener broke'));
    expect(warnings).toHaveLength(3);
    expect(warnings[0]).toContain('restoring res://a failed [AxMCPTransportError closed]');
    expect(warnings[1]).toContain('[AxMCPProtocolError protocol_error -32602]');
    expect(warnings[2]).toContain('a listener broke [TypeError]');
    const heard: unknown[] = [];
    const listening = scriptedConnection(
      {},
      { onWarning: (message) => warnings.push(message), onError: (e) => heard.push(e) },
    );
    listening.connection.report(restore());
    expect(heard).toHaveLength(1);
    expect(warnings).toHaveLength(3);
  });

  it('reports a failing onError sink without throwing', () => {
    const rig = scriptedConnection(
      {},
      {
        onError: () => {
          throw new Error('sink broke');
        },
      },
    );
    expect(() => rig.connection.report(new Error('x'))).not.toThrow();
  });
});
