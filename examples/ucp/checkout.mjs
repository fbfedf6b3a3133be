// @ts-check
/**
 * A UCP platform client against the demo shop: discovery and negotiation, catalog search, a
 * checkout with a discount, an authorizer that refuses what is over budget, a complete, and the
 * order. Run: `node examples/ucp/checkout.mjs` against `npx ax-mcp demo --serve` (the shop
 * lives at the demo's origin: `/.well-known/ucp`).
 */
import { AxUCPAuthorizationError, AxUCPClient, generateUCPSigningKey } from 'ax-mcp';

const origin = new URL(process.env.AX_MCP_ENDPOINT ?? 'http://127.0.0.1:3000/mcp').origin;

// #region client
const key = await generateUCPSigningKey('platform-2026'); // publish key.publicKey in your profile's keys[]

const shop = new AxUCPClient(origin, {
  namespace: 'shop',
  profile: 'https://agent.example/.well-known/ucp', // sent as UCP-Agent: profile="…"
  signing: { keyId: 'platform-2026', privateKey: key.privateKey }, // RFC 9421, ES256
  ssrfProtection: { allowLoopback: true }, // the demo runs on this machine, over plain HTTP
  authorizeOperation: async ({ checkout }) => {
    // Called before anything that moves money or commits an order. Ask the user here.
    const seen = /** @type {{ totals: { type: string, amount: number }[] } | undefined} */ (checkout);
    const total = seen?.totals.find((t) => t.type === 'total');
    return total !== undefined && total.amount <= 10_000 ? true : { allow: false, reason: 'over budget' };
  },
});
// #endregion client

// #region flow
const { version, capabilities } = await shop.connect(); // discovery + negotiation
console.log(`UCP ${version}:`, [...capabilities.keys()].join(', '));
const found = await shop.catalog.search({ query: 'widget' });
console.log('found:', /** @type {{ id: string }[]} */ (found.products).map((p) => p.id).join(', '));

const checkout = await shop.checkout.create({ line_items: [{ item: { id: 'widget-a' }, quantity: 2 }] });
const ready = await shop.checkout.update(String(checkout.id), {
  line_items: [{ item: { id: 'widget-a' }, quantity: 2 }],
  buyer: { email: 'ada@example.com' },
  discounts: { codes: ['SAVE10'] },
});
console.log('checkout:', ready.status, JSON.stringify(ready.totals));

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
const order = await shop.order.get(/** @type {{ id: string }} */ (done.order).id);
console.log('order:', order.id, 'for checkout', order.checkout_id);
// #endregion flow

// #region denied
// Twenty widgets are over budget: the authorizer refuses, and nothing is sent to the shop.
const big = await shop.checkout.create({
  line_items: [{ item: { id: 'widget-a' }, quantity: 20 }],
  buyer: { email: 'ada@example.com' },
});
try {
  await shop.checkout.complete(String(big.id), { payment });
} catch (error) {
  if (!(error instanceof AxUCPAuthorizationError)) throw error;
  console.log(`${error.code}: ${error.reason}`); // authorization_denied: over budget
}
// #endregion denied

shop.close();
