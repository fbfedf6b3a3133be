/**
 * The demo shop: a small UCP business (2026-08-25, REST binding) at the demo server's origin,
 * selling the inventory's widgets. `/.well-known/ucp` publishes the profile and an ES256 key;
 * `/ucp/v1/*` serves catalog search and lookup, carts, checkout sessions (create, get, update,
 * complete, cancel) and orders; every response is signed (RFC 9421). Mutating requests need an
 * `Idempotency-Key`: the same key and body answer the stored response (a complete charges once),
 * the same key with another body is 409. Orders advance through `/control/shop/*`, which sends
 * a signed order webhook to the URL registered there. `/ucp/mcp` is the same shop over the UCP
 * MCP binding (tools on the official server SDK).
 *
 * It is a demo, not a business: it keeps everything in memory (bounded), accepts unsigned
 * requests and does not fetch platform profiles (so it never fetches a URL a request names), and
 * delivers webhooks only to the registered URL — on this machine while the demo binds loopback.
 */
import { axUCPSigner, generateUCPSigningKey, signMessage } from '../ucp/signatures.js';
import { AxMCPDemoError } from './control.js';
import { jsonResponse } from './http.js';
import { Bounded, failure, type Json, ShopBook, UCP_VERSION } from './shop-book.js';
import { DEMO_PAYMENT_HANDLER } from './shop-catalog.js';
import { shopMCPHandler } from './shop-mcp.js';

const VERSION = UCP_VERSION;
const SPEC = `https://ucp.dev/${VERSION}/specification`;
const SCHEMA = `https://ucp.dev/${VERSION}/schemas/shopping`;
type Result = [status: number, body: Json];

/** A signed webhook the shop sent. */
export interface AxMCPDemoShopWebhook {
  readonly url: string;
  readonly orderId: string;
  /** The receiver's HTTP status, or 0 when it could not be reached. */
  readonly status: number;
}

/** What `GET /control/shop/state` returns. */
export interface AxMCPDemoShopState {
  readonly webhookURL: string | undefined;
  readonly orders: ReadonlyArray<{ id: string; checkoutId: string; events: readonly string[] }>;
  /** One per completed checkout: a replayed complete charges nothing. */
  readonly charges: ReadonlyArray<{ checkoutId: string; amount: number; currency: string }>;
  readonly webhooks: readonly AxMCPDemoShopWebhook[];
}

const OPERATIONS: ReadonlyArray<[string, RegExp, string]> = [
  ['POST', /^\/catalog\/search$/, 'catalog.search'],
  ['POST', /^\/catalog\/lookup$/, 'catalog.lookup'],
  ['POST', /^\/catalog\/product$/, 'catalog.product'],
  ['POST', /^\/carts$/, 'cart.create'],
  ['GET', /^\/carts\/([^/]+)$/, 'cart.get'],
  ['PUT', /^\/carts\/([^/]+)$/, 'cart.update'],
  ['POST', /^\/carts\/([^/]+)\/cancel$/, 'cart.cancel'],
  ['POST', /^\/checkout-sessions$/, 'checkout.create'],
  ['GET', /^\/checkout-sessions\/([^/]+)$/, 'checkout.get'],
  ['PUT', /^\/checkout-sessions\/([^/]+)$/, 'checkout.update'],
  ['POST', /^\/checkout-sessions\/([^/]+)\/complete$/, 'checkout.complete'],
  ['POST', /^\/checkout-sessions\/([^/]+)\/cancel$/, 'checkout.cancel'],
  ['GET', /^\/orders\/([^/]+)$/, 'order.get'],
];

