// @ts-check
// An application event, attributed to a verified identity, routed to a target: the route
// matches on type and requires authentication; the input plan picks two fields of the data.
import { eventInput, eventPath, eventRoute, eventRuntime, eventTarget } from 'ax-mcp';

// #region target
const notify = eventTarget('notify-warehouse')
  .inputFields([
    { name: 'orderId', type: 'string' },
    { name: 'sku', type: 'string' },
  ])
  .input(
    eventInput().field('orderId', eventPath.data('order', 'id')).field('sku', eventPath.data('order', 'sku')),
  )
  .invoke(async (input, context) => {
    console.log(`${context.targetId}: ${JSON.stringify(input)} for ${context.identity.tenantId}`);
    return { notified: input.orderId };
  })
  .build();
// #endregion target

// #region runtime
const runtime = eventRuntime({
  routes: [eventRoute('orders').types('app.order.*').authenticated().wake(notify).build()],
});
await runtime.start();

const receipt = await runtime.publish({
  event: {
    id: 'order-1042',
    source: 'app://shop',
    type: 'app.order.created',
    data: { order: { id: '1042', sku: 'widget-a', note: 'a gift' } },
  },
  identity: { tenantId: 'acme', userId: 'u-7' }, // from your verified authentication
  trust: 'authenticated',
});
await runtime.waitForIdle();

for (const id of receipt.deliveryIds) {
  const run = await runtime.getRun(id);
  console.log(run?.routeId, run?.status, JSON.stringify(run?.output));
}
await runtime.close();
// #endregion runtime
