// @ts-check
// A source of your own: anything with an id, start(publisher) and close(). This one stands for
// a webhook endpoint; it checks the caller's token and attributes each event to the tenant the
// token belongs to. AxPushEventSource is the built-in source you push into from code.
import { AxPushEventSource, eventRoute, eventRuntime, eventTarget } from 'ax-mcp';

// #region source
/** @typedef {import('ax-mcp').AxEventSource} AxEventSource */
/** @typedef {import('ax-mcp').AxEventPublisher} AxEventPublisher */

/** @implements {AxEventSource} */
class BillingWebhook {
  id = 'billing-webhook';
  /** @type {AxEventPublisher | undefined} */
  #publisher;
  /** @param {Map<string, string>} tenantsByToken */
  constructor(tenantsByToken) {
    this.tenantsByToken = tenantsByToken;
  }
  /** @param {AxEventPublisher} publisher */
  start(publisher) {
    this.#publisher = publisher;
  }
  /** What a request handler calls; the token is checked here, not taken from the body. */
  async receive(/** @type {string} */ token, /** @type {{ id: string, invoice: string }} */ body) {
    const tenantId = this.tenantsByToken.get(token);
    if (!this.#publisher) throw new Error('not started');
    return this.#publisher.publish({
      event: { id: body.id, source: 'app://billing', type: 'billing.invoice.paid', data: body },
      ...(tenantId ? { identity: { tenantId }, trust: 'authenticated' } : {}),
    });
  }
  /** Lets the runtime warn about routes these events can never reach. */
  describe() {
    return {
      sources: ['app://billing'],
      types: ['billing.invoice.paid'],
      identity: /** @type {const} */ ('varies'),
    };
  }
  close() {
    this.#publisher = undefined;
  }
}
// #endregion source

// #region runtime
const webhook = new BillingWebhook(new Map([['tok-acme', 'acme']]));
const app = new AxPushEventSource({ id: 'app' });
const ledger = eventTarget('ledger')
  .invoke((_input, { event, identity }) => console.log(`${event.type} ${event.id} for ${identity.tenantId}`))
  .build();
const runtime = eventRuntime({
  sources: [webhook, app],
  routes: [
    eventRoute('paid').types('billing.invoice.paid').authenticated().wake(ledger).build(),
    eventRoute('refunds').types('app.refund.requested').authenticated().wake(ledger).build(),
  ],
});
await runtime.start();

const paid = await webhook.receive('tok-acme', { id: 'evt-1', invoice: 'inv-9' });
const forged = await webhook.receive('tok-unknown', { id: 'evt-2', invoice: 'inv-9' });
const refund = await app.push({
  event: { id: 'r-1', source: 'app://shop', type: 'app.refund.requested' },
  identity: { tenantId: 'acme' },
  trust: 'authenticated',
});
console.log('deliveries:', paid.deliveryIds.length, forged.deliveryIds.length, refund.deliveryIds.length); // 1 0 1
await runtime.waitForIdle();
await runtime.close(); // closes both sources
// #endregion runtime
