/**
 * OAuth against a real authorization server: `oidc-provider` (a certified OpenID Provider)
 * on 127.0.0.1, with dynamic registration, PKCE, RFC 8707 resource indicators, RFC 9207
 * `iss` and refresh tokens. In front of it, a protected MCP server (official v1 SDK,
 * sessionful) that checks every token with the authorization server itself (audience,
 * expiry, scopes) and serves RFC 9728 metadata. The "browser" is headless: it follows the
 * authorization server's redirects and an interaction endpoint consents automatically.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Provider } from 'oidc-provider';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  AxMCPClient,
  AxMCPMemoryTokenStore,
  type AxMCPOAuthOptions,
  AxMCPStreamableHTTPTransport,
  axMCPOAuth,
} from '../src/index.js';
import { AxMCPFileTokenStore } from '../src/node.js';
import { type LoopbackServer, listenLoopback, parseJson, readBody } from './servers/node-http.js';

const REDIRECT_URI = 'http://127.0.0.1:9/callback';

interface AuthorizationServer {
  issuer: string;
  provider: Provider;
  /** Successful token grants by type. */
  grants: string[];
  close(): Promise<void>;
}

/** oidc-provider with short-lived access tokens for any resource, and auto-consent. */
async function startAuthorizationServer(
  accessTokenTTL: number,
  options: { requirePAR?: boolean } = {},
): Promise<AuthorizationServer> {
  let provider: Provider | undefined;
  const grants: string[] = [];
  const server = await listenLoopback((req, res) => {
    if (!provider) {
      res.statusCode = 503;
      res.end();
      return;
    }
    if (req.url?.startsWith('/interaction/')) {
      void consent(provider, req, res).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
      return;
    }
    provider.callback()(req, res);
  });
  const issuer = server.url('');
  provider = new Provider(issuer, {
    features: {
      registration: { enabled: true },
      revocation: { enabled: true },
      pushedAuthorizationRequests: {
        enabled: true,
        requirePushedAuthorizationRequests: options.requirePAR ?? false,
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined as unknown as string,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({
          scope: 'mcp:read mcp:write',
          audience: resource,
          accessTokenTTL,
          accessTokenFormat: 'opaque',
        }),
      },
      devInteractions: { enabled: false },
    },
    scopes: ['openid', 'offline_access'],
    issueRefreshToken: async () => true,
    ttl: { RefreshToken: 3600, Grant: 3600, Session: 3600, Interaction: 3600 },
    pkce: { required: () => true },
    clientDefaults: { grant_types: ['authorization_code', 'refresh_token'] },
  });
  provider.on('grant.success', (ctx) => {
    grants.push(String((ctx as { oidc: { params?: { grant_type?: unknown } } }).oidc.params?.grant_type));
  });
  return { issuer, provider, grants, close: () => server.close() };
}

/** The interaction endpoint: the user "alice" logs in and consents to what was asked. */
async function consent(provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  const params = details.params as Record<string, string | undefined>;
  const grant = new provider.Grant({ accountId: 'alice', clientId: params.client_id! });
  const scopes = (params.scope ?? '').split(' ').filter(Boolean);
  const oidc = scopes.filter(
    (s): s is 'openid' | 'offline_access' => s === 'openid' || s === 'offline_access',
  );
  for (const scope of oidc) grant.addOIDCScope(scope);
  const resourceScopes = scopes.filter((s) => s !== 'openid' && s !== 'offline_access');
  if (params.resource) grant.addResourceScope(params.resource, resourceScopes.join(' '));
  const grantId = await grant.save();
  await provider.interactionFinished(
    req,
    res,
    { login: { accountId: 'alice' }, consent: { grantId } },
    { mergeWithLastSubmission: false },
  );
}

