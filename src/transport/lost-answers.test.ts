import { describe, expect, it } from 'vitest';
import { AxMCPError, AxMCPTransportError } from '../protocol/errors.js';
import type { JSONRPCMessage, JSONRPCRequest } from '../protocol/jsonrpc.js';
import { LostAnswers, peekMessage } from './lost-answers.js';
import { AxMCPMessageChannel } from './message-channel.js';

const pad = 'x'.repeat(10_000);

describe('peekMessage', () => {
  it('reads a response id that comes before the large part', () => {
    expect(peekMessage(`{"jsonrpc":"2.0","id":7,"result":{"p":"${pad}`)).toEqual({ kind: 'response', id: 7 });
    expect(peekMessage(`{ "id" : "a\\"b", "jsonrpc":"2.0", "error": {"message":"${pad}`)).toEqual({
      kind: 'response',
      id: 'a"b',
    });
    expect(peekMessage(`{"jsonrpc":"2.0","id":null,"error":{"data":"${pad}`)).toEqual({
      kind: 'response',
      id: null,
    });
  });

  it('finds an id after small members, not one behind a value cut off', () => {
    expect(peekMessage(`{"result":{"a":[1,{"b":"}"}]},"id":3,"jsonrpc":"2.0"}`)).toEqual({
      kind: 'response',
      id: 3,
    });
    expect(peekMessage(`{"result":{"p":"${pad.slice(0, 4000)}`)).toEqual({ kind: 'response', id: undefined });
    // An id cut off mid-number is not read as a shorter one.
    expect(peekMessage('{"result":{},"id":12')).toEqual({ kind: 'response', id: undefined });
  });

  it('tells requests, notifications and non-messages from responses', () => {
    expect(
      peekMessage(`{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"p":"${pad}`),
    ).toEqual({
      kind: 'other',
    });
    expect(peekMessage(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${pad}`)).toEqual(
      {
        kind: 'other',
      },
    );
    expect(peekMessage(`not json ${pad}`)).toEqual({ kind: 'other' });
    // An id that is no id, or the member that says what the message is coming too late: no answer to name.
    expect(peekMessage(`{"jsonrpc":"2.0","id":{"x":1},"result":{}}`)).toEqual({ kind: 'unknown' });
    expect(peekMessage(`{"jsonrpc":"2.0","id":7,"params":{"p":"${pad}`)).toEqual({ kind: 'unknown' });
    expect(peekMessage(`[{"jsonrpc":"2.0","id":7,"result":{"p":"${pad}`)).toEqual({ kind: 'unknown' });
    expect(peekMessage('')).toEqual({ kind: 'unknown' });
  });
});

describe('LostAnswers', () => {
  it('names the one candidate left, and only then', () => {
    const lost = new LostAnswers();
    lost.add([1, 2, 3]);
    expect(lost.owners()).toEqual([]);
    lost.answered(1);
    expect(lost.owners()).toEqual([]);
    lost.answered(3);
    expect(lost.owners()).toEqual([2]);
    expect(lost.empty).toBe(true);
  });

  it('counts: as many lost answers as candidates left means each lost its own', () => {
    const lost = new LostAnswers();
    lost.add([1, 2, 3]);
    lost.add([1, 2, 3]);
    expect(lost.owners()).toEqual([]);
    lost.answered(2);
    expect(lost.owners().sort()).toEqual([1, 3]);
  });

  it('an owner found for one lost answer owns no other', () => {
    const lost = new LostAnswers();
    lost.add([1, 2]);
    lost.add([1]);
    expect(lost.owners()).toEqual([1, 2]);
  });

  it('forgets a lost answer every candidate of which got its own', () => {
    const lost = new LostAnswers();
    lost.add([1]);
    lost.answered(1);
    expect(lost.owners()).toEqual([]);
    expect(lost.empty).toBe(true);
  });
});

describe('AxMCPMessageChannel.dropOversized', () => {
  function setup() {
    const sent: JSONRPCMessage[] = [];
    const reports: AxMCPError[] = [];
    const channel = new AxMCPMessageChannel({
      endpoint: 'test://peer',
      send: (message) => void sent.push(message),
      onProtocolError: (error) => reports.push(error),
    });
    channel.setHandlers({ onMessage: () => {} });
    return { channel, reports };
  }
  const req = (id: number): JSONRPCRequest => ({ jsonrpc: '2.0', id, method: 'tools/call' });
  const tooLarge = () => new AxMCPTransportError('message_too_large', 'Dropped a line over 10 bytes');
  const settled = async (promise: Promise<unknown>) => {
    let state = 'pending';
    promise.then(
      () => (state = 'resolved'),
      () => (state = 'rejected'),
    );
    await new Promise((resolve) => setTimeout(resolve, 0));
    return state;
  };

  it('fails the request named by the id, reports the drop, and leaves others waiting', async () => {
    const { channel, reports } = setup();
    const one = channel.request(req(1));
    const two = channel.request(req(2));
    channel.dropOversized(`{"jsonrpc":"2.0","id":2,"result":{"p":"${pad}`, tooLarge());
    await expect(two).rejects.toMatchObject({ code: 'message_too_large', cause: expect.any(AxMCPError) });
    expect(reports.map((r) => r.code)).toEqual(['message_too_large']);
    expect(await settled(one)).toBe('pending');
    channel.receive({ jsonrpc: '2.0', id: 1, result: {} });
    await expect(one).resolves.toMatchObject({ id: 1 });
  });

  it('an unreadable id: the only waiting request fails; among several, the last left does', async () => {
    const { channel } = setup();
    const alone = channel.request(req(1));
    channel.dropOversized(`{"result":{"p":"${pad}`, tooLarge());
    await expect(alone).rejects.toMatchObject({ code: 'message_too_large' });

    const a = channel.request(req(2));
    const b = channel.request(req(3));
    channel.dropOversized(`{"result":{"p":"${pad}`, tooLarge());
    expect(await settled(a)).toBe('pending');
    expect(await settled(b)).toBe('pending');
    channel.receive({ jsonrpc: '2.0', id: 3, result: {} });
    await expect(b).resolves.toMatchObject({ id: 3 });
    await expect(a).rejects.toMatchObject({ code: 'message_too_large' });
  });

  it('never fails a request when the lost answer may be an aborted one’s, nor for a request or notification', async () => {
    const { channel } = setup();
    const stop = new AbortController();
    const aborted = channel.request(req(1), { signal: stop.signal });
    stop.abort();
    await expect(aborted).rejects.toMatchObject({ code: 'aborted' });
    const waiting = channel.request(req(2));
    channel.dropOversized(`{"result":{"p":"${pad}`, tooLarge());
    channel.dropOversized(`{"jsonrpc":"2.0","id":2,"method":"x","params":{"p":"${pad}`, tooLarge());
    channel.dropOversized(
      `{"jsonrpc":"2.0","method":"notifications/message","params":{"p":"${pad}`,
      tooLarge(),
    );
    expect(await settled(waiting)).toBe('pending');
    channel.receive({ jsonrpc: '2.0', id: 2, result: { ok: true } });
    await expect(waiting).resolves.toMatchObject({ result: { ok: true } });
  });
});
