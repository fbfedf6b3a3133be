/**
 * AxUCPClient against a real UCP business on 127.0.0.1 (test/servers/ucp-business.ts): the
 * conformance suite's scenarios from the platform side — discovery and negotiation, catalog,
 * cart, checkout with its extensions, a denied then an authorized complete, the order — plus
 * idempotent retries after a cut connection, signatures the business verifies, and bad input
 * from the business.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AxUCPAuthorizationDecision,
  AxUCPAuthorizationError,
  AxUCPClient,
  type AxUCPClientOptions,
  AxUCPError,
  type AxUCPOperationAuthorizationRequest,
  AxUCPSchemaError,
  generateUCPSigningKey,
} from '../src/ucp/index.js';
import { TEST_CARD as CARD, startUCPPlatform, type UCPPlatform } from './servers/ucp/platform.js';
import { startUCPBusiness, type UCPBusiness } from './servers/ucp-business.js';

let business: UCPBusiness;
let platform: UCPPlatform;
let platformURL: string;
let signingKey: UCPPlatform['signingKey'];
let platformProfile: Record<string, unknown>;

beforeAll(async () => {
  platform = await startUCPPlatform({
    capabilities: [
      'catalog.search',
      'catalog.lookup',
      'cart',
      'checkout',
      'fulfillment',
      'discount',
      'order',
    ],
    orderWebhookPath: '/webhooks/ucp',
    extraCapabilities: {
      'com.example.loyalty': [{ version: '2026-08-25', schema: 'https://evil.example/loyalty.json' }],
    },
  });
  ({ url: platformURL, signingKey, profile: platformProfile } = platform);
  business = await startUCPBusiness();
});

afterAll(async () => {
  await business?.close();
  await platform?.close();
});

function client(extra: Partial<AxUCPClientOptions> = {}): AxUCPClient {
  return new AxUCPClient(business.url, {
    namespace: 'shop',
    ...platform.clientOptions(),
    retry: { delayMs: 10 },
    ...extra,
  });
}

async function readyCheckout(shop: AxUCPClient) {
  const created = await shop.checkout.create({ line_items: [{ item: { id: 'rose-bouquet' }, quantity: 2 }] });
  return shop.checkout.update(created.id as string, {
    line_items: [{ item: { id: 'rose-bouquet' }, quantity: 2 }],
    buyer: { email: 'ada@example.com', first_name: 'Ada' },
  });
}

describe('AxUCPClient against the test business', () => {
  it('discovers, negotiates and rejects a capability not bound to its namespace', async () => {
    const shop = client();
    const negotiation = await shop.connect();
    expect(negotiation.version).toBe('2026-08-25');
    expect(negotiation.restEndpoint).toBe(`${business.url}/ucp/v1`);
    expect([...negotiation.capabilities.keys()].sort()).toEqual([
      'dev.ucp.shopping.cart',
      'dev.ucp.shopping.catalog.lookup',
      'dev.ucp.shopping.catalog.search',
      'dev.ucp.shopping.checkout',
      'dev.ucp.shopping.discount',
      'dev.ucp.shopping.fulfillment',
      'dev.ucp.shopping.order',
    ]);
    expect(negotiation.rejected.map((r) => r.name)).toContain('com.example.loyalty');
    expect(negotiation.keys[0]?.kid).toBe('business-2026');
    expect(Object.keys(negotiation.paymentHandlers)).toEqual(['com.example.processor_tokenizer']);
  });

  it('negotiates the previous version through supported_versions (signing_keys accepted)', async () => {
    const previous = {
      ...platformProfile,
      ucp: { ...(platformProfile.ucp as object), version: '2026-04-08' },
    };
    const shop = client({ profile: { url: `${platformURL}/.well-known/ucp`, document: previous as never } });
    const negotiation = await shop.connect();
    expect(negotiation.version).toBe('2026-04-08');
    expect(negotiation.keys[0]?.kid).toBe('business-2026');
    expect(negotiation.capabilities.size).toBe(0); // the platform document's capabilities are at 2026-08-25
  });

  it('discover → search → cart → checkout → denied complete → authorized complete → order', async () => {
    const asked: AxUCPOperationAuthorizationRequest[] = [];
    let decision: AxUCPAuthorizationDecision = { allow: false, reason: 'over budget' };
    const shop = client({
      authorizeOperation: (request) => {
        asked.push(request);
        return decision;
      },
    });
    const found = await shop.catalog.search({ query: 'rose' });
    expect((found.products as Array<{ id: string }>).map((p) => p.id)).toEqual(['rose-bouquet']);
    const looked = await shop.catalog.lookup({ ids: ['tulip-bunch'] });
    expect((looked.products as unknown[]).length).toBe(1);
    const detail = await shop.catalog.product({ id: 'tulip-bunch' });
    expect((detail.product as { title: string }).title).toBe('Tulip bunch');

    const cart = await shop.cart.create({ line_items: [{ item: { id: 'tulip-bunch' }, quantity: 1 }] });
    const cart2 = await shop.cart.update(cart.id as string, {
      line_items: [{ item: { id: 'tulip-bunch' }, quantity: 3 }],
    });
    expect((cart2.totals as Array<{ type: string; amount: number }>).at(-1)?.amount).toBe(7500);
    expect((await shop.cart.get(cart.id as string)).id).toBe(cart.id);

    const created = await shop.checkout.create({
      line_items: [{ item: { id: 'rose-bouquet' }, quantity: 2 }],
    });
    expect(created.status).toBe('incomplete');
    expect(created['com.example.gift_wrap']).toEqual({ available: true }); // unknown fields kept
    const id = created.id as string;
    const updated = await shop.checkout.update(id, {
      line_items: [{ item: { id: 'rose-bouquet' }, quantity: 2 }],
      buyer: { email: 'ada@example.com' },
      fulfillment: { methods: [{ type: 'shipping', destinations: [{ id: 'd1', postal_code: '94043' }] }] },
      discounts: { codes: ['SAVE10'] },
    });
    expect(updated.status).toBe('ready_for_complete');
    expect((updated.totals as Array<{ type: string; amount: number }>).at(-1)?.amount).toBe(8100);
    expect((updated.fulfillment as { methods: unknown[] }).methods).toHaveLength(1);

    const before = business.completeRequests;
    const denied = await shop.checkout.complete(id, { payment: CARD }).catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(AxUCPAuthorizationError);
    expect((denied as AxUCPAuthorizationError).reason).toBe('over budget');
    expect(business.completeRequests).toBe(before); // nothing was sent
    expect(JSON.stringify(denied)).not.toContain('tok_secret');
    expect(JSON.stringify(asked[0]!.args)).not.toContain('tok_secret');
    expect(asked[0]).toMatchObject({ operation: 'checkout.complete', namespace: 'shop', resourceId: id });
    expect((asked[0]!.checkout as { totals: unknown[] }).totals).toHaveLength(3);

    decision = true;
    const chargesBefore = business.charges.length;
    const completed = await shop.checkout.complete(id, { payment: CARD });
    expect(completed.status).toBe('completed');
    expect(business.charges.length).toBe(chargesBefore + 1);
    expect(business.charges.at(-1)).toMatchObject({ checkoutId: id, amount: 8100 });
    const orderId = (completed.order as { id: string }).id;
    const order = await shop.order.get(orderId);
    expect(order.checkout_id).toBe(id);
    expect(business.verified.length).toBeGreaterThan(5); // the business verified our signatures
    expect(new Set(business.verified)).toEqual(new Set(['platform-2026']));
  });

  /** Completes a ready checkout that must be refused: an AxUCPAuthorizationError, nothing sent. */
  async function refusedComplete(shop: ReturnType<typeof client>): Promise<AxUCPAuthorizationError> {
    const checkout = await readyCheckout(shop);
    const before = business.completeRequests;
    const error = await shop.checkout
      .complete(checkout.id as string, { payment: CARD })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AxUCPAuthorizationError);
    expect(business.completeRequests).toBe(before);
    return error as AxUCPAuthorizationError;
  }

  it('refuses complete without an authorizer, sending nothing', async () => {
    await refusedComplete(client());
  });

  it('an authorizer that answers neither a boolean nor { allow } denies, and the error says what it answered', async () => {
    for (const [answer, said] of [
      ['yes', "the string 'yes'"],
      [{ alow: true }, 'an object without allow'],
      [{ allow: 'true' }, "{ allow: the string 'true' }"],
    ] as const) {
      const error = await refusedComplete(client({ authorizeOperation: (() => answer) as never }));
      expect(error.message).toContain(`(it answered ${said}, not true, false or { allow, reason? })`);
    }
  });

  it('retries a complete after a cut connection with the same key: one charge', async () => {
    const shop = client({ authorizeOperation: () => true });
    const checkout = await readyCheckout(shop);
    const chargesBefore = business.charges.length;
    const requestsBefore = business.completeRequests;
    business.fault('checkout.complete', 'cut');
    const completed = await shop.checkout.complete(checkout.id as string, { payment: CARD });
    expect(completed.status).toBe('completed');
    expect(business.completeRequests).toBe(requestsBefore + 2); // the cut attempt and the retry
    expect(business.charges.length).toBe(chargesBefore + 1);
  });

  /** A complete whose connection is cut on its one attempt: charged, and `outcome_unknown`. */
  async function unknownOutcome() {
    const shop = client({ authorizeOperation: () => true, retry: { attempts: 1 } });
    const checkout = await readyCheckout(shop);
    const chargesBefore = business.charges.length;
    business.fault('checkout.complete', 'cut');
    const error = (await shop.checkout
      .complete(checkout.id as string, { payment: CARD })
      .catch((e) => e)) as AxUCPError & { idempotencyKey: string };
    expect(error.code).toBe('outcome_unknown');
    return { shop, checkout, chargesBefore, error };
  }

  it('reports outcome_unknown with the key, and a later retry with that key charges once', async () => {
    const { shop, checkout, chargesBefore, error } = await unknownOutcome();
    expect(business.charges.length).toBe(chargesBefore + 1); // it did charge
    const again = await shop.checkout.complete(
      checkout.id as string,
      { payment: CARD },
      { idempotencyKey: error.idempotencyKey },
    );
    expect(again.status).toBe('completed');
    expect(business.charges.length).toBe(chargesBefore + 1);
  });

  it('refuses a misspelt idempotency key instead of charging again under a fresh one', async () => {
    const { shop, checkout, chargesBefore, error } = await unknownOutcome();
    const requestsBefore = business.completeRequests;
    const retried = await shop.checkout
      .complete(checkout.id as string, { payment: CARD }, { idempotencyKy: error.idempotencyKey } as never)
      .catch((e: unknown) => e);
    expect(retried).toBeInstanceOf(AxUCPError);
    expect(retried).toMatchObject({
      code: 'invalid_options',
      message: expect.stringContaining('did you mean idempotencyKey?'),
    });
    await expect(
      shop.call('checkout.get', { id: checkout.id }, { idempotencyKey: '' }),
    ).rejects.toMatchObject({
      code: 'invalid_options',
    });
    expect(() => shop.connect({ signl: undefined, x: 1 } as never)).toThrow(
      expect.objectContaining({ code: 'invalid_options' }),
    );
    await expect(shop.businessKeys({ refesh: true } as never)).rejects.toMatchObject({
      code: 'invalid_options',
    });
    // Nothing was sent, and the order was charged once.
    expect(business.completeRequests).toBe(requestsBefore);
    expect(business.charges.length).toBe(chargesBefore + 1);
  });

  it('maps a reused key with another payload to idempotency_conflict', async () => {
    const shop = client();
    const key = crypto.randomUUID();
    await shop.checkout.create({ line_items: [{ item: { id: 'rose-bouquet' } }] }, { idempotencyKey: key });
    const error = await shop.checkout
      .create({ line_items: [{ item: { id: 'tulip-bunch' } }] }, { idempotencyKey: key })
      .catch((e: unknown) => e);
    expect((error as AxUCPError).code).toBe('idempotency_conflict');
  });

  it('verifies the signed complete response against the business key', async () => {
    const shop = client({
      authorizeOperation: () => true,
      signing: { keyId: 'platform-2026', privateKey: signingKey.privateKey, verifyResponses: 'required' },
    });
    const checkout = await readyCheckout(shop).catch((e) => e);
    // Checkout responses other than complete are unsigned: 'required' refuses them.
    expect((checkout as AxUCPError).code).toBe('signature_missing');
    const lenient = client({ authorizeOperation: () => true });
    const ready = await readyCheckout(lenient);
    const strictComplete = await shop.checkout.complete(ready.id as string, { payment: CARD });
    expect(strictComplete.status).toBe('completed');
  });

  it('a request signed with an unpublished key is refused by the business', async () => {
    const other = await generateUCPSigningKey('platform-2026');
    const shop = client({ signing: { keyId: 'platform-2026', privateKey: other.privateKey } });
    const error = (await shop.catalog.search({ query: 'rose' }).catch((e) => e)) as AxUCPError & {
      status: number;
    };
    expect(error.code).toBe('http_status');
    expect(error.status).toBe(401);
    expect(business.refusedSignatures.at(-1)).toBe('signature_invalid');
  });

  it('turns bad business input into typed errors', async () => {
    const shop = client({ maxResponseBytes: 1024 * 1024, timeoutMs: 2000 });
    await shop.connect();
    business.fault('catalog.search', 'schema');
    const schema = await shop.catalog.search({ query: 'rose' }).catch((e: unknown) => e);
    expect(schema).toBeInstanceOf(AxUCPSchemaError);
    expect((schema as AxUCPSchemaError).issues[0]?.keyword).toBe('required');
    expect((schema as AxUCPSchemaError).body).toBeDefined();

    business.fault('catalog.search', 'oversized');
    expect(((await shop.catalog.search({ query: 'rose' }).catch((e) => e)) as AxUCPError).code).toBe(
      'message_too_large',
    );
    business.fault('catalog.search', 'proto');
    expect(((await shop.catalog.search({ query: 'rose' }).catch((e) => e)) as AxUCPError).code).toBe(
      'unsafe_key',
    );
    business.fault('catalog.search', 'endless');
    expect(((await shop.catalog.search({ query: 'rose' }).catch((e) => e)) as AxUCPError).code).toBe(
      'message_too_large',
    );
    business.fault('catalog.search', 'stall');
    const stalled = (await shop.catalog.search({ query: 'rose' }).catch((e) => e)) as AxUCPError;
    expect(stalled.code).toBe('timeout');
    // The client is still usable.
    expect(((await shop.catalog.search({ query: 'tulip' })).products as unknown[]).length).toBe(1);
  });

  it('refuses loopback without the SSRF opt-in, and unknown options', async () => {
    const shop = client({ ssrfProtection: true });
    expect(((await shop.connect().catch((e) => e)) as AxUCPError).code).toBe('ssrf_blocked');
    expect(() => client({ authorizeOperaton: () => true } as never)).toThrow(/authorizeOperation/);
  });

  it('a capability the business does not offer fails before sending', async () => {
    const limited = { ...platformProfile, ucp: { ...(platformProfile.ucp as object), capabilities: {} } };
    const shop = client({ profile: { url: `${platformURL}/.well-known/ucp`, document: limited as never } });
    expect(((await shop.order.get('x').catch((e) => e)) as AxUCPError).code).toBe('capability_unsupported');
  });
});