/** The headless browser: follows the redirects (with cookies) until the redirect URI. */
function headlessBrowser(seen: URL[]) {
  return async (url: URL): Promise<URL> => {
    seen.push(url);
    const cookies = new Map<string, string>();
    let next = url;
    for (let hop = 0; hop < 10; hop++) {
      const response = await fetch(next, {
        redirect: 'manual',
        headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
      });
      await response.body?.cancel();
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const at = pair!.indexOf('=');
        cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
      }
      const location = response.headers.get('location');
      if (!location) throw new Error(`no redirect from ${next.pathname} (HTTP ${response.status})`);
      next = new URL(location, next);
      if (next.href.startsWith(REDIRECT_URI)) return next;
    }
    throw new Error('too many redirects');
  };
}

interface ProtectedServer {
  url(name: string): string;
  /** Tokens presented per endpoint name, in order. */
  tokens: Map<string, string[]>;
  /** Makes the server refuse this token from now on (as after a revocation). */
  reject(token: string): void;
  /** Sends a log message to every session's GET stream of endpoint `name`. */
  log(name: string, text: string): Promise<void>;
  /** GET streams opened per endpoint name. */
  streams: Map<string, number>;
  close(): Promise<void>;
}

/**
 * A protected MCP server with endpoints `/<name>/mcp`, each its own resource. Tool `read`
 * needs `mcp:read`, tool `write` needs `mcp:write` (else 403 insufficient_scope). A GET
 * stream is closed when the token it was opened with expires.
 */
async function startProtectedServer(as: AuthorizationServer, names: string[]): Promise<ProtectedServer> {
  const tokens = new Map<string, string[]>(names.map((n) => [n, []]));
  const streams = new Map<string, number>(names.map((n) => [n, 0]));
  const rejected = new Set<string>();
  const sessions = new Map<
    string,
    { name: string; server: McpServer; transport: StreamableHTTPServerTransport }
  >();
  let base = '';
  const resourceOf = (name: string) => `${base}/${name}/mcp`;
  const prmOf = (name: string) => `${base}/.well-known/oauth-protected-resource/${name}/mcp`;

  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', base);
    const prm = /^\/\.well-known\/oauth-protected-resource\/([a-z]+)\/mcp$/.exec(url.pathname);
    if (prm && names.includes(prm[1]!)) {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          resource: resourceOf(prm[1]!),
          authorization_servers: [as.issuer],
          scopes_supported: ['mcp:read'],
        }),
      );
      return;
    }
    const endpoint = /^\/([a-z]+)\/mcp$/.exec(url.pathname);
    if (!endpoint || !names.includes(endpoint[1]!)) {
      res.statusCode = 404;
      res.end();
      return;
    }
    const name = endpoint[1]!;
    const body = req.method === 'POST' ? parseJson(await readBody(req)) : undefined;
    const refuse = (status: number, params: string) => {
      res.statusCode = status;
      res.setHeader('www-authenticate', `Bearer ${params}, resource_metadata="${prmOf(name)}"`);
      res.end();
    };
    const header = req.headers.authorization ?? '';
    if (!header.startsWith('Bearer ')) return refuse(401, 'scope="mcp:read"');
    const token = header.slice('Bearer '.length);
    tokens.get(name)!.push(token);
    const found = rejected.has(token) ? undefined : await as.provider.AccessToken.find(token);
    if (!found || found.isExpired || found.aud !== resourceOf(name))
      return refuse(401, 'error="invalid_token"');
    const granted = new Set(String(found.scope ?? '').split(' '));
    const call = body as { method?: string; params?: { name?: string } } | undefined;
    if (call?.method === 'tools/call' && call.params?.name === 'write' && !granted.has('mcp:write')) {
      return refuse(403, 'error="insufficient_scope", scope="mcp:write"');
    }
    const sessionId = req.headers['mcp-session-id'];
    let session = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (!session) {
      if (call?.method !== 'initialize') {
        res.statusCode = 404;
        res.end();
        return;
      }
      const server = new McpServer(
        { name: 'protected', version: '1.0.0' },
        { capabilities: { logging: {} } },
      );
      server.registerTool('read', { inputSchema: {} }, async () => ({
        content: [{ type: 'text', text: 'read ok' }],
      }));
      server.registerTool('write', { inputSchema: { text: z.string().optional() } }, async () => ({
        content: [{ type: 'text', text: 'write ok' }],
      }));
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, { name, server, transport });
        },
      });
      await server.connect(transport);
      session = { name, server, transport };
    }
    if (req.method === 'GET') {
      streams.set(name, (streams.get(name) ?? 0) + 1);
      // The token of a long-lived stream expires: the server ends the stream then.
      const remaining = Math.max(0, (found.exp ?? 0) * 1000 - Date.now());
      const current = session;
      const timer = setTimeout(() => current.transport.closeStandaloneSSEStream(), remaining);
      res.on('close', () => clearTimeout(timer));
    }
    await session.transport.handleRequest(req, res, body);
  };
  const server: LoopbackServer = await listenLoopback((req, res) => {
    void handler(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.statusCode = 500;
      res.end(String(error));
    });
  });
  base = server.url('');
  return {
    url: (name) => `${base}/${name}/mcp`,
    tokens,
    streams,
    reject: (token) => rejected.add(token),
    async log(name, text) {
      for (const session of sessions.values()) {
        if (session.name === name)
          await session.server.server.sendLoggingMessage({ level: 'info', data: text });
      }
    },
    async close() {
      for (const session of sessions.values()) await session.transport.close().catch(() => {});
      await server.close();
    },
  };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

