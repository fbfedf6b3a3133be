// @ts-check
// Watching what is published, and listing runs and continuations from the store: what a
// dashboard (or the studio) needs, without wrapping publish() and without knowing run ids.
import { eventPath, eventRoute, eventRuntime, eventTarget } from 'ax-mcp';

const index = eventTarget('index-doc')
  .retrySafety('idempotent')
  .waitFor('app.review', eventPath.data('docId'), { expiresInMs: 60_000 })
  .invoke(() => ({ indexed: true }))
  .build();
const runtime = eventRuntime({
  scheduling: 'host',
  routes: [eventRoute('docs').types('doc.published').ordering('relaxed').wake(index).build()],
});
await runtime.start();

// #region watch
const stop = runtime.onPublish(({ ingress, receipt }) => {
  receipt.then(
    (done) => console.log(`published ${ingress.event.type}: ${done.deliveryIds.length} delivery`),
    (error) => console.log(`refused ${ingress.event.type}: ${error.message}`),
  );
});
for (const docId of ['d-1', 'd-2', 'd-3'])
  await runtime.publish({
    event: { id: docId, source: 'app://cms', type: 'doc.published', data: { docId } },
  });
stop();
// #endregion watch
await runtime.runDue();

// #region list
const store = runtime.store;
if (store.listRuns && store.listContinuations) {
  // Newest first; `next` pages on while more match.
  const page = await store.listRuns({ status: ['waiting_event'], limit: 2 });
  console.log(
    page.runs.map((run) => `${run.routeId} ${run.status}`),
    page.next ? 'more…' : 'all',
  );
  const rest = await store.listRuns({ status: ['waiting_event'], limit: 2, before: page.next });
  console.log(rest.runs.length, 'more');
  for (const c of await store.listContinuations({ now: runtime.clock.now() }))
    console.log(`waits for ${c.kind} = ${c.value}${c.expired ? ' (expired)' : ''}`);
}
// #endregion list
await runtime.close();
