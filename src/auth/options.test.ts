/**
 * The options of the authentication strategies, OAuth and the guarded network layer are checked
 * when they are created: a misspelled or mistyped option throws `invalid_options` synchronously,
 * with the path as the user writes it, and the underlying fetch is never called.
 */
import { describe, expect, it } from 'vitest';
import { expectRefusal, refusalOf } from '../../test/helpers/options.js';
import { createGuardedFetch } from '../net/guarded-fetch.js';
import { resolveSSRFPolicy } from '../net/ssrf.js';
import { AxMCPInvalidOptionsError } from '../protocol/errors.js';
import { axMCPHMACAuthentication } from './hmac.js';
import { axMCPClientMetadataDocument } from './oauth/client-metadata.js';
import { axMCPOAuth } from './oauth/oauth.js';
import { AxMCPMemoryTokenStore } from './oauth/token-store.js';
import { axMCPAPIKeyAuthentication, axMCPBasicAuthentication } from './strategies.js';

// biome-ignore lint/suspicious/noExplicitAny: wrong on purpose
type Any = any;

const calls: string[] = [];
const recordingFetch = async (input: string | URL) => {
  calls.push(String(input));
  return new Response('{}');
};

interface Case {
  name: string;
  build: () => unknown;
  path: string;
  suggestion?: string;
  message?: RegExp;
}

const cases: Case[] = [
  {
    name: 'headerName instead of header',
    build: () => axMCPAPIKeyAuthentication({ key: 'k3y-value', headerName: 'X-Key' } as Any),
    path: 'headerName',
    suggestion: 'header',
  },
  {
    name: 'an API key without key',
    build: () => axMCPAPIKeyAuthentication({ header: 'X-Key' } as Any),
    path: 'key',
  },
  {
    name: 'an API key header that is no header name',
    build: () => axMCPAPIKeyAuthentication({ key: 'k3y-value', header: 'X Key' }),
    path: 'header',
  },
  {
    name: 'an API key in a header and a query parameter (a rule across options)',
    build: () => axMCPAPIKeyAuthentication({ key: 'k3y-value', header: 'X-Key', query: 'key' }),
    path: 'query',
    message: /not both/,
  },
  {
    name: 'user instead of username',
    build: () => axMCPBasicAuthentication({ user: 'alice', password: 'p4ssw0rd' } as Any),
    path: 'user',
    suggestion: 'username',
  },
  {
    name: 'a Basic password that is not a string',
    build: () => axMCPBasicAuthentication({ username: 'alice', password: 1234 } as Any),
    path: 'password',
  },
  {
    name: 'an HMAC clock under another name',
    build: () => axMCPHMACAuthentication({ keyId: 'k', secret: 's3cr3t', clock: () => 0 } as Any),
    path: 'clock',
    suggestion: 'now',
  },
  {
    name: 'an HMAC keyId with a separator',
    build: () => axMCPHMACAuthentication({ keyId: 'a=b', secret: 's3cr3t' }),
    path: 'keyId',
  },
  {
    name: 'an HMAC secret of the wrong type',
    build: () => axMCPHMACAuthentication({ keyId: 'k', secret: 42 } as Any),
    path: 'secret',
  },
  {
    name: 'scope instead of scopes',
    build: () => axMCPOAuth({ scope: ['mcp:read'] } as Any),
    path: 'scope',
    suggestion: 'scopes',
  },
  {
    name: 'a token endpoint authentication method outside its list',
    build: () =>
      axMCPOAuth({ client: { clientId: 'c', tokenEndpointAuthMethod: 'client_secret_jwt' as Any } }),
    path: 'client.tokenEndpointAuthMethod',
    suggestion: "'client_secret_post'",
  },
  {
    name: 'client_secret_post without a secret (a rule across options)',
    build: () => axMCPOAuth({ client: [{ clientId: 'c', tokenEndpointAuthMethod: 'client_secret_post' }] }),
    path: 'client[0].clientSecret',
  },
  {
    name: 'workload identity without a client',
    build: () => axMCPOAuth({ workloadIdentity: { assertion: 'jwt' } }),
    path: 'client',
    message: /workloadIdentity/,
  },
  {
    name: 'a client metadata URL over http:',
    build: () => axMCPOAuth({ clientMetadataUrl: 'http://app.example.com/client.json' }),
    path: 'clientMetadataUrl',
  },
  {
    name: 'a token store without delete',
    build: () => axMCPOAuth({ tokenStore: { get() {}, set() {} } as Any }),
    path: 'tokenStore',
  },
  {
    name: 'onAuthCode as a URL',
    build: () => axMCPOAuth({ onAuthCode: 'https://app.example.com/cb' as Any }),
    path: 'onAuthCode',
  },
  {
    name: 'a misspelled idp key in cross-app access',
    build: () =>
      axMCPOAuth({
        client: { clientId: 'app' },
        crossAppAccess: {
          idp: { tokenEndpoint: 'https://idp.example.com/token', clientID: 'a' } as Any,
          idToken: 'id-token',
        },
      }),
    path: 'crossAppAccess.idp.clientID',
    suggestion: 'clientId',
  },
  {
    name: 'an OAuth fetch option that is not a function',
    build: () => axMCPOAuth({ fetch: true as Any }),
    path: 'fetch',
  },
  {
    name: 'a memory token store bound under another name',
    build: () => new AxMCPMemoryTokenStore({ max: 5 } as Any),
    path: 'max',
    suggestion: 'maxEntries',
  },
  {
    name: 'a metadata document with one redirectUri',
    build: () =>
      axMCPClientMetadataDocument({
        clientMetadataUrl: 'https://app.example.com/client.json',
        redirectUri: 'http://127.0.0.1/cb',
      } as Any),
    path: 'redirectUri',
    suggestion: 'redirectUris',
  },
  {
    name: 'a negative maxRedirects',
    build: () => createGuardedFetch({ fetch: recordingFetch, maxRedirects: -1 }),
    path: 'maxRedirects',
  },
  {
    name: 'a misspelled guarded fetch SSRF option',
    build: () =>
      createGuardedFetch({ fetch: recordingFetch, ssrfProtection: { allowLocalhost: true } as Any }),
    path: 'ssrfProtection.allowLocalhost',
    suggestion: 'allowLoopback',
  },
  {
    name: 'allowPrivateNetworks for allowPrivateNetwork',
    build: () => resolveSSRFPolicy({ allowPrivateNetworks: true } as Any),
    path: 'ssrfProtection.allowPrivateNetworks',
    suggestion: 'allowPrivateNetwork',
  },
  {
    name: 'an SSRF flag as a string',
    build: () => resolveSSRFPolicy({ allowHTTP: 'true' } as Any),
    path: 'ssrfProtection.allowHTTP',
  },
];

