/**
 * Signed UCP order webhooks from the test business into an AxEventRuntime through
 * AxUCPWebhookEventSource: a shipped order arrives as an authenticated `ucp.order.updated`
 * event correlated with the order; unsigned, tampered, foreign-key, stale and replayed
 * deliveries publish nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AxEventContext } from '../src/events/index.js';
import { AxEventRuntime, eventPath, eventRoute, eventTarget } from '../src/events/index.js';
import { axUCPWebhookHandler } from '../src/node.js';
import { AxUCPClient, AxUCPWebhookEventSource, UCP_ORDER_UPDATED } from '../src/ucp/index.js';
import { recordingTarget, startUCPPlatform, testCard, type UCPPlatform } from './servers/ucp/platform.js';
import { startUCPBusiness, type UCPBusiness } from './servers/ucp-business.js';

let business: UCPBusiness;
let platform: UCPPlatform;
let platformURL: string;
let shop: AxUCPClient;
let source: AxUCPWebhookEventSource;
let runtime: AxEventRuntime;
const seen: AxEventContext[] = [];
const placed = new Map<string, string>();
const resumed: Array<{ instance: string; order: string | undefined }> = [];

async function post(headers: Record<string, string>, body: string): Promise<number> {
  const response = await fetch(`${platformURL}/webhooks/ucp`, { method: 'POST', headers, body });
  await response.arrayBuffer();
  return response.status;
}

beforeAll(async () => {
  // The platform: the ax-mcp/node adapter for webhooks, its own profile beside it.
  const webhooks = axUCPWebhookHandler(
    { handle: (request) => source.handle(request) },
    { path: '/webhooks/ucp' },
  );
  platform = await startUCPPlatform({
    capabilities: ['order'],
    orderWebhookPath: '/webhooks/ucp',
    handler: webhooks,
  });
  platformURL = platform.url;
  business = await startUCPBusiness();
  shop = new AxUCPClient(business.url, {
    namespace: 'shop',
    ...platform.clientOptions('url'),
    authorizeOperation: () => true,
  });
  source = new AxUCPWebhookEventSource({ businesses: [{ client: shop, identity: { tenantId: 't1' } }] });
  // The run that places an order waits for it: a continuation on `ucp.order = shop:<orderId>`.
  const owner = eventTarget('owner')
    .invoke(async (_input, ctx) => {
      if (ctx.action === 'wake') {
        const orderId = await placeOrder();
        placed.set(ctx.instanceKey, orderId);
        await ctx.registerContinuation({ correlation: { kind: 'ucp.order', value: `shop:${orderId}` } });
        return { placed: orderId };
      }
      resumed.push({ instance: ctx.instanceKey, order: ctx.event.subject });
      return 'resumed';
    })
    .build();
  runtime = new AxEventRuntime(
    [
      eventRoute('orders').types(UCP_ORDER_UPDATED).authenticated().wake('agent').build(),
      eventRoute('shop').types('app.shop.start').instanceKey(eventPath.data('chat')).wake(owner).build(),
      eventRoute('shipped')
        .types(UCP_ORDER_UPDATED)
        .authenticated()
        .correlate('ucp.order', eventPath.correlation('ucp.order'))
        .resume(owner)
        .build(),
    ],
    { scheduling: 'host', sources: [source] },
  );
  runtime.registerTarget(recordingTarget(seen));
  await runtime.start();
});

afterAll(async () => {
  await runtime?.close();
  shop?.close();
  await business?.close();
  await platform?.close();
});

async function placeOrder(): Promise<string> {
  const created = await shop.checkout.create({ line_items: [{ item: { id: 'tulip-bunch' }, quantity: 1 }] });
  await shop.checkout.update(created.id as string, {
    line_items: [{ item: { id: 'tulip-bunch' }, quantity: 1 }],
    buyer: { email: 'ada@example.com' },
  });
  const done = await shop.checkout.complete(created.id as string, {
    payment: testCard({ id: 'i1', token: 'tok_x' }),
  });
  return (done.order as { id: string }).id;
}

describe('AxUCPWebhookEventSource', () => {
  it('publishes a shipped order as an authenticated event correlated with the order', async () => {
    const orderId = await placeOrder();
    expect(await business.advance(orderId, 'ship')).toBe(200);
    await runtime.runDue();
    expect(seen).toHaveLength(1);
    const record = seen[0]!;
    expect(record.event.type).toBe('ucp.order.updated');
    expect(record.event.subject).toBe(orderId);
    expect(record.trust).toBe('authenticated');
    expect(record.identity).toEqual({ tenantId: 't1' });
    expect(record.ingress.correlation).toContainEqual({ kind: 'ucp.order', value: `shop:${orderId}` });
    const data = record.event.data as { fulfillment: { events: Array<{ type: string }> } };
    expect(data.fulfillment.events[0]?.type).toBe('shipped');
  });

  it('warns about a route waiting for a UCP type no webhook becomes', async () => {
    const warnings: string[] = [];
    const typos = new AxEventRuntime(
      [
        eventRoute('created').types('ucp.order.created').wake('agent').build(),
        eventRoute('all-orders').types('ucp.order.*').wake('agent').build(),
      ],
      {
        scheduling: 'host',
        sources: [
          new AxUCPWebhookEventSource({ businesses: [{ client: shop, identity: { tenantId: 't1' } }] }),
        ],
        onWarning: (message, details) => warnings.push(`${details.code} ${details.routeId}: ${message}`),
      },
    );
    typos.registerTarget(recordingTarget([]));
    await typos.start();
    await typos.close();
    expect(warnings).toEqual([
      'unknown_type created: Route created waits for ucp.order.created (did you mean ucp.order.updated?), ' +
        'which source ucp-webhooks never publishes: its ucp.* types are ucp.order.updated',
    ]);
  });

  it('refuses replayed, unsigned, tampered, stale and unowned deliveries; nothing is published', async () => {
    const orderId = await placeOrder();
    expect(await business.advance(orderId, 'deliver')).toBe(200);
    await runtime.runDue();
    const count = seen.length;
    const last = business.webhooks.at(-1)!;

    // The same delivery again (a replay, or a redelivery): acknowledged, not published again.
    expect(await post(last.headers, last.body)).toBe(200);
    // The same signed body under a new Webhook-Id and a fresh timestamp (neither is signed): not published again.
    expect(
      await post(
        {
          ...last.headers,
          'webhook-id': crypto.randomUUID(),
          'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        },
        last.body,
      ),
    ).toBe(200);
    // Unsigned.
    const { signature: _s, 'signature-input': _i, ...unsigned } = last.headers;
    expect(await post({ ...unsigned, 'webhook-id': crypto.randomUUID() }, last.body)).toBe(401);
    // Tampered body (digest no longer matches).
    expect(await post(last.headers, last.body.replace('delivered', 'returned'))).toBe(400);
    // A new Webhook-Id the signature does not cover is still the same signed body: refused as stale when old.
    expect(
      await post(
        { ...last.headers, 'webhook-id': crypto.randomUUID(), 'webhook-timestamp': '1000' },
        last.body,
      ),
    ).toBe(400);
    // Bad signature bytes.
    expect(
      await post(
        { ...last.headers, 'webhook-id': crypto.randomUUID(), signature: `sig1=:${btoa('x'.repeat(64))}:` },
        last.body,
      ),
    ).toBe(401);
    // A signer that is not a configured business.
    expect(
      await post(
        { ...last.headers, 'ucp-agent': 'profile="https://evil.example/.well-known/ucp"' },
        last.body,
      ),
    ).toBe(403);
    await runtime.runDue();
    expect(seen.length).toBe(count);
    expect(source.refusals.map((r) => r.code)).toEqual([
      'signature_missing',
      'digest_mismatch',
      'webhook_replayed',
      'signature_invalid',
      'unknown_business',
    ]);
  });

  it('a shipped-order webhook resumes exactly the run that placed the order', async () => {
    const t1 = { tenantId: 't1' };
    for (const chat of ['chat-a', 'chat-b']) {
      await runtime.publish({
        event: { id: `start-${chat}`, source: 'app://chat', type: 'app.shop.start', data: { chat } },
        identity: t1,
        trust: 'authenticated',
      });
    }
    await runtime.runDue();
    expect([...placed.keys()].sort()).toEqual(['chat-a', 'chat-b']);
    expect(await business.advance(placed.get('chat-b')!, 'ship')).toBe(200);
    await runtime.runDue();
    expect(resumed).toEqual([{ instance: 'chat-b', order: placed.get('chat-b') }]);
  });
});

describe('AxUCPWebhookEventSource ownsOrder', () => {
  /** Points the platform's webhook handler at a source with this `ownsOrder`, for one delivery. */
  async function deliverWith(ownsOrder: (orderId: string) => unknown) {
    const errors: unknown[] = [];
    const published: AxEventContext[] = [];
    const other = new AxUCPWebhookEventSource({
      businesses: [{ client: shop, identity: { tenantId: 't1' }, ownsOrder: ownsOrder as () => boolean }],
    });
    const own = new AxEventRuntime(
      [eventRoute('orders').types(UCP_ORDER_UPDATED).authenticated().wake('agent').build()],
      {
        scheduling: 'host',
        sources: [other],
        onError: (error) => errors.push(error),
      },
    );
    own.registerTarget(recordingTarget(published));
    await own.start();
    const previous = source;
    source = other;
    try {
      const orderId = await placeOrder();
      const status = await business.advance(orderId, 'ship');
      await own.runDue();
      return { status, errors, published, refusals: other.refusals.map((r) => r.code) };
    } finally {
      source = previous;
      await own.close();
    }
  }

  it('a truthy answer that is not true (a query result) refuses the order, and says what it answered', async () => {
    // pg's query result is an object whether or not a row matched: it owned every order.
    const answer = await deliverWith(() => ({ rows: [], rowCount: 0 }));
    expect(answer.status).toBe(403);
    expect(answer.published).toHaveLength(0);
    expect(answer.refusals).toEqual(['order_not_owned']);
    expect(answer.errors).toEqual([
      expect.objectContaining({
        code: 'invalid_options',
        message: expect.stringContaining('answered an object, not true or false'),
      }),
    ]);
  });

  it('a check that throws is answered 503 for the business to deliver again, and reported', async () => {
    const answer = await deliverWith(() => {
      throw new Error('orders database down');
    });
    expect(answer.status).toBe(503);
    expect(answer.refusals).toEqual(['ownership_check_failed']);
    expect(answer.errors).toEqual([expect.objectContaining({ message: 'orders database down' })]);
  });

  it('true publishes, false refuses without a report', async () => {
    const yes = await deliverWith(async () => true);
    expect([yes.status, yes.published.length, yes.errors.length]).toEqual([200, 1, 0]);
    const no = await deliverWith(() => false);
    expect([no.status, no.published.length, no.errors.length]).toEqual([403, 0, 0]);
  });
});
