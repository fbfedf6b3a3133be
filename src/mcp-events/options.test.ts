/**
 * The MCP event layer checks its options once, at construction: `invalid_options` with the
 * path and the nearest known name, and nothing sent to the server.
 */
import { describe, expect, it, vi } from 'vitest';
import { expectRefusal, refusalOf } from '../../test/helpers/options.js';
import { AxMCPClient } from '../client/client.js';
import { AxMCPMemoryEraStore } from '../client/era-store.js';
import { AxEventConfigError } from '../events/errors.js';
import { AxMCPStreamableHTTPTransport } from '../transport/http/streamable-http.js';
import { AxMCPEventSource } from './event-source.js';
import { axMCPEventRoutes } from './routes.js';

const fetchSpy = vi.fn(async () => new Response('{}', { status: 500 }));
const client = new AxMCPClient(
  new AxMCPStreamableHTTPTransport('http://127.0.0.1:9/mcp', {
    ssrfProtection: { allowHTTP: true, allowLoopback: true },
    fetch: fetchSpy as unknown as typeof fetch,
  }),
  { namespace: 'inv', eraStore: new AxMCPMemoryEraStore() },
);
const select = () => true;

/** Misuse of a type-checked API, as JavaScript or configuration read from a file would do it. */
// biome-ignore lint/suspicious/noExplicitAny: the point is to pass what the types forbid
const loose = (value: unknown): any => value;

const CASES: { name: string; make: () => unknown; path: string; suggestion?: string; message?: RegExp }[] = [
  {
    name: 'a misspelled resourceSubscriptions',
    make: () => new AxMCPEventSource(loose({ client, resourceSubscription: 'all' })),
    path: 'resourceSubscription',
    suggestion: 'resourceSubscriptions',
  },
  {
    name: 'a policy outside the enumeration',
    make: () => new AxMCPEventSource(loose({ client, resourceSubscriptions: 'some' })),
    path: 'resourceSubscriptions',
    message: /'none' or 'all', an array of non-empty strings or { select }/,
  },
  {
    name: 'a selector with a misspelled select',
    make: () => new AxMCPEventSource(loose({ client, resourceSubscriptions: { selct: select } })),
    path: 'resourceSubscriptions.selct',
    suggestion: 'select',
  },
  {
    name: 'an empty URI in the list',
    make: () => new AxMCPEventSource({ client, resourceSubscriptions: ['inventory://a', ''] }),
    path: 'resourceSubscriptions[1]',
  },
  {
    name: "trust: 'verified'",
    make: () => new AxMCPEventSource(loose({ client, trust: 'verified' })),
    path: 'trust',
    message: /'trusted', 'authenticated' or 'untrusted', got 'verified'/,
  },
  {
    name: 'an identity key users reach for',
    make: () => new AxMCPEventSource(loose({ client, identity: { tenant: 'acme' }, trust: 'authenticated' })),
    path: 'identity.tenant',
    suggestion: 'tenantId',
  },
  {
    name: 'a misspelled client',
    make: () => new AxMCPEventSource(loose({ clinet: client })),
    path: 'clinet',
    suggestion: 'client',
  },
  {
    name: 'no client at all',
    make: () => new AxMCPEventSource(loose({ resourceSubscriptions: 'all' })),
    path: 'client',
  },
  {
    name: 'resolveIdentity as an object',
    make: () => new AxMCPEventSource(loose({ client, resolveIdentity: { tenantId: 'acme' } })),
    path: 'resolveIdentity',
  },
  {
    name: 'axMCPEventRoutes: a handler under another name',
    make: () => axMCPEventRoutes(loose({ client, onCatalogChanged: () => {} })),
    path: 'onCatalogChanged',
    suggestion: 'onCatalogInvalidated',
  },
  {
    name: 'axMCPEventRoutes: onObserve as a string',
    make: () => axMCPEventRoutes(loose({ client, onObserve: 'log' })),
    path: 'onObserve',
  },
  {
    name: 'axMCPEventRoutes: a client that is not one',
    make: () => axMCPEventRoutes(loose({ client: { namespace: 'inv' } })),
    path: 'client',
  },
];

describe('AxMCPEventSource and axMCPEventRoutes options', () => {
  it.each(CASES)('$name', async ({ make, path, suggestion, message }) => {
    expectRefusal(await refusalOf(make), AxEventConfigError, { path, suggestion, message });
    // Nothing reached the server.
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it('accepts every key it declares', () => {
    const source = new AxMCPEventSource({
      client,
      resourceSubscriptions: { select },
      identity: { tenantId: 'acme', accountId: 'a', userId: 'u', sessionId: 's' },
      trust: 'authenticated',
      resolveIdentity: () => undefined,
      id: 'mcp:custom',
      requiresDurable: true,
    });
    expect(source.id).toBe('mcp:custom');
    expect(axMCPEventRoutes({ client, onCatalogInvalidated: () => {}, onObserve: () => {} })).toHaveLength(3);
    expect(fetchSpy).not.toHaveBeenCalled();
  });
});
