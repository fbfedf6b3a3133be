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
/** @type {string[]} the codes onWarning was given */
const warned = [];
const nightly = new AxTimerEventSource({
  id: 'nightly',
  everyMs: 24 * 60 * 60 * 1000,
  event: { source: 'app://cron', type: 'app.reindex.due' }, // anonymous, trusted
});
const runtime = eventRuntime({
  sources: [nightly],
  onWarning: (message, details) => {
    console.log(`warning [${details.code}] ${message}`);
    warned.push(details.code);
  },
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
// The page shows this warning: a run without it is a broken example, not a quiet one.
if (warned.join() !== 'unauthenticated_source') throw new Error(`expected one warning, got ${warned.join()}`);

// #region explain
const order = { id: 'o-1', source: 'app://shop', type: 'app.order.created', data: { total: 20 } };
const explained = await runtime.explain(order, {
  identity: { tenantId: 'acme' },
  trust: 'authenticated',
});
for (const route of explained) {
  console.log(route.routeId, route.matches, route.reason?.code ?? '', route.reason?.message ?? '');
}
// #endregion explain
if (explained.map((route) => route.reason?.code).join() !== 'type,predicate') {
  throw new Error(`expected the reasons type and predicate, got ${JSON.stringify(explained)}`);
}
await runtime.close();
