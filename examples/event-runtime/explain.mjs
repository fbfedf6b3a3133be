// @ts-check
// runtime.explain(): for every route, whether it would take an event and the first reason it
// would not, decided by the code that routes publish() — nothing is stored, no target runs.
// onWarning: wiring that can never work, said once when the sources start.
import { AxTimerEventSource, eventRoute, eventRuntime, eventTarget } from 'ax-mcp';

const reindex = eventTarget('reindex')
  .invoke(() => 'done')
  .build();
const dataOf = (/** @type {{ data?: unknown }} */ event) =>
  /** @type {Record<string, unknown>} */ (event.data ?? {});

// #region warning
const nightly = new AxTimerEventSource({
  id: 'nightly',
  everyMs: 24 * 60 * 60 * 1000,
  event: { source: 'app://cron', type: 'app.reindex.due' }, // anonymous, trusted
});
const runtime = eventRuntime({
  sources: [nightly],
  onWarning: (message, details) => console.log(`warning [${details.code}] ${message}`),
  routes: [
    eventRoute('reindex-due').types('app.reindex.due').authenticated().wake(reindex).build(),
    eventRoute('big-orders')
      .match(({ event }) => event.type === 'app.order.created' && Number(dataOf(event).total) > 1000)
      .wake(reindex)
      .build(),
  ],
});
await runtime.start(); // warns: the timer's anonymous events reach no route
// #endregion warning

// #region explain
const order = { id: 'o-1', source: 'app://shop', type: 'app.order.created', data: { total: 20 } };
for (const route of await runtime.explain(order, {
  identity: { tenantId: 'acme' },
  trust: 'authenticated',
})) {
  console.log(route.routeId, route.matches, route.reason?.code ?? '', route.reason?.message ?? '');
}
// #endregion explain
await runtime.close();
