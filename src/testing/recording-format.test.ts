import { describe, expect, it } from 'vitest';
import { AxStudioRecordingTransport } from '../node/studio/recording-transport.js';
import { AxMCPStreamableHTTPTransport } from '../transport/http/streamable-http.js';
import { AxMCPRecordingTransport } from './recording.js';
import { AX_MCP_REDACTED, parseAxMCPRecording, redactRecordedValue } from './recording-format.js';
import { firstDifference } from './replay-match.js';

describe('redactRecordedValue', () => {
  it('redacts credential keys, token formats and named secrets, and keeps protocol fields', () => {
    const value = {
      params: {
        _meta: { progressToken: 7 },
        arguments: {
          password: 'pw',
          access_token: 'tok',
          refreshToken: 'r',
          maxTokens: 100,
          note: 'Bearer abc.def',
        },
        text: 'my hunter2 and eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJl',
      },
    };
    const redacted = redactRecordedValue(value, { secrets: ['hunter2'] }) as typeof value;
    expect(redacted.params._meta.progressToken).toBe(7);
    expect(redacted.params.arguments).toEqual({
      password: AX_MCP_REDACTED,
      access_token: AX_MCP_REDACTED,
      refreshToken: AX_MCP_REDACTED,
      maxTokens: 100,
      note: AX_MCP_REDACTED,
    });
    expect(redacted.params.text).toBe(`my ${AX_MCP_REDACTED} and ${AX_MCP_REDACTED}`);
    expect(value.params.arguments.password).toBe('pw');
  });

  it('redacts every key a global RegExp in keys names, not every other one', () => {
    const value = [{ ssn: '078-05-1120' }, { ssn: '219-09-9999' }, { ssn: '457-55-5462' }];
    const redacted = redactRecordedValue(value, { keys: [/^ssn$/gi] }) as typeof value;
    expect(redacted.map((person) => person.ssn)).toEqual([AX_MCP_REDACTED, AX_MCP_REDACTED, AX_MCP_REDACTED]);
  });

  it('refuses a redact hook that answers undefined or a promise, naming where', () => {
    const value = { params: { name: 'get_stock', arguments: { sku: 'widget-b' } } };
    // A branch that forgot `return value`: every other value became a hole in the recording.
    const forgetful = (path: readonly (string | number)[]) =>
      path.at(-1) === 'ssn' ? AX_MCP_REDACTED : undefined;
    expect(() => redactRecordedValue(value, { redact: forgetful })).toThrow(
      expect.objectContaining({ code: 'invalid_options', message: expect.stringContaining('$.params.name') }),
    );
    expect(() => redactRecordedValue(value, { redact: async (_path, leaf) => leaf })).toThrow(
      /answered a promise/,
    );
    expect(redactRecordedValue(value, { redact: (_path, leaf) => leaf })).toEqual(value);
  });

  it('refuses a secret too short to scrub, rather than keep it in the recording', () => {
    // It was dropped without a word: the PIN stayed in every message that held it.
    expect(() => redactRecordedValue({ pin: 'my pin is 123' }, { secrets: ['hunter2', '123'] })).toThrow(
      expect.objectContaining({ code: 'invalid_options', path: 'secrets[1]' }),
    );
    expect(() => redactRecordedValue('x', { secrets: [''] })).toThrow(/4 characters or more/);
  });

  it('keeps a server-chosen __proto__ key a plain key', () => {
    const redacted = redactRecordedValue(JSON.parse('{"__proto__":{"polluted":true}}')) as Record<
      string,
      unknown
    >;
    expect(Object.getPrototypeOf(redacted)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(redacted)).toEqual(['__proto__']);
  });
});

describe('firstDifference', () => {
  it('names the first differing path, treats redacted values as wildcards and ignores progress tokens', () => {
    expect(firstDifference({ a: [1, { b: 2 }] }, { a: [1, { b: 3 }] })).toBe('$.a[1].b');
    expect(firstDifference({ a: AX_MCP_REDACTED }, { a: 'secret' })).toBeUndefined();
    expect(
      firstDifference({ p: { _meta: { progressToken: 1 } } }, { p: { _meta: { progressToken: 9 } } }),
    ).toBeUndefined();
    expect(firstDifference({ a: 1 }, { a: 1, b: 2 })).toBe('$.b');
  });
});

describe('parseAxMCPRecording', () => {
  it('refuses what is not a recording, naming why', () => {
    expect(() => parseAxMCPRecording({ format: 'x' })).toThrow(/format/);
    expect(() => parseAxMCPRecording({ format: 'ax-mcp-recording', version: 2, steps: [] })).toThrow(
      /version/,
    );
    expect(() =>
      parseAxMCPRecording({
        format: 'ax-mcp-recording',
        version: 1,
        steps: [{ direction: 'send', type: 'request' }],
      }),
    ).toThrow(/step 0 has no message/);
  });
});

describe('AxMCPRecordingTransport secrets', () => {
  it('refuses a secret shorter than 4 characters at construction, naming it', () => {
    const inner = new AxMCPStreamableHTTPTransport('http://127.0.0.1:1/mcp');
    expect(() => new AxMCPRecordingTransport(inner, { secrets: ['s3cret-token', 'abc'] })).toThrow(
      expect.objectContaining({ code: 'invalid_options', path: 'secrets[1]' }),
    );
    expect(() => new AxMCPRecordingTransport(inner, { secrets: ['s3cret-token'] })).not.toThrow();
    // The studio's recorder takes the same shapes.
    expect(() => new AxStudioRecordingTransport(inner, { secrets: ['abc'] })).toThrow(
      expect.objectContaining({ code: 'invalid_options', path: 'secrets[0]' }),
    );
  });
});
