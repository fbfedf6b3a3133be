import { describe, expect, it, vi } from 'vitest';
import { AxMCPError, AxMCPTransportError } from '../protocol/errors.js';
import type { JSONRPCMessage, JSONRPCNotification, JSONRPCRequest } from '../protocol/jsonrpc.js';
import { AxMCPMessageChannel } from './message-channel.js';

function setup(send?: (message: JSONRPCMessage) => Promise<void> | void) {
  const sent: JSONRPCMessage[] = [];
  const reports: AxMCPError[] = [];
  const messages: (JSONRPCRequest | JSONRPCNotification)[] = [];
  const closes: (AxMCPError | undefined)[] = [];
  const channel = new AxMCPMessageChannel({
    endpoint: 'test://peer',
    send: send ?? ((message) => void sent.push(message)),
    onProtocolError: (error) => reports.push(error),
  });
  channel.setHandlers({
    onMessage: (message) => messages.push(message),
    onClose: (error) => closes.push(error),
  });
  return { channel, sent, reports, messages, closes };
}

const req = (id: string | number, method = 'tools/list'): JSONRPCRequest => ({ jsonrpc: '2.0', id, method });

async function rejection(promise: Promise<unknown>): Promise<AxMCPError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(AxMCPError);
    return error as AxMCPError;
  }
  throw new Error('expected a rejection');
}

