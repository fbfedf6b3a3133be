/**
 * The demo shop, driven by the UCP client: discovery and negotiation at the demo's origin,
 * catalog, cart, a checkout whose complete is denied and then authorized, an idempotent replay
 * that charges once, a reused key with another body refused, and a shipped order whose signed
 * webhook is published through the Node adapter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordingTarget, testCard } from '../../test/servers/ucp/platform.js';
import { AxMCPClient } from '../client/index.js';
import { type AxEventContext, AxEventRuntime, eventRoute } from '../events/index.js';
import { axUCPWebhookListener } from '../node/ucp/index.js';
import { AxMCPStreamableHTTPTransport } from '../transport/index.js';
import {
  AxUCPClient,
  AxUCPWebhookEventSource,
  generateUCPSigningKey,
  UCP_ORDER_UPDATED,
} from '../ucp/index.js';
import { AxMCPDemoServer } from './server.js';

let demo: AxMCPDemoServer;
let origin: string;
let allow = false;
let shop: AxUCPClient;

const payment = testCard({ id: 'i1', handler_id: 'demo_tokenizer', token: 'tok_demo' });

beforeAll(async () => {
  demo = new AxMCPDemoServer({ keepAliveMs: 0 });
  origin = new URL(await demo.start()).origin;
  shop = new AxUCPClient(origin, {
    namespace: 'shop',
    profile: 'https://platform.example/.well-known/ucp',
    ssrfProtection: { allowLoopback: true },
    authorizeOperation: () => (allow ? true : { allow: false, reason: 'not yet' }),
  });
});

afterAll(async () => {
  shop?.close();
  await demo?.close();
});

async function readyCheckout(): Promise<string> {
  const created = await shop.checkout.create({
    line_items: [{ item: { id: 'widget-a' }, quantity: 2 }],
    buyer: { email: 'ada@example.com' },
  });
  expect(created.status).toBe('ready_for_complete');
  return created.id as string;
}

describe('the demo shop', () => {
  it('is discovered and negotiated at the demo origin, with signed responses', async () => {
    const negotiation = await shop.connect();
    expect(negotiation.version).toBe('2026-08-25');
    expect(negotiation.restEndpoint).toBe(`${origin}/ucp/v1`);
    expect([...negotiation.capabilities.keys()].sort()).toEqual([
      'dev.ucp.shopping.cart',
      'dev.ucp.shopping.catalog.lookup',
      'dev.ucp.shopping.catalog.search',
      'dev.ucp.shopping.checkout',
      'dev.ucp.shopping.discount',
      'dev.ucp.shopping.order',
    ]);
    expect(negotiation.keys.map((k) => k.kid)).toEqual(['demo-shop-2026']);
    const strict = new AxUCPClient(origin, {
      namespace: 'strict',
      profile: 'https://platform.example/.well-known/ucp',
      ssrfProtection: { allowLoopback: true },
      // The demo accepts unsigned requests; its responses must be signed.
      signing: {
        keyId: 'platform',
        privateKey: (await generateUCPSigningKey('platform')).privateKey,
        verifyResponses: 'required',
      },
    });
    const found = await strict.catalog.search({ query: 'widget' });
    expect((found.products as Array<{ id: string }>).map((p) => p.id)).toEqual(['widget-a', 'widget-b']);
    strict.close();
  });

  it('serves catalog lookup and carts', async () => {
    const looked = await shop.catalog.lookup({ ids: ['widget-b'] });
    expect((looked.products as Array<{ id: string }>).map((p) => p.id)).toEqual(['widget-b']);
    const cart = await shop.cart.create({ line_items: [{ item: { id: 'widget-b' }, quantity: 3 }] });
    const updated = await shop.cart.update(cart.id as string, { line_items: [{ item: { id: 'widget-a' } }] });
    expect((updated.totals as Array<{ type: string; amount: number }>).at(-1)).toEqual({
      type: 'total',
      amount: 1200,
    });
    expect((await shop.cart.get(cart.id as string)).id).toBe(cart.id);
  });

  it('completes only when authorized, once per idempotency key; a reused key with another body is 409', async () => {
    const id = await readyCheckout();
    allow = false;
    await expect(shop.checkout.complete(id, { payment })).rejects.toMatchObject({
      code: 'authorization_denied',
    });
    expect(demo.shopState()?.charges.filter((c) => c.checkoutId === id)).toEqual([]);
    allow = true;
    const idempotencyKey = crypto.randomUUID();
    const done = await shop.checkout.complete(id, { payment }, { idempotencyKey });
    const again = await shop.checkout.complete(id, { payment }, { idempotencyKey });
    expect(again.order).toEqual(done.order);
    expect(demo.shopState()?.charges.filter((c) => c.checkoutId === id)).toEqual([
      { checkoutId: id, amount: 2400, currency: 'USD' },
    ]);
    await expect(
      shop.checkout.update(id, { buyer: { email: 'b@example.com' } }, { idempotencyKey }),
    ).rejects.toMatchObject({ code: 'idempotency_conflict' });
    const order = await shop.order.get((done.order as { id: string }).id);
    expect(order.checkout_id).toBe(id);
  });

  it('sends a signed webhook when an order ships, published through the Node adapter', async () => {
    const source = new AxUCPWebhookEventSource({
      businesses: [{ client: shop, identity: { tenantId: 't1' } }],
    });
    const seen: AxEventContext[] = [];
    const runtime = new AxEventRuntime(
      [eventRoute('orders').types(UCP_ORDER_UPDATED).authenticated().wake('agent').build()],
      { scheduling: 'host', sources: [source] },
    );
    runtime.registerTarget(recordingTarget(seen));
    await runtime.start();
    const listener = await axUCPWebhookListener(source);
    try {
      const registered = await fetch(
        `${origin}/control/shop/webhook?url=${encodeURIComponent(listener.url)}`,
        {
          method: 'POST',
        },
      );
      expect(registered.status).toBe(200);
      await registered.arrayBuffer();
      allow = true;
      const done = await shop.checkout.complete(await readyCheckout(), { payment });
      const orderId = (done.order as { id: string }).id;
      const shipped = await fetch(`${origin}/control/shop/orders/${orderId}/ship`, { method: 'POST' });
      expect(await shipped.json()).toEqual({ order: orderId, webhook: 200 });
      await runtime.runDue();
      expect(seen.map((s) => [s.event.subject, s.trust])).toEqual([[orderId, 'authenticated']]);
      const foreign = await fetch(
        `${origin}/control/shop/webhook?url=${encodeURIComponent('https://example.com/hook')}`,
        {
          method: 'POST',
        },
      );
      expect(foreign.status).toBe(400);
      await foreign.arrayBuffer();
    } finally {
      await listener.close();
      await runtime.close();
    }
  });

  it('serves the same shop over the UCP MCP binding, idempotent there too', async () => {
    const { mcpEndpoint } = await shop.connect();
    expect(mcpEndpoint).toBe(`${origin}/ucp/mcp`);
    const mcp = new AxMCPClient(
      new AxMCPStreamableHTTPTransport(mcpEndpoint!, { ssrfProtection: { allowLoopback: true } }),
      {
        namespace: 'shop-mcp',
      },
    );
    const overMCP = new AxUCPClient(origin, {
      namespace: 'shop',
      profile: 'https://platform.example/.well-known/ucp',
      ssrfProtection: { allowLoopback: true },
      mcp,
      authorizeOperation: () => true,
    });
    try {
      const found = await overMCP.catalog.search({ query: 'widget b' });
      expect((found.products as Array<{ id: string }>).map((p) => p.id)).toEqual(['widget-b']);
      const created = await overMCP.checkout.create({
        line_items: [{ item: { id: 'widget-b' } }],
        buyer: { email: 'ada@example.com' },
      });
      const idempotencyKey = crypto.randomUUID();
      const done = await overMCP.checkout.complete(created.id as string, { payment }, { idempotencyKey });
      const again = await overMCP.checkout.complete(created.id as string, { payment }, { idempotencyKey });
      expect(again.order).toEqual(done.order);
      expect(demo.shopState()?.charges.filter((c) => c.checkoutId === created.id)).toHaveLength(1);
      const order = await overMCP.order.get((done.order as { id: string }).id);
      expect(order.checkout_id).toBe(created.id);
    } finally {
      overMCP.close();
      await mcp.close();
    }
  });

  it('is off with shop: false', async () => {
    const plain = new AxMCPDemoServer({ shop: false, keepAliveMs: 0 });
    const url = await plain.start();
    try {
      const response = await fetch(new URL('/.well-known/ucp', url));
      expect(response.status).toBe(404);
      await response.arrayBuffer();
    } finally {
      await plain.close();
    }
  });
});
