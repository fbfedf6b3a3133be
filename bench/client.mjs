// One client, one scenario, in its own process (run with --expose-gc), so that
// process.cpuUsage() and memory figures belong to that client alone. bench/run.mjs starts it:
//
//   node --expose-gc bench/client.mjs --client sdk-v2 --scenario call --era modern --url … [--n 2000] [--concurrency 1]
//
// Prints one JSON line: the measurement, or { error }.

import http from 'node:http';
import { getHeapStatistics } from 'node:v8';
import { ADAPTERS } from './adapters.mjs';
import { benchArgs } from './args.mjs';

const { values } = benchArgs({
  usage: `Usage: node --expose-gc bench/client.mjs --client NAME --scenario NAME --era modern|legacy --url URL [options]
  (one measurement in its own process; bench/run.mjs starts it)
  --client NAME        one of ${Object.keys(ADAPTERS).join(', ')}
  --scenario NAME      one of call, catalog, fanin, idle, subs
  --n N                operations (default 1000)
  --concurrency N      calls in flight (default 1)
  --warmup N           calls before the clock starts (default 300)
  --repeat N           catalog runs after the warm-up one (default 3)`,
  options: {
    client: { type: 'string', choices: Object.keys(ADAPTERS), required: true },
    scenario: { type: 'string', choices: ['call', 'catalog', 'fanin', 'idle', 'subs'], required: true },
    era: { type: 'string', choices: ['modern', 'legacy'], required: true },
    url: { type: 'string', required: true },
    n: { type: 'integer', min: 1, default: 1000 },
    concurrency: { type: 'integer', min: 1, default: 1 },
    warmup: { type: 'integer', default: 300 },
    repeat: { type: 'integer', min: 1, default: 3 },
  },
});
const adapter = ADAPTERS[values.client];
const { era, url, scenario } = values;
const n = values.n;
const gc = globalThis.gc ?? (() => {});

const cpuMicros = (since) => {
  const used = process.cpuUsage(since);
  return used.user + used.system;
};

async function fresh() {
  const client = await adapter.create(url, era, scenario);
  await client.connect();
  return client;
}

/** Runs `count` calls with at most `width` in flight. */
async function calls(client, count, width, offset = 0) {
  let next = 0;
  const worker = async () => {
    while (next < count) await client.call(offset + next++);
  };
  await Promise.all(Array.from({ length: Math.min(width, count) }, worker));
}

