// ax-mcp beside its peers, scenario by scenario, in one script:
//
//   npm run bench                      # build, then every scenario (a few minutes)
//   node bench/run.mjs --quick         # one short round of each (against the current dist/)
//   node bench/run.mjs --scenarios call,fanin --rounds 5
//   node bench/run.mjs --write         # also rewrite the table in bench/RESULTS.md
//
// The server (bench/server.mjs: the official v2 server SDK) runs in its own process, one per
// era and catalog size; every client runs in its own child process (bench/client.mjs,
// bench/event-routing.mjs), so process.cpuUsage() there is that client's CPU alone. Rounds
// interleave the clients (round 1: A B C …, round 2: B C … A) and the table shows medians and
// ratios peer / ax-mcp (for CPU and memory >1 means ax-mcp uses less; for rates <1 means ax-mcp
// is faster). Numbers only: nothing here asserts a timing.

import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { ADAPTERS, peerVersions } from './adapters.mjs';
import { benchArgs } from './args.mjs';

const here = (file) => fileURLToPath(new URL(file, import.meta.url));
const SCENARIOS = ['call', 'catalog', 'fanin', 'routing', 'footprint'];
const { values } = benchArgs({
  usage: `Usage: node bench/run.mjs [options]   (npm run bench builds first)
  --scenarios LIST   comma-separated, of ${SCENARIOS.join(', ')} (default: all)
  --clients LIST     comma-separated, of ${Object.keys(ADAPTERS).join(', ')} (default: all)
  --rounds N         interleaved rounds, medians shown (default 3; 1 with --quick)
  --quick            one short round of each scenario
  --write            also rewrite the table in bench/RESULTS.md`,
  options: {
    quick: { type: 'boolean' },
    write: { type: 'boolean' },
    rounds: { type: 'integer', min: 1, default: (given) => (given.quick ? 1 : 3) },
    scenarios: { type: 'list', choices: SCENARIOS, default: SCENARIOS.join(',') },
    clients: { type: 'list', choices: Object.keys(ADAPTERS), default: Object.keys(ADAPTERS).join(',') },
  },
});
const quick = values.quick;
const rounds = values.rounds;
const wanted = new Set(values.scenarios);
const clientNames = values.clients;
const SIZE = {
  callSeq: quick ? 300 : 1000,
  callConc: quick ? 640 : 1920,
  /** Calls before the clock starts: long-lived clients run optimized code. */
  callWarmup: quick ? 300 : 800,
  catalogTools: 10_000,
  catalogRepeat: 1,
  fanin: quick ? 20_000 : 100_000,
  routing: quick ? 20_000 : 100_000,
  routingPeer: quick ? 2_000 : 5_000,
  routingStore: quick ? 500 : 2_000,
  idle: quick ? 200 : 1000,
  subs: quick ? 2_000 : 10_000,
};
const REFERENCE = 'ax-mcp/node';
const POSTGRES_URL = process.env.AX_MCP_BENCH_POSTGRES_URL ?? process.env.AX_MCP_TEST_POSTGRES_URL;

// ---- processes ----------------------------------------------------------------------------------

function run(command, args, { timeoutMs = 300_000 } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...command, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => {
      out += c;
    });
    child.stderr.on('data', (c) => {
      err += c;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', () => {
      clearTimeout(timer);
      const line = out.trim().split('\n').pop() ?? '';
      try {
        resolve(JSON.parse(line));
      } catch {
        resolve({
          error: `no result (${err.trim().split('\n').slice(-2).join(' | ').slice(0, 300) || 'timed out'})`,
        });
      }
    });
  });
}

