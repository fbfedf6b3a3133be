import { afterEach, describe, expect, it } from 'vitest';
import {
  type AxMCPAuthorizationDetail,
  AxMCPMemoryTokenStore,
  type AxMCPOAuthOptions,
  axMCPOAuth,
} from '../src/index.js';
import {
  type AuthorizationServerOptions,
  headlessBrowser,
  oauthTestRig,
  REDIRECT_URI,
  rarFeature,
  resultText,
} from './servers/oidc.js';

const rig = oauthTestRig();
afterEach(rig.cleanup);

const setup = (options: AuthorizationServerOptions) => rig.servers(options);
const client = (url: string, oauth: AxMCPOAuthOptions) => rig.client(url, { oauth });
const textOf = resultText;

function decodeJWT(jwt: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [header, payload] = jwt.split('.');
  const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  return { header: decode(header!), payload: decode(payload!) };
}

/** An ES256 key pair; the public half as a JWK for the server's client registration. */
async function signingKey() {
  const pair = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  const jwk = await crypto.subtle.exportKey('jwk', pair.publicKey);
  return { privateKey: pair.privateKey, jwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, kid: 'k1' } };
}

/** oidc-provider with request objects, and one client that signs them with `jwk`'s private key. */
function jarServer(jwk: Record<string, unknown>, options: { require: boolean; requirePAR?: boolean }) {
  return {
    requirePAR: options.requirePAR ?? false,
    features: { requestObjects: { enabled: true, requireSignedRequestObject: options.require } },
    clients: [
      {
        client_id: 'jar-client',
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [jwk] },
        redirect_uris: [REDIRECT_URI],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
    ],
  } as AuthorizationServerOptions;
}

describe('signed request objects (RFC 9101) against oidc-provider', () => {
  it('signs the authorization request when the server requires it: by value, and pushed with PAR', async () => {
    const { privateKey, jwk } = await signingKey();
    for (const requirePAR of [false, true]) {
      const { as, mcp } = await setup(jarServer(jwk, { require: true, requirePAR }));
      const seen: URL[] = [];
      const mcpClient = client(mcp.url('a'), {
        redirectUri: REDIRECT_URI,
        onAuthCode: headlessBrowser(seen),
        client: { clientId: 'jar-client', privateKey: { key: privateKey, kid: 'k1' } },
      });
      expect(textOf(await mcpClient.callTool('read', {}))).toBe('read ok');
      expect(seen).toHaveLength(1);
      const browser = seen[0]!;
      expect(browser.searchParams.get('client_id')).toBe('jar-client');
      // Nothing but the request object (or its reference) travels through the browser.
      for (const name of ['code_challenge', 'resource', 'scope', 'redirect_uri', 'state', 'response_type'])
        expect(browser.searchParams.has(name)).toBe(false);
      if (requirePAR) {
        expect(browser.searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:/);
        expect(browser.searchParams.has('request')).toBe(false);
        expect(as.requests).toContain('main POST /request');
      } else {
        const { header, payload } = decodeJWT(browser.searchParams.get('request')!);
        expect(header).toMatchObject({ alg: 'ES256', typ: 'oauth-authz-req+jwt', kid: 'k1' });
        expect(payload).toMatchObject({
          iss: 'jar-client',
          aud: as.issuer,
          client_id: 'jar-client',
          response_type: 'code',
          code_challenge_method: 'S256',
          resource: mcp.url('a'),
          redirect_uri: REDIRECT_URI,
        });
        expect((payload.exp as number) - (payload.iat as number)).toBe(600);
      }
      expect(as.grants).toEqual(['authorization_code']);
    }
  });

  it('signs on request (signedRequestObject: true) where the server only offers request objects', async () => {
    const { privateKey, jwk } = await signingKey();
    const { mcp } = await setup(jarServer(jwk, { require: false }));
    const plain: URL[] = [];
    await client(mcp.url('a'), {
      redirectUri: REDIRECT_URI,
      onAuthCode: headlessBrowser(plain),
      client: { clientId: 'jar-client', privateKey },
    }).callTool('read', {});
    expect(plain[0]!.searchParams.has('request')).toBe(false);
    expect(plain[0]!.searchParams.has('code_challenge')).toBe(true);

    const signed: URL[] = [];
    const mcpClient = client(mcp.url('a'), {
      redirectUri: REDIRECT_URI,
      onAuthCode: headlessBrowser(signed),
      client: { clientId: 'jar-client', privateKey },
      signedRequestObject: true,
    });
    expect(textOf(await mcpClient.callTool('read', {}))).toBe('read ok');
    expect(signed[0]!.searchParams.has('request')).toBe(true);
    expect(signed[0]!.searchParams.has('code_challenge')).toBe(false);
  });

  it('a client without a signing key, or that refuses to sign, gets a typed error naming the option', async () => {
    const { privateKey, jwk } = await signingKey();
    const { mcp } = await setup(jarServer(jwk, { require: true }));
    const seen: URL[] = [];
    // Dynamically registered: no private key.
    const keyless = client(mcp.url('a'), { redirectUri: REDIRECT_URI, onAuthCode: headlessBrowser(seen) });
    const error = await keyless.callTool('read', {}).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'AxMCPOAuthError', code: 'oauth_unsupported' });
    expect((error as Error).message).toMatch(/require_signed_request_object/);
    expect((error as Error).message).toMatch(/oauth\.client\.privateKey/);
    expect(seen).toHaveLength(0);

    const refusing = client(mcp.url('a'), {
      redirectUri: REDIRECT_URI,
      onAuthCode: headlessBrowser(seen),
      client: { clientId: 'jar-client', privateKey },
      signedRequestObject: false,
    });
    await expect(refusing.callTool('read', {})).rejects.toMatchObject({
      code: 'oauth_unsupported',
      message: expect.stringMatching(/signedRequestObject: false/),
    });
    expect(seen).toHaveLength(0);
  });
});

