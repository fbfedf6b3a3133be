/**
 * `AxUCPWebhookEventSource`: UCP order webhooks (`docs/specification/shopping/order/index.md`,
 * "Order Event Webhook") as events of an `AxEventRuntime`. `handle(request)` is framework
 * neutral (a WHATWG `Request` in, a `Response` out). A delivery is published only when its
 * RFC 9421 signature verifies against the keys the business publishes in its profile, its
 * signer (`UCP-Agent`) is a business configured here, its `Webhook-Timestamp` is fresh, its
 * `Webhook-Id` is new, its body is a UCP order, and the order is one this platform placed with
 * that business. Anything else is refused with a typed status and nothing is published.
 */
import type { AxEventIdentity, AxEventIngress } from '../events/envelope.js';
import type { AxEventPublisher, AxEventSource, AxEventSourceDescription } from '../events/source.js';
import { readBodyLimited } from '../net/guarded-fetch.js';
import { array, func, instance, number, object, required, string } from '../options/check.js';
import { describeAnswer } from '../options/hook-answers.js';
import { AxMCPError } from '../protocol/errors.js';
import { parseUntrustedJSON } from '../protocol/json.js';
import type { AxUCPClient } from './client.js';
import {
  AxUCPError,
  type AxUCPErrorCode,
  AxUCPSchemaError,
  AxUCPSignatureError,
  assertUCPOptions,
  redactCredentials,
} from './errors.js';
import { type AxUCPVerifiedSignature, verifyMessage } from './signatures.js';
import { parseDictionary } from './structured-fields.js';
import { assertUCPSchema } from './validate.js';

/** The event type of every order webhook. */
export const UCP_ORDER_UPDATED = 'ucp.order.updated';
/** The correlation kind of order events: `ucp.order = <namespace>:<orderId>`. */
export const UCP_ORDER_CORRELATION = 'ucp.order';
/** The correlation kind of the checkout an order came from: `ucp.checkout = <namespace>:<checkoutId>`. */
export const UCP_CHECKOUT_CORRELATION = 'ucp.checkout';

/** One business whose webhooks are accepted. */
export interface AxUCPWebhookBusiness {
  /** The client of that business: its profile URL identifies the signer, its profile holds the keys. */
  client: AxUCPClient;
  /**
   * The identity events from this business are attributed to, from your own verified
   * records (the tenant that placed the orders). With it, verified events are `authenticated`;
   * without it they are published `untrusted`.
   */
  identity?: AxEventIdentity;
  /**
   * Whether the order belongs to this platform and business (the specification's ownership
   * check): `true` or `false`. Default: the client placed it (`client.hasPlacedOrder`), which
   * holds for the client's lifetime only — give a check against your own store for anything
   * durable. Any other answer (a row, a query result) refuses the order and is reported; a
   * check that throws is answered 503, for the business to deliver again.
   */
  ownsOrder?: (orderId: string, checkoutId: string | undefined) => boolean | Promise<boolean>;
}

/** What {@link AxUCPWebhookEventSource} accepts: a misspelled key is refused, never ignored. */
const WEBHOOK_SOURCE_OPTIONS = object(
  {
    id: string({ nonEmpty: true }),
    businesses: required(
      array(
        object(
          {
            client: required(
              instance(
                'an AxUCPClient',
                (v) =>
                  typeof v === 'object' && v !== null && typeof (v as { call?: unknown }).call === 'function',
              ),
            ),
            identity: object(
              {
                tenantId: string({ nonEmpty: true }),
                accountId: string({ nonEmpty: true }),
                userId: string({ nonEmpty: true }),
                sessionId: string({ nonEmpty: true }),
              },
              { expected: 'an identity { tenantId?, accountId?, userId?, sessionId? }' },
            ),
            ownsOrder: func('a function (orderId, checkoutId) => boolean'),
          },
          { expected: '{ client, identity?, ownsOrder? }' },
        ),
        { minLength: 1, expected: 'a list of businesses [{ client, identity?, ownsOrder? }]' },
      ),
    ),
    maxBodyBytes: number({ integer: true, min: 1 }),
    toleranceSeconds: number({ min: 1 }),
    dedupeEntries: number({ integer: true, min: 1 }),
  },
  { expected: 'options { businesses, id?, maxBodyBytes?, toleranceSeconds?, dedupeEntries? }' },
);

