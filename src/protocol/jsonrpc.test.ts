import { describe, expect, it } from 'vitest';
import { AxMCPProtocolError } from './errors.js';
import { parseJSONRPCBody, parseJSONRPCMessage } from './jsonrpc.js';

function codeOf(text: string): string | undefined {
  try {
    parseJSONRPCMessage(text);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(AxMCPProtocolError);
    return (error as AxMCPProtocolError).code;
  }
}

describe('JSON-RPC framing', () => {
  it('accepts requests, notifications, results and errors', () => {
    expect(parseJSONRPCMessage('{"jsonrpc":"2.0","id":1,"method":"ping"}')).toEqual({
      jsonrpc: '2.0',
      id: 1,
      method: 'ping',
    });
    expect(parseJSONRPCMessage('{"jsonrpc":"2.0","method":"n","params":{}}')).toHaveProperty('method', 'n');
    expect(parseJSONRPCMessage('{"jsonrpc":"2.0","id":"a","result":{}}')).toHaveProperty('result');
    expect(
      parseJSONRPCMessage('{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"x"}}'),
    ).toHaveProperty('error');
  });

  it.each([
    ['not json', 'invalid_message'],
    ['[]', 'invalid_message'],
    ['{"jsonrpc":"1.0","id":1,"result":{}}', 'invalid_message'],
    ['{"jsonrpc":"2.0","id":{},"result":{}}', 'invalid_message'],
    ['{"jsonrpc":"2.0","id":1,"result":[]}', 'invalid_message'],
    ['{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}}', 'invalid_message'],
    ['{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":""}}', 'invalid_message'],
    ['{"jsonrpc":"2.0","method":"m","params":[1]}', 'invalid_message'],
    ['{"jsonrpc":"2.0","id":1,"result":{"a":{"__proto__":{"polluted":true}}}}', 'unsafe_key'],
  ])('refuses %s', (text, code) => {
    expect(codeOf(text)).toBe(code);
  });

  it('does not pollute prototypes while refusing', () => {
    codeOf('{"jsonrpc":"2.0","id":1,"result":{"__proto__":{"polluted":true}}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('decodes batches element by element', () => {
    const messages = parseJSONRPCBody(
      '[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":2,"result":{}}]',
    );
    expect(messages).toHaveLength(2);
    expect(() => parseJSONRPCBody('[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0"}]')).toThrow(
      AxMCPProtocolError,
    );
  });
});