const SCENARIOS = {
  /** tools/call round trips: calls/s and client CPU per call. */
  async call() {
    const client = await fresh();
    const width = values.concurrency;
    await calls(client, values.warmup, width);
    gc();
    const server0 = (await control('/control/status', 'GET')).cpuUs;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await calls(client, n, width, 1e6);
    const wallMs = performance.now() - t0;
    const cpuUs = cpuMicros(cpu0);
    const serverCpuPerOpUs = ((await control('/control/status', 'GET')).cpuUs - server0) / n;
    await client.close();
    return { ops: n, wallMs, cpuUs, perSec: (n / wallMs) * 1000, cpuPerOpUs: cpuUs / n, serverCpuPerOpUs };
  },

  /**
   * inspectCatalog (or the client's own full listing) of every tool on every page, by a
   * fresh client (connect included) in a process whose code is already warm: median of
   * `repeat` runs after one warm-up. Peak memory: the growth of the V8 heap's high-water
   * mark (sampled between pages) over the heap before the run.
   */
  async catalog() {
    const runs = [];
    const repeat = values.repeat;
    for (let r = 0; r <= repeat; r++) {
      gc();
      const before = getHeapStatistics().used_heap_size;
      let peak = before;
      // v8.getHeapStatistics is cheap; process.memoryUsage() also reads the RSS, which costs
      // enough to show in the client's CPU.
      const sampler = setInterval(() => {
        peak = Math.max(peak, getHeapStatistics().used_heap_size);
      }, 5);
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const client = await fresh();
      const tools = await client.catalog();
      const wallMs = performance.now() - t0;
      const cpuUs = cpuMicros(cpu0);
      clearInterval(sampler);
      peak = Math.max(peak, getHeapStatistics().used_heap_size);
      if (tools.length !== n) throw new Error(`listed ${tools.length} tools, expected ${n}`);
      gc();
      const retained = getHeapStatistics().used_heap_size - before;
      await client.close();
      if (r > 0) runs.push({ wallMs, cpuUs, peakBytes: peak - before, retainedBytes: retained });
    }
    const mid = (key) => runs.map((x) => x[key]).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
    return {
      ops: n,
      wallMs: mid('wallMs'),
      cpuUs: mid('cpuUs'),
      peakBytes: mid('peakBytes'),
      retainedBytes: mid('retainedBytes'),
    };
  },

  /** Notification fan-in: n resources/updated over one stream into one subscriber. */
  async fanin() {
    const uri = 'bench://r/0';
    const client = await adapter.create(url, era, scenario);
    await client.connect();
    let seen = 0;
    let target = Number.POSITIVE_INFINITY;
    let done;
    let lastAt = performance.now();
    await client.subscribe([uri], (u) => {
      if (u !== uri) return;
      seen++;
      lastAt = performance.now();
      if (seen >= target) done?.();
    });
    await waitForStream();
    const flood = async (count) => {
      const start = seen;
      target = start + count;
      const arrived = new Promise((resolve) => {
        done = resolve;
      });
      const sent = control(`/control/flood?uri=${encodeURIComponent(uri)}&n=${count}`);
      // A stalled stream (nothing for 10 s) ends the wait: the result then says how many arrived.
      lastAt = performance.now();
      const stalled = new Promise((resolve) => {
        const timer = setInterval(() => {
          if (performance.now() - lastAt > 10_000) {
            clearInterval(timer);
            resolve();
          }
        }, 250);
        arrived.then(() => clearInterval(timer));
      });
      await Promise.race([arrived, stalled]);
      await sent.catch(() => {});
      return seen - start;
    };
    await flood(Math.min(2000, n));
    gc();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const got = await flood(n);
    const wallMs = (got === n ? performance.now() : lastAt) - t0;
    const cpuUs = cpuMicros(cpu0);
    await client.close().catch(() => {});
    const result = { ops: got, wallMs, cpuUs, perSec: (got / wallMs) * 1000, cpuPerOpUs: cpuUs / got };
    if (got !== n) result.error = `stream stopped after ${got} of ${n} updates`;
    return result;
  },

  /** Heap of n idle initialized clients (all connected, nothing in flight). */
  async idle() {
    // One client first, so module-level caches and code are not counted per client.
    const first = await fresh();
    gc();
    gc();
    const before = process.memoryUsage().heapUsed;
    const clients = [];
    for (let i = 0; i < n; i += 20) {
      const batch = await Promise.all(Array.from({ length: Math.min(20, n - i) }, () => fresh()));
      clients.push(...batch);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    gc();
    gc();
    const after = process.memoryUsage().heapUsed;
    for (let i = 0; i < clients.length; i += 50)
      await Promise.all(clients.slice(i, i + 50).map((c) => c.close().catch(() => {})));
    await first.close();
    return { ops: n, bytesPerClient: (after - before) / n };
  },

  /** Heap of one client owning n resource subscriptions. */
  async subs() {
    const client = await fresh();
    gc();
    gc();
    const before = process.memoryUsage().heapUsed;
    const uris = Array.from({ length: n }, (_, i) => `bench://r/${i}`);
    const t0 = performance.now();
    await client.subscribe(uris, () => {});
    const wallMs = performance.now() - t0;
    await new Promise((resolve) => setTimeout(resolve, 200));
    gc();
    gc();
    const after = process.memoryUsage().heapUsed;
    await client.close().catch(() => {});
    return { ops: n, wallMs, bytesTotal: after - before };
  },
};

function control(path, method = 'POST') {
  const target = new URL(path, url);
  return new Promise((resolve, reject) => {
    const req = http.request(target, { method, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        text += c;
      });
      res.on('end', () => resolve(JSON.parse(text)));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Waits until the server holds the stream the updates will travel on. */
async function waitForStream() {
  for (let i = 0; i < 200; i++) {
    const status = await control('/control/status', 'GET');
    if ((era === 'modern' ? status.listenStreams : status.getStreams) > 0) {
      // The stream is registered; give its acknowledgement a moment to be read.
      await new Promise((resolve) => setTimeout(resolve, 50));
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the notification stream never opened');
}

let output;
try {
  output = await SCENARIOS[scenario]();
} catch (error) {
  output = {
    error: String(error?.stack ?? error)
      .split('\n')
      .slice(0, 3)
      .join(' | '),
  };
}
process.stdout.write(`${JSON.stringify(output)}\n`);
process.exit(0);
