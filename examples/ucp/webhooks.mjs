// @ts-check
/**
 * Signed UCP order webhooks as events: AxUCPWebhookEventSource verifies them, the Node adapter
 * from `ax-mcp/node` receives them on a port of their own, and a route wakes a target when an
 * order ships. Run: `node examples/ucp/webhooks.mjs` against `npx ax-mcp demo --serve`; the demo
 * shop ships through `POST /control/shop/orders/<id>/ship`.
 */
import {
  AxUCPClient,
  AxUCPWebhookEventSource,
  eventRoute,
  eventRuntime,
  eventTarget,
  UCP_ORDER_UPDATED,
} from 'ax-mcp';
import { axUCPWebhookListener } from 'ax-mcp/node';

const origin = new URL(process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp').origin;
const shop = new AxUCPClient(origin, {
  namespace: 'shop',
  profile: 'https://agent.example/.well-known/ucp',
  ssrfProtection: { allowLoopback: true },
  authorizeOperation: () => true,
});

/** @type {(subject: string | undefined) => void} */
let shipped = () => {};
const arrived = new Promise((resolve) => (shipped = resolve));

// #region source
const webhooks = new AxUCPWebhookEventSource({
  businesses: [{ client: shop, identity: { tenantId: 't1' } }],
});
const agent = eventTarget('agent')
  .invoke((_input, { event, trust }) => {
    console.log(`${event.type} ${event.subject} (${trust})`);
    shipped(event.subject);
  })
  .build();
const runtime = eventRuntime({
  sources: [webhooks],
  routes: [eventRoute('orders').types(UCP_ORDER_UPDATED).authenticated().wake(agent).build()],
});
await runtime.start();
// #endregion source

// #region listener
// In any framework: return webhooks.handle(request) for POST /webhooks/ucp (a WHATWG Request in,
// a Response out). On node:http, the adapter does it, with a body cap and a deadline:
const listener = await axUCPWebhookListener(webhooks, {
  port: 0,
  maxBodyBytes: 256 * 1024,
  timeoutMs: 10_000,
});
console.log('webhooks at', listener.url); // http://127.0.0.1:<port>/webhooks/ucp
// #endregion listener

// The demo shop sends webhooks to the URL registered at its control endpoint.
await fetch(`${origin}/control/shop/webhook?url=${encodeURIComponent(listener.url)}`, { method: 'POST' });

const checkout = await shop.checkout.create({
  line_items: [{ item: { id: 'widget-b' }, quantity: 1 }],
  buyer: { email: 'ada@example.com' },
});
const payment = {
  instruments: [
    {
      id: 'i1',
      handler_id: 'demo_tokenizer',
      type: 'card',
      credential: { type: 'token', token: 'tok_demo' },
    },
  ],
};
const done = await shop.checkout.complete(String(checkout.id), { payment });
const orderId = /** @type {{ id: string }} */ (done.order).id;
await fetch(`${origin}/control/shop/orders/${orderId}/ship`, { method: 'POST' });
console.log('resumed for', await arrived); // the order id

await listener.close();
await runtime.close();
shop.close();
