import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countingServer, expectRefusal, refusalOf } from '../../test/helpers/options.js';
import { AxMCPAppsExtensionTransport, withAxMCPAppsExtension } from '../apps/apps-extension.js';
import { AxMCPAppBridge } from '../apps/bridge.js';
import { axMCPBearerAuthentication } from '../auth/strategies.js';
import { AxMCPClient } from '../client/client.js';
import { AxMCPInvalidOptionsError } from '../protocol/errors.js';
import { AxMCPRecordingTransport } from '../testing/recording.js';
import type { AxMCPRecording } from '../testing/recording-format.js';
import { AxMCPReplayTransport } from '../testing/replay.js';
import { AxMCPStreamableHTTPTransport } from './http/streamable-http.js';
import { AxMCPHTTPFallbackTransport, axMCPHTTPTransport } from './sse/fallback.js';
import { AxMCPHTTPSSETransport } from './sse/http-sse.js';
import type { AxMCPTransport } from './types.js';
import { AxMCPWebSocketTransport } from './websocket/websocket.js';

let counting: Awaited<ReturnType<typeof countingServer>>;
let url: string;
const fetchCalls: string[] = [];
const LOOPBACK = { allowHTTP: true, allowLoopback: true } as const;

/** The global fetch, recording every call: a transport that sends anything shows up here. */
const recordingFetch = ((input: string | URL, init?: RequestInit) => {
  fetchCalls.push(`${init?.method ?? 'GET'} ${String(input)}`);
  return fetch(input, init);
}) as typeof fetch;

/** A WebSocket constructor that counts the sockets it would open. */
let socketsOpened = 0;
class CountingWebSocket {
  constructor() {
    socketsOpened++;
    throw new Error('no sockets in this test');
  }
}

beforeAll(async () => {
  counting = await countingServer();
  url = counting.url;
});

afterAll(async () => {
  await counting.close();
});

const RECORDING: AxMCPRecording = {
  format: 'ax-mcp-recording',
  version: 1,
  endpoint: 'https://mcp.example.com/mcp',
  transportKind: 'http',
  era: 'legacy',
  recordedAt: '2026-01-01T00:00:00.000Z',
  steps: [],
};

/** A transport that is not one of ours, for the wrappers. */
const inner = (): AxMCPTransport => new AxMCPStreamableHTTPTransport(url, { ssrfProtection: LOOPBACK });

interface Case {
  name: string;
  build: () => unknown;
  path: string;
  suggestion?: string;
  message?: RegExp;
}

// Casts: these are the mistakes JavaScript (or a configuration file) lets through.
// biome-ignore lint/suspicious/noExplicitAny: wrong on purpose
type Any = any;
const streamable = (options: Any) =>
  new AxMCPStreamableHTTPTransport(url, { fetch: recordingFetch, ...options });

