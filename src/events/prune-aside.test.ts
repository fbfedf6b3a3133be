import { describe, expect, it } from 'vitest';
import { AxMemoryEventStore } from './memory-store.js';
import { eventRoute } from './route-builder.js';
import { eventRuntime } from './runtime.js';
import { eventTarget } from './target-builder.js';

/** A memory store whose prune waits until released (counting the prunes started), and a target that records what ran. */
function slowPruningStore() {
  const store = new AxMemoryEventStore();
  const prune = store.prune.bind(store);
  const gate = { started: 0, release: () => {} };
  let open = new Promise<void>((resolve) => {
    gate.release = resolve;
  });
  store.prune = async (input) => {
    gate.started++;
    await open;
    open = Promise.resolve();
    return prune(input);
  };
  const ran: string[] = [];
  const target = eventTarget('t')
    .invoke((_input, context) => {
      ran.push(context.event.id);
    })
    .build();
  return { store, gate, ran, target };
}

const job = (id: string) => ({ event: { id, source: 'app://prune', type: 'job', data: {} } });

describe('pruning beside the claims', () => {
  it('a host runDue runs what is due while the store prunes, and returns once the prune is over', async () => {
    const { store, gate, ran, target } = slowPruningStore();
    const runtime = eventRuntime({
      routes: [eventRoute('r').types('job').wake(target).build()],
      store,
      scheduling: 'host',
    });
    await runtime.publish(job('a'));
    let returned = false;
    const run = runtime.runDue().then((r) => {
      returned = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(gate.started).toBe(1);
    expect(ran).toEqual(['a']);
    expect(returned).toBe(false);
    gate.release();
    expect(await run).toEqual({ executed: 1 });
    await runtime.close();
  });

  it('the runtime loop starts fresh work while a prune is still running', async () => {
    const { store, gate, ran, target } = slowPruningStore();
    const runtime = eventRuntime({ routes: [eventRoute('r').types('job').wake(target).build()], store });
    await runtime.start();
    await runtime.publish(job('b'));
    const deadline = Date.now() + 2000;
    while (ran.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(gate.started).toBe(1);
    expect(ran).toEqual(['b']);
    gate.release();
    await runtime.close();
  });
});
