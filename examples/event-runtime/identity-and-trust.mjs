// @ts-check
// Identity and trust come from the publisher's verified authentication, never from the event.
// They decide which routes may take an event, and they scope deduplication: the same event id
// from another tenant is another event.
import { eventRoute, eventRuntime, eventTarget } from 'ax-mcp';

/** @type {string[]} */
const runs = [];
const audit = eventTarget('audit')
  .invoke((_input, context) => {
    runs.push(`${context.identityScope} ${context.event.id}`);
  })
  .build();
const runtime = eventRuntime({
  routes: [eventRoute('audit-orders').types('app.order.created').authenticated().wake(audit).build()],
});
await runtime.start();

// #region dedupe
const event = { id: 'order-1042', source: 'app://shop', type: 'app.order.created' };
const acme = { identity: { tenantId: 'acme' }, trust: /** @type {const} */ ('authenticated') };
const first = await runtime.publish({ event, ...acme });
const again = await runtime.publish({ event, ...acme }); // redelivered by the webhook sender
const other = await runtime.publish({ event, identity: { tenantId: 'globex' }, trust: 'authenticated' });
const anonymous = await runtime.publish({ event }); // no identity: anonymous and untrusted

console.log('first', first.duplicate, first.deliveryIds.length); // false 1
console.log('again', again.duplicate, again.deliveryIds[0] === first.deliveryIds[0]); // true true
console.log('globex', other.duplicate, other.deliveryIds.length); // false 1
console.log('anonymous', anonymous.duplicate, anonymous.deliveryIds.length); // false 0
// #endregion dedupe

await runtime.waitForIdle();
console.log(runs.sort());
await runtime.close();