const cases: Case[] = [
  {
    name: 'a well-known wrong name inside ssrfProtection',
    build: () => streamable({ ssrfProtection: { allowLocalhost: true } }),
    path: 'ssrfProtection.allowLocalhost',
    suggestion: 'allowLoopback',
    message: /ssrfProtection\.allowLocalhost is not an option \(did you mean allowLoopback\?\)/,
  },
  {
    name: 'ssrfProtection in the wrong case',
    build: () => streamable({ ssrfprotection: false }),
    path: 'ssrfprotection',
    suggestion: 'ssrfProtection',
  },
  {
    name: 'timeoutMS instead of timeoutMs',
    build: () => streamable({ timeoutMS: 5000 }),
    path: 'timeoutMS',
    suggestion: 'timeoutMs',
  },
  {
    name: 'a number as a string',
    build: () => streamable({ timeoutMs: '5000' }),
    path: 'timeoutMs',
    message: /timeoutMs: expected a number ≥ 1, got a string/,
  },
  {
    name: 'a misspelled retry option',
    build: () => streamable({ retry: { retries: 2 } }),
    path: 'retry.retries',
    suggestion: 'attempts',
  },
  {
    name: 'retry: true (only false or options)',
    build: () => streamable({ retry: true }),
    path: 'retry',
  },
  {
    name: 'a header value that is not a string',
    build: () => streamable({ headers: { 'x-tenant': 42 } }),
    path: 'headers.x-tenant',
  },
  {
    name: 'an authentication object without authenticate()',
    build: () => streamable({ authentication: { token: 'secret-token-value' } }),
    path: 'authentication',
  },
  {
    name: 'a raw header string in an authentication list',
    build: () => streamable({ authentication: [axMCPBearerAuthentication('t0k3n'), 'Bearer t0k3n'] }),
    path: 'authentication[1]',
  },
  {
    name: 'fetch that is not a function',
    build: () => new AxMCPStreamableHTTPTransport(url, { fetch: 'node-fetch' as Any }),
    path: 'fetch',
  },
  {
    name: 'a misspelled OAuth option',
    build: () =>
      streamable({ oauth: { redirectURI: 'http://127.0.0.1:8765/cb', onAuthCode: async () => ({}) } }),
    path: 'oauth.redirectURI',
    suggestion: 'redirectUri',
  },
  {
    name: 'an OAuth enumeration value outside its list',
    build: () => streamable({ oauth: { dpop: 'always' } }),
    path: 'oauth.dpop',
  },
  {
    name: 'a pre-registered OAuth client without clientId',
    build: () => streamable({ oauth: { clientCredentials: true, client: { clientSecret: 's3cr3t' } } }),
    path: 'oauth.client.clientId',
  },
  {
    name: 'the client credentials grant without a client (a rule across options)',
    build: () => streamable({ oauth: { clientCredentials: true } }),
    path: 'oauth.client',
    message: /oauth\.client: expected a pre-registered client/,
  },
  {
    name: 'cross-app access without its ID token',
    build: () =>
      streamable({
        oauth: {
          client: { clientId: 'app' },
          crossAppAccess: { idp: { tokenEndpoint: 'https://idp.example.com/token', clientId: 'a' } },
        },
      }),
    path: 'oauth.crossAppAccess.idToken',
  },
  {
    name: 'an allowedHosts entry with a scheme',
    build: () => streamable({ ssrfProtection: { allowedHosts: ['https://mcp.example.com'] } }),
    path: 'ssrfProtection.allowedHosts[0]',
  },
  {
    name: 'validateURL that is not a function',
    build: () => streamable({ ssrfProtection: { validateURL: true } }),
    path: 'ssrfProtection.validateURL',
  },
  {
    name: 'an onProtocolError handler object instead of a function',
    build: () => streamable({ onProtocolError: { log() {} } }),
    path: 'onProtocolError',
  },
  {
    name: 'legacySSEFallback as a string',
    build: () => axMCPHTTPTransport(url, { fetch: recordingFetch, legacySSEFallback: 'yes' as Any }),
    path: 'legacySSEFallback',
  },
  {
    name: 'legacySSEFallback misspelled',
    build: () => axMCPHTTPTransport(url, { fetch: recordingFetch, legacySseFallback: true } as Any),
    path: 'legacySseFallback',
    suggestion: 'legacySSEFallback',
  },
  {
    name: 'the SSE URL of the fallback under the wrong key',
    build: () =>
      new AxMCPHTTPFallbackTransport(url, {
        fetch: recordingFetch,
        legacySSEFallback: { uri: `${url}/sse` } as Any,
      }),
    path: 'legacySSEFallback.uri',
    suggestion: 'url',
  },
  {
    name: 'the Streamable HTTP limit name on the HTTP+SSE transport',
    build: () => new AxMCPHTTPSSETransport(url, { fetch: recordingFetch, maxResponseBytes: 1024 } as Any),
    path: 'maxResponseBytes',
    suggestion: 'maxMessageBytes',
  },
  {
    name: 'ssrfProtection as a word',
    build: () => new AxMCPHTTPSSETransport(url, { fetch: recordingFetch, ssrfProtection: 'loopback' as Any }),
    path: 'ssrfProtection',
  },
  {
    name: 'WebSocket subprotocols under another name',
    build: () => new AxMCPWebSocketTransport('ws://127.0.0.1:1/ws', { subprotocols: ['mcp'] } as Any),
    path: 'subprotocols',
    suggestion: 'protocols',
  },
  {
    name: 'a WebSocket option that is not a constructor',
    build: () => new AxMCPWebSocketTransport('ws://127.0.0.1:1/ws', { WebSocket: {} as Any }),
    path: 'WebSocket',
  },
  {
    name: 'a negative handshake timeout',
    build: () => new AxMCPWebSocketTransport('ws://127.0.0.1:1/ws', { openTimeoutMs: -1 }),
    path: 'openTimeoutMs',
  },
  {
    name: 'a misspelled recording option',
    build: () => new AxMCPRecordingTransport(inner(), { secret: ['t0k3n'] } as Any),
    path: 'secret',
    suggestion: 'secrets',
  },
  {
    name: 'a recording era outside its list',
    build: () => new AxMCPRecordingTransport(inner(), { era: 'Legacy' as Any }),
    path: 'era',
    suggestion: "'legacy'",
  },
  {
    name: 'options where the inner transport belongs',
    build: () => new AxMCPRecordingTransport({ url } as Any),
    path: '(options)',
  },
  {
    name: 'a replay lookahead of zero',
    build: () => new AxMCPReplayTransport(RECORDING, { lookahead: 0 }),
    path: 'lookahead',
  },
  {
    name: 'a replay option the replay does not have',
    build: () => new AxMCPReplayTransport(RECORDING, { strict: true, client: {} } as Any),
    path: 'client',
  },
  {
    name: 'the apps extension settings under a singular name',
    build: () => new AxMCPAppsExtensionTransport(inner(), { mimeType: 'text/html;profile=mcp-app' } as Any),
    path: 'mimeType',
    suggestion: 'mimeTypes',
  },
  {
    name: 'an app bridge without sendToView',
    build: () =>
      new AxMCPAppBridge({
        client: new AxMCPClient(withAxMCPAppsExtension(inner()), { namespace: 'ui' }),
        tool: 'show_cart',
      } as Any),
    path: 'sendToView',
  },
  {
    name: 'an app bridge hook in the wrong case',
    build: () =>
      new AxMCPAppBridge({
        client: new AxMCPClient(withAxMCPAppsExtension(inner()), { namespace: 'ui' }),
        tool: 'show_cart',
        sendToView: () => {},
        onlog: () => {},
      } as Any),
    path: 'onlog',
    suggestion: 'onLog',
  },
];

