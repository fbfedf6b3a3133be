/**
 * OAuth against a real authorization server: `oidc-provider` (a certified OpenID Provider)
 * on 127.0.0.1, with dynamic registration, PKCE, RFC 8707 resource indicators, RFC 9207
 * `iss` and refresh tokens. In front of it, a protected MCP server (official v1 SDK,
 * sessionful) that checks every token with the authorization server itself (audience,
 * expiry, scopes) and serves RFC 9728 metadata. The "browser" is headless: it follows the
 * authorization server's redirects and an interaction endpoint consents automatically. The
 * peers live in `servers/oidc.ts`; the RFC 9101 / 9396 / 8705 / 7662 tests are beside this file.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AxMCPMemoryTokenStore, type AxMCPOAuthOptions, axMCPOAuth } from '../src/index.js';
import { AxMCPFileTokenStore } from '../src/node.js';
import {
  headlessBrowser,
  oauthTestRig,
  type ProtectedServer,
  REDIRECT_URI,
  resultText,
} from './servers/oidc.js';

const rig = oauthTestRig();
afterEach(rig.cleanup);

function setup(ttl: number, names = ['a'], options: { requirePAR?: boolean } = {}) {
  return rig.servers({ accessTokenTTL: ttl, ...options }, names);
}

function client(url: string, oauth: AxMCPOAuthOptions, extra: { onLog?: (text: string) => void } = {}) {
  return rig.client(url, { oauth }, { onLoggingMessage: (message) => extra.onLog?.(String(message.data)) });
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
  const make = (name: string) => rig.client(mcp.url(name), { authentication: oauth }, { namespace: name });
  return { store, seen, oauth, make };
}

const textOf = resultText;

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
    rig.defer(() => rm(dir, { recursive: true, force: true }));
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