/** The demo shop. `start(origin)` makes its key; `handle` answers the paths `serves` accepts. */
export class DemoShop {
  readonly #loopbackOnly: boolean;
  readonly #book = new ShopBook();
  readonly #idempotency = new Bounded<{ digest: string; status: number; text: string }>();
  readonly #webhooks: AxMCPDemoShopWebhook[] = [];
  #origin = '';
  #key: Awaited<ReturnType<typeof generateUCPSigningKey>> | undefined;
  #signer: ReturnType<typeof axUCPSigner> | undefined;
  #webhookURL: URL | undefined;
  readonly #mcp = shopMCPHandler(async (call) => {
    const mutating = !call.operation.startsWith('catalog.') && !call.operation.endsWith('.get');
    if (!mutating) return this.#book.run(call.operation, call.id, call.payload);
    const digest = `mcp ${call.operation} ${call.id ?? ''} ${JSON.stringify(call.payload)}`;
    return this.#once(call.idempotencyKey, digest, () =>
      this.#book.run(call.operation, call.id, call.payload),
    );
  });

  /** `loopbackOnly`: webhooks go to loopback URLs only (while the demo binds loopback). */
  constructor(options: { loopbackOnly: boolean }) {
    this.#loopbackOnly = options.loopbackOnly;
  }

  /** Makes the signing key; `origin` is the demo's (`http://127.0.0.1:3000`). */
  async start(origin: string): Promise<void> {
    this.#origin = origin;
    this.#book.origin = origin;
    this.#key = await generateUCPSigningKey('demo-shop-2026');
    this.#signer = axUCPSigner({ keyId: 'demo-shop-2026', privateKey: this.#key.privateKey });
  }

  /** Whether the path is the shop's (profile, REST binding, shop controls). */
  serves(pathname: string, controls: boolean): boolean {
    return (
      pathname === '/.well-known/ucp' ||
      pathname.startsWith('/ucp/v1/') ||
      pathname === '/ucp/mcp' ||
      (controls && pathname.startsWith('/control/shop/'))
    );
  }

  /** Answers one request to a path {@link serves} accepted; `body` was read already. */
  async handle(request: Request, body: string | undefined): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === '/.well-known/ucp') {
      return request.method === 'GET'
        ? jsonResponse(200, this.profile())
        : jsonResponse(405, { error: 'Use GET' });
    }
    if (url.pathname.startsWith('/control/shop/')) return this.#control(request.method, url);
    if (url.pathname === '/ucp/mcp') return this.#mcp.fetch(request);
    const route = url.pathname.slice('/ucp/v1'.length);
    let name: string | undefined;
    let id: string | undefined;
    for (const [method, pattern, operation] of OPERATIONS) {
      const match = method === request.method ? pattern.exec(route) : null;
      if (match) {
        name = operation;
        try {
          id = match[1] === undefined ? undefined : decodeURIComponent(match[1]);
        } catch {
          return this.#signed(...failure(400, 'invalid_request', 'The resource id is not valid'));
        }
        break;
      }
    }
    if (name === undefined) return this.#signed(...failure(404, 'not_found', 'No such operation'));
    if (!/profile="[^"]+"/.test(request.headers.get('ucp-agent') ?? '')) {
      return this.#signed(...failure(400, 'invalid_profile_url', 'UCP-Agent with a profile URL is required'));
    }
    let payload: Json = {};
    if (body !== undefined && body !== '') {
      try {
        const parsed = JSON.parse(body) as unknown;
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new TypeError();
        payload = parsed as Json;
      } catch {
        return this.#signed(...failure(400, 'invalid_request', 'The body must be a JSON object'));
      }
    }
    const mutating = request.method !== 'GET' && !name.startsWith('catalog.');
    if (!mutating) return this.#signed(...this.#book.run(name, id, payload));
    const key = request.headers.get('idempotency-key') ?? undefined;
    const digest = `${request.method} ${route} ${body ?? ''}`;
    return this.#signed(...this.#once(key, digest, () => this.#book.run(name, id, payload)));
  }

  /** Stops the MCP binding. */
  async close(): Promise<void> {
    await this.#mcp.close();
  }

  /**
   * Runs a mutating operation once per idempotency key: the same key and request answer the
   * stored result, the same key with another request is 409, no key is 400.
   */
  #once(key: string | undefined, digest: string, run: () => Result): Result {
    if (!key || key.length > 200) return failure(400, 'invalid_request', 'Idempotency-Key is required');
    const stored = this.#idempotency.get(key);
    if (stored) {
      if (stored.digest !== digest) {
        return failure(409, 'idempotency_conflict', 'The key was used with another request');
      }
      return [stored.status, JSON.parse(stored.text) as Json];
    }
    const [status, result] = run();
    if (status < 500) this.#idempotency.set(key, { digest, status, text: JSON.stringify(result) });
    return [status, result];
  }

  /** The business profile at `/.well-known/ucp`. */
  profile(): Json {
    const entry = (name: string, extra: Json = {}) => [
      { version: VERSION, spec: `${SPEC}/${name}`, schema: `${SCHEMA}/${name}.json`, ...extra },
    ];
    return {
      ucp: {
        version: VERSION,
        services: {
          'dev.ucp.shopping': [
            {
              version: VERSION,
              spec: `${SPEC}/overview/`,
              transport: 'mcp',
              endpoint: `${this.#origin}/ucp/mcp`,
              schema: `https://ucp.dev/${VERSION}/services/shopping/mcp.openrpc.json`,
            },
            {
              version: VERSION,
              spec: `${SPEC}/overview/`,
              transport: 'rest',
              endpoint: `${this.#origin}/ucp/v1`,
              schema: `https://ucp.dev/${VERSION}/services/shopping/rest.openapi.json`,
            },
          ],
        },
        capabilities: {
          'dev.ucp.shopping.catalog.search': entry('catalog_search'),
          'dev.ucp.shopping.catalog.lookup': entry('catalog_lookup'),
          'dev.ucp.shopping.cart': entry('cart'),
          'dev.ucp.shopping.checkout': entry('checkout'),
          'dev.ucp.shopping.discount': entry('discount', { extends: 'dev.ucp.shopping.checkout' }),
          'dev.ucp.shopping.order': entry('order'),
        },
        payment_handlers: DEMO_PAYMENT_HANDLER(VERSION),
      },
      keys: this.#key ? [this.#key.publicKey] : [],
    };
  }

  /** Ships (or delivers) an order and sends its signed webhook. */
  async advance(orderId: string, action: 'ship' | 'deliver'): Promise<{ order: string; webhook: number }> {
    const order = this.#book.orders.get(orderId) as
      | (Json & {
          fulfillment: { events: Json[] };
          line_items: Array<{ id: string; quantity: { total: number; fulfilled: number }; status: string }>;
        })
      | undefined;
    if (!order) throw new AxMCPDemoError(404, `No order ${orderId.slice(0, 100)}`);
    order.fulfillment.events.push({
      id: `evt_${crypto.randomUUID().slice(0, 8)}`,
      occurred_at: new Date().toISOString(),
      type: action === 'ship' ? 'shipped' : 'delivered',
      line_items: order.line_items.map((li) => ({ id: li.id, quantity: li.quantity.total })),
      ...(action === 'ship' ? { carrier: 'Demo Post', tracking_number: `DP${orderId.slice(4)}` } : {}),
    });
    if (action === 'deliver') {
      for (const li of order.line_items) {
        li.quantity.fulfilled = li.quantity.total;
        li.status = 'fulfilled';
      }
    }
    return { order: orderId, webhook: await this.#sendWebhook(order) };
  }

  /** Registers where order webhooks go. */
  registerWebhook(target: string): string {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      throw new AxMCPDemoError(400, 'url must be an absolute http(s) URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new AxMCPDemoError(400, 'url must be an absolute http(s) URL');
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (
      this.#loopbackOnly &&
      !(host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host))
    ) {
      throw new AxMCPDemoError(400, 'The demo binds loopback, so it sends webhooks to this machine only');
    }
    this.#webhookURL = url;
    return url.href;
  }

  state(): AxMCPDemoShopState {
    return {
      webhookURL: this.#webhookURL?.href,
      orders: [...this.#book.orders.values()].map((o) => ({
        id: o.id as string,
        checkoutId: o.checkout_id as string,
        events: (o.fulfillment as { events: Array<{ type: string }> }).events.map((e) => e.type),
      })),
      charges: [...this.#book.charges],
      webhooks: [...this.#webhooks],
    };
  }

  async #control(method: string, url: URL): Promise<Response> {
    const route = url.pathname.slice('/control/shop/'.length);
    try {
      if (route === 'state') {
        return method === 'GET' ? jsonResponse(200, this.state()) : jsonResponse(405, { error: 'Use GET' });
      }
      if (method !== 'POST') return jsonResponse(405, { error: 'Method not allowed: use POST' });
      if (route === 'webhook') {
        return jsonResponse(200, { webhookURL: this.registerWebhook(url.searchParams.get('url') ?? '') });
      }
      const advance = /^orders\/([^/]+)\/(ship|deliver)$/.exec(route);
      if (advance) {
        return jsonResponse(
          200,
          await this.advance(safeDecode(advance[1]!), advance[2] as 'ship' | 'deliver'),
        );
      }
      return jsonResponse(404, { error: `Unknown control endpoint /control/shop/${route.slice(0, 100)}` });
    } catch (error) {
      if (error instanceof AxMCPDemoError) return jsonResponse(error.status, { error: error.message });
      throw error;
    }
  }

  async #signed(status: number, body: Json): Promise<Response> {
    const bytes = new TextEncoder().encode(JSON.stringify(body));
    const headers = new Headers({ 'content-type': 'application/json' });
    if (this.#signer) await signMessage({ status, headers, body: bytes }, this.#signer);
    return new Response(bytes, { status, headers });
  }

  async #sendWebhook(order: Json): Promise<number> {
    const url = this.#webhookURL;
    if (!url || !this.#signer) return 0;
    const body = new TextEncoder().encode(JSON.stringify(order));
    const headers = new Headers({
      'content-type': 'application/json',
      'ucp-agent': `profile="${this.#origin}/.well-known/ucp"`,
      'webhook-id': crypto.randomUUID(),
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
    });
    await signMessage({ method: 'POST', url, headers, body }, this.#signer);
    let status = 0;
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers,
        body,
        redirect: 'error',
        signal: AbortSignal.timeout(5_000),
      });
      await response.body?.cancel();
      status = response.status;
    } catch {
      // Unreachable: recorded as 0.
    }
    this.#webhooks.push({ url: url.href, orderId: order.id as string, status });
    if (this.#webhooks.length > 100) this.#webhooks.shift();
    return status;
  }
}

/** A path segment, decoded; an undecodable one stays as it is (and matches nothing). */
function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