describe('transport options', () => {
  it('has a table worth the name', () => {
    expect(cases.length).toBeGreaterThanOrEqual(20);
  });

  it.each(cases)('refuses $name at construction, before anything is sent', async (entry) => {
    const before = { requests: counting.requests(), calls: fetchCalls.length, sockets: socketsOpened };
    // Secrets in options never reach the message.
    expectRefusal(
      await refusalOf(entry.build),
      AxMCPInvalidOptionsError,
      entry,
      /t0k3n|s3cr3t|secret-token-value/,
    );
    // Give a stray request time to arrive.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect({ requests: counting.requests(), calls: fetchCalls.length, sockets: socketsOpened }).toEqual(
      before,
    );
  });

  it('sees a request when one is sent (the control for the cases above)', async () => {
    const before = { requests: counting.requests(), calls: fetchCalls.length };
    const transport = new AxMCPStreamableHTTPTransport(url, {
      fetch: recordingFetch,
      ssrfProtection: LOOPBACK,
    });
    await transport.request({ jsonrpc: '2.0', id: 1, method: 'ping' });
    await transport.close();
    expect(counting.requests()).toBe(before.requests + 1);
    expect(fetchCalls.length).toBe(before.calls + 1);
  });

  it('constructs every documented configuration', async () => {
    const oauthOptions = {
      redirectUri: 'http://127.0.0.1:8765/callback',
      clientMetadataUrl: 'https://cli.example.com/oauth/client.json',
      clientMetadata: { clientName: 'example-cli' },
      onAuthCode: async () => ({ code: 'c', state: 's' }),
    };
    const built: { close(): Promise<void> }[] = [
      // README: Quick start, multi-server, recording.
      new AxMCPStreamableHTTPTransport(url, { ssrfProtection: { allowHTTP: true, allowLoopback: true } }),
      new AxMCPStreamableHTTPTransport('https://mcp.example.com/mcp', {
        authentication: axMCPBearerAuthentication('token'),
      }),
      // README: OAuth from a CLI; the server-side grants.
      new AxMCPStreamableHTTPTransport('https://mcp.example.com/mcp', { oauth: oauthOptions }),
      new AxMCPStreamableHTTPTransport('https://mcp.example.com/mcp', {
        oauth: { clientCredentials: true, client: { clientId: 'svc', clientSecret: 'secret' } },
      }),
      new AxMCPStreamableHTTPTransport('https://mcp.example.com/mcp', {
        oauth: { client: { clientId: 'svc' }, workloadIdentity: { assertion: async () => 'jwt' } },
      }),
      new AxMCPStreamableHTTPTransport('https://mcp.example.com/mcp', {
        oauth: {
          client: { clientId: 'app', clientSecret: 'secret' },
          crossAppAccess: {
            idp: { tokenEndpoint: 'https://idp.example.com/oauth2/token', clientId: 'app-at-idp' },
            idToken: async () => 'id-token',
          },
        },
      }),
      // README: retries, limits, SSRF opt-ins, the fetch option.
      new AxMCPStreamableHTTPTransport('https://mcp.example.com/mcp', {
        fetch,
        retry: { attempts: 2, baseDelayMs: 100, maxDelayMs: 1000 },
        timeoutMs: 10_000,
        maxResponseBytes: 1024 * 1024,
        maxRedirects: 0,
        maxResumeAttempts: 2,
        headers: { 'x-tenant': 'a' },
        onProtocolError: () => {},
        ssrfProtection: {
          allowPrivateNetwork: true,
          allowedHosts: ['mcp.corp.example', '10.0.0.7', '[fd00::1]', '*.example.com'],
          validateURL: () => {},
        },
      }),
      new AxMCPStreamableHTTPTransport('https://mcp.example.com/mcp', {
        retry: false,
        ssrfProtection: false,
      }),
      // README: the HTTP+SSE fallback and transport.
      axMCPHTTPTransport('https://old.example.com/mcp', { legacySSEFallback: true }),
      axMCPHTTPTransport('https://old.example.com/mcp', {
        legacySSEFallback: { url: 'https://old.example.com/sse' },
      }) as AxMCPHTTPFallbackTransport,
      new AxMCPHTTPSSETransport('https://old.example.com/sse'),
      new AxMCPWebSocketTransport('wss://mcp.example.com/ws', {
        WebSocket: CountingWebSocket as Any,
        protocols: 'mcp',
      }),
      // README: recording and replay.
      new AxMCPRecordingTransport(inner(), { secrets: ['token'], keys: ['x-tenant', /session/i] }),
      new AxMCPReplayTransport(RECORDING, { strict: true, lookahead: 8 }),
      withAxMCPAppsExtension(inner()),
    ];
    const bridge = new AxMCPAppBridge({
      client: new AxMCPClient(withAxMCPAppsExtension(inner()), { namespace: 'shop' }),
      tool: 'show_cart',
      sendToView: () => {},
      authorize: ({ method, tool }) => method !== 'tools/call' || tool?.annotations?.readOnlyHint === true,
      openLink: () => {},
      updateModelContext: () => {},
      hostInfo: { name: 'host', version: '1' },
      hostContext: { theme: 'dark' },
    });
    expect(bridge.ready).toBe(false);
    expect(built.length).toBe(15);
    await Promise.all(built.map((transport) => transport.close()));
    expect(socketsOpened).toBe(0);
  });
});

