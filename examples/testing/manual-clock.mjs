// @ts-check
// Deterministic event-runtime tests: AxManualEventClock moves only when told to, and a
// host-scheduled runtime runs only on runDue(). Here a debounced route with coalescing: three
// quick updates of one document become one delivery with the latest event.
import { strict as assert } from 'node:assert';
import { eventPath, eventRoute, eventRuntime, eventTarget } from 'ax-mcp';
import { AxManualEventClock } from 'ax-mcp/testing';

// #region clock
const clock = new AxManualEventClock(Date.parse('2026-01-01T00:00:00Z'));
/** @type {string[]} */
const seen = [];
const index = eventTarget('index')
  .invoke((_input, { event }) => {
    seen.push(event.id);
  })
  .build();
const runtime = eventRuntime({
  clock,
  scheduling: 'host',
  routes: [
    eventRoute('reindex')
      .types('doc.updated')
      .instanceKey(eventPath.data('docId'))
      .debounce(5000, { coalesce: 'latest' })
      .wake(index)
      .build(),
  ],
});
await runtime.start();
for (const id of ['u1', 'u2', 'u3']) {
  await runtime.publish({
    event: { id, source: 'app://wiki', type: 'doc.updated', data: { docId: 'guide' } },
  });
  clock.advance(1000);
}
assert.equal((await runtime.runDue()).executed, 0); // still inside the debounce window
clock.advance(5000);
assert.equal((await runtime.runDue()).executed, 1);
assert.deepEqual(seen, ['u3']); // the latest event replaced the waiting ones
console.log('ran once, with', seen[0], 'at', new Date(clock.now()).toISOString());
await runtime.close();
// #endregion clock
