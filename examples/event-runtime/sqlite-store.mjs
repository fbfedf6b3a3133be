// @ts-check
// The SQLite store (ax-mcp/node, with better-sqlite3 12 installed): what one runtime stored
// survives a restart. Here the first runtime publishes and stops before running anything;
// the second, on the same file, runs the delivery.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventRoute, eventRuntime, eventTarget } from 'ax-mcp';
import { AxSQLiteEventStore } from 'ax-mcp/node';

const dir = mkdtempSync(join(tmpdir(), 'ax-mcp-example-'));
const filename = join(dir, 'events.db');
const target = eventTarget('archive')
  .invoke((_input, { event }) => ({ archived: event.id }))
  .build();
const routes = [eventRoute('archive').types('doc.published').wake(target).build()];

// #region store
const first = await AxSQLiteEventStore.open({ filename }); // WAL; created or migrated
const publisher = eventRuntime({ routes, store: first, scheduling: 'host' });
await publisher.start();
const receipt = await publisher.publish({ event: { id: 'd-1', source: 'app://cms', type: 'doc.published' } });
await publisher.close();
await first.close(); // a store you pass stays yours to close

const again = await AxSQLiteEventStore.open({ filename });
const worker = eventRuntime({ routes, store: again });
await worker.start(); // takes back leases a crashed predecessor held, then runs what is due
await worker.waitForIdle();
const run = await worker.getRun(receipt.deliveryIds[0] ?? '');
console.log(run?.status, JSON.stringify(run?.output)); // succeeded {"archived":"d-1"}
await worker.close();
await again.close();
// #endregion store
rmSync(dir, { recursive: true, force: true });