describe('authentication, OAuth and network options', () => {
  it('has a table worth the name', () => {
    expect(cases.length).toBeGreaterThanOrEqual(20);
  });

  it.each(cases)('refuses $name where it is given', async (entry) => {
    expectRefusal(await refusalOf(entry.build), AxMCPInvalidOptionsError, entry, /k3y-value|p4ssw0rd|s3cr3t/);
    expect(calls).toEqual([]);
  });

  it('builds every documented configuration', async () => {
    const built = [
      axMCPAPIKeyAuthentication({ key: 'k' }),
      axMCPAPIKeyAuthentication({ key: async () => 'k', header: 'X-Key' }),
      axMCPAPIKeyAuthentication({ key: 'k', query: 'api_key' }),
      axMCPBasicAuthentication({ username: 'Aladdin', password: 'open sesame' }),
      axMCPHMACAuthentication({
        keyId: 'k1',
        secret: new Uint8Array([1, 2, 3]),
        now: () => 0,
        nonce: () => 'n',
      }),
      axMCPOAuth(),
      axMCPOAuth({
        redirectUri: 'https://app.example.com/oauth/callback',
        clientMetadataUrl: 'https://app.example.com/oauth/client.json',
        clientMetadata: { clientName: 'Example App', applicationType: 'web' },
        tokenStore: new AxMCPMemoryTokenStore({ maxEntries: 10 }),
        onAuthCode: async () => new URL('https://app.example.com/oauth/callback?code=c&state=s'),
        scopes: ['mcp:read'],
        dpop: 'auto',
        pushedAuthorizationRequests: true,
        offlineAccess: false,
        refreshBeforeExpiryMs: 0,
        maxAuthorizationAttempts: 2,
        onWarning: () => {},
        ssrfProtection: { allowLoopback: true },
        timeoutMs: 5000,
        maxResponseBytes: 1024,
        fetch: recordingFetch,
      }),
      axMCPOAuth({ clientCredentials: true, client: { clientId: 'svc', clientSecret: 'secret' } }),
      axMCPOAuth({
        client: {
          clientId: 'svc',
          tokenEndpointAuthMethod: 'private_key_jwt',
          privateKey: await privateKey(),
        },
        workloadIdentity: { assertion: async () => 'jwt' },
      }),
      createGuardedFetch({ fetch: recordingFetch, ssrfProtection: resolveSSRFPolicy(true), maxRedirects: 0 }),
    ];
    expect(built).toHaveLength(10);
    expect(
      axMCPClientMetadataDocument({
        clientMetadataUrl: 'https://app.example.com/client.json',
        redirectUris: ['http://127.0.0.1/cb'],
      }),
    ).toMatchObject({ client_id: 'https://app.example.com/client.json', application_type: 'native' });
    expect(calls).toEqual([]);
  });
});

async function privateKey(): Promise<CryptoKey> {
  const pair = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, [
    'sign',
    'verify',
  ]);
  return pair.privateKey;
}
