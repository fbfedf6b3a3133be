/**
 * Mutual TLS (RFC 8705) against `oidc-provider` configured to require it: client
 * authentication with `tls_client_auth` and `self_signed_tls_client_auth` at the
 * `mtls_endpoint_aliases` (an HTTPS listener that asks for certificates; the issuer's own
 * listener is plain HTTP and sees none), and certificate-bound access tokens that the HTTPS
 * MCP server accepts only over a connection with that certificate. The certificate travels
 * through ax-mcp/node's HTTP stack (`tls: { cert, key, ca }`). Throwaway certificates come
 * from `openssl`; without it these tests are skipped.
 */
import { createPublicKey, X509Certificate } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AxMCPClient,
  AxMCPStreamableHTTPTransport,
  axMCPFetchWithClientCertificate,
  axMCPOAuth,
} from '../src/index.js';
import { AxMCPNodeHTTPTransport, createNodeFetch } from '../src/node.js';
import {
  hasOpenSSL,
  type Identity,
  makeCertificates,
  type TestCertificates,
} from './servers/certificates.js';
import {
  headlessBrowser,
  mtlsFeature,
  REDIRECT_URI,
  resultText,
  startAuthorizationServer,
  startProtectedServer,
  type TLSIdentity,
} from './servers/oidc.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve(cleanup()).catch(() => {});
});

const textOf = resultText;

/** The self-signed certificate as a client's registered JWK (`x5c`: oidc-provider computes `x5t#S256`). */
function registeredJWK(identity: Identity) {
  const jwk = createPublicKey(identity.cert).export({ format: 'jwk' });
  return { ...jwk, x5c: [new X509Certificate(identity.cert).raw.toString('base64')] };
}

