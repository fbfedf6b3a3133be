// @ts-check
// A continuation: a woken run promises to wait for a correlated event, and a resume route
// runs the same target again when that event arrives — from the same identity scope only.
import { eventPath, eventRoute, eventRuntime, eventTarget } from 'ax-mcp';

// #region target
const checkout = eventTarget('checkout')
  // On every wake, before invoking: wait for `payment = <orderId>` (expires after a day).
  .waitFor('payment', eventPath.data('orderId'), { expiresInMs: 86_400_000, metadata: { step: 'pay' } })
  .wakeInput((input) => input.field('orderId', eventPath.data('orderId')))
  .resumeInput((input) =>
    input.field('amount', eventPath.data('amount')).field('step', eventPath.continuation('step')),
  )
  .invoke((input, context) => {
    console.log(`${context.action}: ${JSON.stringify(input)}`);
    return context.action === 'wake' ? { waiting: true } : { paid: input.amount };
  })
  .build();

const runtime = eventRuntime({
  routes: [
    eventRoute('order-placed').types('shop.order.placed').authenticated().wake(checkout).build(),
    eventRoute('payment-received')
      .types('shop.payment.received')
      .authenticated()
      .correlate('payment', eventPath.data('orderId'))
      .resume(checkout)
      .build(),
  ],
});
// #endregion target
await runtime.start();

// #region resume
const acme = { identity: { tenantId: 'acme' }, trust: /** @type {const} */ ('authenticated') };
const placed = await runtime.publish({
  event: { id: 'p-1', source: 'app://shop', type: 'shop.order.placed', data: { orderId: '1042' } },
  ...acme,
});
await runtime.waitForIdle();
const [waiting] = placed.deliveryIds;
console.log('after the wake:', (await runtime.getRun(waiting ?? ''))?.status); // waiting_event

// The same order id from another tenant finds no continuation: dead-lettered, nothing runs.
const payment = {
  source: 'app://payments',
  type: 'shop.payment.received',
  data: { orderId: '1042', amount: 25 },
};
await runtime.publish({
  event: { id: 'pay-x', ...payment },
  identity: { tenantId: 'globex' },
  trust: 'authenticated',
});
await runtime.publish({ event: { id: 'pay-1', ...payment }, ...acme });
await runtime.waitForIdle();

console.log('after the resume:', (await runtime.getRun(waiting ?? ''))?.status); // succeeded
for (const letter of await runtime.listDeadLetters()) console.log('dead letter:', letter.reason);
await runtime.close();
// #endregion resume
