// @ts-check
// Retries and dead letters, step by step on a manual clock with a host-driven runtime. An
// idempotent target is retried with capped, jittered backoff; a target that is not (the
// default) is never run again after it failed: its run ends outcome_unknown with a dead
// letter, and only an explicit redrive runs it again.
import { AxManualEventClock, eventRoute, eventRuntime, eventTarget } from 'ax-mcp';

// #region policy
const clock = new AxManualEventClock(Date.parse('2026-01-01T00:00:00Z'));
let rateCalls = 0;
const fetchRates = eventTarget('fetch-rates')
  .retrySafety('idempotent') // safe to run again after a failure
  .invoke(() => {
    if (++rateCalls < 3) throw new Error(`rates service unavailable (call ${rateCalls})`);
    return { rates: 'fresh' };
  })
  .build();
let charges = 0;
const charge = eventTarget('charge') // retrySafety 'unknown' (the default): never replayed
  .invoke(() => {
    if (++charges === 1) throw new Error('connection reset after the request was sent');
    return { charged: true };
  })
  .build();

const runtime = eventRuntime({
  clock,
  scheduling: 'host', // nothing runs until runDue()
  retry: { maxAttempts: 4, baseMs: 1000, maxMs: 30_000, jitter: 0 },
  routes: [
    eventRoute('rates').types('app.rates.stale').wake(fetchRates).build(),
    eventRoute('charge').types('app.invoice.due').wake(charge).build(),
  ],
});
// #endregion policy
await runtime.start();

// #region run
const rates = await runtime.publish({ event: { id: 'r1', source: 'app://fx', type: 'app.rates.stale' } });
const invoice = await runtime.publish({
  event: { id: 'i1', source: 'app://billing', type: 'app.invoice.due' },
});
const [ratesRun = ''] = rates.deliveryIds;
const [chargeRun = ''] = invoice.deliveryIds;

await runtime.runDue();
let run = await runtime.getRun(ratesRun);
console.log(run?.status, run?.attempt, 'next in', (run?.dueAt ?? 0) - clock.now(), 'ms'); // failed 1 next in 1000 ms
clock.advance(1000);
await runtime.runDue();
run = await runtime.getRun(ratesRun);
console.log(run?.status, run?.attempt, 'next in', (run?.dueAt ?? 0) - clock.now(), 'ms'); // failed 2 next in 2000 ms
clock.advance(2000);
await runtime.runDue();
console.log((await runtime.getRun(ratesRun))?.status, 'after', rateCalls, 'calls'); // succeeded after 3 calls

console.log('charge:', (await runtime.getRun(chargeRun))?.status); // outcome_unknown, not retried
const [letter] = await runtime.listDeadLetters();
console.log('dead letter:', letter?.reason, '-', letter?.error?.message);
if (letter) await runtime.redrive(letter.id); // your decision: run it again
await runtime.runDue();
console.log('after redrive:', (await runtime.getRun(chargeRun))?.status, 'charges:', charges); // succeeded 2
await runtime.close();
// #endregion run