describe.skipIf(!hasOpenSSL())('mutual TLS (RFC 8705) against oidc-provider', () => {
  let certs: TestCertificates;
  let serverIdentity: TLSIdentity;
  beforeAll(() => {
    certs = makeCertificates();
    serverIdentity = { cert: certs.server.cert, key: certs.server.key, ca: certs.ca };
  });

  /** An authorization server that accepts only mTLS client authentication (unless told), and an HTTPS MCP server. */
  async function setup(options: { clientAuthMethods?: string[] } = {}) {
    const bound = { tls_client_certificate_bound_access_tokens: true, redirect_uris: [], response_types: [] };
    const as = await startAuthorizationServer({
      features: {
        mTLS: mtlsFeature(),
        clientCredentials: { enabled: true },
        introspection: { enabled: true },
      } as never,
      clientAuthMethods: options.clientAuthMethods ?? ['tls_client_auth', 'self_signed_tls_client_auth'],
      mtls: serverIdentity,
      clients: [
        {
          client_id: 'pki-client',
          token_endpoint_auth_method: 'tls_client_auth',
          tls_client_auth_subject_dn: certs.client.subject,
          grant_types: ['client_credentials'],
          ...bound,
        },
        {
          client_id: 'self-signed-client',
          token_endpoint_auth_method: 'self_signed_tls_client_auth',
          jwks: { keys: [registeredJWK(certs.selfSigned)] },
          grant_types: ['client_credentials'],
          ...bound,
        },
      ] as never,
    });
    cleanups.push(() => as.close());
    const mcp = await startProtectedServer(as, ['a'], {
      tls: serverIdentity,
      requireCertificateBinding: true,
    });
    cleanups.push(() => mcp.close());
    return { as, mcp };
  }

  function track(client: AxMCPClient): AxMCPClient {
    cleanups.push(() => client.close());
    return client;
  }

  it('tls_client_auth at the mTLS alias; the certificate-bound token works only over a connection with that certificate', async () => {
    const { as, mcp } = await setup();
    const transport = new AxMCPNodeHTTPTransport(mcp.url('a'), {
      ssrfProtection: { allowLoopback: true },
      tls: { cert: certs.client.cert, key: certs.client.key, ca: certs.ca },
      oauth: { clientCredentials: true, client: { clientId: 'pki-client' } },
    });
    const client = track(
      new AxMCPClient(transport, { namespace: 'mtls', era: 'legacy', onWarning: () => {} }),
    );
    expect(textOf(await client.callTool('read', {}))).toBe('read ok');
    // The token request went to the alias, with the certificate; never to the plain endpoint.
    expect(as.requests).toContain('mtls POST /token');
    expect(as.requests).not.toContain('main POST /token');
    expect(as.grants).toEqual(['client_credentials']);
    const token = mcp.tokens.get('a')!.at(-1)!;
    const issued = await as.provider.ClientCredentials.find(token);
    expect((issued as unknown as Record<string, unknown>)['x5t#S256']).toBe(certs.client.thumbprint);
    expect(mcp.bindingRefusals).toBe(0);
    // The key is nowhere in what the transport prints.
    expect(`${JSON.stringify(transport)} ${String(transport)}`).not.toContain('PRIVATE KEY');

    // The same token over a connection without the certificate: refused by the MCP server.
    const thief = track(
      new AxMCPClient(
        new AxMCPNodeHTTPTransport(mcp.url('a'), {
          ssrfProtection: { allowLoopback: true },
          tls: { ca: certs.ca },
          headers: { authorization: `Bearer ${token}` },
        }),
        { namespace: 'thief', era: 'legacy', onWarning: () => {} },
      ),
    );
    await expect(thief.callTool('read', {})).rejects.toMatchObject({ status: 401 });
    expect(mcp.bindingRefusals).toBe(1);
  });

  it('self_signed_tls_client_auth with createNodeFetch({ tls }); introspection at the alias shows the binding', async () => {
    const { as, mcp } = await setup();
    const tls = { cert: certs.selfSigned.cert, key: certs.selfSigned.key, ca: certs.ca };
    const fetch = createNodeFetch({ ssrfProtection: { allowLoopback: true }, tls });
    cleanups.push(() => fetch.close());
    const oauth = axMCPOAuth({
      fetch,
      ssrfProtection: { allowLoopback: true },
      clientCredentials: true,
      client: { clientId: 'self-signed-client', tokenEndpointAuthMethod: 'self_signed_tls_client_auth' },
    });
    expect(oauth.toJSON()).toMatchObject({ mtls: true });
    const client = track(
      new AxMCPClient(
        new AxMCPNodeHTTPTransport(mcp.url('a'), {
          ssrfProtection: { allowLoopback: true },
          tls,
          authentication: oauth,
        }),
        { namespace: 'mtls', era: 'legacy', onWarning: () => {} },
      ),
    );
    expect(textOf(await client.callTool('read', {}))).toBe('read ok');
    const introspection = await oauth.introspect(mcp.url('a'));
    expect(introspection).toMatchObject({
      active: true,
      clientId: 'self-signed-client',
      certificateThumbprint: certs.selfSigned.thumbprint,
      scopes: ['mcp:read'],
      audience: [mcp.url('a')],
    });
    expect(as.requests).toContain('mtls POST /token/introspection');
    expect(as.requests.filter((line) => line.startsWith('main POST'))).toEqual([]);
  });

  it('a dynamically registered client with a certificate asks for certificate-bound tokens', async () => {
    const { as, mcp } = await setup({
      clientAuthMethods: ['none', 'tls_client_auth', 'self_signed_tls_client_auth'],
    });
    const seen: URL[] = [];
    const client = track(
      new AxMCPClient(
        new AxMCPNodeHTTPTransport(mcp.url('a'), {
          ssrfProtection: { allowLoopback: true },
          tls: { cert: certs.client.cert, key: certs.client.key, ca: certs.ca },
          oauth: { redirectUri: REDIRECT_URI, onAuthCode: headlessBrowser(seen) },
        }),
        { namespace: 'mtls', era: 'legacy', onWarning: () => {} },
      ),
    );
    // The MCP server refuses unbound tokens: this passes only with a bound one.
    expect(textOf(await client.callTool('read', {}))).toBe('read ok');
    const clientId = seen[0]!.searchParams.get('client_id')!;
    const registered = await as.provider.Client.find(clientId);
    expect(registered?.metadata().tls_client_certificate_bound_access_tokens).toBe(true);
    expect(as.requests).toContain('mtls POST /token');
    const issued = await as.provider.AccessToken.find(mcp.tokens.get('a')!.at(-1)!);
    expect((issued as unknown as Record<string, unknown>)['x5t#S256']).toBe(certs.client.thumbprint);
  });

  it('a server that requires mTLS refuses a client without a certificate, typed and naming the option', async () => {
    const { as, mcp } = await setup();
    const client = track(
      new AxMCPClient(
        new AxMCPNodeHTTPTransport(mcp.url('a'), {
          ssrfProtection: { allowLoopback: true },
          tls: { ca: certs.ca }, // trusts the servers, presents nothing
          oauth: { clientCredentials: true, client: { clientId: 'pki-client' } },
        }),
        { namespace: 'mtls', era: 'legacy', onWarning: () => {} },
      ),
    );
    const error = await client.callTool('read', {}).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'AxMCPOAuthError', code: 'oauth_unsupported' });
    expect((error as Error).message).toMatch(/only mutual-TLS client authentication/);
    expect((error as Error).message).toMatch(/tls: \{ cert, key \}/);
    expect(as.requests.filter((line) => line.includes('/token'))).toEqual([]);
  });

  it('the isomorphic core refuses to choose mTLS: unsupported, naming what to use', () => {
    const url = 'https://mcp.example.com/mcp';
    const chosen = [
      {
        clientCredentials: true,
        client: { clientId: 'pki-client', tokenEndpointAuthMethod: 'tls_client_auth' as const },
      },
      { mtls: true },
    ];
    for (const oauth of chosen) {
      let error: unknown;
      try {
        new AxMCPStreamableHTTPTransport(url, { oauth });
      } catch (caught) {
        error = caught;
      }
      expect(error).toMatchObject({ name: 'AxMCPUnsupportedError', code: 'unsupported' });
      expect((error as Error).message).toMatch(
        /AxMCPNodeHTTPTransport from 'ax-mcp\/node' with tls: \{ cert, key \}/,
      );
    }
    // A fetch that says it presents a certificate (a host's own HTTP stack) is accepted.
    const own = axMCPFetchWithClientCertificate(
      (async () => new Response(null, { status: 503 })) as typeof fetch,
    );
    expect(() => new AxMCPStreamableHTTPTransport(url, { fetch: own, oauth: { mtls: true } })).not.toThrow();
    // createNodeFetch with only CAs presents none.
    const caOnly = createNodeFetch({ tls: { ca: certs.ca } });
    cleanups.push(() => caOnly.close());
    expect(() => axMCPOAuth({ fetch: caOnly, mtls: true })).toThrow(/needs a TLS client certificate/);
  });

  it('checks the tls option at construction, without ever showing the key', () => {
    const url = 'https://mcp.example.com/mcp';
    const attempt = (tls: unknown) => {
      try {
        new AxMCPNodeHTTPTransport(url, { tls } as never);
      } catch (error) {
        return error as { code: string; path: string; suggestion?: string; message: string };
      }
      throw new Error('accepted');
    };
    expect(attempt({ cert: certs.client.cert })).toMatchObject({ code: 'invalid_options', path: 'tls.key' });
    expect(attempt({ key: certs.client.key })).toMatchObject({ code: 'invalid_options', path: 'tls.cert' });
    const mismatch = attempt({ cert: certs.client.cert, key: certs.selfSigned.key });
    expect(mismatch).toMatchObject({ code: 'invalid_options', path: 'tls' });
    expect(mismatch.message).toMatch(/matching private key/);
    expect(attempt({ certificate: certs.client.cert, key: certs.client.key })).toMatchObject({
      path: 'tls.certificate',
      suggestion: 'cert',
    });
    expect(attempt({ cert: certs.client.cert, key: 'not a key' })).toMatchObject({ path: 'tls.key' });
    for (const error of [mismatch, attempt({ cert: certs.client.cert })]) {
      expect(JSON.stringify(error)).not.toContain('PRIVATE KEY');
      expect(error.message).not.toContain('PRIVATE KEY');
    }
    let nodeFetchError: unknown;
    try {
      createNodeFetch({ tls: { cert: certs.client.cert, key: certs.selfSigned.key } });
    } catch (error) {
      nodeFetchError = error;
    }
    expect(nodeFetchError).toMatchObject({ code: 'invalid_options', path: 'tls' });
  });
});