async function setup(ttl: number, names = ['a'], options: { requirePAR?: boolean } = {}) {
  const as = await startAuthorizationServer(ttl, options);
  cleanups.push(() => as.close());
  const mcp = await startProtectedServer(as, names);
  cleanups.push(() => mcp.close());
  return { as, mcp };
}

function client(url: string, oauth: AxMCPOAuthOptions, extra: { onLog?: (text: string) => void } = {}) {
  const transport = new AxMCPStreamableHTTPTransport(url, {
    ssrfProtection: { allowLoopback: true },
    oauth,
  });
  const created = new AxMCPClient(transport, {
    namespace: 'oauth-test',
    era: 'legacy',
    onWarning: () => {},
    onLoggingMessage: (message) => extra.onLog?.(String(message.data)),
  });
  cleanups.push(() => created.close());
  return created;
}

/** One OAuth strategy with a memory store shared by clients of several endpoints of `mcp`. */
function sharedStrategy(mcp: ProtectedServer) {
  const store = new AxMCPMemoryTokenStore();
  const seen: URL[] = [];
  const oauth = axMCPOAuth({
    redirectUri: REDIRECT_URI,
    onAuthCode: headlessBrowser(seen),
    tokenStore: store,
    ssrfProtection: { allowLoopback: true },
  });
  const make = (name: string) => {
    const transport = new AxMCPStreamableHTTPTransport(mcp.url(name), {
      ssrfProtection: { allowLoopback: true },
      authentication: oauth,
    });
    const created = new AxMCPClient(transport, { namespace: name, era: 'legacy', onWarning: () => {} });
    cleanups.push(() => created.close());
    return created;
  };
  return { store, seen, oauth, make };
}

function textOf(result: { content?: unknown[] }): string {
  return (result.content ?? []).map((block) => (block as { text?: string }).text ?? '').join('');
}

