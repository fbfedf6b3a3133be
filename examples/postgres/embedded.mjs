// @ts-check
// requires: postgres
// timeout: 60000
// Workers embedded in your own process: two AxPostgresEventWorkers share one schema (as they
// would on two machines). Deliveries of one instance run one at a time, in publish order,
// whichever worker claims them; a dead letter is redriven; the tables answer what is queued.
// Needs PostgreSQL: DATABASE_URL=postgres://… (a database it may write to; without it, exit 78).
import { eventPath, eventRoute, eventTarget } from 'ax-mcp';
import { AxPostgresEventStore, AxPostgresEventWorker } from 'ax-mcp/node';
import pg from 'pg';

const url = process.env.DATABASE_URL ?? process.env.AX_MCP_TEST_POSTGRES_URL;
if (!url) {
  console.log('skipped: set DATABASE_URL to a PostgreSQL database this example may write to');
  process.exit(78);
}
const schema = `ax_example_${process.pid}`; // the example's own schema, dropped at the end
const pool = new pg.Pool({ connectionString: url, max: 12 }); // 2 workers × (4 lanes + 2) connections
/** @type {string[]} */
const order = [];
let mailServerUp = false;

// #region workers
const store = await AxPostgresEventStore.open({ pool, schema }); // creates or migrates the tables
const routesOf = (/** @type {string} */ worker) => [
  eventRoute('edits')
    .types('doc.edited')
    .instanceKey(eventPath.data('docId'))
    .wake(
      eventTarget('apply-edit')
        .retrySafety('idempotent')
        .invoke((_input, { event }) => {
          order.push(`${event.id}@${worker}`);
        })
        .build(),
    )
    .build(),
  eventRoute('mail')
    .types('doc.published')
    .wake(
      eventTarget('mail') // not idempotent: a failure after it started is never replayed
        .invoke(() => {
          if (!mailServerUp) throw new Error('mail server down');
          return { sent: true };
        })
        .build(),
    )
    .build(),
];
const workers = ['w1', 'w2'].map(
  (name) =>
    new AxPostgresEventWorker({ store, routes: routesOf(name), workerConcurrency: 4, workerId: name }),
);
await Promise.all(workers.map((worker) => worker.start()));
const { runtime } = workers[0] ?? {}; // publish, inspect runs, redrive through any worker's runtime
if (!runtime) throw new Error('no worker');
// #endregion workers

// #region publish
for (let n = 1; n <= 6; n++) {
  await runtime.publish({
    event: { id: `e${n}`, source: 'app://wiki', type: 'doc.edited', data: { docId: 'guide' } },
  });
}
const mail = await runtime.publish({ event: { id: 'p1', source: 'app://wiki', type: 'doc.published' } });
const waitFor = async (/** @type {() => Promise<boolean>} */ done) => {
  for (let i = 0; i < 400 && !(await done()); i++) await new Promise((resolve) => setTimeout(resolve, 25));
};
await waitFor(async () => order.length === 6 && (await runtime.listDeadLetters()).length === 1);
console.log('in publish order:', order.map((entry) => entry.split('@')[0]).join(' '));
console.log('ran on:', [...new Set(order.map((entry) => entry.split('@')[1]))].sort().join(', '));
// #endregion publish

// #region operations
const byStatus = await pool.query(
  `SELECT status, count(*)::int AS n FROM ${schema}.ax_event_deliveries GROUP BY status ORDER BY status`,
);
console.log(byStatus.rows.map((row) => `${row.status}: ${row.n}`).join(', '));
const [letter] = await runtime.listDeadLetters();
console.log('dead letter:', letter?.reason, letter?.error?.message);
mailServerUp = true;
if (letter) await runtime.redrive(letter.id); // fresh attempts; NOTIFY wakes an idle worker
await waitFor(async () => (await runtime.getRun(mail.deliveryIds[0] ?? ''))?.status === 'succeeded');
console.log('after redrive:', (await runtime.getRun(mail.deliveryIds[0] ?? ''))?.status);
// #endregion operations

await Promise.all(workers.map((worker) => worker.close({ drainTimeoutMs: 10_000 })));
await store.close(); // a pool you pass stays yours
await pool.query(`DROP SCHEMA ${schema} CASCADE`);
await pool.end();
