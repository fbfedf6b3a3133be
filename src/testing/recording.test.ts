import { describe, expect, it } from 'vitest';
import { AxMCPClient } from '../client/client.js';
import { LEGACY_INITIALIZE, scriptedTransport } from '../client/scripted-transport.fixture.js';
import { AxMCPRecordingTransport, recordAxMCPSession } from './recording.js';
import { AX_MCP_REDACTED } from './recording-format.js';

describe('AxMCPRecordingTransport with a redact hook that fails', () => {
  it('on a received message: onError hears the typed error, naming where, and the client still gets the message', async () => {
    const rig = scriptedTransport({
      initialize: () => LEGACY_INITIALIZE(),
      'tools/list': () => ({ tools: [] }),
    });
    // Keeps every value but forgets to return the log message's data.
    const redact = (path: readonly (string | number)[], value: unknown) =>
      path.at(-1) === 'data' ? undefined : path.at(-1) === 'sku' ? AX_MCP_REDACTED : value;
    const recorder = new AxMCPRecordingTransport(rig.transport, { redact });
    const errors: unknown[] = [];
    const logged: unknown[] = [];
    const client = new AxMCPClient(recorder, {
      namespace: 'recorded',
      era: 'legacy',
      onError: (error) => errors.push(error),
      onLoggingMessage: (message) => logged.push(message.data),
    });
    await client.init();
    rig.deliver({
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: { level: 'info', data: 'hello' },
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(logged).toEqual(['hello']);
    expect(errors).toEqual([
      expect.objectContaining({ code: 'invalid_options', message: expect.stringContaining('$.params.data') }),
    ]);
    await client.close();
  });
});

describe('AxMCPRecordingTransport with every option', () => {
  it('records with era, now, secrets, keys and redact together, the result of recordAxMCPSession too', async () => {
    const rig = scriptedTransport({
      initialize: () => LEGACY_INITIALIZE({ tools: {} }),
      'tools/list': () => ({ tools: [{ name: 'lookup', inputSchema: { type: 'object' } }] }),
      'tools/call': () => ({ content: [{ type: 'text', text: 'token s3cret-value' }] }),
    });
    let t = 0;
    const { result, recording } = await recordAxMCPSession({
      transport: rig.transport,
      era: 'legacy',
      now: () => t++,
      secrets: ['s3cret-value'],
      keys: [/^sku$/i],
      redact: (_path, value) => value,
      client: { era: 'legacy' },
      run: async (client) => (await client.callTool('lookup', { sku: 'widget-b' })).content,
    });
    expect(JSON.stringify(recording)).not.toContain('s3cret-value');
    expect(JSON.stringify(recording)).not.toContain('widget-b');
    expect(result).toEqual([{ type: 'text', text: 'token s3cret-value' }]);
    expect(recording.result).toEqual([{ type: 'text', text: `token ${AX_MCP_REDACTED}` }]);
  });
});
