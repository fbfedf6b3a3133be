// @ts-check
// Routes in both forms: the builder, and the record form it produces (plain objects, checked
// when the runtime is built). Four actions: observe and invalidate call a function; wake runs a
// target; resume runs the target whose continuation the event correlates with (see
// continuations.mjs). A route names its target by id or carries its definition.
import { isDeepStrictEqual } from 'node:util';
import { AxEventRuntime, eventPath, eventRoute, eventTarget } from 'ax-mcp';

const summarize = eventTarget('summarize')
  .invoke((_input, context) => console.log(`summarize ${context.instanceKey}`))
  .build();

// #region builder
const byBuilder = eventRoute('docs-changed')
  .types('doc.updated', 'doc.created') // exact, or a prefix: 'doc.*'
  .sources('app://wiki')
  .authenticated()
  .instanceKey(eventPath.data('docId')) // deliveries of one document run in order, one at a time
  .wake('summarize')
  .build();
// #endregion builder

// #region record
/** @type {import('ax-mcp').AxEventRouteDefinition} */
const byRecord = {
  id: 'docs-changed',
  match: { types: ['doc.updated', 'doc.created'], sources: ['app://wiki'] },
  requireAuthenticated: true,
  instanceKey: eventPath.data('docId'),
  action: 'wake',
  target: 'summarize',
};
// #endregion record
console.log('same route:', isDeepStrictEqual({ ...byBuilder }, byRecord)); // true

// #region actions
const runtime = new AxEventRuntime(
  [
    byRecord,
    eventRoute('audit')
      .types('doc.*')
      .observe(({ event }) => console.log(`observe ${event.type}`))
      .build(),
    {
      id: 'cache',
      match: { types: ['doc.deleted'] },
      action: 'invalidate',
      invalidate: ({ event }) => console.log(`invalidate ${event.subject}`),
    },
  ],
  { targets: [summarize] },
);
await runtime.start();
const verified = { identity: { tenantId: 'acme' }, trust: /** @type {const} */ ('authenticated') };
await runtime.publish({
  event: { id: '1', source: 'app://wiki', type: 'doc.updated', data: { docId: 'guide' } },
  ...verified,
});
await runtime.publish({
  event: { id: '2', source: 'app://wiki', type: 'doc.deleted', subject: 'faq' },
  ...verified,
});
await runtime.waitForIdle();
await runtime.close();
// #endregion actions
