// The studio page under load, in real headless Chromium: a client whose server has 10,000 tools,
// and a runtime publishing a burst of 1,000 events/s.
//
//   npm run build && node bench/studio.mjs [--tools 10000] [--rate 1000] [--seconds 5]
//
// Imports the compiled library from ../dist (the page from dist/studio) and starts the server of
// bench/server.mjs (--era modern --tools N) in its own process. Needs Chromium at
// /usr/bin/chromium (or CHROMIUM=path). Prints the figures — time to the first rows, scroll and
// filter latency in the tool list (from the input to the rows drawn), frame times during the
// burst, DOM node counts — as one table and one JSON line. Numbers only: nothing here asserts a
// timing. Not part of bench/run.mjs, which compares ax-mcp with its peers: the studio has none.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchArgs } from './args.mjs';

const { values } = benchArgs({
  usage: `Usage: npm run build && node bench/studio.mjs [--tools 10000] [--rate 1000] [--seconds 5]
  --tools N     tools the server lists (default 10000)
  --rate N      events published per second during the burst (default 1000)
  --seconds N   length of the burst (default 5)
  Needs Chromium at /usr/bin/chromium (or CHROMIUM=path).`,
  options: {
    tools: { type: 'integer', min: 1, default: 10_000 },
    rate: { type: 'integer', min: 1, default: 1000 },
    seconds: { type: 'integer', min: 1, default: 5 },
  },
});
const TOOLS = values.tools;
const RATE = values.rate;
const SECONDS = values.seconds;
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
/** Height of one row of the catalog list, as studio/src/views/servers.tsx draws it. */
const ROW = 34;

const here = (file) => fileURLToPath(new URL(file, import.meta.url));
const dist = resolve(process.env.AX_MCP_DIST ?? here('../dist'));
if (!existsSync(join(dist, 'studio', 'index.html'))) {
  console.error(`bench/studio.mjs: ${dist}/studio is missing: npm run build (or npm run build:studio)`);
  process.exit(1);
}
if (!existsSync(CHROMIUM)) {
  console.error(`bench/studio.mjs: ${CHROMIUM} is missing (apt-get install -y chromium, or CHROMIUM=path)`);
  process.exit(1);
}
const load = (path) => import(pathToFileURL(join(dist, path)).href);
const { AxMCPClient, AxMCPStreamableHTTPTransport, AxMemoryEventStore, eventRoute, eventRuntime } =
  await load('index.js');
const { startStudio } = await load('node.js');
const { chromium } = await import('playwright-core');

function startServer() {
  const child = spawn(process.execPath, [here('./server.mjs'), '--era', 'modern', '--tools', String(TOOLS)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  return new Promise((done, failed) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const end = out.indexOf('\n');
      if (end !== -1) done({ url: JSON.parse(out.slice(0, end)).url, child });
    });
    child.on('exit', (code) => failed(new Error(`bench/server.mjs exited (${code})`)));
  });
}

const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.floor(sorted.length / 2)];
};
const quantile = (xs, q) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
};
const round = (x) => Math.round(x * 10) / 10;

