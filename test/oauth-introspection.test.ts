import { afterEach, describe, expect, it } from 'vitest';
import { type AxMCPAuthorizationDetail, type AxMCPOAuthOptions, axMCPOAuth } from '../src/index.js';
import {
  type AuthorizationServerOptions,
  headlessBrowser,
  oauthTestRig,
  REDIRECT_URI,
  rarFeature,
} from './servers/oidc.js';

const rig = oauthTestRig();
afterEach(rig.cleanup);

const DETAILS: AxMCPAuthorizationDetail[] = [{ type: 'mcp_tools', actions: ['read'] }];

/** Introspection only for authenticated clients, about their own tokens; RAR so answers carry details. */
function introspectionServer(accessTokenTTL = 3600): AuthorizationServerOptions {
  return {
    accessTokenTTL,
    features: {
      clientCredentials: { enabled: true },
      introspection: {
        enabled: true,
        allowedPolicy: (
          _ctx: unknown,
          client: { clientAuthMethod: string; clientId: string },
          token: { clientId?: string },
        ) => client.clientAuthMethod !== 'none' && token.clientId === client.clientId,
      },
      ...rarFeature(),
    } as never,
    discovery: { introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'private_key_jwt'] },
    clients: [
      {
        client_id: 'service',
        client_secret: 'service-secret',
        grant_types: ['client_credentials'],
        authorization_details_types: ['mcp_tools'],
        redirect_uris: [],
        response_types: [],
      } as never,
    ],
  };
}

async function setup(options: AuthorizationServerOptions) {
  const { as, mcp } = await rig.servers(options);
  const introspections = () => as.requests.filter((line) => line === 'main POST /token/introspection').length;
  return { as, mcp, introspections };
}

/** A client of endpoint `a` with its own strategy, returned with it. */
function connect(url: string, options: AxMCPOAuthOptions) {
  const oauth = axMCPOAuth({ ssrfProtection: { allowLoopback: true }, ...options });
  const client = rig.client(url, { authentication: oauth }, { namespace: 'introspection' });
  return { oauth, client };
}

const service: AxMCPOAuthOptions = {
  clientCredentials: true,
  client: { clientId: 'service', clientSecret: 'service-secret' },
  authorizationDetails: DETAILS,
};

describe('token introspection (RFC 7662) against oidc-provider', () => {
  it('answers typed (scopes, audience, expiry, details), reused within the cap, asked again after it', async () => {
    const { as, mcp, introspections } = await setup(introspectionServer());
    const { oauth, client } = connect(mcp.url('a'), { ...service, introspectionCacheMs: 600 });
    expect(await oauth.introspect(mcp.url('a'))).toBeUndefined();
    await client.callTool('read', {});
    const expiresAt = (await oauth.granted(mcp.url('a')))!.expiresAt!;

    const first = await oauth.introspect(mcp.url('a'));
    expect(first).toMatchObject({
      active: true,
      clientId: 'service',
      scopes: ['mcp:read'],
      audience: [mcp.url('a')],
      issuer: as.issuer,
      tokenType: 'Bearer',
      authorizationDetails: DETAILS,
    });
    expect(Math.abs(first!.expiresAt! - expiresAt)).toBeLessThan(2_000);
    expect(introspections()).toBe(1);
    // Within the cap: the same answer, not asked again.
    expect(await oauth.introspect(mcp.url('a'))).toEqual(first);
    expect(introspections()).toBe(1);
    expect(await oauth.introspect(mcp.url('a'), { fresh: true })).toMatchObject({ active: true });
    expect(introspections()).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 700));
    await oauth.introspect(mcp.url('a'));
    expect(introspections()).toBe(3);

    // Revoked at the server: inactive, and nothing else is claimed.
    const token = await as.provider.ClientCredentials.find(mcp.tokens.get('a')!.at(-1)!);
    await token!.destroy();
    // Asked with a misspelt option, the cached "active" came back for the revoked token.
    const before = introspections();
    await expect(oauth.introspect(mcp.url('a'), { refresh: true } as never)).rejects.toMatchObject({
      code: 'invalid_options',
      path: 'refresh',
      suggestion: 'fresh',
    });
    expect(introspections()).toBe(before);
    const revoked = await oauth.introspect(mcp.url('a'), { fresh: true });
    expect(revoked).toEqual({ active: false, checkedAt: expect.any(Number) });
    await expect(oauth.signOut(mcp.url('a'), { revok: false } as never)).rejects.toMatchObject({
      code: 'invalid_options',
      suggestion: 'revoke',
    });
    await expect(oauth.authorize(mcp.url('a'), { scope: ['mcp:read'] } as never)).rejects.toMatchObject({
      code: 'invalid_options',
      suggestion: 'scopes',
    });
    expect(await oauth.granted(mcp.url('a'))).toBeDefined();
    await oauth.signOut(mcp.url('a'), { revoke: false });
    expect(await oauth.introspect(mcp.url('a'))).toBeUndefined();
  });

  it('never reuses an answer past the token lifetime', async () => {
    const { mcp, introspections } = await setup(introspectionServer(2));
    const { oauth, client } = connect(mcp.url('a'), service);
    await client.callTool('read', {});
    expect(await oauth.introspect(mcp.url('a'))).toMatchObject({ active: true });
    expect(await oauth.introspect(mcp.url('a'))).toMatchObject({ active: true });
    expect(introspections()).toBe(1);
    // The default cap (30 s) is far away; the token's expiry (2 s) is not.
    await new Promise((resolve) => setTimeout(resolve, 2_300));
    expect(await oauth.introspect(mcp.url('a'))).toMatchObject({ active: false });
    expect(introspections()).toBe(2);
  });

  it('refuses, typed: a server without introspection, and a public client where it needs authentication', async () => {
    // oidc-provider without the introspection feature.
    const plain = await setup({});
    const first = connect(plain.mcp.url('a'), { redirectUri: REDIRECT_URI, onAuthCode: headlessBrowser([]) });
    await first.client.callTool('read', {});
    await expect(first.oauth.introspect(plain.mcp.url('a'))).rejects.toMatchObject({
      name: 'AxMCPOAuthError',
      code: 'oauth_unsupported',
      message: expect.stringMatching(/no introspection_endpoint/),
    });

    // Introspection for authenticated clients only; this one registered dynamically, as a public client.
    const strict = await setup(introspectionServer());
    const second = connect(strict.mcp.url('a'), {
      redirectUri: REDIRECT_URI,
      onAuthCode: headlessBrowser([]),
    });
    await second.client.callTool('read', {});
    const error = await second.oauth.introspect(strict.mcp.url('a')).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'oauth_unsupported', endpoint: strict.mcp.url('a') });
    expect((error as Error).message).toMatch(
      /does not accept public clients \(it lists client_secret_basic, private_key_jwt\)/,
    );
    expect((error as Error).message).toMatch(/oauth\.client/);
    expect(strict.introspections()).toBe(0);
  });
});
