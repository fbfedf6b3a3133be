import {
  AxMCPClient,
  type AxMCPClientOptions,
  AxMCPHTTPSSETransport,
  type AxMCPTransport,
  type AxMCPWebSocketConstructor,
  AxMCPWebSocketTransport,
  axMCPBearerAuthentication,
  axMCPHTTPTransport,
} from '../index.js';
import { AxMCPStdioTransport } from '../node.js';

/** Flags every command that connects shares. */
export interface ConnectFlags {
  era?: string;
  header?: string[];
  bearer?: string;
  'allow-localhost'?: boolean;
  namespace?: string;
  sse?: boolean;
  'legacy-sse-fallback'?: boolean;
  timeout?: string;
}

export const CONNECT_OPTIONS = {
  era: { type: 'string' },
  header: { type: 'string', multiple: true },
  bearer: { type: 'string' },
  'allow-localhost': { type: 'boolean' },
  namespace: { type: 'string' },
  sse: { type: 'boolean' },
  'legacy-sse-fallback': { type: 'boolean' },
  timeout: { type: 'string' },
} as const;

/** The help lines of the flags above, for a command whose namespace defaults to `namespace`. */
export const connectHelp = (
  namespace = 'cli',
) => `<endpoint> is an http(s) or ws(s) URL, stdio:<command>, or -- <command> [args...] (an
argument vector: spaces inside an argument stay).
Common flags:
  --era auto|legacy|modern   pin the protocol era (default auto)
  --header "Name: value"     extra HTTP header (repeatable)
  --bearer TOKEN             bearer token
  --allow-localhost          allow servers on this machine (127.0.0.1, ::1, localhost), plain HTTP included
  --sse                      the 2024-11-05 HTTP+SSE transport (servers that speak nothing newer)
  --legacy-sse-fallback      try Streamable HTTP, fall back to HTTP+SSE when both eras are refused
  --timeout MS               give up on a request after MS milliseconds (default 60000)
  --namespace NAME           the client's namespace (default ${namespace})`;

/** The help lines of the flags above. */
export const CONNECT_HELP = connectHelp();

/** A mistake in how the command was called; printed without a stack, with the command's usage. */
export class UsageError extends Error {}

/**
 * Builds a client for an endpoint: an `http(s)://` or `ws(s)://` URL, `stdio:<command> [args…]`
 * (split on spaces), or an argument vector (`command` given after `--`). SSRF protection stays
 * on unless `--allow-localhost` says otherwise.
 */
export async function connect(
  endpoint: string | readonly string[],
  flags: ConnectFlags,
  extra: Partial<AxMCPClientOptions> = {},
): Promise<AxMCPClient> {
  return new AxMCPClient(await transportFor(endpoint, flags), { ...clientOptionsOf(flags), ...extra });
}

/** The client options the common flags ask for (`--era`, `--timeout`, `--namespace`), checked. */
export function clientOptionsOf(flags: ConnectFlags, defaultNamespace = 'cli'): AxMCPClientOptions {
  const era = flags.era ?? 'auto';
  if (era !== 'auto' && era !== 'legacy' && era !== 'modern')
    throw new UsageError(`--era must be auto, legacy or modern, not "${era}"`);
  const options: AxMCPClientOptions = { namespace: flags.namespace ?? defaultNamespace, era };
  if (flags.timeout !== undefined) {
    const ms = Number(flags.timeout);
    if (!(Number.isFinite(ms) && ms >= 0))
      throw new UsageError(`--timeout must be milliseconds ≥ 0, not "${flags.timeout}"`);
    options.timeoutMs = ms;
  }
  return options;
}

/** The transport of an endpoint, as `connect` and `record` reach it. */
export async function transportFor(
  endpoint: string | readonly string[],
  flags: ConnectFlags,
): Promise<AxMCPTransport> {
  if (typeof endpoint !== 'string') {
    refuseHTTPOnlyFlags(flags, 'a stdio server');
    const [command, ...args] = endpoint;
    if (!command) throw new UsageError('-- needs a command, for example -- npx -y my-server');
    return new AxMCPStdioTransport({ command, args });
  }
  if (endpoint.startsWith('stdio:')) {
    refuseHTTPOnlyFlags(flags, 'a stdio server');
    const [command, ...args] = endpoint.slice('stdio:'.length).trim().split(/\s+/);
    if (!command) throw new UsageError('stdio: needs a command, for example stdio:npx -y my-server');
    return new AxMCPStdioTransport({ command, args });
  }
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new UsageError(`"${endpoint}" is not a URL (or stdio:<command>, or -- <command> [args...])`);
  }
  const ssrfProtection = flags['allow-localhost'] ? { allowLoopback: true } : true;
  if (url.protocol === 'ws:' || url.protocol === 'wss:') {
    // A WebSocket handshake carries no headers of ours (the web API has no way to set them).
    refuseHTTPOnlyFlags(flags, 'a WebSocket endpoint');
    return new AxMCPWebSocketTransport(url, { ssrfProtection, WebSocket: await webSocketConstructor() });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`"${url.protocol}" endpoints are not supported: use http(s), ws(s) or stdio`);
  }
  const headers: Record<string, string> = {};
  for (const header of flags.header ?? []) {
    const colon = header.indexOf(':');
    if (colon <= 0) throw new UsageError(`--header needs "Name: value", got "${header}"`);
    headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
  }
  const authentication = flags.bearer ? axMCPBearerAuthentication(flags.bearer) : undefined;
  const http = { headers, ssrfProtection, ...(authentication ? { authentication } : {}) };
  if (flags.sse && flags['legacy-sse-fallback'])
    throw new UsageError('--sse and --legacy-sse-fallback both choose the transport: give one of them');
  if (flags.sse) return new AxMCPHTTPSSETransport(url, http);
  return axMCPHTTPTransport(url, { ...http, legacySSEFallback: flags['legacy-sse-fallback'] === true });
}

/**
 * Flags only an HTTP endpoint can honour, refused elsewhere: a `--bearer` token that went
 * nowhere would look like a server that ignores it.
 */
function refuseHTTPOnlyFlags(flags: ConnectFlags, what: string): void {
  const given = [
    (flags.header?.length ?? 0) > 0 ? '--header' : undefined,
    flags.bearer !== undefined ? '--bearer' : undefined,
    flags.sse ? '--sse' : undefined,
    flags['legacy-sse-fallback'] ? '--legacy-sse-fallback' : undefined,
  ].filter((flag) => flag !== undefined);
  if (given.length === 0) return;
  throw new UsageError(
    `${given.join(' and ')} ${given.length === 1 ? 'applies' : 'apply'} to http(s) endpoints only, not to ${what}`,
  );
}

/** The global `WebSocket` (Node ≥ 22), else the `ws` package if it is installed. */
async function webSocketConstructor(): Promise<AxMCPWebSocketConstructor> {
  const global = (globalThis as { WebSocket?: AxMCPWebSocketConstructor }).WebSocket;
  if (global) return global;
  try {
    const name = 'ws';
    const module = (await import(name)) as { WebSocket?: AxMCPWebSocketConstructor };
    if (module.WebSocket) return module.WebSocket;
  } catch {
    // Reported below.
  }
  throw new UsageError(
    'This Node has no WebSocket: install the `ws` package (npm install ws) or use Node 22+',
  );
}
