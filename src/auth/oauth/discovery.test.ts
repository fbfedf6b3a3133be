import { describe, expect, it } from 'vitest';
import {
  canonicalResource,
  discoverAuthorizationServer,
  discoverProtectedResource,
  metadataURLs,
  resourceMatches,
} from './discovery.js';
import { AxMCPOAuthError } from './errors.js';
import { OAuthHTTP } from './http.js';

/** A fetch that answers from a table of URL → JSON, recording what was asked. */
function serve(documents: Record<string, unknown>) {
  const asked: string[] = [];
  const http = new OAuthHTTP({
    ssrfProtection: false,
    fetch: async (input) => {
      const url = String(input);
      asked.push(url);
      const body = documents[url];
      return body === undefined
        ? new Response('not found', { status: 404 })
        : new Response(typeof body === 'string' ? body : JSON.stringify(body), {
            headers: { 'content-type': 'application/json' },
          });
    },
  });
  return { http, asked };
}

describe('resource identifiers', () => {
  it('canonicalizes an endpoint: lower-case host, no query, fragment or bare trailing slash', () => {
    expect(canonicalResource(new URL('HTTPS://MCP.Example.com/mcp?x=1#f'))).toBe(
      'https://mcp.example.com/mcp',
    );
    expect(canonicalResource(new URL('https://mcp.example.com/'))).toBe('https://mcp.example.com');
  });

  it('accepts the endpoint itself or a path prefix on the same origin, nothing else', () => {
    const endpoint = new URL('https://mcp.example.com/tenant/mcp');
    expect(resourceMatches(endpoint, 'https://mcp.example.com/tenant/mcp')).toBe(true);
    expect(resourceMatches(endpoint, 'https://mcp.example.com')).toBe(true);
    expect(resourceMatches(endpoint, 'https://mcp.example.com/tenant')).toBe(true);
    expect(resourceMatches(endpoint, 'https://mcp.example.com/ten')).toBe(false);
    expect(resourceMatches(endpoint, 'https://evil.example.com/tenant/mcp')).toBe(false);
    expect(resourceMatches(endpoint, 'http://mcp.example.com/tenant/mcp')).toBe(false);
    expect(resourceMatches(endpoint, 'https://mcp.example.com/tenant/mcp#x')).toBe(false);
    expect(resourceMatches(endpoint, 'not a url')).toBe(false);
  });
});

describe('discovery', () => {
  it('tries the metadata locations in the MCP order for issuers with and without a path', () => {
    expect(metadataURLs(new URL('https://as.example.com/tenant1')).map(String)).toEqual([
      'https://as.example.com/.well-known/oauth-authorization-server/tenant1',
      'https://as.example.com/.well-known/openid-configuration/tenant1',
      'https://as.example.com/tenant1/.well-known/openid-configuration',
    ]);
    expect(metadataURLs(new URL('https://as.example.com')).map(String)).toEqual([
      'https://as.example.com/.well-known/oauth-authorization-server',
      'https://as.example.com/.well-known/openid-configuration',
    ]);
  });

  it('falls back from path-based to root protected-resource metadata', async () => {
    const { http, asked } = serve({
      'https://mcp.example.com/.well-known/oauth-protected-resource': {
        resource: 'https://mcp.example.com',
        authorization_servers: ['https://as.example.com'],
        scopes_supported: ['read'],
      },
    });
    const prm = await discoverProtectedResource(http, new URL('https://mcp.example.com/mcp'), undefined);
    expect(asked).toEqual([
      'https://mcp.example.com/.well-known/oauth-protected-resource/mcp',
      'https://mcp.example.com/.well-known/oauth-protected-resource',
    ]);
    expect(prm?.resource).toBe('https://mcp.example.com');
    expect(prm?.scopesSupported).toEqual(['read']);
  });

  it('asks only the resource_metadata URL of the challenge, and refuses another resource', async () => {
    const { http, asked } = serve({
      'https://mcp.example.com/custom.json': {
        resource: 'https://evil.example.com/mcp',
        authorization_servers: ['https://as.example.com'],
      },
    });
    const failure = await discoverProtectedResource(
      http,
      new URL('https://mcp.example.com/mcp'),
      'https://mcp.example.com/custom.json',
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AxMCPOAuthError);
    expect((failure as AxMCPOAuthError).code).toBe('oauth_resource_mismatch');
    expect(asked).toEqual(['https://mcp.example.com/custom.json']);
  });

  it('refuses authorization server metadata whose issuer is not the one asked for', async () => {
    const { http } = serve({
      'https://as.example.com/.well-known/oauth-authorization-server': {
        issuer: 'https://attacker.example.com',
        authorization_endpoint: 'https://attacker.example.com/authorize',
        token_endpoint: 'https://attacker.example.com/token',
      },
    });
    await expect(discoverAuthorizationServer(http, 'https://as.example.com')).rejects.toMatchObject({
      code: 'oauth_issuer_mismatch',
    });
  });

  it('keeps only known metadata fields of the right types', async () => {
    const { http } = serve({
      'https://as.example.com/.well-known/openid-configuration/t': JSON.stringify({
        issuer: 'https://as.example.com/t',
        token_endpoint: 'https://as.example.com/t/token',
        authorization_endpoint: 'javascript:alert(1)',
        code_challenge_methods_supported: ['S256', 7],
      }).replace(/}$/, ',"__proto__":{"polluted":true}}'),
    });
    const { metadata } = await discoverAuthorizationServer(http, 'https://as.example.com/t');
    expect(metadata.token_endpoint).toBe('https://as.example.com/t/token');
    expect(metadata.authorization_endpoint).toBeUndefined();
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
    expect((metadata as Record<string, unknown>).polluted).toBeUndefined();
  });
});
