/**
 * Programs and agents with UCP clients, against the real test business
 * (test/servers/ucp-business.ts) and the scripted OpenAI-compatible provider: an ax() program
 * that shops through `<namespace>__<operation>` tools with a denied and then an authorized
 * complete, an agent that shops through `ucp.shop.*` in the sandbox and finds operations with
 * discover(), namespace collisions refused before any model request, and unknown operations
 * answered with a clear error.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AxAIOpenAICompatible } from '../src/ai/index.js';
import {
  type AxAgentEvent,
  AxMCPExecutionContext,
  type AxMCPProgramEvent,
  AxProgramError,
  AxProgramOptionsError,
  agent,
  ax,
  axMCPChat,
  flow,
} from '../src/program/index.js';
import { AxUCPClient, type AxUCPClientOptions } from '../src/ucp/index.js';
import { httpClient } from './helpers/clients.js';
import {
  type RecordedRequest,
  type ScriptedOpenAIServer,
  startScriptedOpenAI,
} from './servers/scripted-openai.js';
import { TEST_CARD as CARD, startUCPPlatform, type UCPPlatform } from './servers/ucp/platform.js';
import { startUCPBusiness, type UCPBusiness } from './servers/ucp-business.js';

const final = (outputs: Record<string, unknown>) => ({ content: JSON.stringify(outputs) });
const step = (code: string) => ({ content: `Next step:\n\`\`\`js\n${code}\n\`\`\`` });
const toolMessages = (request: RecordedRequest) =>
  request.body.messages.filter((message) => message.role === 'tool');
const lastToolJSON = (request: RecordedRequest) =>
  JSON.parse(String(toolMessages(request).at(-1)?.content)) as Record<string, unknown>;
const lastUser = (request: RecordedRequest | undefined) =>
  String(request?.body.messages.findLast((m) => m.role === 'user')?.content ?? '');

let business: UCPBusiness;
let platform: UCPPlatform;
let llm: ScriptedOpenAIServer;
let ai: AxAIOpenAICompatible;
const made: AxUCPClient[] = [];

beforeAll(async () => {
  platform = await startUCPPlatform({
    capabilities: ['catalog.search', 'catalog.lookup', 'cart', 'checkout', 'order'],
  });
  [business, llm] = await Promise.all([startUCPBusiness(), startScriptedOpenAI()]);
  ai = new AxAIOpenAICompatible({
    baseURL: llm.baseURL,
    model: 'scripted',
    apiKey: 'sk-test',
    maxRetries: 0,
  });
});

afterEach(() => {
  llm.requests.length = 0;
  expect(llm.pending).toBe(0);
  for (const client of made.splice(0)) client.close();
});

afterAll(async () => {
  await Promise.all([business?.close(), llm?.close()]);
  await platform?.close();
});

function shopClient(extra: Partial<AxUCPClientOptions> = {}): AxUCPClient {
  const client = new AxUCPClient(business.url, {
    namespace: 'shop',
    ...platform.clientOptions(),
    retry: { delayMs: 10 },
    ...extra,
  });
  made.push(client);
  return client;
}

describe('a UCP client that supplies the payment', () => {
  it('completes a checkout the model names by id alone: no credential in any request to the model', async () => {
    const asked: unknown[] = [];
    const shop = shopClient({
      authorizeOperation: () => true,
      payment: (request) => {
        asked.push(request);
        return CARD;
      },
    });
    const buyer = ax('request:string -> orderId:string', { ucp: shop });
    const lineItems = [{ item: { id: 'rose-bouquet' }, quantity: 1 }];
    let orderId = '';
    llm.script(
      (request) => {
        const complete = request.body.tools?.find((t) => t.function.name === 'shop__checkout_complete');
        expect(complete?.function.parameters).toMatchObject({ required: ['id'] });
        expect(JSON.stringify(complete?.function.parameters)).not.toContain('payment');
        return {
          toolCalls: [
            {
              name: 'shop__checkout_create',
              arguments: { line_items: lineItems, buyer: { email: 'ada@example.com' } },
            },
          ],
        };
      },
      (request) => {
        const checkout = lastToolJSON(request) as { id: string };
        // A model that passes a payment anyway is refused, nothing sent.
        return {
          toolCalls: [
            { name: 'shop__checkout_complete', arguments: { id: checkout.id, payment: { instruments: [] } } },
          ],
        };
      },
      (request) => {
        expect(String(toolMessages(request).at(-1)?.content)).toContain(
          "comes from the client's payment option",
        );
        const checkout = JSON.parse(String(toolMessages(request).at(-2)?.content)) as { id: string };
        return { toolCalls: [{ name: 'shop__checkout_complete', arguments: { id: checkout.id } }] };
      },
      (request) => {
        orderId = (lastToolJSON(request) as { order: { id: string } }).order.id;
        return final({ orderId });
      },
    );
    const chargesBefore = business.charges.length;
    expect(await buyer.forward(ai, { request: 'One rose bouquet' })).toEqual({ orderId });
    expect(business.charges.length).toBe(chargesBefore + 1);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ namespace: 'shop', checkoutId: expect.any(String) });
    for (const request of llm.requests) expect(JSON.stringify(request.body)).not.toContain('tok_secret_4242');
  });
});

describe('ax() with a UCP client', () => {
  it('searches, creates a cart and a checkout, is refused a complete, then completes', async () => {
    let allow = false;
    const shop = shopClient({
      authorizeOperation: () => (allow ? true : { allow: false, reason: 'needs the buyer to approve' }),
    });
    const buyer = ax('request:string -> orderId:string, total:number', { ucp: shop });
    const lineItems = [{ item: { id: 'rose-bouquet' }, quantity: 2 }];
    let checkoutId = '';
    let orderId = '';
    llm.script(
      { toolCalls: [{ name: 'shop__catalog_search', arguments: { query: 'rose' } }] },
      (request) => {
        const found = lastToolJSON(request) as { products: { id: string }[] };
        expect(found.products.map((product) => product.id)).toEqual(['rose-bouquet']);
        return {
          toolCalls: [
            { name: 'shop__cart_create', arguments: { line_items: lineItems } },
            {
              name: 'shop__checkout_create',
              arguments: { line_items: lineItems, buyer: { email: 'ada@example.com' } },
            },
          ],
        };
      },
      (request) => {
        const [cart, checkout] = toolMessages(request)
          .slice(-2)
          .map((message) => JSON.parse(String(message.content)) as { id: string; status?: string });
        expect(cart?.id).toMatch(/^cart_/);
        expect(checkout?.status).toBe('ready_for_complete');
        checkoutId = checkout!.id;
        return {
          toolCalls: [{ name: 'shop__checkout_complete', arguments: { id: checkoutId, payment: CARD } }],
        };
      },
      (request) => {
        const denial = String(toolMessages(request).at(-1)?.content);
        expect(denial).toContain('The host refused ucp:shop:checkout.complete (needs the buyer to approve)');
        expect(denial).toContain('it was not sent to the business');
        allow = true;
        return {
          toolCalls: [{ name: 'shop__checkout_complete', arguments: { id: checkoutId, payment: CARD } }],
        };
      },
      (request) => {
        const completed = lastToolJSON(request) as { status: string; order: { id: string } };
        expect(completed.status).toBe('completed');
        orderId = completed.order.id;
        return final({ orderId, total: 9000 });
      },
    );
    const events: AxMCPProgramEvent[] = [];
    const completesBefore = business.completeRequests;
    const chargesBefore = business.charges.length;
    const outputs = await buyer.forward(
      ai,
      { request: 'Two rose bouquets' },
      { onMCPEvent: (event) => events.push(event) },
    );
    expect(outputs).toEqual({ orderId, total: 9000 });
    expect(orderId).toMatch(/^ord_/);
    // The denied complete was never sent; the authorized one charged once.
    expect(business.completeRequests).toBe(completesBefore + 1);
    expect(business.charges.length).toBe(chargesBefore + 1);
    expect(business.charges.at(-1)).toMatchObject({ checkoutId, amount: 9000 });
    expect(events).toEqual([
      expect.objectContaining({
        type: 'refused',
        namespace: 'shop',
        tool: 'checkout.complete',
        componentId: 'ucp:shop:checkout.complete',
      }),
    ]);

    const first = llm.requests[0]!;
    const names = first.body.tools?.map((tool) => tool.function.name) ?? [];
    expect(names).toEqual([
      'shop__catalog_search',
      'shop__catalog_lookup',
      'shop__catalog_product',
      'shop__cart_create',
      'shop__cart_get',
      'shop__cart_update',
      'shop__cart_cancel',
      'shop__checkout_create',
      'shop__checkout_get',
      'shop__checkout_update',
      'shop__checkout_complete',
      'shop__checkout_cancel',
      'shop__order_get',
    ]);
    const complete = first.body.tools?.find((tool) => tool.function.name === 'shop__checkout_complete');
    expect(complete?.function.description).toContain('ucp:shop:checkout.complete');
    expect(complete?.function.parameters).toMatchObject({ type: 'object', required: ['id', 'payment'] });
    // Results reach the model as the business returned them; the refusal is a tool error.
    const last = llm.requests.at(-1)!;
    const results = toolMessages(last);
    expect(results).toHaveLength(5); // search, cart, checkout, the refusal, the complete
    for (const message of results) expect(String(message.content)).not.toContain('tok_secret');
  });

  it('tells the model about an operation its business does not have, and the run goes on', async () => {
    const shop = shopClient();
    const program = ax('request:string -> answer:string', { ucp: shop });
    llm.script(
      { toolCalls: [{ name: 'shop__checkout_refund', arguments: { id: 'chk_1' } }] },
      (request) => {
        const reply = String(toolMessages(request).at(-1)?.content);
        expect(reply).toContain('There is no tool named "shop__checkout_refund"');
        expect(reply).toContain('The UCP business "shop" offers: shop__catalog_search');
        return { toolCalls: [{ name: 'shop__order_get', arguments: {} }] };
      },
      (request) => {
        // The client refuses an operation on a resource without its id; nothing is sent.
        expect(String(toolMessages(request).at(-1)?.content)).toContain(
          'ucp:shop:order.get was not sent: order.get needs a resource id',
        );
        return { toolCalls: [{ name: 'shop__order_get', arguments: { id: 'ord_missing' } }] };
      },
      (request) => {
        expect(String(toolMessages(request).at(-1)?.content)).toContain(
          'The business refused ucp:shop:order.get (HTTP 404',
        );
        return final({ answer: 'no refunds here' });
      },
    );
    expect(await program.forward(ai, { request: 'Refund my order' })).toEqual({ answer: 'no refunds here' });
  });

  it('redacts payment credentials a business echoes before the model sees them', async () => {
    const shop = shopClient();
    const created = await shop.checkout.create({ line_items: [{ item: { id: 'tulip-bunch' } }] });
    const program = ax('request:string -> answer:string', { ucp: shop });
    llm.script(
      {
        toolCalls: [{ name: 'shop__checkout_update', arguments: { id: created.id, payment: CARD } }],
      },
      (request) => {
        const echoed = lastToolJSON(request) as { payment: { instruments: { credential: unknown }[] } };
        expect(echoed.payment.instruments[0]?.credential).toBe('[redacted]');
        expect(String(toolMessages(request).at(-1)?.content)).not.toContain('tok_secret');
        return final({ answer: 'updated' });
      },
    );
    expect(await program.forward(ai, { request: 'Pay with my card' })).toEqual({ answer: 'updated' });
  });

  it('axMCPChat takes ucp clients too', async () => {
    const shop = shopClient();
    llm.script(
      { toolCalls: [{ name: 'shop__catalog_lookup', arguments: { ids: ['tulip-bunch'] } }] },
      { content: 'Tulips it is.' },
    );
    const { messages, response } = await axMCPChat(
      ai,
      { messages: [{ role: 'user', content: 'What tulips are there?' }] },
      { ucp: shop },
    );
    expect(response.message.content).toBe('Tulips it is.');
    const tool = messages.find((message) => message.role === 'tool');
    expect(String(tool?.content)).toContain('Tulip bunch');
  });

  it('a flow hands its UCP clients to its nodes', async () => {
    const shop = shopClient();
    const pipeline = flow({ ucp: shop }).node('look', ax('request:string -> title:string'));
    llm.script(
      { toolCalls: [{ name: 'shop__catalog_product', arguments: { id: 'tulip-bunch' } }] },
      final({ title: 'Tulip bunch' }),
    );
    expect(await pipeline.forward(ai, { request: 'tulips' })).toEqual({ look: { title: 'Tulip bunch' } });
  });
});

describe('agent() with a UCP client', () => {
  it('shops through ucp.shop.* in the sandbox: refused, then authorized', async () => {
    let allow = false;
    const shop = shopClient({ authorizeOperation: () => allow });
    const shopper = agent('request:string -> orderId:string', { ucp: [shop], maxTurns: 4 });
    const card = JSON.stringify(CARD);
    let orderId = '';
    llm.script(
      step(
        [
          'const found = await ucp.shop.catalog.search({ query: "tulip" })',
          'const checkout = await ucp.shop.checkout.create({',
          '  line_items: [{ item: { id: found.products[0].id }, quantity: 3 }],',
          '  buyer: { email: "ada@example.com" },',
          '})',
          'console.log(found.products.length, checkout.status)',
          'try {',
          `  await ucp.shop.checkout.complete({ id: checkout.id, payment: ${card} })`,
          '} catch (error) {',
          '  console.log("refused:", error.code, error.message)',
          '}',
        ].join('\n'),
      ),
      (request) => {
        const seen = lastUser(request);
        expect(seen).toContain('1 ready_for_complete');
        expect(seen).toContain('refused: authorization_denied The host refused ucp:shop:checkout.complete');
        allow = true;
        return step(
          [
            `const done = await ucp.shop.checkout.complete({ id: checkout.id, payment: ${card} })`,
            'const order = await ucp.shop.order.get({ id: done.order.id })',
            'console.log(done.status, order.checkout_id === checkout.id)',
            'final("Report the order id", { orderId: order.id })',
          ].join('\n'),
        );
      },
      (request) => {
        orderId = /ord_[0-9a-f]+/.exec(JSON.stringify(request.body))?.[0] ?? '';
        return final({ orderId });
      },
    );
    const events: AxAgentEvent[] = [];
    const refusals: AxMCPProgramEvent[] = [];
    const chargesBefore = business.charges.length;
    const outputs = await shopper.forward(
      ai,
      { request: 'Three tulip bunches' },
      { onAgentEvent: (event) => events.push(event), onMCPEvent: (event) => refusals.push(event) },
    );
    expect(orderId).toMatch(/^ord_/);
    expect(outputs).toEqual({ orderId });
    expect(business.charges.length).toBe(chargesBefore + 1);
    expect(business.charges.at(-1)?.amount).toBe(7500);
    expect(refusals.map((event) => event.type === 'refused' && event.componentId)).toEqual([
      'ucp:shop:checkout.complete',
    ]);
    const observed = events.flatMap((event) => (event.type === 'observation' ? [event.entry.output] : []));
    expect(observed.at(-1)).toBe('completed true');
    const system = String(llm.requests[0]?.body.messages[0]?.content);
    expect(system).toContain('- ucp.shop: a UCP business, 13 operations');
    expect(system).toContain('ucp.shop.checkout.complete({ id: string, payment: object })');
    for (const request of llm.requests) expect(request.body.tools).toBeUndefined();
    expect(JSON.stringify(shopper.getState())).not.toContain('tok_secret');
    await shopper.close();
  });

  it('finds operations with discover() and answers an unknown path with a clear error', async () => {
    const shop = shopClient();
    const explorer = agent('request:string -> answer:string', {
      ucp: shop,
      functionDiscovery: true,
      maxTurns: 3,
    });
    llm.script(
      step(
        [
          'const found = await discover("checkout complete")',
          'console.log(found.map((callable) => callable.path).join(","))',
          'try { await ucp.shop.checkout.refund({ id: "chk_1" }) } catch (error) { console.log("A:", error.code, error.message) }',
          'try { await ucp.other.cart.get({ id: "c" }) } catch (error) { console.log("B:", error.message) }',
        ].join('\n'),
      ),
      step('final("Say there are no refunds", {})'),
      final({ answer: 'no refunds' }),
    );
    expect(await explorer.forward(ai, { request: 'Refund' })).toEqual({ answer: 'no refunds' });
    const system = String(llm.requests[0]?.body.messages[0]?.content);
    expect(system).toContain('- ucp.shop: a UCP business, 13 operations');
    expect(system).not.toContain('ucp.shop.checkout.complete({');
    const seen = lastUser(llm.requests[1]);
    expect(seen).toMatch(/^Step 1 result:\nucp\.shop\.checkout\.complete,/m);
    expect(seen).toContain(
      'A: unknown_operation ucp.shop has no operation "checkout.refund" (it offers: catalog.search,',
    );
    expect(seen).toContain('B: ucp.other is not attached to this agent (attached: ucp.shop)');
    expect(String(llm.requests[1]?.body.messages[0]?.content)).toContain(
      'ucp.shop.checkout.complete({ id: string, payment: object })',
    );
    await explorer.close();
  });
});

describe('namespace collisions', () => {
  it('between a UCP client and an MCP client, or two UCP clients, fail before any model request', async () => {
    const shop = shopClient();
    const otherShop = shopClient();
    const mcpShop = httpClient(`${business.url}/mcp`, { namespace: 'shop' });
    try {
      const expectOptionsError = (error: unknown) => {
        expect(error).toBeInstanceOf(AxProgramOptionsError);
        expect(error).toMatchObject({ code: 'invalid_options', path: 'ucp' });
        expect((error as Error).message).toContain('share the namespace "shop"');
      };
      const thrown = (fn: () => unknown) => {
        try {
          fn();
        } catch (error) {
          return error;
        }
        throw new Error('expected a throw');
      };
      expectOptionsError(thrown(() => ax('a:string -> b:string', { mcp: mcpShop, ucp: shop })));
      expectOptionsError(thrown(() => ax('a:string -> b:string', { ucp: [shop, otherShop] })));
      expectOptionsError(thrown(() => agent('a:string -> b:string', { mcp: mcpShop, ucp: [shop] })));
      expectOptionsError(thrown(() => flow({ mcp: mcpShop, ucp: shop })));
      // The same client twice is one client.
      expect(() => ax('a:string -> b:string', { ucp: [shop, shop] })).not.toThrow();

      const program = ax('a:string -> b:string', { ucp: shop });
      expectOptionsError(await program.forward(ai, { a: 'x' }, { mcp: mcpShop }).catch((e: unknown) => e));
      const shopper = agent('a:string -> b:string', { ucp: shop });
      expectOptionsError(await shopper.forward(ai, { a: 'x' }, { mcp: mcpShop }).catch((e: unknown) => e));
      await shopper.close();
      const nested = flow({ mcp: mcpShop }).node('n', program);
      expectOptionsError(await nested.forward(ai, { a: 'x' }).catch((e: unknown) => e));
      expectOptionsError(
        await axMCPChat(
          ai,
          { messages: [{ role: 'user', content: 'hi' }] },
          { mcp: mcpShop, ucp: shop },
        ).catch((e: unknown) => e),
      );
      expect(llm.requests).toHaveLength(0);
    } finally {
      await mcpShop.close();
    }
  });
});

describe('the execution context with UCP clients', () => {
  it('inherits UCP namespaces like MCP ones, and an evaluation replaying recordings refuses them', () => {
    const shop = shopClient();
    const root = AxMCPExecutionContext.create(undefined, { ucp: shop });
    expect(root.ucpNamespaces).toEqual(['shop']);
    expect(root.derive(['shop']).ucpClient('shop')).toBe(shop);
    expect(root.derive('none').ucpClients).toEqual([]);
    expect(root.derive([]).ucpClients).toEqual([]);
    expect(() => root.derive(['shop', 'shop'])).toThrow(/names "shop" twice/);
    expect(() => root.derive(['docs'])).toThrow(/it has "shop"/);
    const replay = AxMCPExecutionContext.create(undefined, { evaluation: 'replay' });
    const refused = (() => {
      try {
        replay.derive('all', undefined, shop);
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(AxProgramError);
    expect(refused).toMatchObject({ code: 'live_mcp_in_evaluation' });
  });
});
