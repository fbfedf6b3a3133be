// @ts-check
// requires: postgres
// timeout: 60000
// A fleet of `ax-mcp worker` processes on one PostgreSQL schema, and what a crash does. Worker
// A takes two deliveries and is killed with SIGKILL while they run. When its leases expire,
// worker B takes them over: the idempotent target runs again (attempt 2); the other one is
// not replayed — its run ends outcome_unknown with a dead letter. SIGTERM then drains B, which
// exits 0.
// Needs PostgreSQL: DATABASE_URL=postgres://… (a database it may write to; without it, exit 78).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { eventRuntime } from 'ax-mcp';
import { AxPostgresEventStore } from 'ax-mcp/node';
import pg from 'pg';
import { routes } from './my-runtime.mjs';

const url = process.env.DATABASE_URL ?? process.env.AX_MCP_TEST_POSTGRES_URL;
if (!url) {
  console.log('skipped: set DATABASE_URL to a PostgreSQL database this example may write to');
  process.exit(78);
}
const schema = `ax_example_${process.pid}`; // the example's own schema, dropped at the end
const cli = fileURLToPath(new URL('dist/cli/main.js', import.meta.resolve('ax-mcp/package.json')));
const module = fileURLToPath(new URL('./my-runtime.mjs', import.meta.url));

/** Starts one worker process, as `npx ax-mcp worker …` does; its output is printed with its name. */
function startWorker(/** @type {string} */ name) {
  // #region cli
  const args = ['worker', '--module', module, '--schema', schema, '--lease-ms', '1000', '--worker-id', name];
  const child = spawn(process.execPath, [cli, ...args], {
    env: { ...process.env, AX_MCP_STORE: url, WORKER_NAME: name }, // the URL stays out of ps
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // #endregion cli
  /** @type {string[]} */
  const lines = [];
  child.stdout.setEncoding('utf8').on('data', (/** @type {string} */ text) => {
    for (const line of text.split('\n').filter(Boolean)) {
      lines.push(line);
      console.log(`  [${name}] ${line}`);
    }
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
  return { child, lines, exited };
}
const until = async (/** @type {() => boolean | Promise<boolean>} */ done, ms = 20_000) => {
  for (const end = Date.now() + ms; Date.now() < end; ) {
    if (await done()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('timed out');
};

// #region publish
const pool = new pg.Pool({ connectionString: url, max: 4 }); // or pass connectionString to the store
const store = await AxPostgresEventStore.open({ pool, schema });
const publisher = eventRuntime({ routes, store, scheduling: 'host', coordination: 'multi-worker' });
await publisher.start();
const a = startWorker('A');
await until(() => a.lines.length > 0); // running
const doc = await publisher.publish({
  event: { id: 'd-1', source: 'app://wiki', type: 'doc.updated', data: { docId: 'guide', ms: 3000 } },
});
const invoice = await publisher.publish({
  event: { id: 'i-1', source: 'app://billing', type: 'invoice.due', data: { invoiceId: 'inv-9', ms: 3000 } },
});
// #endregion publish

// #region crash
await until(() => a.lines.filter((line) => line.includes('attempt 1')).length === 2);
a.child.kill('SIGKILL'); // no drain, no goodbye: its leases just stop being renewed
console.log('A exited with', await a.exited);
const b = startWorker('B');
const status = async (/** @type {string[]} */ ids) => (await publisher.getRun(ids[0] ?? ''))?.status;
await until(async () => (await status(doc.deliveryIds)) === 'succeeded');
console.log('doc run:', await status(doc.deliveryIds)); // succeeded, on attempt 2
console.log('invoice run:', await status(invoice.deliveryIds)); // outcome_unknown: never replayed
for (const letter of await publisher.listDeadLetters()) console.log('dead letter:', letter.reason);

b.child.kill('SIGTERM'); // drains: claims nothing more, lets running deliveries finish
console.log('B exited with', await b.exited); // 0
// #endregion crash

await publisher.close();
await store.close(); // a pool you pass stays yours
await pool.query(`DROP SCHEMA ${schema} CASCADE`);
await pool.end();
