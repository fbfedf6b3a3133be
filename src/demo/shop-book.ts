/**
 * The demo shop's book: carts, checkout sessions, orders and charges in memory (bounded), and
 * the UCP operations on them. HTTP, idempotency, signing and webhooks are `shop.ts`'s.
 */
import {
  catalogProduct,
  DEMO_PAYMENT_HANDLER,
  lineItemsOf,
  SHOP_PRODUCTS,
  totalsOf,
} from './shop-catalog.js';

/** The UCP version the shop speaks. */
export const UCP_VERSION = '2026-08-25';
const VERSION = UCP_VERSION;
/** Entries kept per kind (carts, checkouts, orders, idempotency records); the oldest go first. */
export const MAX_ENTRIES = 1_000;

export type Json = Record<string, unknown>;
/** An HTTP status and a UCP response. */
export type Result = [status: number, body: Json];

/** A bounded map: past `MAX_ENTRIES` the oldest entry is dropped. */
export class Bounded<T> extends Map<string, T> {
  override set(key: string, value: T): this {
    super.delete(key);
    super.set(key, value);
    if (this.size > MAX_ENTRIES) this.delete(this.keys().next().value!);
    return this;
  }
}

/** What the shop holds, and the operations on it. */
export class ShopBook {
  readonly carts = new Bounded<Json>();
  readonly checkouts = new Bounded<Json>();
  readonly orders = new Bounded<Json>();
  /** One per completed checkout. */
  readonly charges: Array<{ checkoutId: string; amount: number; currency: string }> = [];
  /** The demo's origin, for links (set when the demo starts). */
  origin = '';

