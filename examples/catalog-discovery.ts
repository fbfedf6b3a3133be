/**
 * Catalog discovery: connect to an MCP server, classify its era, and print what it offers —
 * tools, concrete resources, resource templates (listed, never expanded) — with the cache hints
 * (`ttlMs`, `cacheScope`) of every list.
 *
 * Run: `AX_MCP_URL=http://127.0.0.1:3000/mcp npx tsx examples/catalog-discovery.ts` (see README.md).
 */
import { pathToFileURL } from 'node:url';
import {
  AxMCPClient,
  type AxMCPListKind,
  type AxMCPSSRFOptions,
  AxMCPStreamableHTTPTransport,
} from '../src/index.js';

/** What `main` found. */
export interface CatalogSummary {
  era: 'legacy' | 'modern';
  protocolVersion: string;
  server: string | undefined;
  tools: string[];
  resources: string[];
  templates: string[];
  /** Cache hints per list: `ttlMs` is absent when the server gave none (always, on 2025-11-25). */
  cache: Partial<Record<AxMCPListKind, { ttlMs?: number; cacheScope?: 'public' | 'private' }>>;
}

/** SSRF protection stays on; plain HTTP and loopback are allowed only for a loopback URL. */
function ssrfFor(url: string): true | AxMCPSSRFOptions {
  const { hostname, protocol } = new URL(url);
  const loopback = hostname === '127.0.0.1' || hostname === 'localhost' || hostname === '[::1]';
  return loopback ? { allowHTTP: protocol === 'http:', allowLoopback: true } : true;
}

export async function main(url: string, log: (line: string) => void = console.log): Promise<CatalogSummary> {
  const client = new AxMCPClient(new AxMCPStreamableHTTPTransport(url, { ssrfProtection: ssrfFor(url) }), {
    namespace: 'inventory',
  });
  try {
    // The first call connects; the era is classified once and remembered.
    const catalog = await client.inspectCatalog();
    log(`era ${catalog.era} (${catalog.protocolVersion}), server ${catalog.serverInfo?.name ?? '?'}`);
    log(`tools: ${catalog.tools.map((tool) => tool.name).join(', ')}`);
    log(`resources: ${catalog.resources.map((resource) => resource.uri).join(', ')}`);
    log(`templates (never expanded): ${catalog.resourceTemplates.map((t) => t.uriTemplate).join(', ')}`);
    const cache: CatalogSummary['cache'] = {};
    for (const [kind, info] of Object.entries(catalog.cache) as [
      AxMCPListKind,
      (typeof catalog.cache)[AxMCPListKind],
    ][]) {
      if (!info) continue;
      cache[kind] = {
        ...(info.ttlMs === undefined ? {} : { ttlMs: info.ttlMs }),
        ...(info.cacheScope === undefined ? {} : { cacheScope: info.cacheScope }),
      };
      const ttl = info.ttlMs === undefined ? 'no TTL (refetched when needed)' : `TTL ${info.ttlMs} ms`;
      log(`cache ${kind}: ${ttl}, scope ${info.cacheScope ?? 'unspecified'}`);
    }
    return {
      era: catalog.era,
      protocolVersion: catalog.protocolVersion,
      server: catalog.serverInfo?.name,
      tools: catalog.tools.map((tool) => tool.name),
      resources: catalog.resources.map((resource) => resource.uri),
      templates: catalog.resourceTemplates.map((template) => template.uriTemplate),
      cache,
    };
  } finally {
    await client.close();
  }
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  main(process.env.AX_MCP_URL ?? 'http://127.0.0.1:3000/mcp').catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
