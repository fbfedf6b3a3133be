import {
  AxMCPClient,
  type AxMCPClientOptions,
  AxMCPMemoryEraStore,
  AxMCPStreamableHTTPTransport,
} from '../../src/index.js';
import type { AxMCPStreamableHTTPTransportOptions } from '../../src/transport/index.js';

/** SSRF protection relaxed only as far as loopback test servers need. */
export const LOOPBACK = { allowHTTP: true, allowLoopback: true } as const;

/** A client for a loopback HTTP test server, with its own era store so tests stay independent. */
export function httpClient(
  url: string,
  options: Partial<AxMCPClientOptions> = {},
  transport: AxMCPStreamableHTTPTransportOptions = {},
): AxMCPClient {
  return new AxMCPClient(new AxMCPStreamableHTTPTransport(url, { ssrfProtection: LOOPBACK, ...transport }), {
    namespace: 'test',
    eraStore: new AxMCPMemoryEraStore(),
    ...options,
  });
}

/** Resolves when `check` returns true, polling; fails after `timeoutMs`. */
export async function eventually(check: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
