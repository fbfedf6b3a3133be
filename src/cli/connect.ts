import {
  AxMCPClient,
  type AxMCPClientOptions,
  AxMCPStreamableHTTPTransport,
  axMCPBearerAuthentication,
} from '../index.js';
import { AxMCPStdioTransport } from '../node.js';

/** Flags every command that connects shares. */
export interface ConnectFlags {
  era?: string;
  header?: string[];
  bearer?: string;
  'allow-localhost'?: boolean;
  namespace?: string;
}

export const CONNECT_OPTIONS = {
  era: { type: 'string' },
  header: { type: 'string', multiple: true },
  bearer: { type: 'string' },
  'allow-localhost': { type: 'boolean' },
  namespace: { type: 'string' },
} as const;

/**
 * Builds a client for an endpoint: an `http(s)://` URL, or `stdio:<command> [args…]`.
 * Loopback HTTP is refused unless `--allow-localhost` says otherwise.
 */
export function connect(
  endpoint: string,
  flags: ConnectFlags,
  extra: Partial<AxMCPClientOptions> = {},
): AxMCPClient {
  const era = flags.era ?? 'auto';
  if (era !== 'auto' && era !== 'legacy' && era !== 'modern')
    throw new UsageError(`--era must be auto, legacy or modern`);
  const options: AxMCPClientOptions = { namespace: flags.namespace ?? 'cli', era, ...extra };
  if (endpoint.startsWith('stdio:')) {
    const [command, ...args] = endpoint.slice('stdio:'.length).trim().split(/\s+/);
    if (!command) throw new UsageError('stdio: needs a command, for example stdio:npx -y my-server');
    return new AxMCPClient(new AxMCPStdioTransport({ command, args }), options);
  }
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new UsageError(`"${endpoint}" is not a URL (or stdio:<command>)`);
  }
  const headers: Record<string, string> = {};
  for (const header of flags.header ?? []) {
    const colon = header.indexOf(':');
    if (colon <= 0) throw new UsageError(`--header needs "Name: value", got "${header}"`);
    headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
  }
  const allowLocal = flags['allow-localhost'] === true;
  const transport = new AxMCPStreamableHTTPTransport(url, {
    headers,
    ...(flags.bearer ? { authentication: axMCPBearerAuthentication(flags.bearer) } : {}),
    ssrfProtection: allowLocal ? { allowHTTP: true, allowLoopback: true } : true,
  });
  return new AxMCPClient(transport, options);
}

/** A mistake in how the command was called; printed without a stack. */
export class UsageError extends Error {}