const server = await startServer();
const client = new AxMCPClient(
  new AxMCPStreamableHTTPTransport(server.url, { ssrfProtection: { allowHTTP: true, allowLoopback: true } }),
  { namespace: 'bench', timeoutMs: 60_000 },
);
const store = new AxMemoryEventStore();
const runtime = eventRuntime({
  store,
  // One route that never matches: every event is explained, none becomes a run.
  routes: [
    eventRoute('elsewhere')
      .types('elsewhere.*')
      .observe(async () => {})
      .build(),
  ],
  onWarning: () => {},
});
await runtime.start();
const studio = await startStudio({ clients: [client], runtime });
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
const figures = { tools: TOOLS, rate: RATE, seconds: SECONDS };
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(studio.url);

  // The catalog: first rows, then scrolls to places never fetched, then filters.
  let started = Date.now();
  await page.goto(`${studio.origin}/#/servers/bench/tools`);
  await page.locator('[data-list="tools"] [data-item]').first().waitFor({ timeout: 60_000 });
  figures.catalogFirstRowsMs = Date.now() - started;
  figures.catalogTotal = Number(await page.locator('[data-total]').getAttribute('data-total'));
  const rowAt = (index) =>
    page.evaluate(
      ({ index, row }) =>
        new Promise((done) => {
          const list = document.querySelector('[data-list="tools"]');
          const t0 = performance.now();
          list.scrollTop = index * row;
          list.dispatchEvent(new Event('scroll'));
          const check = () => {
            const drawn = [...list.querySelectorAll('.vrow')].find((r) => r.style.top === `${index * row}px`);
            if (drawn?.querySelector('[data-item]')) done(performance.now() - t0);
            else requestAnimationFrame(check);
          };
          requestAnimationFrame(check);
        }),
      { index, row: ROW },
    );
  const scrolls = [];
  const cached = [];
  const places = Array.from({ length: 20 }, (_, i) => Math.floor(((i * 7919) % 97) * (TOOLS / 97)));
  for (const place of places) scrolls.push(await rowAt(place));
  for (const place of places) cached.push(await rowAt(place));
  // A small step, as a wheel does: the rows are (mostly) fetched already.
  const steps = [];
  for (let i = 0; i < 30; i++) steps.push(await rowAt(places[0] + i * 3));
  figures.scrollToUnfetchedMs = { median: round(median(scrolls)), p95: round(quantile(scrolls, 0.95)) };
  figures.scrollToFetchedMs = { median: round(median(cached)), p95: round(quantile(cached, 0.95)) };
  figures.scrollStepMs = { median: round(median(steps)), p95: round(quantile(steps, 0.95)) };
  figures.catalogDomNodes = await page.evaluate(() => document.getElementsByTagName('*').length);
  figures.catalogRowsInDom = await page.locator('[data-list="tools"] [data-item]').count();

  const filter = (text) =>
    page.evaluate(
      (text) =>
        new Promise((done) => {
          const input = document.querySelector('[data-filter="tools"]');
          const t0 = performance.now();
          input.value = text;
          input.dispatchEvent(new Event('input', { bubbles: true }));
          const check = () => {
            const total = document.querySelector('[data-total]');
            const first = document.querySelector('[data-list="tools"] [data-item]');
            const none = total?.getAttribute('data-total') === '0';
            if (
              total?.getAttribute('data-state') === 'ready' &&
              (none || first?.getAttribute('data-item')?.includes(text))
            )
              done(performance.now() - t0);
            else requestAnimationFrame(check);
          };
          requestAnimationFrame(check);
        }),
      text,
    );
  const filters = [];
  for (const text of ['bulk_0', 'bulk_00', 'bulk_001', 'bulk_0012', 'bulk_00123', 'bulk_9', 'echo', 'bulk_'])
    filters.push(await filter(text));
  figures.filterMs = { median: round(median(filters)), p95: round(quantile(filters, 0.95)) };

  // The burst: frame times and DOM size on the Events view while RATE events/s arrive.
  await page.goto(`${studio.origin}/#/events`);
  await page.locator('h1').waitFor();
  await page.evaluate(() => {
    const state = { frames: [], nodes: [], last: performance.now(), on: true };
    window.__bench = state;
    const tick = (now) => {
      state.frames.push(now - state.last);
      state.last = now;
      if (state.frames.length % 10 === 0) state.nodes.push(document.getElementsByTagName('*').length);
      if (state.on) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  const TICK_MS = 10;
  const perTick = Math.max(1, Math.round((RATE * TICK_MS) / 1000));
  let published = 0;
  started = Date.now();
  while (Date.now() - started < SECONDS * 1000) {
    const next = started + (published / perTick + 1) * TICK_MS;
    await runtime.publishMany(
      Array.from({ length: perTick }, (_, i) => ({
        event: { id: `burst-${published + i}`, source: 'app://bench', type: 'bench.burst', data: { i } },
      })),
    );
    published += perTick;
    const wait = next - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  const publishMs = Date.now() - started;
  await new Promise((r) => setTimeout(r, 500));
  const burst = await page.evaluate(() => {
    const state = window.__bench;
    state.on = false;
    return {
      frames: state.frames.slice(1),
      nodes: state.nodes,
      shown: document.querySelector('h1 .dim')?.textContent ?? '',
      rows: document.querySelectorAll('.event-row').length,
    };
  });
  figures.burstPublished = published;
  figures.burstRatePerSecond = Math.round((published * 1000) / publishMs);
  figures.burstFrameMs = {
    frames: burst.frames.length,
    median: round(median(burst.frames)),
    p95: round(quantile(burst.frames, 0.95)),
    max: round(Math.max(...burst.frames)),
    over50ms: burst.frames.filter((f) => f > 50).length,
  };
  figures.burstDomNodes = { median: median(burst.nodes), max: Math.max(...burst.nodes) };
  figures.burstRowsInDom = burst.rows;
  figures.burstShown = burst.shown;
} finally {
  await browser.close();
  await studio.close();
  await runtime.close({ drain: false });
  await client.close();
  server.child.stdin.end();
  server.child.kill('SIGTERM');
}

const f = figures;
console.log(`studio under load: ${f.tools} tools, ${f.burstRatePerSecond} events/s for ${f.seconds} s`);
console.table({
  'tool list: first rows (ms)': { value: f.catalogFirstRowsMs },
  'scroll to rows not fetched yet (ms, median / p95)': {
    value: `${f.scrollToUnfetchedMs.median} / ${f.scrollToUnfetchedMs.p95}`,
  },
  'scroll to rows fetched (ms, median / p95)': {
    value: `${f.scrollToFetchedMs.median} / ${f.scrollToFetchedMs.p95}`,
  },
  'scroll a few rows (ms, median / p95)': { value: `${f.scrollStepMs.median} / ${f.scrollStepMs.p95}` },
  'filter keystroke to rows (ms, median / p95)': { value: `${f.filterMs.median} / ${f.filterMs.p95}` },
  'tool list: DOM nodes / rows in DOM': { value: `${f.catalogDomNodes} / ${f.catalogRowsInDom}` },
  'burst: frame time (ms, median / p95 / max)': {
    value: `${f.burstFrameMs.median} / ${f.burstFrameMs.p95} / ${f.burstFrameMs.max}`,
  },
  'burst: frames over 50 ms': { value: `${f.burstFrameMs.over50ms} of ${f.burstFrameMs.frames}` },
  'burst: DOM nodes (median / max) / rows in DOM': {
    value: `${f.burstDomNodes.median} / ${f.burstDomNodes.max} / ${f.burstRowsInDom}`,
  },
  'burst: the page says': { value: f.burstShown },
});
console.log(JSON.stringify(figures));