describe('rich authorization requests (RFC 9396) against oidc-provider', () => {
  it('asks for authorization_details on the authorization request (and the pushed one) and exposes what was granted', async () => {
    for (const requirePAR of [false, true]) {
      const { as, mcp } = await setup({
        features: rarFeature(),
        requirePAR,
        requireAuthorizationDetails: true,
      });
      const details: AxMCPAuthorizationDetail[] = [
        { type: 'mcp_tools', actions: ['read'], locations: [mcp.url('a')], tool: { name: 'read' } },
      ];
      const seen: URL[] = [];
      const store = new AxMCPMemoryTokenStore();
      const oauth = axMCPOAuth({
        redirectUri: REDIRECT_URI,
        onAuthCode: headlessBrowser(seen),
        authorizationDetails: details,
        tokenStore: store,
        ssrfProtection: { allowLoopback: true },
      });
      const mcpClient = rig.client(mcp.url('a'), { authentication: oauth }, { namespace: 'rar' });
      expect(await oauth.granted(mcp.url('a'))).toBeUndefined();
      expect(textOf(await mcpClient.callTool('read', {}))).toBe('read ok');
      if (requirePAR) expect(seen[0]!.searchParams.has('authorization_details')).toBe(false);
      else expect(JSON.parse(seen[0]!.searchParams.get('authorization_details')!)).toEqual(details);

      // What the server granted, from its token response: on the grant and the stored tokens.
      const granted = await oauth.granted(mcp.url('a'));
      expect(granted).toMatchObject({ issuer: as.issuer, resource: mcp.url('a'), scopes: ['mcp:read'] });
      expect(granted?.authorizationDetails).toEqual(details);
      expect(JSON.stringify(granted)).not.toContain(store.get(mcp.url('a'))!.tokens!.accessToken);
      expect(store.get(mcp.url('a'))?.tokens?.authorizationDetails).toEqual(details);
      // And the token the MCP server checked carries them.
      const token = await as.provider.AccessToken.find(mcp.tokens.get('a')!.at(-1)!);
      expect((token as unknown as { rar?: unknown }).rar).toEqual(details);
    }
  });

  it('sends authorization_details on the token request of the client credentials grant', async () => {
    const { as, mcp } = await setup({
      features: { ...rarFeature(), clientCredentials: { enabled: true } },
      clients: [
        {
          client_id: 'service',
          client_secret: 'service-secret',
          grant_types: ['client_credentials'],
          authorization_details_types: ['mcp_tools'],
          redirect_uris: [],
          response_types: [],
        },
      ],
    });
    const details: AxMCPAuthorizationDetail[] = [{ type: 'mcp_tools', actions: ['read', 'list'] }];
    const oauth = axMCPOAuth({
      clientCredentials: true,
      client: { clientId: 'service', clientSecret: 'service-secret' },
      authorizationDetails: details,
      ssrfProtection: { allowLoopback: true },
    });
    const mcpClient = rig.client(mcp.url('a'), { authentication: oauth }, { namespace: 'rar' });
    expect(textOf(await mcpClient.callTool('read', {}))).toBe('read ok');
    expect(as.grants).toEqual(['client_credentials']);
    expect((await oauth.granted(mcp.url('a')))?.authorizationDetails).toEqual(details);
    const token = await as.provider.ClientCredentials.find(mcp.tokens.get('a')!.at(-1)!);
    expect((token as unknown as { rar?: unknown }).rar).toEqual(details);
  });

  it('a server that requires authorization details refuses a client without them, typed and naming the option', async () => {
    const { mcp } = await setup({ features: rarFeature(), requireAuthorizationDetails: true });
    const seen: URL[] = [];
    const without = client(mcp.url('a'), { redirectUri: REDIRECT_URI, onAuthCode: headlessBrowser(seen) });
    const error = await without.callTool('read', {}).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      name: 'AxMCPOAuthError',
      code: 'oauth_authorization_failed',
      oauthError: 'invalid_authorization_details',
    });
    expect((error as Error).message).toMatch(/set oauth\.authorizationDetails/);
    expect(seen).toHaveLength(1);

    // A type the server does not list is refused before anything is sent.
    const unknownType = client(mcp.url('a'), {
      redirectUri: REDIRECT_URI,
      onAuthCode: headlessBrowser(seen),
      authorizationDetails: [{ type: 'payment_initiation', actions: ['pay'] }],
    });
    await expect(unknownType.callTool('read', {})).rejects.toMatchObject({
      code: 'oauth_unsupported',
      message: expect.stringMatching(/'payment_initiation'.*mcp_tools.*oauth\.authorizationDetails/),
    });
    expect(seen).toHaveLength(1);
  });
});