describe('AxMCPMessageChannel', () => {
  it('sends the request and resolves with the response of the same id, out of order', async () => {
    const { channel, sent } = setup();
    const first = channel.request(req(1));
    const second = channel.request(req('b', 'ping'));
    expect(sent).toEqual([req(1), req('b', 'ping')]);
    expect(channel.pendingCount).toBe(2);
    channel.receiveText(JSON.stringify({ jsonrpc: '2.0', id: 'b', result: { pong: true } }));
    channel.receiveText(JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'nope' } }));
    await expect(second).resolves.toEqual({ jsonrpc: '2.0', id: 'b', result: { pong: true } });
    await expect(first).resolves.toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'nope' } });
    expect(channel.pendingCount).toBe(0);
  });

  it('keeps number and string ids apart', async () => {
    const { channel, reports } = setup();
    const pending = channel.request(req(7));
    channel.receive({ jsonrpc: '2.0', id: '7', result: {} });
    expect(reports).toHaveLength(1);
    expect(channel.pendingCount).toBe(1);
    channel.receive({ jsonrpc: '2.0', id: 7, result: { ok: 1 } });
    await expect(pending).resolves.toMatchObject({ result: { ok: 1 } });
  });

  it('rejects a duplicate in-flight id without sending it, and accepts the id again once settled', async () => {
    const { channel, sent } = setup();
    const first = channel.request(req(1));
    const error = await rejection(channel.request(req(1, 'ping')));
    expect(error.code).toBe('invalid_argument');
    expect(sent).toHaveLength(1);
    channel.receive({ jsonrpc: '2.0', id: 1, result: {} });
    await first;
    const again = channel.request(req(1));
    expect(sent).toHaveLength(2);
    channel.receive({ jsonrpc: '2.0', id: 1, result: { n: 2 } });
    await expect(again).resolves.toMatchObject({ result: { n: 2 } });
  });

  it('hands server requests and notifications to onMessage', () => {
    const { channel, messages, reports } = setup();
    channel.receiveText('{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"a":1}}');
    channel.receiveText('{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}');
    expect(messages).toEqual([
      { jsonrpc: '2.0', id: 's1', method: 'sampling/createMessage', params: { a: 1 } },
      { jsonrpc: '2.0', method: 'notifications/tools/list_changed' },
    ]);
    expect(reports).toEqual([]);
  });

  it('dispatches each element of a batch and reports only the bad ones', async () => {
    const { channel, messages, reports } = setup();
    const pending = channel.request(req(3));
    channel.receiveText(
      JSON.stringify([
        { jsonrpc: '2.0', method: 'notifications/progress' },
        { jsonrpc: '1.0', id: 9 },
        { jsonrpc: '2.0', id: 3, result: {} },
      ]),
    );
    await expect(pending).resolves.toMatchObject({ id: 3 });
    expect(messages).toHaveLength(1);
    expect(reports.map((r) => r.code)).toEqual(['invalid_message']);
    channel.receiveText('[]');
    expect(reports).toHaveLength(2);
  });

  it('reports and drops malformed input and unknown ids without throwing', async () => {
    const { channel, reports, messages } = setup();
    const pending = channel.request(req(1));
    expect(() => channel.receiveText('not json')).not.toThrow();
    channel.receiveText('{"jsonrpc":"2.0","id":1}');
    channel.receiveText('{"jsonrpc":"2.0","id":42,"result":{}}');
    channel.receiveText('{"jsonrpc":"2.0","method":"x","params":{"__proto__":{"polluted":true}}}');
    channel.receiveText('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}');
    channel.receive(5);
    expect(reports.map((r) => r.code)).toEqual([
      'invalid_message',
      'invalid_message',
      'invalid_message',
      'unsafe_key',
      'protocol_error',
      'invalid_message',
    ]);
    for (const report of reports) expect(report.endpoint).toBe('test://peer');
    expect(messages).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // Still usable.
    channel.receive({ jsonrpc: '2.0', id: 1, result: { fine: true } });
    await expect(pending).resolves.toMatchObject({ result: { fine: true } });
  });

  it('reports a throwing onMessage handler instead of crashing', () => {
    const reports: AxMCPError[] = [];
    const channel = new AxMCPMessageChannel({
      endpoint: 'e',
      send: () => {},
      onProtocolError: (e) => reports.push(e),
    });
    channel.setHandlers({
      onMessage: () => {
        throw new Error('boom');
      },
    });
    expect(() => channel.receive({ jsonrpc: '2.0', method: 'n' })).not.toThrow();
    expect(reports).toHaveLength(1);
    expect(reports[0]?.cause).toEqual(new Error('boom'));
  });

  it('reports server messages that arrive before handlers are set', () => {
    const reports: AxMCPError[] = [];
    const channel = new AxMCPMessageChannel({
      endpoint: 'e',
      send: () => {},
      onProtocolError: (e) => reports.push(e),
    });
    channel.receive({ jsonrpc: '2.0', method: 'notifications/message' });
    expect(reports).toHaveLength(1);
    expect(reports[0]?.message).toContain('notifications/message');
  });

  it('rejects every pending request with closed on close, and calls onClose only for a peer close', async () => {
    const local = setup();
    const a = local.channel.request(req(1));
    const b = local.channel.request(req(2));
    local.channel.close();
    for (const error of [await rejection(a), await rejection(b)]) {
      expect(error).toBeInstanceOf(AxMCPTransportError);
      expect(error.code).toBe('closed');
    }
    expect(local.closes).toEqual([]);
    expect(local.channel.pendingCount).toBe(0);
    expect((await rejection(local.channel.request(req(3)))).code).toBe('closed');
    expect((await rejection(local.channel.notify({ jsonrpc: '2.0', method: 'n' }))).code).toBe('closed');
    expect(local.sent).toHaveLength(2);

    const remote = setup();
    const c = remote.channel.request(req(1));
    const reason = new AxMCPTransportError('transport_error', 'process exited with code 3');
    remote.channel.close(reason);
    remote.channel.close(reason);
    const error = await rejection(c);
    expect(error.code).toBe('closed');
    expect(error.cause).toBe(reason);
    expect(error.message).toContain('code 3');
    expect(remote.closes).toEqual([reason]);
    // Input after close is ignored.
    remote.channel.receive({ jsonrpc: '2.0', method: 'late' });
    expect(remote.messages).toEqual([]);
  });

  it('rejects on abort, forgets the request and drops its late response quietly', async () => {
    const { channel, reports } = setup();
    const controller = new AbortController();
    const pending = channel.request(req(1), { signal: controller.signal });
    controller.abort();
    const error = await rejection(pending);
    expect(error.code).toBe('aborted');
    expect(channel.pendingCount).toBe(0);
    channel.receive({ jsonrpc: '2.0', id: 1, result: {} });
    expect(reports).toEqual([]);
    // Only once: a second stray response with that id is reported.
    channel.receive({ jsonrpc: '2.0', id: 1, result: {} });
    expect(reports).toHaveLength(1);
  });

  it('does not send when the signal is already aborted, and passes typed abort reasons through', async () => {
    const { channel, sent } = setup();
    const reason = new AxMCPError('timeout', 'client deadline');
    const error = await rejection(channel.request(req(1), { signal: AbortSignal.abort(reason) }));
    expect(error).toBe(reason);
    expect(sent).toEqual([]);
    const timeout = await rejection(channel.request(req(2), { signal: AbortSignal.timeout(1) }));
    expect(timeout.code).toBe('timeout');
    expect(channel.pendingCount).toBe(0);
  });

  it('removes its abort listener once the request settles', async () => {
    const { channel } = setup();
    const controller = new AbortController();
    const remove = vi.spyOn(controller.signal, 'removeEventListener');
    const pending = channel.request(req(1), { signal: controller.signal });
    channel.receive({ jsonrpc: '2.0', id: 1, result: {} });
    await pending;
    expect(remove).toHaveBeenCalledWith('abort', expect.any(Function));
    controller.abort();
    expect(channel.pendingCount).toBe(0);
  });

  it('rejects with a transport error and forgets the request when sending fails', async () => {
    const { channel } = setup(() => Promise.reject(new Error('EPIPE')));
    const error = await rejection(channel.request(req(1)));
    expect(error.code).toBe('transport_error');
    expect((error.cause as Error).message).toBe('EPIPE');
    expect(channel.pendingCount).toBe(0);
    const typed = new AxMCPTransportError('message_too_large', 'too big');
    const sync = setup(() => {
      throw typed;
    });
    expect(await rejection(sync.channel.respond({ jsonrpc: '2.0', id: 1, result: {} }))).toBe(typed);
  });
});
