/**
 * A small UCP business for tests, on `node:http`, built from the published UCP schemas and the
 * conformance suite's scenarios (`github:Universal-Commerce-Protocol/conformance`): discovery
 * at `/.well-known/ucp` with an ES256 key, version negotiation against the platform profile
 * named in `UCP-Agent` (fetched and cached), RFC 9421 request verification, catalog search and
 * lookup, carts, checkout sessions with fulfillment and discount extensions and idempotency-key
 * replay (same key and body → the stored response, another body → 409; charge once), orders,
 * signed order webhooks, and a control surface to advance an order and to inject faults.
 *
 * `@ucp-js/sdk` (0.1.1) was considered: it ships zod schemas for an older release and no
 * business server, so the business is written here.
 */
import { generateKeyPairSync, type KeyObject, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ucpMCPHandler } from './ucp/mcp-surface.js';
import { digestOf, signWire, verifyWire, type WireMessage } from './ucp/signing.js';

/** A one-shot fault for the next matching operation. */
export type UCPFault =
  | 'schema' // a response that breaks the schema (no totals)
  | 'oversized' // a 6 MB body
  | 'proto' // a body with a "__proto__" key
  | 'endless' // a body that never ends
  | 'cut' // process the request, then cut the connection before answering
  | 'stall'; // never answer

/** Options of {@link startUCPBusiness}. */
export interface UCPBusinessOptions {
  /** Refuse unsigned requests (default false: verify when signed). */
  requireSignatures?: boolean;
  /** The protocol version of the current profile (default 2026-08-25). */
  version?: string;
}

const VERSION = '2026-08-25';
const PREVIOUS = '2026-04-08';
const SPEC = 'https://ucp.dev/2026-08-25/specification';
const SCHEMA = 'https://ucp.dev/2026-08-25/schemas/shopping';

const PRODUCTS = [
  { id: 'rose-bouquet', title: 'Red rose bouquet', price: 4500 },
  { id: 'tulip-bunch', title: 'Tulip bunch', price: 2500 },
];

interface StoredResponse {
  digest: string;
  status: number;
  body: string;
}

/** A running business. */
export interface UCPBusiness {
  /** Its origin (`http://127.0.0.1:port`). */
  url: string;
  /** Charges made, one per completed checkout. */
  charges: Array<{ checkoutId: string; amount: number; token: string }>;
  /** Requests that reached `complete`, replays included. */
  completeRequests: number;
  /** Signed requests verified, by key id. */
  verified: string[];
  /** Signed MCP requests verified, by key id. */
  verifiedMCP: string[];
  /** Refusals of bad signatures, by UCP code. */
  refusedSignatures: string[];
  /** Webhooks sent, as sent (for replay tests). */
  webhooks: Array<{ url: string; headers: Record<string, string>; body: string; status: number }>;
  /** Arm a one-shot fault for an operation (`checkout.complete`, `catalog.search`, …). */
  fault(operation: string, fault: UCPFault): void;
  /** Advance an order and send the signed webhook (same as `POST /control/orders/:id/:action`). */
  advance(orderId: string, action: 'ship' | 'deliver' | 'refund'): Promise<number>;
  close(): Promise<void>;
}

