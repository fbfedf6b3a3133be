/**
 * The shop step of the guided tour: a run places an order at the demo's UCP shop (its complete
 * authorized by the run's own rule), waits on the order, and is resumed — that run and no
 * other — when the shop ships it and its signed webhook arrives through the Node adapter.
 */
import {
  AxPushEventSource,
  AxUCPClient,
  AxUCPWebhookEventSource,
  eventPath,
  eventRoute,
  eventRuntime,
  eventTarget,
  UCP_ORDER_CORRELATION,
  UCP_ORDER_UPDATED,
} from '../index.js';
import { axUCPWebhookListener } from '../node.js';
import { style } from './style.js';

/** Runs the step against the demo at `origin`; true when the order's owner was resumed. */
export async function shopTour(origin: string, note: (text: string) => void): Promise<boolean> {
  const shop = new AxUCPClient(origin, {
    namespace: 'shop',
    profile: 'https://agent.example/.well-known/ucp',
    ssrfProtection: { allowLoopback: true },
    // The run's rule for money: a complete within a 50.00 USD budget, nothing above it.
    authorizeOperation: ({ checkout }) => {
      const totals = (checkout as { totals?: Array<{ type: string; amount: number }> } | undefined)?.totals;
      const total = totals?.find((t) => t.type === 'total')?.amount ?? Number.POSITIVE_INFINITY;
      return total <= 5_000 ? true : { allow: false, reason: 'over the 50.00 USD budget' };
    },
  });
  const webhooks = new AxUCPWebhookEventSource({
    businesses: [{ client: shop, identity: { tenantId: 'demo' } }],
  });
  const app = new AxPushEventSource({ id: 'shop-app' });
  let resumed: string | undefined;
  let resolveShipped = () => {};
  const shipped = new Promise<void>((resolve) => {
    resolveShipped = resolve;
  });
  const buyer = eventTarget('buyer')
    .invoke(async (_input, context) => {
      if (context.action === 'wake') {
        const checkout = await shop.checkout.create({
          line_items: [{ item: { id: 'widget-b' }, quantity: 2 }],
          buyer: { email: 'operator@example.com' },
        });
        const done = await shop.checkout.complete(checkout.id as string, {
          payment: {
            instruments: [
              {
                id: 'i1',
                handler_id: 'demo_tokenizer',
                type: 'card',
                credential: { type: 'token', token: 'tok_demo' },
              },
            ],
          },
        });
        const orderId = (done.order as { id: string }).id;
        await context.registerContinuation({
          correlation: { kind: UCP_ORDER_CORRELATION, value: `shop:${orderId}` },
        });
        note(style.magenta(`→ ${context.instanceKey} placed ${orderId} and waits for it`));
        return { placed: orderId };
      }
      resumed = context.instanceKey;
      note(style.magenta(`→ ${context.instanceKey} resumed: ${context.event.subject} shipped`));
      resolveShipped();
      return 'resumed';
    })
    .build();
  const runtime = eventRuntime({
    sources: [webhooks, app],
    allowVolatile: true,
    routes: [
      eventRoute('shop').types('app.shop.start').instanceKey(eventPath.data('chat')).wake(buyer).build(),
      eventRoute('shipped')
        .types(UCP_ORDER_UPDATED)
        .authenticated()
        .correlate(UCP_ORDER_CORRELATION, eventPath.correlation(UCP_ORDER_CORRELATION))
        .resume(buyer)
        .build(),
    ],
  });
  const listener = await axUCPWebhookListener(webhooks);
  try {
    await runtime.start();
    const registered = await fetch(`${origin}/control/shop/webhook?url=${encodeURIComponent(listener.url)}`, {
      method: 'POST',
    });
    await registered.arrayBuffer();
    note(`the shop at ${origin}/.well-known/ucp sends signed order webhooks to ${listener.url}`);
    const { version } = await shop.connect();
    note(`UCP ${version}: catalog, cart, checkout, order`);
    for (const chat of ['chat-a', 'chat-b']) {
      await app.push({
        event: { id: `shop-${chat}`, source: 'app://demo', type: 'app.shop.start', data: { chat } },
        identity: { tenantId: 'demo' },
        trust: 'authenticated',
      });
    }
    await runtime.waitForIdle();
    const orders = (await (await fetch(`${origin}/control/shop/state`)).json()) as {
      orders: Array<{ id: string }>;
    };
    const last = orders.orders.at(-1)?.id;
    if (last === undefined) return false;
    note(`the shop ships ${last} (POST /control/shop/orders/${last}/ship) and signs its webhook`);
    const ship = await fetch(`${origin}/control/shop/orders/${last}/ship`, { method: 'POST' });
    const { webhook } = (await ship.json()) as { webhook: number };
    note(`the webhook was answered ${webhook}; ${orders.orders.length - 1} other order stayed waiting`);
    await Promise.race([shipped, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    await runtime.waitForIdle();
    return resumed !== undefined;
  } finally {
    await listener.close();
    await runtime.close();
    shop.close();
  }
}
