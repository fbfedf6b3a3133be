/**
 * OAuth peers for the integration tests: `oidc-provider` (a certified OpenID Provider) on
 * 127.0.0.1 with dynamic registration, PKCE, RFC 8707 resource indicators, RFC 9207 `iss`,
 * refresh tokens, revocation and PAR, and whatever else a test switches on (request objects,
 * rich authorization requests, mutual TLS on an HTTPS alias listener, introspection). In
 * front of it, a protected MCP server (official v1 SDK, sessionful) that checks every token
 * with the authorization server itself (audience, expiry, scopes, certificate binding) and
 * serves RFC 9728 metadata. The "browser" is headless: it follows the authorization server's
 * redirects, and an interaction endpoint consents automatically.
 */
import { createHash, randomUUID, type X509Certificate } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHTTPSServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { type ClientMetadata, type Configuration, errors, Provider } from 'oidc-provider';
import * as z from 'zod';
import { closeServer } from '../../src/demo/http.js';
import {
  type AxMCPAuthentication,
  AxMCPClient,
  type AxMCPClientOptions,
  type AxMCPOAuthOptions,
  AxMCPStreamableHTTPTransport,
} from '../../src/index.js';
import { listenLoopback, parseJson, readBody } from './node-http.js';

export const REDIRECT_URI = 'http://127.0.0.1:9/callback';

/** An HTTPS identity (PEM) and the CA that client certificates must chain to. */
export interface TLSIdentity {
  cert: string;
  key: string;
  ca: string;
}

export interface AuthorizationServerOptions {
  /** Access token lifetime in seconds (default 3600). */
  accessTokenTTL?: number;
  requirePAR?: boolean;
  /** More features (merged over the defaults). */
  features?: Configuration['features'];
  /** Pre-registered clients. */
  clients?: ClientMetadata[];
  /** Token endpoint authentication methods (oidc-provider's default list otherwise). */
  clientAuthMethods?: string[];
  /** More metadata to publish. */
  discovery?: Record<string, unknown>;
  /**
   * A second listener, HTTPS with this identity, asking every client for a certificate: its
   * token, introspection, revocation and PAR endpoints are the `mtls_endpoint_aliases`.
   */
  mtls?: TLSIdentity;
  /** The consent refuses (`invalid_authorization_details`) an authorization without them. */
  requireAuthorizationDetails?: boolean;
}

export interface AuthorizationServer {
  issuer: string;
  provider: Provider;
  /** Successful token grants by type. */
  grants: string[];
  /** Requests by listener and path: `main POST /token`, `mtls POST /token/introspection`. */
  requests: string[];
  /** The base URL of the mTLS listener, when there is one. */
  mtlsBase?: string;
  close(): Promise<void>;
}

/** oidc-provider with short-lived opaque access tokens for any resource, and auto-consent. */
export async function startAuthorizationServer(
  options: AuthorizationServerOptions = {},
): Promise<AuthorizationServer> {
  let provider: Provider | undefined;
  const grants: string[] = [];
  const requests: string[] = [];
  const handle = (listener: string) => (req: IncomingMessage, res: ServerResponse) => {
    requests.push(`${listener} ${req.method} ${new URL(req.url ?? '/', 'http://x').pathname}`);
    if (!provider) {
      res.statusCode = 503;
      res.end();
      return;
    }
    if (req.url?.startsWith('/interaction/')) {
      void consent(provider, req, res, options.requireAuthorizationDetails ?? false).catch(
        (error: unknown) => {
          res.statusCode = 500;
          res.end(String(error));
        },
      );
      return;
    }
    provider.callback()(req, res);
  };
  const server = await listenLoopback(handle('main'));
  const closers = [() => server.close()];
  let mtlsBase: string | undefined;
  if (options.mtls) {
    const mtls = await listenHTTPS(options.mtls, handle('mtls'));
    closers.push(() => mtls.close());
    mtlsBase = mtls.url('');
  }
  const issuer = server.url('');
  const accessTokenTTL = options.accessTokenTTL ?? 3600;
  const discovery: Record<string, unknown> = { ...options.discovery };
  if (mtlsBase !== undefined) {
    discovery.mtls_endpoint_aliases = {
      token_endpoint: `${mtlsBase}/token`,
      introspection_endpoint: `${mtlsBase}/token/introspection`,
      revocation_endpoint: `${mtlsBase}/token/revocation`,
      pushed_authorization_request_endpoint: `${mtlsBase}/request`,
    };
  }
  const configuration: Configuration = {
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
      ...options.features,
    },
    scopes: ['openid', 'offline_access'],
    issueRefreshToken: async () => true,
    ttl: { RefreshToken: 3600, Grant: 3600, Session: 3600, Interaction: 3600 },
    pkce: { required: () => true },
    clientDefaults: { grant_types: ['authorization_code', 'refresh_token'] },
    discovery,
  };
  if (options.clients) configuration.clients = options.clients;
  if (options.clientAuthMethods)
    configuration.clientAuthMethods = options.clientAuthMethods as Configuration['clientAuthMethods'];
  provider = new Provider(issuer, configuration);
  provider.on('grant.success', (ctx) => {
    grants.push(String((ctx as { oidc: { params?: { grant_type?: unknown } } }).oidc.params?.grant_type));
  });
  const result: AuthorizationServer = {
    issuer,
    provider,
    grants,
    requests,
    close: async () => {
      for (const close of closers) await close();
    },
  };
  if (mtlsBase !== undefined) result.mtlsBase = mtlsBase;
  return result;
}