describe('the URL a transport is made with', () => {
  // [transport, make, a URL of its own kind, a URL of another kind, the transport that one is for]
  const makers: [string, (url: string) => unknown, string, string, string][] = [
    [
      'AxMCPStreamableHTTPTransport',
      (u) => new AxMCPStreamableHTTPTransport(u),
      'https://example.com/mcp',
      'ws://127.0.0.1:9/mcp',
      'AxMCPWebSocketTransport',
    ],
    [
      'AxMCPHTTPSSETransport',
      (u) => new AxMCPHTTPSSETransport(u),
      'https://example.com/sse',
      'wss://example.com/sse',
      'AxMCPWebSocketTransport',
    ],
    [
      'AxMCPWebSocketTransport',
      (u) => new AxMCPWebSocketTransport(u),
      'wss://example.com/mcp',
      'https://example.com/mcp',
      'AxMCPStreamableHTTPTransport',
    ],
  ];

  it.each(makers)(
    '%s refuses at once what is not a URL, a scheme it cannot speak, and credentials',
    (_name, make, own, other, instead) => {
      // Before: a bare TypeError from new URL, and the HTTP transports took ws:, htp: or file: URLs,
      // refused only at the first request (and sent to fetch with SSRF protection off).
      for (const [given, said] of [
        ['not a url', '"not a url" is not one'],
        [other, `(${new URL(other).protocol} is for ${instead})`],
        ['file:///etc/passwd', 'not file:'],
        [own.replace('//', '//user:secret@'), 'Put credentials in `authentication`'],
      ] as const) {
        let error: unknown;
        try {
          make(given);
        } catch (thrown) {
          error = thrown;
        }
        expect(error).toMatchObject({ name: 'AxMCPError', code: 'invalid_argument' });
        expect(String((error as Error).message)).toContain(said);
        expect(String((error as Error).message)).not.toContain('secret');
      }
      expect(() => make(own)).not.toThrow();
    },
  );

  it("the fallback's SSE URL is checked when the transport is made, not when a server needs it", () => {
    expect(() =>
      axMCPHTTPTransport('https://example.com/mcp', { legacySSEFallback: { url: 'wss://example.com/sse' } }),
    ).toThrow(
      expect.objectContaining({
        code: 'invalid_argument',
        message: expect.stringContaining('legacySSEFallback'),
      }),
    );
  });
});