describe('OAuth against oidc-provider', () => {
  it('authorizes once (DCR, PKCE, resource, iss) and refreshes shortly before expiry', async () => {
    const { as, mcp } = await setup(4);
    const seen: URL[] = [];
    const mcpClient = client(mcp.url('a'), {
      redirectUri: REDIRECT_URI,
      onAuthCode: headlessBrowser(seen),
      refreshBeforeExpiryMs: 3_000,
    });
    expect(textOf(await mcpClient.callTool('read', {}))).toBe('read ok');
    expect(seen).toHaveLength(1);
    const authorization = seen[0]!;
    expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorization.searchParams.get('resource')).toBe(mcp.url('a'));
    expect(authorization.searchParams.get('scope')).toBe('mcp:read offline_access');
    expect(as.grants).toEqual(['authorization_code']);

    // Inside the refresh window (at most half the 4 s lifetime), before the expiry.
    await new Promise((resolve) => setTimeout(resolve, 2_300));
    expect(textOf(await mcpClient.callTool('read', {}))).toBe('read ok');
    expect(as.grants).toContain('refresh_token');
    expect(seen).toHaveLength(1);
    const used = new Set(mcp.tokens.get('a'));
    expect(used.size).toBe(2);
  });

  it('refreshes silently when the server answers 401 to a token it no longer accepts', async () => {
    const { as, mcp } = await setup(3600);
    const seen: URL[] = [];
    const mcpClient = client(mcp.url('a'), { redirectUri: REDIRECT_URI, onAuthCode: headlessBrowser(seen) });
    await mcpClient.callTool('read', {});
    const first = mcp.tokens.get('a')!.at(-1)!;
    mcp.reject(first);
    expect(textOf(await mcpClient.callTool('read', {}))).toBe('read ok');
    expect(mcp.tokens.get('a')!.at(-1)).not.toBe(first);
    expect(as.grants).toEqual(['authorization_code', 'refresh_token']);
    expect(seen).toHaveLength(1);
  });

  it('steps up on 403 insufficient_scope with the union of the scopes', async () => {
    const { mcp } = await setup(3600);
    const seen: URL[] = [];
    const mcpClient = client(mcp.url('a'), { redirectUri: REDIRECT_URI, onAuthCode: headlessBrowser(seen) });
    await mcpClient.callTool('read', {});
    expect(textOf(await mcpClient.callTool('write', {}))).toBe('write ok');
    expect(seen).toHaveLength(2);
    expect(seen[1]!.searchParams.get('scope')?.split(' ').sort()).toEqual([
      'mcp:read',
      'mcp:write',
      'offline_access',
    ]);
    // The stepped-up token still serves the operations of the first scope.
    expect(textOf(await mcpClient.callTool('read', {}))).toBe('read ok');
    expect(seen).toHaveLength(2);
  });

  it('keeps a listen stream alive across access-token expiry (refresh, then reconnect)', async () => {
    const { as, mcp } = await setup(3);
    const logs: string[] = [];
    const mcpClient = client(
      mcp.url('a'),
      { redirectUri: REDIRECT_URI, onAuthCode: headlessBrowser([]), refreshBeforeExpiryMs: 1_000 },
      { onLog: (text) => logs.push(text) },
    );
    const listening = mcpClient.startListening();
    await listening.ready;
    await expect.poll(() => mcp.streams.get('a'), { timeout: 5_000 }).toBe(1);
    await mcp.log('a', 'before expiry');
    await expect.poll(() => logs, { timeout: 5_000 }).toContain('before expiry');
    // The server ends the stream when the first token expires (3 s); the client refreshes and reconnects.
    await expect.poll(() => mcp.streams.get('a'), { timeout: 10_000, interval: 100 }).toBe(2);
    await mcp.log('a', 'after expiry');
    await expect.poll(() => logs, { timeout: 5_000 }).toContain('after expiry');
    expect(as.grants).toContain('refresh_token');
    listening.close();
  }, 30_000);

  it('a later process reuses the file store: refresh, no second authorization', async () => {
    const { as, mcp } = await setup(4);
    const dir = await mkdtemp(join(tmpdir(), 'ax-mcp-oauth-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const path = join(dir, 'tokens.json');
    const seen: URL[] = [];
    const options = (): AxMCPOAuthOptions => ({
      redirectUri: REDIRECT_URI,
      onAuthCode: headlessBrowser(seen),
      tokenStore: new AxMCPFileTokenStore(path),
      refreshBeforeExpiryMs: 3_500,
    });
    const first = client(mcp.url('a'), options());
    await first.callTool('read', {});
    await first.close();
    // A new strategy, store and client, as in the next run of a CLI: the stored token is used.
    const second = client(mcp.url('a'), options());
    expect(textOf(await second.callTool('read', {}))).toBe('read ok');
    expect(as.grants).toEqual(['authorization_code']);
    await second.close();
    // And once it is about to expire, a third run refreshes it with the stored client.
    await new Promise((resolve) => setTimeout(resolve, 2_300));
    const third = client(mcp.url('a'), options());
    expect(textOf(await third.callTool('read', {}))).toBe('read ok');
    expect(seen).toHaveLength(1);
    expect(as.grants).toEqual(['authorization_code', 'refresh_token']);
  });

  it('signOut revokes the tokens at the authorization server (RFC 7009), or only forgets them with revoke: false', async () => {
    const { as, mcp } = await setup(3600, ['a', 'b']);
    const { store, seen, oauth, make } = sharedStrategy(mcp);
    const a = make('a');
    const b = make('b');
    await a.callTool('read', {});
    await b.callTool('read', {});
    const tokensA = store.get(mcp.url('a'))?.tokens;
    const tokensB = store.get(mcp.url('b'))?.tokens;
    expect(tokensA?.refreshToken).toBeDefined();
    expect(await as.provider.AccessToken.find(tokensA!.accessToken)).toBeDefined();

    await oauth.signOut(mcp.url('a'));
    expect(store.get(mcp.url('a'))?.tokens).toBeUndefined();
    expect(await as.provider.AccessToken.find(tokensA!.accessToken)).toBeUndefined();
    expect(await as.provider.RefreshToken.find(tokensA!.refreshToken!)).toBeUndefined();
    // Signed out: the next call authorizes again.
    await a.callTool('read', {});
    expect(seen).toHaveLength(3);

    await oauth.signOut(mcp.url('b'), { revoke: false });
    expect(store.get(mcp.url('b'))?.tokens).toBeUndefined();
    expect(await as.provider.AccessToken.find(tokensB!.accessToken)).toBeDefined();
  });

  it('pushes the authorization request (RFC 9126) when the server requires it: the browser carries only a request_uri', async () => {
    const { mcp } = await setup(3600, ['a'], { requirePAR: true });
    const seen: URL[] = [];
    const mcpClient = client(mcp.url('a'), { redirectUri: REDIRECT_URI, onAuthCode: headlessBrowser(seen) });
    expect(textOf(await mcpClient.callTool('read', {}))).toBe('read ok');
    expect(seen).toHaveLength(1);
    const browser = seen[0]!;
    expect(browser.searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:/);
    expect(browser.searchParams.get('client_id')).toBeTruthy();
    // PKCE, the resource and the scopes went to the server directly, not through the browser.
    for (const name of ['code_challenge', 'resource', 'scope', 'redirect_uri', 'state'])
      expect(browser.searchParams.has(name)).toBe(false);

    const refusing = client(mcp.url('a'), {
      redirectUri: REDIRECT_URI,
      onAuthCode: headlessBrowser([]),
      pushedAuthorizationRequests: false,
    });
    await expect(refusing.callTool('read', {})).rejects.toMatchObject({ code: 'oauth_unsupported' });
  });

  it('keeps tokens of two endpoints apart in one store, each for its own resource', async () => {
    const { mcp } = await setup(3600, ['a', 'b']);
    const { store, seen, oauth, make } = sharedStrategy(mcp);
    await make('a').callTool('read', {});
    await make('b').callTool('read', {});
    expect(seen.map((url) => url.searchParams.get('resource'))).toEqual([mcp.url('a'), mcp.url('b')]);
    const recordA = store.get(mcp.url('a'));
    const recordB = store.get(mcp.url('b'));
    expect(recordA?.tokens?.resource).toBe(mcp.url('a'));
    expect(recordB?.tokens?.resource).toBe(mcp.url('b'));
    expect(recordA?.tokens?.accessToken).not.toBe(recordB?.tokens?.accessToken);
    // Neither endpoint ever saw the other's token.
    const a = new Set(mcp.tokens.get('a'));
    for (const token of mcp.tokens.get('b')!) expect(a.has(token)).toBe(false);
    // The strategy and the store print no secret.
    expect(JSON.stringify(oauth)).not.toContain(recordA!.tokens!.accessToken);
    expect(JSON.stringify(store)).not.toContain(recordA!.tokens!.accessToken);
  });
});