async function startServer(era, extra = []) {
  const child = spawn(process.execPath, [here('./server.mjs'), '--era', era, ...extra], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      const end = out.indexOf('\n');
      if (end !== -1) resolve(JSON.parse(out.slice(0, end)).url);
    });
    child.on('exit', (code) => reject(new Error(`server exited (${code})`)));
  });
  return {
    url,
    async stop() {
      child.stdin.end();
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

const clientRun = (name, scenario, era, url, extra = []) =>
  run(
    ['--expose-gc', here('./client.mjs')],
    ['--client', name, '--scenario', scenario, '--era', era, '--url', url, ...extra],
  );

/** Runs `task(name)` for every client, `rounds` times, rotating the order each round. */
async function interleaved(names, task, times = rounds) {
  const results = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < times; round++) {
    const order = names.map((_, i) => names[(i + round) % names.length]);
    for (const name of order) {
      const result = await task(name);
      results[name].push(result);
      progress(`${name}: ${result.error ? `error ${result.error.slice(0, 120)}` : 'ok'}`);
    }
  }
  return results;
}

function progress(text) {
  process.stderr.write(`  ${text}\n`);
}

// ---- statistics and tables ----------------------------------------------------------------------

function median(list) {
  const sorted = list.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Medians of each metric over the runs that succeeded; the first error otherwise. */
function summarize(runs, keys) {
  const ok = runs.filter((r) => !r.error);
  const out = { runs: ok.length, error: runs.find((r) => r.error)?.error };
  for (const key of keys) out[key] = median(ok.map((r) => r[key]));
  return out;
}

const fmt = {
  int: (x) => (x === undefined ? '–' : Math.round(x).toLocaleString('en-US')),
  us: (x) => (x === undefined ? '–' : x < 10 ? x.toFixed(2) : Math.round(x).toLocaleString('en-US')),
  ms: (x) => (x === undefined ? '–' : x < 100 ? x.toFixed(1) : Math.round(x).toLocaleString('en-US')),
  kb: (x) => (x === undefined ? '–' : (x / 1024).toFixed(x < 10_240 ? 1 : 0)),
  mb: (x) => (x === undefined ? '–' : (x / 1024 / 1024).toFixed(1)),
};
const ratio = (peer, ours) =>
  peer === undefined || ours === undefined || ours === 0 ? '–' : `${(peer / ours).toFixed(2)}×`;

/**
 * A markdown table: one row per client, for each column the median and (where `ratio`) peer /
 * reference. `rows` maps client name → summary.
 */
function table(title, rows, columns, notes = []) {
  const reference = rows[REFERENCE] ?? rows['ax-mcp (memory)'];
  const head = ['client', ...columns.flatMap((c) => (c.ratio ? [c.label, 'ratio'] : [c.label]))];
  const lines = [`#### ${title}`, '', `| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const [name, row] of Object.entries(rows)) {
    const cells = [labelOf(name)];
    for (const c of columns) {
      cells.push(row.runs === 0 ? 'failed' : c.format(row[c.key]));
      if (c.ratio) cells.push(row.runs === 0 ? '' : ratio(row[c.key], reference?.[c.key]));
    }
    lines.push(`| ${cells.join(' | ')} |`);
  }
  const failures = Object.entries(rows).filter(([, r]) => r.error);
  for (const [name, r] of failures) notes.push(`${labelOf(name)}: ${r.error}`);
  if (notes.length) lines.push('', ...notes.map((n) => `- ${n}`));
  lines.push('');
  const text = lines.join('\n');
  console.log(text);
  return text;
}

const labelOf = (name) => ADAPTERS[name]?.label ?? name;

// ---- scenarios ----------------------------------------------------------------------------------

const ERAS = [
  ['modern', '2026-07-28'],
  ['legacy', '2025-11-25'],
];
const sections = [];
const namesFor = (era, scenario) =>
  clientNames.filter(
    (name) => ADAPTERS[name]?.eras.includes(era) && ADAPTERS[name].supports.includes(scenario),
  );

async function callScenario() {
  for (const [era, version] of ERAS) {
    const server = await startServer(era);
    try {
      for (const [mode, n, width] of [
        ['sequential', SIZE.callSeq, 1],
        ['32 concurrent', SIZE.callConc, 32],
      ]) {
        progress(`tools/call ${version} ${mode}`);
        const runs = await interleaved(namesFor(era, 'call'), (name) =>
          clientRun(name, 'call', era, server.url, [
            '--n',
            String(n),
            '--concurrency',
            String(width),
            '--warmup',
            String(SIZE.callWarmup),
          ]),
        );
        const rows = Object.fromEntries(
          Object.entries(runs).map(([k, v]) => [
            k,
            summarize(v, ['perSec', 'cpuPerOpUs', 'serverCpuPerOpUs']),
          ]),
        );
        sections.push(
          table(`tools/call, ${version}, ${mode} (${n} calls a run)`, rows, [
            { label: 'calls/s', key: 'perSec', format: fmt.int, ratio: true },
            { label: 'client CPU µs/call', key: 'cpuPerOpUs', format: fmt.us, ratio: true },
            { label: 'server CPU µs/call', key: 'serverCpuPerOpUs', format: fmt.us },
          ]),
        );
      }
    } finally {
      await server.stop();
    }
  }
}

async function catalogScenario() {
  for (const [era, version] of ERAS) {
    const server = await startServer(era, ['--tools', String(SIZE.catalogTools), '--page', '100']);
    try {
      progress(`catalog ${version}`);
      const runs = await interleaved(namesFor(era, 'catalog'), (name) =>
        clientRun(name, 'catalog', era, server.url, [
          '--n',
          String(SIZE.catalogTools),
          '--repeat',
          String(SIZE.catalogRepeat),
        ]),
      );
      const rows = Object.fromEntries(
        Object.entries(runs).map(([k, v]) => [
          k,
          summarize(v, ['wallMs', 'cpuUs', 'peakBytes', 'retainedBytes']),
        ]),
      );
      sections.push(
        table(
          `Catalog: ${SIZE.catalogTools.toLocaleString('en-US')} tools over 100 pages, ${version} (fresh client, connect included)`,
          rows,
          [
            { label: 'time ms', key: 'wallMs', format: fmt.ms, ratio: true },
            {
              label: 'client CPU ms',
              key: 'cpuUs',
              format: (x) => fmt.ms(x === undefined ? x : x / 1000),
              ratio: true,
            },
            { label: 'peak heap growth MB', key: 'peakBytes', format: fmt.mb, ratio: true },
            { label: 'retained MB', key: 'retainedBytes', format: fmt.mb },
          ],
          [
            '@modelcontextprotocol/client runs with `listMaxPages: 1000`: its default (64 pages) cannot list this catalog.',
            '@modelcontextprotocol/sdk has no aggregate listing: the adapter walks `nextCursor` with `listTools({ cursor })`.',
          ],
        ),
      );
    } finally {
      await server.stop();
    }
  }
}

async function faninScenario() {
  for (const [era, version] of ERAS) {
    const server = await startServer(era);
    try {
      progress(`fan-in ${version}`);
      const runs = await interleaved(
        namesFor(era, 'fanin'),
        (name) => clientRun(name, 'fanin', era, server.url, ['--n', String(SIZE.fanin)]),
        Math.min(rounds, 2),
      );
      const rows = Object.fromEntries(
        Object.entries(runs).map(([k, v]) => [k, summarize(v, ['perSec', 'cpuPerOpUs'])]),
      );
      sections.push(
        table(
          `Fan-in: ${SIZE.fanin.toLocaleString('en-US')} notifications/resources/updated over one ${era === 'modern' ? 'listen' : 'GET'} stream, ${version}`,
          rows,
          [
            { label: 'notifications/s', key: 'perSec', format: fmt.int, ratio: true },
            { label: 'client CPU µs/notification', key: 'cpuPerOpUs', format: fmt.us, ratio: true },
          ],
          [
            'notifications/s is bounded by the server SDK producing them; client CPU is the comparison.',
            '@ax-llm/ax runs with `maxResponseBytes: 2**30`: it counts every byte of a long-lived stream against its 16 MiB default and drops the stream after ~85,000 notifications.',
          ],
        ),
      );
    } finally {
      await server.stop();
    }
  }
}

async function routingScenario() {
  const variants = [
    ['ax-mcp (memory)', 'ax-mcp', 'memory', SIZE.routing],
    [`ax-mcp (memory, ${SIZE.routingPeer.toLocaleString('en-US')})`, 'ax-mcp', 'memory', SIZE.routingPeer],
    [`@ax-llm/ax (memory, ${SIZE.routingPeer.toLocaleString('en-US')})`, 'ax', 'memory', SIZE.routingPeer],
    [`ax-mcp (SQLite, ${SIZE.routingStore.toLocaleString('en-US')})`, 'ax-mcp', 'sqlite', SIZE.routingStore],
  ];
  if (POSTGRES_URL) {
    variants.push([
      `ax-mcp (PostgreSQL, ${SIZE.routingStore.toLocaleString('en-US')})`,
      'ax-mcp',
      'postgres',
      SIZE.routingStore,
    ]);
  }
  progress('event routing');
  const byName = Object.fromEntries(variants.map(([name, ...rest]) => [name, rest]));
  const runs = Object.fromEntries(Object.keys(byName).map((name) => [name, []]));
  for (let round = 0; round < Math.min(rounds, 2); round++) {
    for (const [name, [runtime, store, n]] of Object.entries(byName)) {
      const result = await run(
        ['--expose-gc', here('./event-routing.mjs')],
        ['--runtime', runtime, '--store', store, '--n', String(n)],
        { timeoutMs: 600_000 },
      );
      runs[name].push(result);
      progress(`${name}: ${result.error ? `error ${result.error}` : 'ok'}`);
    }
  }
  const rows = Object.fromEntries(
    Object.entries(runs).map(([k, v]) => [k, summarize(v, ['perSec', 'cpuPerOpUs'])]),
  );
  const notes = [
    'One observe route on `mcp.resource.updated` and one route that never matches; events published one by one, clock stopped when the runtime is idle.',
    `@ax-llm/ax's runtime slows down as events pile up (about 0.9 ms/event at 2,000, 1.9 ms at 5,000, 5.1 ms at 10,000 on this machine), so it runs ${SIZE.routingPeer.toLocaleString('en-US')} events and ax-mcp runs the same count beside it; ratios are against the ax-mcp run of the same size.`,
  ];
  notes.push(
    `Durable stores run ${SIZE.routingStore.toLocaleString('en-US')} events (every event is a committed transaction): SQLite always, PostgreSQL ${POSTGRES_URL ? 'with AX_MCP_BENCH_POSTGRES_URL' : 'not run (set AX_MCP_BENCH_POSTGRES_URL to a database the bench may use)'}.`,
  );
  const reference = rows[`ax-mcp (memory, ${SIZE.routingPeer.toLocaleString('en-US')})`];
  const head = '| runtime (store, events) | events/s | ratio | CPU µs/event | ratio |';
  const lines = ['#### Event routing', '', head, '|---|---|---|---|---|'];
  for (const [name, row] of Object.entries(rows)) {
    lines.push(
      `| ${name} | ${row.runs ? fmt.int(row.perSec) : 'failed'} | ${ratio(row.perSec, reference?.perSec)} | ${fmt.us(row.cpuPerOpUs)} | ${ratio(row.cpuPerOpUs, reference?.cpuPerOpUs)} |`,
    );
  }
  for (const [name, row] of Object.entries(rows)) if (row.error) notes.push(`${name}: ${row.error}`);
  lines.push('', ...notes.map((n) => `- ${n}`), '');
  console.log(lines.join('\n'));
  sections.push(lines.join('\n'));
}

async function footprintScenario() {
  for (const [era, version] of ERAS) {
    const server = await startServer(era);
    try {
      progress(`footprint ${version}`);
      const names = namesFor(era, 'idle');
      const idle = await interleaved(
        names,
        (name) => clientRun(name, 'idle', era, server.url, ['--n', String(SIZE.idle)]),
        1,
      );
      const subs = await interleaved(
        names,
        (name) => clientRun(name, 'subs', era, server.url, ['--n', String(SIZE.subs)]),
        1,
      );
      const rows = Object.fromEntries(
        names.map((name) => {
          const a = summarize(idle[name], ['bytesPerClient']);
          const b = summarize(subs[name], ['bytesTotal', 'wallMs']);
          return [name, { ...a, ...b, runs: a.runs + b.runs, error: a.error ?? b.error }];
        }),
      );
      sections.push(
        table(`Footprint, ${version}`, rows, [
          {
            label: `heap KB per idle initialized client (${SIZE.idle})`,
            key: 'bytesPerClient',
            format: fmt.kb,
            ratio: true,
          },
          {
            label: `heap MB, one client with ${SIZE.subs.toLocaleString('en-US')} subscriptions`,
            key: 'bytesTotal',
            format: fmt.mb,
            ratio: true,
          },
          { label: 'subscribe time ms', key: 'wallMs', format: fmt.ms },
        ]),
      );
    } finally {
      await server.stop();
    }
  }
}

// ---- main ---------------------------------------------------------------------------------------

const started = new Date();
const load0 = os.loadavg();
const header = [
  `Run ${started.toISOString()}: ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.platform()} ${os.release()}; Node ${process.version}.`,
  `Versions: ${Object.entries(peerVersions())
    .map(([name, version]) => `${name} ${version}`)
    .join(', ')} (the last one is the server, for every client).`,
  `Mode: ${quick ? 'quick' : 'full'}, ${rounds} round(s) per scenario, clients interleaved; medians.`,
];
console.log(header.join('\n'));
console.log('');
const plan = [
  ['call', callScenario],
  ['catalog', catalogScenario],
  ['fanin', faninScenario],
  ['routing', routingScenario],
  ['footprint', footprintScenario],
];
for (const [name, scenario] of plan) if (wanted.has(name)) await scenario();
const load1 = os.loadavg();
const footer = `Load average (1 min) ${load0[0].toFixed(1)} at the start, ${load1[0].toFixed(1)} at the end; ${Math.round((Date.now() - started.getTime()) / 1000)} s.`;
console.log(footer);

if (values.write) {
  const path = here('./RESULTS.md');
  const body = [header.join('\n'), '', ...sections, footer].join('\n');
  let text = readFileSync(path, 'utf8');
  const begin = '<!-- results:begin -->';
  const end = '<!-- results:end -->';
  const at = text.indexOf(begin);
  const to = text.indexOf(end);
  text =
    at === -1 || to === -1
      ? `${text}\n${begin}\n${body}\n${end}\n`
      : `${text.slice(0, at + begin.length)}\n${body}\n${text.slice(to)}`;
  writeFileSync(path, text);
  // The tables are written plainly; the project's formatter aligns them so `npm test`'s lint passes.
  execFileSync(
    process.execPath,
    [here('../node_modules/@biomejs/biome/bin/biome'), 'format', '--write', path],
    {
      stdio: 'inherit',
    },
  );
  console.log(`\nwrote ${path}`);
}