/**
 * The mTLS settings of `features.mTLS` for the listeners above: the certificate of the TLS
 * connection, "authorized" when it chains to the listener's CA.
 */
export function mtlsFeature(extra: { certificateBoundAccessTokens?: boolean } = {}) {
  return {
    enabled: true,
    tlsClientAuth: true,
    selfSignedTlsClientAuth: true,
    certificateBoundAccessTokens: extra.certificateBoundAccessTokens ?? true,
    getCertificate: (ctx: { req: IncomingMessage }) => peerCertificate(ctx.req),
    certificateAuthorized: (ctx: { req: IncomingMessage }) =>
      (ctx.req.socket as TLSSocket).authorized === true,
    certificateSubjectMatches: (ctx: { req: IncomingMessage }, property: string, expected: string) =>
      property === 'tls_client_auth_subject_dn' && peerCertificate(ctx.req)?.subject === expected,
  };
}

function peerCertificate(req: IncomingMessage): X509Certificate | undefined {
  const socket = req.socket as Partial<TLSSocket>;
  return typeof socket.getPeerX509Certificate === 'function' ? socket.getPeerX509Certificate() : undefined;
}

/** The interaction endpoint: the user "alice" logs in and consents to what was asked. */
async function consent(
  provider: Provider,
  req: IncomingMessage,
  res: ServerResponse,
  requireAuthorizationDetails: boolean,
): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  const params = details.params as Record<string, string | undefined>;
  if (requireAuthorizationDetails && params.authorization_details === undefined) {
    await provider.interactionFinished(
      req,
      res,
      { error: 'invalid_authorization_details', error_description: 'authorization_details are required' },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  const grant = new provider.Grant({ accountId: 'alice', clientId: params.client_id! });
  const scopes = (params.scope ?? '').split(' ').filter(Boolean);
  const oidc = scopes.filter(
    (s): s is 'openid' | 'offline_access' => s === 'openid' || s === 'offline_access',
  );
  for (const scope of oidc) grant.addOIDCScope(scope);
  const resourceScopes = scopes.filter((s) => s !== 'openid' && s !== 'offline_access');
  if (params.resource) grant.addResourceScope(params.resource, resourceScopes.join(' '));
  // Everything asked for is granted: the details too (RFC 9396 §7).
  const requested: unknown[] = params.authorization_details ? JSON.parse(params.authorization_details) : [];
  for (const detail of requested) (grant as unknown as { addRar(d: unknown): void }).addRar(detail);
  const grantId = await grant.save();
  await provider.interactionFinished(
    req,
    res,
    { login: { accountId: 'alice' }, consent: { grantId } },
    { mergeWithLastSubmission: false },
  );
}

/** The headless browser: follows the redirects (with cookies) until the redirect URI. */
export function headlessBrowser(seen: URL[]) {
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

/** An HTTPS server on 127.0.0.1 that asks clients for a certificate (and accepts any). */
export async function listenHTTPS(
  identity: TLSIdentity,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url(path: string): string; close(): Promise<void> }> {
  const server = createHTTPSServer(
    { cert: identity.cert, key: identity.key, ca: identity.ca, requestCert: true, rejectUnauthorized: false },
    handler,
  );
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `https://127.0.0.1:${port}${path}`,
    close: () => closeServer(server as unknown as Server),
  };
}

export interface ProtectedServerOptions {
  /** Serve HTTPS with this identity (asking clients for a certificate). */
  tls?: TLSIdentity;
  /** Refuse tokens not bound to a certificate (RFC 8705 `x5t#S256`). A bound token is always checked. */
  requireCertificateBinding?: boolean;
}

export interface ProtectedServer {
  url(name: string): string;
  /** Tokens presented per endpoint name, in order. */
  tokens: Map<string, string[]>;
  /** Makes the server refuse this token from now on (as after a revocation). */
  reject(token: string): void;
  /** Sends a log message to every session's GET stream of endpoint `name`. */
  log(name: string, text: string): Promise<void>;
  /** GET streams opened per endpoint name. */
  streams: Map<string, number>;
  /** Requests refused because the token's certificate binding did not match. */
  bindingRefusals: number;
  close(): Promise<void>;
}

/**
 * A protected MCP server with endpoints `/<name>/mcp`, each its own resource. Tool `read`
 * needs `mcp:read`, tool `write` needs `mcp:write` (else 403 insufficient_scope). A GET
 * stream is closed when the token it was opened with expires.
 */
export async function startProtectedServer(
  as: AuthorizationServer,
  names: string[],
  options: ProtectedServerOptions = {},
): Promise<ProtectedServer> {
  const tokens = new Map<string, string[]>(names.map((n) => [n, []]));
  const streams = new Map<string, number>(names.map((n) => [n, 0]));
  const rejected = new Set<string>();
  const sessions = new Map<
    string,
    { name: string; server: McpServer; transport: StreamableHTTPServerTransport }
  >();
  let base = '';
  let bindingRefusals = 0;
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
          ...(options.tls ? { tls_client_certificate_bound_access_tokens: true } : {}),
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
    const found = rejected.has(token)
      ? undefined
      : ((await as.provider.AccessToken.find(token)) ?? (await as.provider.ClientCredentials.find(token)));
    if (!found || found.isExpired || found.aud !== resourceOf(name))
      return refuse(401, 'error="invalid_token"');
    // RFC 8705 §3: a bound token only with the certificate it is bound to.
    const bound = (found as unknown as Record<string, unknown>)['x5t#S256'];
    if (bound !== undefined || options.requireCertificateBinding) {
      const presented = peerCertificate(req);
      const thumbprint = presented
        ? createHash('sha256').update(presented.raw).digest('base64url')
        : undefined;
      if (bound === undefined || thumbprint !== bound) {
        bindingRefusals++;
        return refuse(401, 'error="invalid_token"');
      }
    }
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
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    void handler(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.statusCode = 500;
      res.end(String(error));
    });
  };
  const server = options.tls ? await listenHTTPS(options.tls, serve) : await listenLoopback(serve);
  base = server.url('');
  return {
    url: (name) => `${base}/${name}/mcp`,
    tokens,
    streams,
    get bindingRefusals() {
      return bindingRefusals;
    },
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

/** RFC 9396 in oidc-provider: one type, `mcp_tools`, that must name actions; the policy grants what was asked. */
export function rarFeature() {
  return {
    richAuthorizationRequests: {
      enabled: true,
      types: {
        mcp_tools: {
          validate(_ctx: unknown, detail: { actions?: unknown }) {
            if (!Array.isArray(detail.actions))
              throw new errors.InvalidAuthorizationDetails('actions are required');
          },
        },
      },
      authorizationDetailsForGrantSource: (ctx: { oidc: { grant?: { rar?: unknown[] } } }) =>
        ctx.oidc.grant?.rar,
      authorizationDetailsForAccessToken: (
        ctx: { oidc: { params: { authorization_details?: string } } },
        _token: unknown,
        source: { rar?: unknown[] } | undefined,
      ) =>
        source?.rar ??
        (ctx.oidc.params.authorization_details
          ? JSON.parse(ctx.oidc.params.authorization_details)
          : undefined),
      authorizationDetailsForIntrospection: (_ctx: unknown, token: { rar?: unknown[] }) => token.rar,
    },
  } as unknown as AuthorizationServerOptions['features'];
}

/** The text blocks of a tool result, joined. */
export function resultText(result: { content?: unknown[] }): string {
  return (result.content ?? []).map((block) => (block as { text?: string }).text ?? '').join('');
}

/**
 * What an OAuth test file starts: the authorization server, the protected MCP server and
 * clients, each closed after the test in reverse order (`afterEach(rig.cleanup)`).
 */
export function oauthTestRig() {
  const cleanups: (() => Promise<void> | void)[] = [];
  return {
    /** Registers something to close after the test. */
    defer(cleanup: () => Promise<void> | void): void {
      cleanups.push(cleanup);
    },
    async cleanup(): Promise<void> {
      for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve(cleanup()).catch(() => {});
    },
    /** An authorization server and a protected MCP server with endpoints `names` in front of it. */
    async servers(options: AuthorizationServerOptions = {}, names = ['a']) {
      const as = await startAuthorizationServer(options);
      cleanups.push(() => as.close());
      const mcp = await startProtectedServer(as, names);
      cleanups.push(() => mcp.close());
      return { as, mcp };
    },
    /** A legacy-era client of `url` over loopback with the given OAuth (`oauth` or a shared `authentication`). */
    client(
      url: string,
      auth: { oauth: AxMCPOAuthOptions } | { authentication: AxMCPAuthentication },
      options: Partial<AxMCPClientOptions> = {},
    ): AxMCPClient {
      const created = new AxMCPClient(
        new AxMCPStreamableHTTPTransport(url, { ssrfProtection: { allowLoopback: true }, ...auth }),
        { namespace: 'oauth-test', era: 'legacy', onWarning: () => {}, ...options },
      );
      cleanups.push(() => created.close());
      return created;
    },
  };
}