/** Starts the business on 127.0.0.1 (a free port). */
export async function startUCPBusiness(options: UCPBusinessOptions = {}): Promise<UCPBusiness> {
  const version = options.version ?? VERSION;
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kid = 'business-2026';
  const jwk = {
    ...(publicKey.export({ format: 'jwk' }) as Record<string, string>),
    kid,
    use: 'sig',
    alg: 'ES256',
  };
  const signingKey: { privateKey: KeyObject; kid: string } = { privateKey, kid };
  const platformProfiles = new Map<string, { at: number; profile: Record<string, unknown> }>();
  const idempotency = new Map<string, StoredResponse>();
  const carts = new Map<string, Record<string, unknown>>();
  const checkouts = new Map<string, Record<string, unknown>>();
  const orders = new Map<string, { order: Record<string, unknown>; webhookURL: string | undefined }>();
  const faults = new Map<string, UCPFault>();
  const sockets = new Set<import('node:net').Socket>();
  let base = '';

  const business: UCPBusiness = {
    url: '',
    charges: [],
    completeRequests: 0,
    verified: [],
    verifiedMCP: [],
    refusedSignatures: [],
    webhooks: [],
    fault: (operation, fault) => faults.set(operation, fault),
    advance: (orderId, action) => advance(orderId, action),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        void mcpHandler.close();
        server.close(() => resolve());
      }),
  };

  const profile = (v: string) => {
    const entry = (name: string, extra: Record<string, unknown> = {}) => [
      { version: v, spec: `${SPEC}/${name}`, schema: `${SCHEMA}/${name}.json`, ...extra },
    ];
    const document: Record<string, unknown> = {
      ucp: {
        version: v,
        services: {
          'dev.ucp.shopping': [
            {
              version: v,
              spec: `${SPEC}/overview/`,
              transport: 'mcp',
              endpoint: `${base}/mcp`,
              schema: `https://ucp.dev/${v}/services/shopping/mcp.openrpc.json`,
            },
            {
              version: v,
              spec: `${SPEC}/overview/`,
              transport: 'rest',
              endpoint: `${base}/ucp/v1`,
              schema: `https://ucp.dev/${v}/services/shopping/rest.openapi.json`,
            },
          ],
        },
        capabilities: {
          'dev.ucp.shopping.catalog.search': entry('catalog_search'),
          'dev.ucp.shopping.catalog.lookup': entry('catalog_lookup'),
          'dev.ucp.shopping.cart': entry('cart'),
          'dev.ucp.shopping.checkout': entry('checkout'),
          'dev.ucp.shopping.fulfillment': entry('fulfillment', { extends: 'dev.ucp.shopping.checkout' }),
          'dev.ucp.shopping.discount': entry('discount', { extends: 'dev.ucp.shopping.checkout' }),
          'dev.ucp.shopping.order': entry('order'),
          // A capability whose schema is not served by its namespace owner: platforms must reject it.
          'com.example.loyalty': [{ version: v, schema: 'https://evil.example/loyalty.json' }],
        },
        payment_handlers: {
          'com.example.processor_tokenizer': [
            { id: 'processor_tokenizer', version: v, available_instruments: [{ type: 'card' }] },
          ],
        },
      },
    };
    if (v === PREVIOUS) document.signing_keys = [jwk];
    else document.keys = [jwk];
    if (v === version && v !== PREVIOUS) {
      (document.ucp as Record<string, unknown>).supported_versions = {
        [PREVIOUS]: `${base}/.well-known/ucp/${PREVIOUS}`,
      };
    }
    return document;
  };

  const ucpMeta = (capability: string, v: string) => ({
    version: v,
    capabilities: { [capability]: [{ version: v }] },
    payment_handlers: {
      'com.example.processor_tokenizer': [
        { id: 'processor_tokenizer', version: v, available_instruments: [{ type: 'card' }] },
      ],
    },
  });

  async function platformProfile(url: string): Promise<Record<string, unknown> | undefined> {
    const cached = platformProfiles.get(url);
    if (cached && Date.now() - cached.at < 60_000) return cached.profile;
    try {
      const response = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(5000) });
      if (!response.ok) return undefined;
      const document = (await response.json()) as Record<string, unknown>;
      platformProfiles.set(url, { at: Date.now(), profile: document });
      return document;
    } catch {
      return undefined;
    }
  }

  function totals(lineItems: Array<Record<string, unknown>>, discount = 0) {
    const subtotal = lineItems.reduce(
      (sum, li) => sum + (li.item as { price: number }).price * (li.quantity as number),
      0,
    );
    const out: Array<Record<string, unknown>> = [{ type: 'subtotal', amount: subtotal }];
    if (discount > 0) out.push({ type: 'discount', display_text: 'SAVE10', amount: -discount });
    out.push({ type: 'total', amount: subtotal - discount });
    return out;
  }

  function lineItems(input: unknown): Array<Record<string, unknown>> | string {
    if (!Array.isArray(input) || input.length === 0) return 'line_items are required';
    const out: Array<Record<string, unknown>> = [];
    for (const [index, raw] of input.entries()) {
      const li = raw as { item?: { id?: string }; quantity?: number };
      const product = PRODUCTS.find((p) => p.id === li.item?.id);
      if (!product) return `unknown item ${String(li.item?.id)}`;
      const quantity = li.quantity ?? 1;
      out.push({
        id: `li_${index + 1}`,
        item: { id: product.id, title: product.title, price: product.price },
        quantity,
        totals: [
          { type: 'subtotal', amount: product.price * quantity },
          { type: 'total', amount: product.price * quantity },
        ],
      });
    }
    return out;
  }

  function applyCheckout(target: Record<string, unknown>, body: Record<string, unknown>): string | undefined {
    if (body.line_items !== undefined) {
      const items = lineItems(body.line_items);
      if (typeof items === 'string') return items;
      target.line_items = items;
    }
    if (body.buyer !== undefined) target.buyer = body.buyer;
    if (body.fulfillment !== undefined) {
      const methods = ((body.fulfillment as { methods?: unknown[] }).methods ?? []).map((m, i) => ({
        id: `fm_${i + 1}`,
        ...(m as object),
      }));
      target.fulfillment = { methods };
    }
    if (body.discounts !== undefined) target.discounts = body.discounts;
    if (body.payment !== undefined) target.payment = body.payment;
    const codes = ((target.discounts as { codes?: string[] } | undefined)?.codes ?? []) as string[];
    const items = target.line_items as Array<Record<string, unknown>>;
    const subtotal = items.reduce(
      (s, li) => s + (li.item as { price: number }).price * (li.quantity as number),
      0,
    );
    target.totals = totals(items, codes.includes('SAVE10') ? Math.round(subtotal / 10) : 0);
    if (target.status !== 'completed' && target.status !== 'canceled') {
      target.status = target.buyer ? 'ready_for_complete' : 'incomplete';
    }
    return undefined;
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function readBody(req: IncomingMessage): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  function send(res: ServerResponse, status: number, body: unknown, sign = false): void {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (sign) {
      const message: WireMessage = {
        status,
        headers: { 'content-type': 'application/json' },
        body: Buffer.from(text),
      };
      Object.assign(headers, signWire(message, ['@status', 'content-digest', 'content-type'], signingKey));
    }
    res.writeHead(status, headers).end(text);
  }

  function error(res: ServerResponse, status: number, code: string, content: string): void {
    send(res, status, {
      code,
      content,
      messages: [{ type: 'error', code, content, severity: 'unrecoverable' }],
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', base);
    const body = await readBody(req);
    if (req.method === 'GET' && url.pathname === '/.well-known/ucp') return send(res, 200, profile(version));
    if (req.method === 'GET' && url.pathname === `/.well-known/ucp/${PREVIOUS}`)
      return send(res, 200, profile(PREVIOUS));
    const control = /^\/control\/orders\/([^/]+)\/(ship|deliver|refund)$/.exec(url.pathname);
    if (req.method === 'POST' && control) {
      const status = await advance(control[1]!, control[2] as 'ship');
      return send(res, 200, { delivered: status });
    }
    if (url.pathname === '/mcp') return serveMCP(req, res, url, body);
    if (!url.pathname.startsWith('/ucp/v1/')) return error(res, 404, 'not_found', 'No such resource');

    // Every request: UCP-Agent → platform profile → version check → signature check.
    const agent = /profile="([^"]+)"/.exec((req.headers['ucp-agent'] as string | undefined) ?? '')?.[1];
    if (!agent) return error(res, 400, 'invalid_profile_url', 'UCP-Agent with a profile URL is required');
    const platform = await platformProfile(agent);
    if (!platform) return error(res, 424, 'profile_unreachable', 'The platform profile could not be fetched');
    const platformVersion = (platform.ucp as { version?: string } | undefined)?.version;
    const served =
      platformVersion === version ? version : platformVersion === PREVIOUS ? PREVIOUS : undefined;
    if (!served)
      return error(res, 422, 'version_unsupported', `Version ${String(platformVersion)} is not supported`);
    const headers: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries(req.headers))
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
    const wire: WireMessage = {
      method: req.method ?? 'GET',
      authority: req.headers.host ?? '',
      path: url.pathname,
      query: url.search,
      headers,
      body,
    };
    if (headers['signature-input'] !== undefined || options.requireSignatures) {
      const required = ['@method', '@authority', '@path', 'ucp-agent'];
      if (headers['idempotency-key']) required.push('idempotency-key');
      if (body.length > 0) required.push('content-digest', 'content-type');
      const outcome = verifyWire(wire, (platform.keys as Array<Record<string, unknown>>) ?? [], required);
      if (!outcome.ok) {
        business.refusedSignatures.push(outcome.code);
        return error(res, outcome.code === 'digest_mismatch' ? 400 : 401, outcome.code, 'Signature refused');
      }
      business.verified.push(outcome.kid);
    }

    const route = url.pathname.slice('/ucp/v1'.length);
    const operation = operationOf(req.method ?? 'GET', route);
    if (!operation) return error(res, 404, 'not_found', 'No such operation');
    if (operation.name === 'checkout.complete') business.completeRequests++;
    const mutating = req.method === 'POST' || req.method === 'PUT';
    const key = headers['idempotency-key'];
    if (mutating && !operation.name.startsWith('catalog.')) {
      if (!key) return error(res, 400, 'invalid_request', 'Idempotency-Key is required');
      const stored = idempotency.get(`${operation.name}:${key}`);
      if (stored) {
        if (stored.digest !== digestOf(body))
          return error(res, 409, 'idempotency_conflict', 'Key reused with another payload');
        return faulted(res, operation.name, stored.status, stored.body);
      }
    }
    let parsed: Record<string, unknown> = {};
    if (body.length > 0) {
      try {
        parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      } catch {
        return error(res, 400, 'invalid_request', 'Body is not JSON');
      }
    }
    const [status, result] = run(operation.name, operation.id, parsed, served, agent, platform);
    const text = JSON.stringify(result);
    if (mutating && key && status < 500) {
      idempotency.set(`${operation.name}:${key}`, { digest: digestOf(body), status, body: text });
    }
    return faulted(res, operation.name, status, text);
  }

  /** The MCP binding: signature check at the HTTP layer, then the SDK's handler. */
  async function serveMCP(req: IncomingMessage, res: ServerResponse, url: URL, body: Buffer) {
    const headers = new Headers();
    const flat: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined) continue;
      const joined = Array.isArray(value) ? value.join(', ') : value;
      headers.set(name, joined);
      flat[name] = joined;
    }
    if (flat['signature-input'] !== undefined || options.requireSignatures) {
      const agent = /profile="([^"]+)"/.exec(flat['ucp-agent'] ?? '')?.[1];
      const platform = agent ? await platformProfile(agent) : undefined;
      const wire: WireMessage = {
        method: req.method ?? 'POST',
        authority: req.headers.host ?? '',
        path: url.pathname,
        query: url.search,
        headers: flat,
        body,
      };
      const required = ['@method', '@authority', '@path', 'ucp-agent'];
      if (body.length > 0) required.push('content-digest', 'content-type');
      const outcome = platform
        ? verifyWire(wire, (platform.keys as Array<Record<string, unknown>>) ?? [], required)
        : { ok: false as const, code: 'key_not_found' };
      if (!outcome.ok) {
        business.refusedSignatures.push(outcome.code);
        return error(res, 401, outcome.code, 'Signature refused');
      }
      business.verifiedMCP.push(outcome.kid);
    }
    const request = new Request(url, {
      method: req.method ?? 'POST',
      headers,
      ...(body.length > 0 ? { body: new Uint8Array(body) } : {}),
    });
    const response = await mcpHandler.fetch(request);
    const text = Buffer.from(await response.arrayBuffer());
    if (cutMCP) {
      cutMCP = false;
      res.socket?.destroy();
      return;
    }
    res.writeHead(response.status, Object.fromEntries(response.headers)).end(text);
  }

  let cutMCP = false;
  const mcpHandler = ucpMCPHandler(async (call) => {
    const platform = call.profile ? await platformProfile(call.profile) : undefined;
    if (!platform)
      return { status: 424, body: { code: 'profile_unreachable', content: 'No platform profile' } };
    const platformVersion = (platform.ucp as { version?: string } | undefined)?.version;
    const served =
      platformVersion === version ? version : platformVersion === PREVIOUS ? PREVIOUS : undefined;
    if (!served)
      return { status: 422, body: { code: 'version_unsupported', content: 'Version not supported' } };
    if (call.operation === 'checkout.complete') business.completeRequests++;
    const digest = digestOf(Buffer.from(JSON.stringify(call.payload ?? {})));
    const mutating = !call.operation.startsWith('catalog.') && !call.operation.endsWith('.get');
    const storeKey = `mcp:${call.operation}:${call.idempotencyKey}`;
    if (mutating) {
      if (!call.idempotencyKey)
        return { status: 400, body: { code: 'invalid_request', content: 'idempotency-key is required' } };
      const stored = idempotency.get(storeKey);
      if (stored) {
        if (stored.digest !== digest) {
          return {
            status: 409,
            body: { code: 'idempotency_conflict', content: 'Key reused with another payload' },
          };
        }
        return { status: stored.status, body: JSON.parse(stored.body) };
      }
    }
    const [status, result] = run(
      call.operation,
      call.id,
      call.payload ?? {},
      served,
      call.profile!,
      platform,
    );
    if (mutating && status < 500) idempotency.set(storeKey, { digest, status, body: JSON.stringify(result) });
    if (faults.get(call.operation) === 'cut') {
      faults.delete(call.operation);
      cutMCP = true;
    }
    return { status, body: result };
  });

  function faulted(res: ServerResponse, operation: string, status: number, text: string) {
    const fault = faults.get(operation);
    faults.delete(operation);
    switch (fault) {
      case 'cut':
        res.socket?.destroy();
        return;
      case 'stall':
        return;
      case 'schema': {
        const broken = JSON.parse(text) as Record<string, unknown>;
        delete broken.totals;
        delete broken.products;
        return send(res, status, broken);
      }
      case 'oversized':
        return send(res, status, { ...JSON.parse(text), padding: 'x'.repeat(6 * 1024 * 1024) });
      case 'proto':
        return send(res, status, `{"__proto__":{"polluted":true},${text.slice(1)}`);
      case 'endless': {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.write('{"padding":"');
        const chunk = 'x'.repeat(64 * 1024);
        const pump = () => {
          if (res.destroyed) return;
          if (res.write(chunk)) setImmediate(pump);
          else res.once('drain', pump);
        };
        pump();
        return;
      }
      default:
        return send(res, status, text, operation === 'checkout.complete');
    }
  }

  function operationOf(method: string, route: string): { name: string; id?: string } | undefined {
    const table: Array<[string, RegExp, string]> = [
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
    for (const [m, pattern, name] of table) {
      const match = m === method ? pattern.exec(route) : null;
      if (match) return match[1] === undefined ? { name } : { name, id: decodeURIComponent(match[1]) };
    }
    return undefined;
  }

  function product(p: (typeof PRODUCTS)[number]) {
    const price = { amount: p.price, currency: 'USD' };
    return {
      id: p.id,
      title: p.title,
      description: { plain: `${p.title}, fresh today` },
      price_range: { min: price, max: price },
      variants: [{ id: `${p.id}-std`, title: 'Standard', description: { plain: 'Standard size' }, price }],
    };
  }

  function run(
    name: string,
    id: string | undefined,
    body: Record<string, unknown>,
    v: string,
    agent: string,
    platform: Record<string, unknown>,
  ): [number, unknown] {
    const notFound = (what: string, capability: string): [number, unknown] => [
      404,
      {
        ucp: { ...ucpMeta(capability, v), status: 'error' },
        messages: [
          { type: 'error', code: 'not_found', content: `${what} not found`, severity: 'unrecoverable' },
        ],
      },
    ];
    switch (name) {
      case 'catalog.search': {
        const q = String(body.query ?? '').toLowerCase();
        const products = PRODUCTS.filter((p) => p.title.toLowerCase().includes(q)).map(product);
        return [200, { ucp: ucpMeta('dev.ucp.shopping.catalog.search', v), products }];
      }
      case 'catalog.lookup': {
        const ids = (body.ids as string[] | undefined) ?? [];
        const products = PRODUCTS.filter((p) => ids.includes(p.id)).map(product);
        return [200, { ucp: ucpMeta('dev.ucp.shopping.catalog.lookup', v), products }];
      }
      case 'catalog.product': {
        const p = PRODUCTS.find((x) => x.id === body.id);
        if (!p) return notFound('Product', 'dev.ucp.shopping.catalog.lookup');
        return [200, { ucp: ucpMeta('dev.ucp.shopping.catalog.lookup', v), product: product(p) }];
      }
      case 'cart.create':
      case 'cart.update': {
        const cart = name === 'cart.create' ? { id: `cart_${randomUUID().slice(0, 8)}` } : carts.get(id!);
        if (!cart) return notFound('Cart', 'dev.ucp.shopping.cart');
        const items = lineItems(body.line_items);
        if (typeof items === 'string') return [400, { code: 'invalid_request', content: items }];
        Object.assign(cart, {
          ucp: ucpMeta('dev.ucp.shopping.cart', v),
          line_items: items,
          currency: 'USD',
          totals: totals(items),
        });
        carts.set((cart as { id: string }).id, cart);
        return [name === 'cart.create' ? 201 : 200, cart];
      }
      case 'cart.get':
        return carts.has(id!) ? [200, carts.get(id!)] : notFound('Cart', 'dev.ucp.shopping.cart');
      case 'cart.cancel': {
        const cart = carts.get(id!);
        if (!cart) return notFound('Cart', 'dev.ucp.shopping.cart');
        carts.delete(id!);
        return [200, cart];
      }
      case 'checkout.create': {
        const checkout: Record<string, unknown> = {
          ucp: ucpMeta('dev.ucp.shopping.checkout', v),
          id: `chk_${randomUUID().slice(0, 8)}`,
          status: 'incomplete',
          currency: 'USD',
          links: [{ type: 'terms_of_service', url: `${base}/terms` }],
          // An extension field this schema does not know: the client must keep it.
          'com.example.gift_wrap': { available: true },
        };
        const problem = applyCheckout(checkout, body);
        if (problem) return [400, { code: 'invalid_request', content: problem }];
        checkouts.set(checkout.id as string, checkout);
        return [201, checkout];
      }
      case 'checkout.get':
        return checkouts.has(id!)
          ? [200, checkouts.get(id!)]
          : notFound('Checkout', 'dev.ucp.shopping.checkout');
      case 'checkout.update': {
        const checkout = checkouts.get(id!);
        if (!checkout) return notFound('Checkout', 'dev.ucp.shopping.checkout');
        if (checkout.status === 'completed' || checkout.status === 'canceled') {
          return [409, { code: 'invalid_state', content: `Checkout is ${String(checkout.status)}` }];
        }
        const problem = applyCheckout(checkout, body);
        if (problem) return [400, { code: 'invalid_request', content: problem }];
        return [200, checkout];
      }
      case 'checkout.cancel': {
        const checkout = checkouts.get(id!);
        if (!checkout) return notFound('Checkout', 'dev.ucp.shopping.checkout');
        if (checkout.status === 'completed')
          return [409, { code: 'invalid_state', content: 'Checkout is completed' }];
        checkout.status = 'canceled';
        return [200, checkout];
      }
      case 'checkout.complete': {
        const checkout = checkouts.get(id!);
        if (!checkout) return notFound('Checkout', 'dev.ucp.shopping.checkout');
        if (checkout.status === 'completed') return [200, checkout];
        if (checkout.status !== 'ready_for_complete') {
          return [409, { code: 'invalid_state', content: `Checkout is ${String(checkout.status)}` }];
        }
        const instrument = (
          body.payment as { instruments?: Array<{ credential?: { token?: string } }> } | undefined
        )?.instruments?.[0];
        const token = instrument?.credential?.token;
        if (!token)
          return [
            400,
            { code: 'payment_required', content: 'A payment instrument with a credential is required' },
          ];
        const total = (checkout.totals as Array<{ type: string; amount: number }>).find(
          (t) => t.type === 'total',
        )!.amount;
        business.charges.push({ checkoutId: checkout.id as string, amount: total, token });
        const orderId = `ord_${randomUUID().slice(0, 8)}`;
        const order = {
          ucp: { version: v, capabilities: { 'dev.ucp.shopping.order': [{ version: v }] } },
          id: orderId,
          checkout_id: checkout.id,
          permalink_url: `${base}/orders/${orderId}`,
          line_items: (checkout.line_items as Array<Record<string, unknown>>).map((li) => ({
            id: li.id,
            item: li.item,
            quantity: { original: li.quantity, total: li.quantity, fulfilled: 0 },
            totals: li.totals,
            status: 'processing',
          })),
          fulfillment: { expectations: [], events: [] },
          adjustments: [],
          currency: checkout.currency,
          totals: checkout.totals,
        };
        const capability = (
          platform.ucp as { capabilities?: Record<string, Array<{ config?: { webhook_url?: string } }>> }
        ).capabilities?.['dev.ucp.shopping.order']?.[0];
        orders.set(orderId, { order, webhookURL: capability?.config?.webhook_url });
        void agent;
        checkout.status = 'completed';
        checkout.order = { id: orderId, permalink_url: order.permalink_url };
        delete checkout.payment;
        return [200, checkout];
      }
      case 'order.get': {
        const entry = orders.get(id!);
        return entry ? [200, entry.order] : notFound('Order', 'dev.ucp.shopping.order');
      }
      default:
        return [404, { code: 'not_found', content: 'No such operation' }];
    }
  }

  async function advance(orderId: string, action: 'ship' | 'deliver' | 'refund'): Promise<number> {
    const entry = orders.get(orderId);
    if (!entry) return 404;
    const order = entry.order as Record<string, unknown> & {
      fulfillment: { events: unknown[] };
      adjustments: unknown[];
      line_items: Array<{ id: string; quantity: { total: number; fulfilled: number }; status: string }>;
    };
    const now = new Date().toISOString();
    const lines = order.line_items.map((li) => ({ id: li.id, quantity: li.quantity.total }));
    if (action === 'ship' || action === 'deliver') {
      order.fulfillment.events.push({
        id: `evt_${randomUUID().slice(0, 8)}`,
        occurred_at: now,
        type: action === 'ship' ? 'shipped' : 'delivered',
        line_items: lines,
        ...(action === 'ship' ? { carrier: 'Example Post', tracking_number: 'EP123' } : {}),
      });
      if (action === 'deliver') {
        for (const li of order.line_items) {
          li.quantity.fulfilled = li.quantity.total;
          li.status = 'fulfilled';
        }
      }
    } else {
      order.adjustments.push({
        id: `adj_${randomUUID().slice(0, 8)}`,
        type: 'refund',
        occurred_at: now,
        status: 'completed',
      });
    }
    if (!entry.webhookURL) return 0;
    return deliver(entry.webhookURL, order);
  }

  async function deliver(target: string, order: Record<string, unknown>): Promise<number> {
    const body = Buffer.from(JSON.stringify(order));
    const url = new URL(target);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'ucp-agent': `profile="${base}/.well-known/ucp"`,
      'webhook-id': randomUUID(),
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
    };
    const message: WireMessage = {
      method: 'POST',
      authority: url.host,
      path: url.pathname,
      query: url.search,
      headers: { ...headers },
      body,
    };
    Object.assign(
      headers,
      signWire(
        message,
        ['@method', '@authority', '@path', 'ucp-agent', 'content-digest', 'content-type'],
        signingKey,
      ),
    );
    const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(5000) });
    await response.arrayBuffer();
    business.webhooks.push({ url: target, headers, body: body.toString('utf8'), status: response.status });
    return response.status;
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  business.url = base;
  return business;
}
