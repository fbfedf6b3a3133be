/**
 * A handler of a server request that answers what the protocol cannot carry is refused, not
 * sent: the server gets a JSON-RPC error naming the problem, and the caller a typed
 * `AxMCPHandlerResultError` (through `onError` on 2025-11-25, where the server asked on its
 * own; from the call on 2026-07-28, where the request rides on the caller's tool call). Before,
 * `{ contnet }` went to the server as the sampled message and the user saw nothing of why.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AxMCPClientOptions, AxMCPHandlerResultError, AxMCPInvalidOptionsError } from '../src/index.js';
import { eventually, httpClient } from './helpers/clients.js';
import { type EverythingServer, startEverythingServer } from './servers/everything.js';
import { type ModernPeer, startModernServer } from './servers/modern.js';

const MISSPELT_SAMPLE = () =>
  ({ role: 'assistant', contnet: { type: 'text', text: 'hi' }, model: 'm' }) as never;

describe('handler results on 2025-11-25 (server-everything)', () => {
  let server: EverythingServer;
  beforeAll(async () => {
    server = await startEverythingServer({ mode: 'streamableHttp' });
  });
  afterAll(async () => {
    await server?.close();
  });

  /** A 2025-11-25 client of server-everything with `handlers`, and what its onError heard. */
  function reporting(handlers: Pick<AxMCPClientOptions, 'sampling' | 'roots'>) {
    const errors: unknown[] = [];
    const client = httpClient(server.url, {
      era: 'legacy',
      timeoutMs: 20_000,
      onError: (error) => errors.push(error),
      ...handlers,
    });
    return { client, errors };
  }

  it('a sampling result with a misspelt field is refused, named, and reported', async () => {
    const { client, errors } = reporting({ sampling: MISSPELT_SAMPLE });
    try {
      const result = await client
        .callTool('trigger-sampling-request', { prompt: 'hello', maxTokens: 20 })
        .catch(() => undefined);
      // The server was told the client failed: it did not take a broken result for a message.
      expect(JSON.stringify(result ?? {})).not.toContain('"hi"');
      await eventually(() => errors.length > 0, 10_000, 'the report');
      const error = errors[0] as AxMCPHandlerResultError;
      expect(error).toBeInstanceOf(AxMCPHandlerResultError);
      expect(error.code).toBe('invalid_handler_result');
      expect(error.method).toBe('sampling/createMessage');
      expect(error.path).toBe('contnet');
      expect(error.suggestion).toBe('content');
      expect(error.namespace).toBe('test');
    } finally {
      await client.close();
    }
  });

  it('roots from a function that are not file:// URIs are refused and reported', async () => {
    const { client, errors } = reporting({ roots: () => [{ url: 'file:///work' } as never] });
    try {
      await client.init();
      await client.callTool('get-roots-list', {}).catch(() => undefined);
      await eventually(() => errors.some((e) => e instanceof AxMCPHandlerResultError), 10_000, 'the report');
      const error = errors.find((e) => e instanceof AxMCPHandlerResultError) as AxMCPHandlerResultError;
      expect(error.method).toBe('roots/list');
      expect(error.message).toContain('[0].url is not a field (did you mean uri?)');
    } finally {
      await client.close();
    }
  });
});

describe('handler results on 2026-07-28 (multi round-trip requests)', () => {
  let peer: ModernPeer;
  beforeAll(async () => {
    peer = await startModernServer();
  });
  afterAll(async () => {
    await peer?.close();
  });

  it("an elicitation answer outside the enumeration fails the caller's call with the typed error", async () => {
    const client = httpClient(peer.url, {
      era: 'modern',
      timeoutMs: 10_000,
      onWarning: () => {},
      elicitation: { form: () => ({ action: 'acept', content: { name: 'Ada' } }) as never },
    });
    try {
      const error = await client.callTool('mrtr_one_round', {}).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(AxMCPHandlerResultError);
      expect((error as AxMCPHandlerResultError).path).toBe('action');
      expect((error as Error).message).toContain("expected 'accept', 'decline' or 'cancel'");
    } finally {
      await client.close();
    }
  });
});

describe('static roots', () => {
  it('are checked when the client is made: file:// URIs only, misspelt fields named', () => {
    const made = (roots: unknown) => () =>
      httpClient('http://127.0.0.1:9/mcp', { roots: roots as never, era: 'legacy' });
    expect(made([{ uri: 'https://example.com' }])).toThrow(AxMCPInvalidOptionsError);
    expect(made([{ uri: 'file:///work', nmae: 'work' }])).toThrow(
      /nmae is not a field \(did you mean name\?\)/,
    );
    expect(made([{ uri: 'file:///work', name: 'work', vendorExtension: 1 }])).not.toThrow();
  });
});
