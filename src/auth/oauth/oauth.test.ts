import { describe, expect, it } from 'vitest';
import { AxMCPOAuthError } from './errors.js';
import { axMCPFetchWithClientCertificate } from './mtls.js';
import { axMCPOAuth } from './oauth.js';

/** A resource server and authorization server answered from memory, recording requests. */
function stubServers(prmResource: string) {
  const asked: string[] = [];
  const fetch = async (input: string | URL, init?: RequestInit) => {
    const url = new URL(String(input));
    asked.push(`${init?.method ?? 'GET'} ${url.origin}${url.pathname}`);
    const json = (body: unknown) =>
      new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } });
    if (url.pathname === '/.well-known/oauth-protected-resource/mcp') {
      return json({ resource: prmResource, authorization_servers: ['https://as.example.com'] });
    }
    if (url.href === 'https://as.example.com/.well-known/oauth-authorization-server') {
      return json({
        issuer: 'https://as.example.com',
        authorization_endpoint: 'https://as.example.com/authorize',
        token_endpoint: 'https://as.example.com/token',
        code_challenge_methods_supported: ['S256'],
      });
    }
    return new Response('no', { status: 404 });
  };
  return { fetch, asked };
}

function unauthorized(url: string) {
  return {
    status: 401,
    headers: new Headers({ 'www-authenticate': 'Bearer scope="read"' }),
    url: new URL(url),
    method: 'POST',
    attempt: 0,
  };
}

describe('axMCPOAuth', () => {
  it('prints no secrets and names its sensitive headers', () => {
    const oauth = axMCPOAuth({
      client: { clientId: 'id', clientSecret: 'very-secret' },
      clientCredentials: true,
    });
    expect(JSON.stringify(oauth)).not.toContain('very-secret');
    expect(String(oauth)).toBe('[AxMCPAuthentication oauth]');
    expect(oauth.sensitiveHeaders).toEqual(['authorization', 'dpop']);
  });

  it('refuses options that cannot work', () => {
    expect(() => axMCPOAuth({ clientCredentials: true })).toThrow(/pre-registered client/);
    expect(() => axMCPOAuth({ clientMetadataUrl: 'http://app.example.com/client.json' })).toThrow(/https/);
  });

  it('sends nothing before a challenge, and refuses a resource that is not this endpoint before authorizing', async () => {
    const { fetch, asked } = stubServers('https://evil.example.com/mcp');
    let opened = 0;
    const oauth = axMCPOAuth({
      fetch,
      redirectUri: 'http://127.0.0.1:9/cb',
      onAuthCode: async () => {
        opened++;
        return { code: 'c', state: 's' };
      },
    });
    const url = 'https://mcp.example.com/mcp';
    expect(await oauth.authenticate({ method: 'POST', url: new URL(url), headers: new Headers() })).toEqual(
      {},
    );
    const failure = await Promise.resolve(oauth.challenge!(unauthorized(url))).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(AxMCPOAuthError);
    expect((failure as AxMCPOAuthError).code).toBe('oauth_resource_mismatch');
    expect(asked).toEqual(['GET https://mcp.example.com/.well-known/oauth-protected-resource/mcp']);
    expect(opened).toBe(0);
  });

  it('asks for onAuthCode when a user must authorize, and checks the returned state', async () => {
    const { fetch } = stubServers('https://mcp.example.com/mcp');
    const url = 'https://mcp.example.com/mcp';
    const headless = axMCPOAuth({ fetch, client: { clientId: 'pre' } });
    await expect(Promise.resolve(headless.challenge!(unauthorized(url)))).rejects.toMatchObject({
      code: 'oauth_interaction_required',
    });
    let sentScope: string | null = null;
    const forged = axMCPOAuth({
      fetch,
      client: { clientId: 'pre' },
      redirectUri: 'http://127.0.0.1:9/cb',
      onAuthCode: async (authorizationUrl) => {
        sentScope = authorizationUrl.searchParams.get('scope');
        return { code: 'c', state: 'not-the-state-sent' };
      },
    });
    await expect(Promise.resolve(forged.challenge!(unauthorized(url)))).rejects.toMatchObject({
      code: 'oauth_state_mismatch',
    });
    expect(sentScope).toBe('read');
  });

  it('refuses mTLS without a certificate-presenting fetch, naming what to use', () => {
    const attempt = (options: Parameters<typeof axMCPOAuth>[0]) => {
      try {
        axMCPOAuth(options);
      } catch (error) {
        return error as { code: string; message: string; path?: string };
      }
      return undefined;
    };
    const chosen = attempt({
      clientCredentials: true,
      client: [
        { clientId: 'a', clientSecret: 's' },
        { clientId: 'b', tokenEndpointAuthMethod: 'tls_client_auth' },
      ],
    });
    expect(chosen).toMatchObject({ code: 'unsupported' });
    expect(chosen?.message).toMatch(/client\[1\]\.tokenEndpointAuthMethod 'tls_client_auth'/);
    expect(chosen?.message).toMatch(/AxMCPNodeHTTPTransport/);
    expect(attempt({ mtls: true })).toMatchObject({ code: 'unsupported' });
    const marked = axMCPFetchWithClientCertificate(async () => new Response(null, { status: 404 }));
    expect(attempt({ fetch: marked, mtls: true })).toBeUndefined();
    expect(axMCPOAuth({ fetch: marked }).toJSON()).toMatchObject({ mtls: true });
    expect(
      attempt({
        fetch: marked,
        mtls: false,
        clientCredentials: true,
        client: { clientId: 'b', tokenEndpointAuthMethod: 'self_signed_tls_client_auth' },
      }),
    ).toMatchObject({ code: 'invalid_options', path: 'client.tokenEndpointAuthMethod' });
    expect(attempt({ mTLS: true } as never)).toMatchObject({ code: 'invalid_options', suggestion: 'mtls' });
    expect(attempt({ signedRequestObject: 'yes' } as never)).toMatchObject({ code: 'invalid_options' });
    expect(attempt({ introspectionCacheMs: -1 })).toMatchObject({ code: 'invalid_options' });
  });

  it('granted and introspect answer undefined while there is no token', async () => {
    const oauth = axMCPOAuth({ fetch: stubServers('https://mcp.example.com/mcp').fetch });
    expect(await oauth.granted('https://mcp.example.com/mcp')).toBeUndefined();
    expect(await oauth.introspect('https://mcp.example.com/mcp')).toBeUndefined();
  });
});
