// @ts-check
// The module `ax-mcp worker --module ./my-runtime.mjs` loads: the routes and targets every
// worker of the fleet runs (fleet.mjs starts workers with it). It prints a line per run so you
// can see which worker ran what. Run directly, it only lists its routes.
import { pathToFileURL } from 'node:url';
import { eventPath, eventRoute, eventTarget } from 'ax-mcp';

const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms));
const worker = process.env.WORKER_NAME ?? 'worker';

// #region module
const pause = [{ name: 'ms', type: /** @type {const} */ ('number'), optional: true }]; // how long a run takes

const summarize = eventTarget('summarize')
  .retrySafety('idempotent') // may run again after a crash: make the second run a no-op
  .inputFields(pause)
  .invoke(async (input, context) => {
    console.log(`${worker} summarize ${context.instanceKey} attempt ${context.attempt}`);
    await sleep(Number(input.ms ?? 0));
    return { summarized: context.instanceKey, idempotencyKey: context.idempotencyKey };
  })
  .build();
const charge = eventTarget('charge') // retrySafety 'unknown' (the default): never replayed
  .inputFields(pause)
  .invoke(async (input, context) => {
    console.log(`${worker} charge ${context.instanceKey} attempt ${context.attempt}`);
    await sleep(Number(input.ms ?? 0));
    return { charged: context.instanceKey };
  })
  .build();

export const routes = [
  eventRoute('docs').types('doc.updated').instanceKey(eventPath.data('docId')).wake(summarize).build(),
  eventRoute('invoices').types('invoice.due').instanceKey(eventPath.data('invoiceId')).wake(charge).build(),
];
/** @type {import('ax-mcp').AxEventTargetDefinition[]} */
export const targets = []; // targets that routes name by id (optional)
/** @type {import('ax-mcp').AxEventSource[]} */
export const sources = []; // sources this worker runs (optional)
export const options = { retry: { maxAttempts: 5, baseMs: 200 } }; // runtime options (optional)
export async function close() {} // release what the module opened (optional)
// #endregion module

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log('routes:', routes.map((route) => route.id).join(', '));
}