/** Options of {@link AxUCPWebhookEventSource}. */
export interface AxUCPWebhookEventSourceOptions {
  /** The source id (default `ucp-webhooks`). */
  id?: string;
  /** The businesses whose webhooks are accepted. */
  businesses: readonly AxUCPWebhookBusiness[];
  /** Largest body accepted (default 1 MiB). */
  maxBodyBytes?: number;
  /** How far `Webhook-Timestamp` may be from now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** How many `Webhook-Id`s are remembered for deduplication (default 10 000). */
  dedupeEntries?: number;
}

/** Why a delivery was refused: the HTTP status answered and the UCP code. */
export interface AxUCPWebhookRefusal {
  status: number;
  code: AxUCPErrorCode | 'unknown_business' | 'order_not_owned' | 'ownership_check_failed' | 'not_started';
  message: string;
}

const ACK_VERSION = '2026-08-25';

/** A UCP order-webhook receiver that publishes attributed events. See the module comment. */
export class AxUCPWebhookEventSource implements AxEventSource {
  readonly id: string;
  readonly #businesses: readonly AxUCPWebhookBusiness[];
  readonly #maxBytes: number;
  readonly #tolerance: number;
  readonly #dedupeEntries: number;
  /** Webhook ids seen, oldest first (insertion order), per business. */
  readonly #seen = new Map<string, number>();
  /** Refusals so far (the most recent 100), for diagnosis. */
  readonly refusals: AxUCPWebhookRefusal[] = [];
  #publisher: AxEventPublisher | undefined;

  constructor(options: AxUCPWebhookEventSourceOptions) {
    assertUCPOptions(WEBHOOK_SOURCE_OPTIONS, options, 'AxUCPWebhookEventSource options');
    this.id = options.id ?? 'ucp-webhooks';
    this.#businesses = [...options.businesses];
    this.#maxBytes = options.maxBodyBytes ?? 1024 * 1024;
    this.#tolerance = options.toleranceSeconds ?? 300;
    this.#dedupeEntries = options.dedupeEntries ?? 10_000;
  }

  start(publisher: AxEventPublisher): void {
    this.#publisher = publisher;
  }

  close(): void {
    this.#publisher = undefined;
  }

  describe(): AxEventSourceDescription {
    const identified = this.#businesses.every((b) => b.identity !== undefined);
    const anonymous = this.#businesses.every((b) => b.identity === undefined);
    return {
      sources: this.#businesses.map((b) => `ucp://${b.client.namespace}`),
      types: [UCP_ORDER_UPDATED],
      identity: identified ? 'identified' : anonymous ? 'anonymous' : 'varies',
      trust: identified ? 'authenticated' : anonymous ? 'untrusted' : 'varies',
      // Every webhook is ucp.order.updated: a route on ucp.order.created waits in vain.
      typePrefixes: ['ucp.'],
    };
  }

  /** Receives one delivery. 200 when published (or a duplicate already published); 4xx/5xx when refused. */
  async handle(request: Request): Promise<Response> {
    const refused = (status: number, code: AxUCPWebhookRefusal['code'], message: string) => {
      this.refusals.push({ status, code, message });
      if (this.refusals.length > 100) this.refusals.shift();
      return Response.json({ code, content: message }, { status });
    };
    const publisher = this.#publisher;
    if (!publisher) return refused(503, 'not_started', 'The event source is not started');
    if (request.method !== 'POST') return refused(405, 'invalid_argument', 'Webhooks are POSTed');

    const agent = request.headers.get('ucp-agent');
    if (agent === null || !request.headers.has('signature-input')) {
      return refused(
        401,
        'signature_missing',
        'Webhooks must be signed (UCP-Agent, Signature-Input, Signature)',
      );
    }
    let profileURL: string | undefined;
    try {
      const member = parseDictionary(agent).get('profile');
      if (member && 'value' in member && typeof member.value === 'string') profileURL = member.value;
    } catch {
      // Refused below.
    }
    const business = this.#businesses.find(
      (b) => profileURL !== undefined && b.client.endpoint === profileURL,
    );
    if (!business) return refused(403, 'unknown_business', 'The signer is not a business configured here');

