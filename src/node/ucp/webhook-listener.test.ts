/**
 * The Node adapter of the UCP webhook source, against the real test business: its signed
 * order webhooks are published through `axUCPWebhookHandler`; bad signatures, oversized and
 * stalled bodies are refused before or without publishing; other paths fall through to `next`.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  recordingTarget,
  startUCPPlatform,
  testCard,
  type UCPPlatform,
} from '../../../test/servers/ucp/platform.js';
import { startUCPBusiness, type UCPBusiness } from '../../../test/servers/ucp-business.js';
import type { AxEventContext } from '../../events/index.js';
import { AxEventRuntime, eventRoute } from '../../events/index.js';
import { AxUCPClient, AxUCPWebhookEventSource, UCP_ORDER_UPDATED } from '../../ucp/index.js';
import { axUCPWebhookHandler, axUCPWebhookListener } from './webhook-listener.js';

let business: UCPBusiness;
let platform: UCPPlatform;
let platformURL: string;
let shop: AxUCPClient;
let source: AxUCPWebhookEventSource;
let runtime: AxEventRuntime;
const seen: AxEventContext[] = [];

beforeAll(async () => {
  // The platform server starts first (the client needs its profile URL); the source is made
  // once the client exists, and the handler reaches it at request time.
  const handler = axUCPWebhookHandler(
    { handle: (request) => source.handle(request) },
    {
      path: '/webhooks/ucp',
      maxBodyBytes: 64 * 1024,
      timeoutMs: 500,
    },
  );
  // The platform serves its profile beside the webhook endpoint: the handler passes it on.
  platform = await startUCPPlatform({
    keyId: 'platform-node',
    capabilities: ['order'],
    orderWebhookPath: '/webhooks/ucp',
    handler,
  });
  platformURL = platform.url;
  business = await startUCPBusiness();
  shop = new AxUCPClient(business.url, {
    namespace: 'shop',
    ...platform.clientOptions('url'),
    authorizeOperation: () => true,
  });
  source = new AxUCPWebhookEventSource({ businesses: [{ client: shop, identity: { tenantId: 't1' } }] });
  runtime = new AxEventRuntime(
    [eventRoute('orders').types(UCP_ORDER_UPDATED).authenticated().wake('agent').build()],
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
  const line_items = [{ item: { id: 'rose-bouquet' }, quantity: 1 }];
  const created = await shop.checkout.create({ line_items });
  await shop.checkout.update(created.id as string, { line_items, buyer: { email: 'ada@example.com' } });
  const done = await shop.checkout.complete(created.id as string, {
    payment: testCard({ id: 'i1', token: 'tok' }),
  });
  return (done.order as { id: string }).id;
}

async function post(headers: Record<string, string>, body: string, path = '/webhooks/ucp'): Promise<number> {
  const response = await fetch(`${platformURL}${path}`, { method: 'POST', headers, body });
  await response.arrayBuffer();
  return response.status;
}

describe('axUCPWebhookHandler', () => {
  it('publishes a signed webhook from the business', async () => {
    const orderId = await placeOrder();
    expect(await business.advance(orderId, 'ship')).toBe(200);
    await runtime.runDue();
    expect(seen.map((s) => s.event.subject)).toEqual([orderId]);
    expect(seen[0]?.trust).toBe('authenticated');
  });

  it('refuses a bad signature and a tampered body; nothing is published', async () => {
    const orderId = await placeOrder();
    expect(await business.advance(orderId, 'deliver')).toBe(200);
    await runtime.runDue();
    const count = seen.length;
    const last = business.webhooks.at(-1)!;
    const fresh = () => ({ 'webhook-id': crypto.randomUUID() });
    const badSignature = { ...last.headers, ...fresh(), signature: `sig1=:${btoa('x'.repeat(64))}:` };
    expect(await post(badSignature, last.body)).toBe(401);
    expect(await post({ ...last.headers, ...fresh() }, last.body.replace('fulfilled', 'removed'))).toBe(400);
    await runtime.runDue();
    expect(seen.length).toBe(count);
    expect(source.refusals.slice(-2).map((r) => r.code)).toEqual(['signature_invalid', 'digest_mismatch']);
  });

  it('answers 413 to an oversized body, declared or streamed, without reading it all', async () => {
    const last = business.webhooks.at(-1)!;
    const big = 'x'.repeat(100 * 1024);
    expect(await post({ ...last.headers }, big)).toBe(413);
    const streamed = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${platformURL}/webhooks/ucp`, { method: 'POST' }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      // Chunked: no Content-Length, the cap trips while reading.
      for (let i = 0; i < 10; i++) req.write('y'.repeat(16 * 1024));
      req.end();
    });
    expect(streamed).toBe(413);
  });

  it('answers 408 when the body stalls past the deadline', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        `${platformURL}/webhooks/ucp`,
        { method: 'POST', headers: { 'content-length': '100' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
          req.destroy();
        },
      );
      req.on('error', reject);
      req.write('{"partial":');
    });
    expect(status).toBe(408);
  });

  it('passes other paths to next, and answers 404 without one', async () => {
    const profile = await fetch(`${platformURL}/.well-known/ucp`);
    expect(profile.status).toBe(200);
    await profile.arrayBuffer();
    const listener = await axUCPWebhookListener(source);
    try {
      expect(listener.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/webhooks\/ucp$/);
      const other = await fetch(new URL('/elsewhere', listener.url), { method: 'POST', body: '{}' });
      expect(other.status).toBe(404);
      await other.arrayBuffer();
      const unsigned = await fetch(listener.url, { method: 'POST', body: '{}' });
      expect(unsigned.status).toBe(401);
      await unsigned.arrayBuffer();
    } finally {
      await listener.close();
    }
  });

  it('refuses options that cannot work', () => {
    expect(() => axUCPWebhookHandler(source, { maxBodyBytes: 0 })).toThrow(/maxBodyBytes/);
    expect(() => axUCPWebhookHandler(source, { origin: 'not a url' })).toThrow(/origin/);
    expect(() => axUCPWebhookHandler({} as never)).toThrow(/AxUCPWebhookEventSource/);
    // A misspelled key is refused with the nearest name, never ignored.
    const misspelled = { maxBodyByte: 10 } as never;
    expect(() => axUCPWebhookHandler(source, misspelled)).toThrow(
      expect.objectContaining({ code: 'invalid_options', message: expect.stringMatching(/maxBodyBytes/) }),
    );
    expect(() => axUCPWebhookListener(source, { prot: 1 } as never)).rejects.toMatchObject({
      code: 'invalid_options',
    });
    expect(
      () => new AxUCPWebhookEventSource({ businesses: [{ client: shop }], toleranceSecond: 5 } as never),
    ).toThrow(
      expect.objectContaining({
        code: 'invalid_options',
        message: expect.stringMatching(/toleranceSeconds/),
      }),
    );
    expect(() => new AxUCPWebhookEventSource({ businesses: [] })).toThrow(
      expect.objectContaining({ code: 'invalid_options' }),
    );
  });
});