  #ucp(capability: string): Json {
    return {
      version: VERSION,
      capabilities: { [capability]: [{ version: VERSION }] },
      payment_handlers: DEMO_PAYMENT_HANDLER(VERSION),
    };
  }

  /** Runs one operation (idempotency is the caller's). */
  run(name: string, id: string | undefined, body: Json): Result {
    const missing = (what: string): Result =>
      failure(404, 'not_found', `${what} ${String(id).slice(0, 100)} not found`);
    switch (name) {
      case 'catalog.search': {
        const query = String(body.query ?? '')
          .toLowerCase()
          .slice(0, 200);
        const products = SHOP_PRODUCTS.filter(
          (p) => p.title.toLowerCase().includes(query) || p.id.includes(query),
        ).map(catalogProduct);
        return [200, { ucp: this.#ucp('dev.ucp.shopping.catalog.search'), products }];
      }
      case 'catalog.lookup': {
        const ids = Array.isArray(body.ids) ? body.ids.slice(0, 100) : [];
        const products = SHOP_PRODUCTS.filter((p) => ids.includes(p.id)).map(catalogProduct);
        return [200, { ucp: this.#ucp('dev.ucp.shopping.catalog.lookup'), products }];
      }
      case 'catalog.product': {
        const product = SHOP_PRODUCTS.find((p) => p.id === body.id);
        if (!product) return failure(404, 'not_found', `Product ${String(body.id).slice(0, 100)} not found`);
        return [200, { ucp: this.#ucp('dev.ucp.shopping.catalog.lookup'), product: catalogProduct(product) }];
      }
      case 'cart.create':
      case 'cart.update': {
        const cart =
          name === 'cart.create' ? { id: `cart_${crypto.randomUUID().slice(0, 8)}` } : this.carts.get(id!);
        if (!cart) return missing('Cart');
        const items = lineItemsOf(body.line_items);
        if (typeof items === 'string') return failure(400, 'invalid_request', items);
        Object.assign(cart, {
          ucp: this.#ucp('dev.ucp.shopping.cart'),
          line_items: items,
          currency: 'USD',
          totals: totalsOf(items, 0),
        });
        this.carts.set(cart.id as string, cart);
        return [name === 'cart.create' ? 201 : 200, cart];
      }
      case 'cart.get':
        return this.carts.has(id!) ? [200, this.carts.get(id!)!] : missing('Cart');
      case 'cart.cancel': {
        const cart = this.carts.get(id!);
        if (!cart) return missing('Cart');
        this.carts.delete(id!);
        return [200, cart];
      }
      case 'checkout.create': {
        const checkout: Json = {
          ucp: this.#ucp('dev.ucp.shopping.checkout'),
          id: `chk_${crypto.randomUUID().slice(0, 8)}`,
          status: 'incomplete',
          currency: 'USD',
          links: [{ type: 'terms_of_service', url: `${this.origin}/terms` }],
        };
        const problem = applyCheckout(checkout, body);
        if (problem) return failure(400, 'invalid_request', problem);
        this.checkouts.set(checkout.id as string, checkout);
        return [201, checkout];
      }
      case 'checkout.get':
        return this.checkouts.has(id!) ? [200, this.checkouts.get(id!)!] : missing('Checkout');
      case 'checkout.update': {
        const checkout = this.checkouts.get(id!);
        if (!checkout) return missing('Checkout');
        if (checkout.status === 'completed' || checkout.status === 'canceled') {
          return failure(409, 'invalid_state', `Checkout is ${String(checkout.status)}`);
        }
        const problem = applyCheckout(checkout, body);
        return problem ? failure(400, 'invalid_request', problem) : [200, checkout];
      }
      case 'checkout.cancel': {
        const checkout = this.checkouts.get(id!);
        if (!checkout) return missing('Checkout');
        if (checkout.status === 'completed') return failure(409, 'invalid_state', 'Checkout is completed');
        checkout.status = 'canceled';
        return [200, checkout];
      }
      case 'checkout.complete':
        return this.#complete(id!, body);
      case 'order.get':
        return this.orders.has(id!) ? [200, this.orders.get(id!)!] : missing('Order');
      default:
        return failure(404, 'not_found', 'No such operation');
    }
  }

  #complete(id: string, body: Json): Result {
    const checkout = this.checkouts.get(id);
    if (!checkout) return failure(404, 'not_found', `Checkout ${id.slice(0, 100)} not found`);
    if (checkout.status === 'completed') return [200, checkout];
    if (checkout.status !== 'ready_for_complete') {
      return failure(409, 'invalid_state', `Checkout is ${String(checkout.status)}: it needs a buyer email`);
    }
    const instrument = (
      body.payment as { instruments?: Array<{ credential?: { token?: unknown } }> } | undefined
    )?.instruments?.[0];
    if (typeof instrument?.credential?.token !== 'string' || instrument.credential.token === '') {
      return failure(400, 'payment_required', 'A payment instrument with a credential token is required');
    }
    const totals = checkout.totals as Array<{ type: string; amount: number }>;
    const amount = totals.find((t) => t.type === 'total')!.amount;
    this.charges.push({ checkoutId: id, amount, currency: 'USD' });
    if (this.charges.length > MAX_ENTRIES) this.charges.shift();
    const orderId = `ord_${crypto.randomUUID().slice(0, 8)}`;
    const order: Json = {
      ucp: { version: VERSION, capabilities: { 'dev.ucp.shopping.order': [{ version: VERSION }] } },
      id: orderId,
      checkout_id: id,
      permalink_url: `${this.origin}/orders/${orderId}`,
      line_items: (checkout.line_items as Json[]).map((li) => ({
        id: li.id,
        item: li.item,
        quantity: { original: li.quantity, total: li.quantity, fulfilled: 0 },
        totals: li.totals,
        status: 'processing',
      })),
      fulfillment: { expectations: [], events: [] },
      adjustments: [],
      currency: 'USD',
      totals,
    };
    this.orders.set(orderId, order);
    checkout.status = 'completed';
    checkout.order = { id: orderId, permalink_url: order.permalink_url };
    delete checkout.payment;
    return [200, checkout];
  }
}

/** A UCP error response: `ucp.status = "error"` and one message. */
export function failure(status: number, code: string, content: string): Result {
  return [
    status,
    {
      ucp: { version: VERSION, status: 'error' },
      code,
      content,
      messages: [{ type: 'error', code, content, severity: 'recoverable' }],
    },
  ];
}

/** Applies a create/update body to a checkout; a problem as text. */
function applyCheckout(target: Json, body: Json): string | undefined {
  if (body.line_items !== undefined || target.line_items === undefined) {
    const items = lineItemsOf(body.line_items);
    if (typeof items === 'string') return items;
    target.line_items = items;
  }
  if (body.buyer !== undefined) {
    if (typeof body.buyer !== 'object' || body.buyer === null) return 'buyer must be an object';
    target.buyer = body.buyer;
  }
  if (body.discounts !== undefined) target.discounts = body.discounts;
  const codes = (target.discounts as { codes?: unknown } | undefined)?.codes;
  const items = target.line_items as Json[];
  const subtotal = totalsOf(items, 0)[0]!.amount as number;
  const discount = Array.isArray(codes) && codes.includes('SAVE10') ? Math.round(subtotal / 10) : 0;
  target.totals = totalsOf(items, discount);
  if (target.status !== 'completed' && target.status !== 'canceled') {
    const email = (target.buyer as { email?: unknown } | undefined)?.email;
    target.status = typeof email === 'string' && email.includes('@') ? 'ready_for_complete' : 'incomplete';
  }
  return undefined;
}