    let body: Uint8Array;
    try {
      body = await readBodyLimited(new Response(request.body, { headers: request.headers }), this.#maxBytes);
    } catch (error) {
      if (error instanceof AxMCPError && error.code === 'message_too_large') {
        return refused(413, 'message_too_large', `The body exceeds ${this.#maxBytes} bytes`);
      }
      return refused(400, 'transport_error', 'The body could not be read');
    }

    const parts = { method: request.method, url: new URL(request.url), headers: request.headers, body };
    const context = { namespace: business.client.namespace, operation: 'order.webhook' };
    let verified: AxUCPVerifiedSignature;
    try {
      let keys = await business.client.businessKeys();
      try {
        verified = await verifyMessage(parts, keys, { context });
      } catch (error) {
        if (!(error instanceof AxUCPSignatureError) || error.code !== 'key_not_found') throw error;
        keys = await business.client.businessKeys({ refresh: true });
        verified = await verifyMessage(parts, keys, { context });
      }
    } catch (error) {
      if (error instanceof AxUCPSignatureError) {
        return refused(error.code === 'digest_mismatch' ? 400 : 401, error.code, error.message);
      }
      return refused(503, 'discovery_failed', 'The business keys could not be fetched');
    }

    const webhookId = request.headers.get('webhook-id');
    const timestamp = Number(request.headers.get('webhook-timestamp'));
    if (!webhookId || webhookId.length > 200 || !Number.isInteger(timestamp)) {
      return refused(400, 'invalid_argument', 'Webhook-Id and Webhook-Timestamp are required');
    }
    const now = publisher.clock.now() / 1000;
    if (Math.abs(now - timestamp) > this.#tolerance) {
      return refused(400, 'webhook_replayed', 'Webhook-Timestamp is outside the accepted window');
    }
    // `Webhook-Id` and `Webhook-Timestamp` are not covered by the signature: a captured delivery
    // could come back under a new id. So the signature's own `created` must be fresh too, and the
    // signed body bytes (its Content-Digest) are remembered as well as the id.
    if (verified.created !== undefined && Math.abs(now - verified.created) > this.#tolerance) {
      return refused(400, 'webhook_replayed', 'The signature was created outside the accepted window');
    }
    const seenKey = `${business.client.endpoint} id ${webhookId}`;
    const digestKey = `${business.client.endpoint} digest ${request.headers.get('content-digest')}`;
    if (this.#seen.has(seenKey) || this.#seen.has(digestKey)) return this.#ack(true);

    let order: Record<string, unknown>;
    try {
      order = parseUntrustedJSON(new TextDecoder().decode(body)) as Record<string, unknown>;
      assertUCPSchema('order', order, context);
    } catch (error) {
      const code = error instanceof AxUCPSchemaError ? 'schema_violation' : 'invalid_response';
      return refused(400, code, 'The body is not a UCP order');
    }
    const orderId = order.id as string;
    const checkoutId = typeof order.checkout_id === 'string' ? order.checkout_id : undefined;
    let owns: unknown;
    try {
      owns = business.ownsOrder
        ? await business.ownsOrder(orderId, checkoutId)
        : business.client.hasPlacedOrder(orderId);
    } catch (error) {
      publisher.reportError(error);
      return refused(
        503,
        'ownership_check_failed',
        'The order ownership could not be checked; deliver again later',
      );
    }
    if (owns !== true) {
      // Only true accepts. A truthy answer passed this guard: a database row, or a query
      // result (which pg returns whether or not a row matched), owned every order.
      if (owns !== false) {
        publisher.reportError(
          new AxUCPError(
            'invalid_options',
            `ownsOrder of the business "${business.client.namespace}" answered ${describeAnswer(owns)}, not true or false: the order is refused as not owned`,
          ),
        );
      }
      return refused(403, 'order_not_owned', 'The order was not placed with this business');
    }

    const namespace = business.client.namespace;
    const ingress: AxEventIngress = {
      event: {
        id: webhookId,
        source: `ucp://${namespace}`,
        type: UCP_ORDER_UPDATED,
        subject: orderId,
        time: new Date(timestamp * 1000).toISOString(),
        datacontenttype: 'application/json',
        data: redactCredentials(order),
      },
      trust: business.identity ? 'authenticated' : 'untrusted',
      correlation: [
        { kind: UCP_ORDER_CORRELATION, value: `${namespace}:${orderId}` },
        ...(checkoutId ? [{ kind: UCP_CHECKOUT_CORRELATION, value: `${namespace}:${checkoutId}` }] : []),
      ],
      partitionKey: `${namespace}:${orderId}`,
    };
    if (business.identity) ingress.identity = business.identity;
    try {
      await publisher.publish(ingress);
    } catch (error) {
      publisher.reportError(error);
      return refused(503, 'closed', 'The event could not be stored; deliver again later');
    }
    this.#seen.set(seenKey, timestamp);
    this.#seen.set(digestKey, timestamp);
    while (this.#seen.size > this.#dedupeEntries * 2) this.#seen.delete(this.#seen.keys().next().value!);
    return this.#ack(false);
  }

  #ack(duplicate: boolean): Response {
    return Response.json({ ucp: { version: ACK_VERSION, status: 'success' }, duplicate }, { status: 200 });
  }
}
