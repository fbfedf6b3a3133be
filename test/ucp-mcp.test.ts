/**
 * AxUCPClient over the UCP MCP binding: the same shopping flow as the REST test, through an
 * AxMCPClient against the test business's MCP surface (the official server SDK), with every
 * MCP HTTP request signed (axUCPSigningAuthentication) and verified by the business.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AxMCPClient, AxMCPMemoryEraStore, AxMCPStreamableHTTPTransport } from '../src/index.js';
import { AxUCPAuthorizationError, AxUCPClient, axUCPSigningAuthentication } from '../src/ucp/index.js';
import { LOOPBACK } from './helpers/clients.js';
import { startUCPPlatform, testCard, type UCPPlatform } from './servers/ucp/platform.js';
import { startUCPBusiness, type UCPBusiness } from './servers/ucp-business.js';

let business: UCPBusiness;
let platform: UCPPlatform;
const mcpClients: AxMCPClient[] = [];

const CARD = testCard({ id: 'i1', token: 'tok_mcp' });

beforeAll(async () => {
  platform = await startUCPPlatform({ keyId: 'platform-mcp' });
  business = await startUCPBusiness();
});

afterAll(async () => {
  for (const client of mcpClients) await client.close();
  await business?.close();
  await platform?.close();
});

async function shopOverMCP(authorize: boolean) {
  const { profileURL } = platform;
  const discovery = new AxUCPClient(business.url, {
    namespace: 'shop',
    profile: profileURL,
    ssrfProtection: { allowLoopback: true },
  });
  const { mcpEndpoint } = await discovery.connect();
  const transport = new AxMCPStreamableHTTPTransport(mcpEndpoint!, {
    ssrfProtection: LOOPBACK,
    authentication: axUCPSigningAuthentication({
      signing: { keyId: 'platform-mcp', privateKey: platform.signingKey.privateKey },
      profile: profileURL,
    }),
  });
  const mcp = new AxMCPClient(transport, {
    namespace: 'shop-mcp',
    eraStore: new AxMCPMemoryEraStore(),
    timeoutMs: 10_000,
  });
  mcpClients.push(mcp);
  return new AxUCPClient(business.url, {
    namespace: 'shop',
    profile: profileURL,
    ssrfProtection: { allowLoopback: true },
    mcp,
    retry: { delayMs: 10 },
    ...(authorize ? { authorizeOperation: () => true } : {}),
  });
}

describe('AxUCPClient over the MCP binding', () => {
  it('search → checkout → denied complete → authorized complete → order, signed end to end', async () => {
    const denied = await shopOverMCP(false);
    const found = await denied.catalog.search({ query: 'tulip' });
    expect((found.products as Array<{ id: string }>).map((p) => p.id)).toEqual(['tulip-bunch']);
    const created = await denied.checkout.create({
      line_items: [{ item: { id: 'tulip-bunch' }, quantity: 2 }],
    });
    const id = created.id as string;
    const ready = await denied.checkout.update(id, {
      line_items: [{ item: { id: 'tulip-bunch' }, quantity: 2 }],
      buyer: { email: 'ada@example.com' },
    });
    expect(ready.status).toBe('ready_for_complete');
    const before = business.completeRequests;
    await expect(denied.checkout.complete(id, { payment: CARD })).rejects.toBeInstanceOf(
      AxUCPAuthorizationError,
    );
    expect(business.completeRequests).toBe(before);

    const shop = await shopOverMCP(true);
    const charges = business.charges.length;
    const done = await shop.checkout.complete(id, { payment: CARD });
    expect(done.status).toBe('completed');
    expect(business.charges.length).toBe(charges + 1);
    const order = await shop.order.get((done.order as { id: string }).id);
    expect(order.checkout_id).toBe(id);
    expect(business.verifiedMCP.length).toBeGreaterThan(3);
    expect(new Set(business.verifiedMCP)).toEqual(new Set(['platform-mcp']));
  });

  it('retries a complete after a cut connection with the same idempotency key: one charge', async () => {
    const shop = await shopOverMCP(true);
    const created = await shop.checkout.create({ line_items: [{ item: { id: 'rose-bouquet' } }] });
    const id = created.id as string;
    await shop.checkout.update(id, {
      line_items: [{ item: { id: 'rose-bouquet' } }],
      buyer: { email: 'b@example.com' },
    });
    const charges = business.charges.length;
    const requests = business.completeRequests;
    business.fault('checkout.complete', 'cut');
    const done = await shop.checkout.complete(id, { payment: CARD });
    expect(done.status).toBe('completed');
    expect(business.completeRequests).toBe(requests + 2);
    expect(business.charges.length).toBe(charges + 1);
  });
});
