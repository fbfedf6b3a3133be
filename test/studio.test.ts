/**
 * The studio in real headless Chromium, against the dual-era demo server, a small modern
 * server whose tool description carries `<script>`, and an event runtime on SQLite: every
 * view loads; a tool call from the form reaches the server and its result renders; a denied
 * call shows the denial; a subscription's update appears in its timeline; a routed event shows
 * each route's decision and links to its run; a dead letter is redriven from the page and
 * succeeds; a request without the token is refused; server strings stay text.
 * Screenshots of each view are written to a folder under the OS tmp dir (printed).
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { AxMCPDemoServer } from '../src/demo/index.js';
import {
  type AxEventRuntime,
  type AxMCPClient,
  AxMCPEventSource,
  eventRoute,
  eventRuntime,
  eventTarget,
} from '../src/index.js';
import { AxSQLiteEventStore, type AxStudio, startStudio } from '../src/node.js';
import { CLI_BIN, CLI_BUILT, runCLI } from './helpers/cli.js';
import { eventually, httpClient } from './helpers/clients.js';
import {
  disconnectSignal,
  type LoopbackServer,
  listenLoopback,
  readBody,
  toWebRequest,
  writeWebResponse,
} from './servers/node-http.js';

const CHROMIUM = '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (!HAVE_CHROMIUM) {
  console.warn(
    `studio.test.ts: SKIPPED the headless Chromium tests: ${CHROMIUM} is missing (apt-get install -y chromium)`,
  );
}

const BERLIN = 'inventory://warehouse/berlin';
const HOSTILE_DESCRIPTION =
  '<script>window.__studioXSS = 1</script><img src=x onerror="window.__studioXSS = 2"> lists things';
const BULK_TOOLS = 2000;
const SHOTS = join(tmpdir(), 'ax-mcp-studio-screenshots');

/** A modern-only server with one tool whose description is hostile, and many plain ones. */
async function startScriptServer(): Promise<LoopbackServer> {
  const handler = createMcpHandler(
    () => {
      const mcp = new McpServer({ name: '<b>script-peer</b>', version: '1.0.0' });
      mcp.registerTool(
        'hostile_list',
        { description: HOSTILE_DESCRIPTION, inputSchema: z.object({}) },
        () => ({
          content: [{ type: 'text', text: '<img src=x onerror="window.__studioXSS = 3">' }],
        }),
      );
      for (let i = 0; i < BULK_TOOLS; i++) {
        const name = `bulk_${String(i).padStart(4, '0')}`;
        mcp.registerTool(name, { description: `Bulk tool ${i}.`, inputSchema: z.object({}) }, () => ({
          content: [{ type: 'text', text: `${name} called` }],
        }));
      }
      return mcp;
    },
    { legacy: 'reject' },
  );
  return listenLoopback((req, res) => {
    void (async () => {
      const body = req.method === 'POST' ? await readBody(req) : undefined;
      await writeWebResponse(res, await handler.fetch(toWebRequest(req, body, disconnectSignal(res))));
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
}

let demo: AxMCPDemoServer;
let scripted: LoopbackServer;
let inventory: AxMCPClient;
let hostile: AxMCPClient;
let runtime: AxEventRuntime;
let store: AxSQLiteEventStore;
let studio: AxStudio;
let dir: string;
let targetFails = true;
const targetRuns: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ax-mcp-studio-'));
  // The page as the package ships it, built fresh from studio/ (never a stale dist/).
  const vite = resolve(import.meta.dirname, '../node_modules/vite/bin/vite.js');
  const built = spawnSync(
    process.execPath,
    [
      vite,
      'build',
      'studio',
      '--outDir',
      join(dir, 'page'),
      '--emptyOutDir',
      '--base',
      './',
      '--logLevel',
      'warn',
    ],
    { cwd: resolve(import.meta.dirname, '..'), encoding: 'utf8' },
  );
  if (built.status !== 0) throw new Error(`vite build failed: ${built.stderr}`);

  demo = new AxMCPDemoServer({ keepAliveMs: 0 });
  await demo.start();
  scripted = await startScriptServer();
  inventory = httpClient(demo.url, {
    namespace: 'inventory',
    timeoutMs: 10_000,
    // A guard that refuses destructive tools: the studio must not get around it.
    authorizeToolCall: ({ tool }) => tool.annotations?.destructiveHint !== true,
  });
  hostile = httpClient(scripted.url('/mcp'), { namespace: 'script', timeoutMs: 10_000 });
  store = await AxSQLiteEventStore.open({ filename: join(dir, 'events.db') });
  const restock = eventTarget('restock')
    .retrySafety('idempotent')
    .maxAttempts(1)
    .invoke(async (_input, context) => {
      targetRuns.push(context.runId);
      if (targetFails) throw new Error('warehouse system unavailable');
      return { restocked: true };
    })
    .build();
  runtime = eventRuntime({
    store,
    sources: [new AxMCPEventSource({ client: inventory, resourceSubscriptions: [BERLIN] })],
    routes: [
      eventRoute('berlin-stock').types('mcp.resource.updated').subjects(BERLIN).wake(restock).build(),
      eventRoute('tenant-only')
        .types('mcp.*')
        .authenticated()
        .observe(async () => {})
        .build(),
    ],
    pollIntervalMs: 50,
    onWarning: () => {},
  });
  await runtime.start();
  studio = await startStudio({ clients: [inventory, hostile], runtime, assets: join(dir, 'page') });
  mkdirSync(SHOTS, { recursive: true });
  console.log(`studio.test.ts: screenshots in ${SHOTS}`);
}, 60_000);

afterAll(async () => {
  await studio?.close();
  await runtime?.close({ drain: false });
  await store?.close();
  await inventory?.close();
  await hostile?.close();
  await scripted?.close();
  await demo?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the studio server', () => {
  it('refuses every request without the token, and with a wrong one: 401 and nothing else', async () => {
    const origin = studio.origin;
    for (const path of ['/', '/index.html', '/api/servers', '/api/events', '/api/dead-letters']) {
      const response = await fetch(`${origin}${path}`);
      expect(response.status, path).toBe(401);
      expect(await response.text()).toBe('unauthorized');
    }
    const wrong = await fetch(`${origin}/api/servers?token=${'x'.repeat(43)}`);
    expect(wrong.status).toBe(401);
    const post = await fetch(`${origin}/api/servers/inventory/call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-ax-studio': '1' },
      body: JSON.stringify({ tool: 'get_stock', arguments: { sku: 'widget-a' } }),
    });
    expect(post.status).toBe(401);
    // The right token works (as a header), and the URL carries it.
    const token = new URL(studio.url).searchParams.get('token') as string;
    expect(token.length).toBeGreaterThanOrEqual(43);
    const ok = await fetch(`${origin}/api/servers`, { headers: { 'x-ax-studio-token': token } });
    expect(ok.status).toBe(200);
    // Another Host header (a rebound name) is refused even with the token (fetch cannot set Host).
    const rebound = await new Promise<number>((done, failed) => {
      const url = new URL(`${origin}/api/servers`);
      request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          headers: { 'x-ax-studio-token': token, host: 'evil.example' },
        },
        (response) => {
          response.resume();
          done(response.statusCode ?? 0);
        },
      )
        .on('error', failed)
        .end();
    });
    expect(rebound).toBe(401);
  });

  it('refuses a misspelled option with the nearest name instead of ignoring it', async () => {
    await expect(startStudio({ prot: 0 } as never)).rejects.toMatchObject({
      code: 'invalid_options',
      message: expect.stringMatching(/port/),
    });
    await expect(startStudio({ clients: [{}] } as never)).rejects.toMatchObject({ code: 'invalid_options' });
  });

  it('listens on loopback only unless a host is given, and warns then', async () => {
    expect(new URL(studio.url).hostname).toBe('127.0.0.1');
    const warnings: string[] = [];
    const open = await startStudio({ host: '0.0.0.0', onWarning: (m) => warnings.push(m) });
    try {
      expect(warnings.join('\n')).toMatch(/0\.0\.0\.0/);
    } finally {
      await open.close();
    }
  });
});

describe.skipIf(!HAVE_CHROMIUM)(
  `the studio in headless Chromium (skipped when ${CHROMIUM} is missing)`,
  () => {
    it('every view loads; calls, denials, subscriptions, decisions and redrive work from the page', async () => {
      const { chromium } = await import('playwright-core');
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--no-first-run',
          '--disable-background-networking',
        ],
      });
      const outside: string[] = [];
      try {
        const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
        page.on('request', (request) => {
          if (!request.url().startsWith(studio.origin)) outside.push(request.url());
        });
        const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

        // Servers: both clients, era and catalog; the token traded for a cookie.
        await page.goto(studio.url);
        expect(new URL(page.url()).searchParams.has('token')).toBe(false);
        await page.locator('[data-namespace="inventory"] [data-field="era"]').waitFor();
        expect(await page.locator('[data-namespace="inventory"] [data-field="era"]').textContent()).toMatch(
          /modern|legacy/,
        );
        await page.locator('[data-item="get_stock"]').waitFor();
        await shot('servers');

        // A hostile description is text; paging keeps 2,000 tools to 50 rows.
        await page.goto(`${studio.origin}/#/servers/script/tools`);
        await page.locator('[data-total]').waitFor();
        expect(await page.locator('[data-total]').getAttribute('data-total')).toBe(String(BULK_TOOLS + 1));
        expect(await page.locator('.items > details').count()).toBe(50);
        await page.fill('[data-filter="tools"]', 'hostile');
        await page.locator('[data-description="hostile_list"]').waitFor({ state: 'attached' });
        expect(await page.locator('[data-description="hostile_list"]').textContent()).toBe(
          HOSTILE_DESCRIPTION,
        );
        expect(await page.locator('main script, main img[src="x"]').count()).toBe(0);
        await page.locator('[data-item="hostile_list"] > summary').click();
        await shot('servers-hostile');

        // Try: the form calls get_stock through the client; the result renders.
        await page.goto(`${studio.origin}/#/try/inventory/get_stock`);
        await page.fill('input[name="sku"]', 'widget-a');
        await page.click('[data-action="Call"]');
        await page.locator('[data-result="ok"]').waitFor();
        expect(await page.locator('[data-result="ok"] .text-block').first().textContent()).toContain(
          'widget-a',
        );
        expect(await page.locator('[data-result="ok"]').textContent()).toContain('structuredContent');
        await shot('try');

        // A destructive tool asks first, then the client's guard denies it; nothing is sent.
        await page.goto(`${studio.origin}/#/try/inventory/adjust_stock`);
        await page.fill('input[name="warehouseId"]', 'berlin');
        await page.fill('input[name="sku"]', 'widget-a');
        await page.fill('input[name="delta"]', '-1');
        await page.click('[data-action="Call"]');
        await page.click('[data-confirm="Call"]');
        await page.locator('[data-result="denied"]').waitFor();
        expect(await page.locator('[data-error="authorization_denied"]').textContent()).toContain(
          'adjust_stock',
        );
        await shot('try-denied');

        // The hostile tool's result is text too.
        await page.goto(`${studio.origin}/#/try/script/hostile_list`);
        await page.click('[data-action="Call"]');
        await page.locator('[data-result="ok"]').waitFor();
        expect(await page.locator('[data-result="ok"] .text-block').textContent()).toContain('onerror');
        expect(
          await page.evaluate(() => (window as unknown as { __studioXSS?: number }).__studioXSS),
        ).toBeUndefined();

        // Subscriptions: the source owns Berlin; an update lands in its timeline.
        await eventually(
          () => inventory.subscriptions.some((s) => s.uri === BERLIN),
          10_000,
          'the subscription',
        );
        await page.goto(`${studio.origin}/#/subscriptions`);
        await page.locator(`[data-uri="${BERLIN}"]`).waitFor();
        expect(await page.locator(`[data-uri="${BERLIN}"]`).textContent()).toContain('mcp:inventory');
        await demo.emitResourceUpdated(BERLIN);
        await page.locator(`[data-timeline="${BERLIN}"] .mark`).first().waitFor({ timeout: 10_000 });
        await shot('subscriptions');

        // Events: the routed event, each route's decision, the link to its run.
        await page.goto(`${studio.origin}/#/events`);
        const row = page.locator('[data-type="mcp.resource.updated"]').first();
        await row.waitFor({ timeout: 10_000 });
        await row.click();
        await page.locator('[data-route="berlin-stock"]').waitFor();
        expect(await page.locator('[data-route="berlin-stock"]').getAttribute('data-matches')).toBe('true');
        expect(await page.locator('[data-route="tenant-only"]').getAttribute('data-matches')).toBe('false');
        expect(await page.locator('[data-route="tenant-only"]').textContent()).toContain('identity');
        expect(await page.locator('[data-field="trust"]').textContent()).toBe('untrusted');
        await shot('events');

        // The run failed once (one attempt allowed): a dead letter, redriven from the page.
        await eventually(() => targetRuns.length >= 1, 10_000, 'the target to run');
        const link = page.locator('[data-run-link]').first();
        const deliveryId = (await link.getAttribute('data-run-link')) as string;
        let dead = false;
        for (let i = 0; i < 100 && !dead; i++) {
          dead = (await runtime.getRun(deliveryId))?.status === 'dead_lettered';
          if (!dead) await new Promise((r) => setTimeout(r, 50));
        }
        expect(dead, JSON.stringify(await runtime.getRun(deliveryId))).toBe(true);
        await link.click();
        await page.locator(`[data-run-detail][data-status="dead_lettered"]`).waitFor();
        await page.locator('[data-table="dead-letters"] [data-action="Redrive"]').waitFor();
        await shot('runs');
        targetFails = false;
        await page.click('[data-table="dead-letters"] [data-action="Redrive"]');
        await page.click('[data-table="dead-letters"] [data-confirm="Redrive"]');
        await page.locator('[data-empty="dead-letters"]').waitFor({ timeout: 10_000 });
        let status: string | undefined;
        for (let i = 0; i < 100 && status !== 'succeeded'; i++) {
          status = (await runtime.getRun(deliveryId))?.status;
          if (status !== 'succeeded') await new Promise((r) => setTimeout(r, 50));
        }
        expect(status).toBe('succeeded');
        await page.reload();
        await page.locator(`[data-run-detail][data-status="succeeded"]`).waitFor({ timeout: 10_000 });
        await shot('runs-redriven');
        // A burst of 3,000 events: the page keeps its newest 1,000, draws only the rows in view.
        await page.goto(`${studio.origin}/#/events`);
        await page.locator('.event-row').first().waitFor();
        const started = Date.now();
        await runtime.publishMany(
          Array.from({ length: 3000 }, (_, i) => ({
            event: { id: `burst-${i}`, source: 'app://burst', type: 'app.burst', data: { i } },
          })),
        );
        await page.locator('[data-type="app.burst"]').first().waitFor({ timeout: 20_000 });
        await page.waitForFunction(
          () => document.querySelector('h1 .dim')?.textContent?.startsWith('1000 shown'),
          null,
          {
            timeout: 20_000,
          },
        );
        const drawnMs = Date.now() - started;
        expect(await page.locator('.event-row').count()).toBeLessThan(60);
        const frame = await page.evaluate(
          () =>
            new Promise<number>((done) => {
              const t0 = performance.now();
              requestAnimationFrame(() => done(performance.now() - t0));
            }),
        );
        console.log(
          `studio.test.ts: 3,000-event burst drawn in ${drawnMs} ms; next frame after ${frame.toFixed(1)} ms`,
        );
        expect(outside).toEqual([]);
      } finally {
        await browser.close();
      }
    }, 120_000);
  },
);

// The CLI as users run it: the built bin (npm test builds first).
const BIN = CLI_BIN;
if (!existsSync(BIN)) console.warn(`studio.test.ts: SKIPPED the CLI test: ${BIN} is missing (npm run build)`);

describe.skipIf(!CLI_BUILT)('ax-mcp studio (the CLI)', () => {
  it('--help prints the usage', async () => {
    const { code, stdout } = await runCLI(['studio', '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('ax-mcp studio [endpoint...]');
    expect(stdout).toContain('--store');
  });

  it('serves the endpoint on a SQLite store, prints the URL with its token, stops on SIGINT', async () => {
    const child = spawn(
      process.execPath,
      [BIN, 'studio', demo.url, '--allow-localhost', '--store', `sqlite:${join(dir, 'cli.db')}`],
      { env: { ...process.env, NO_COLOR: '1' } },
    );
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    const closed = once(child, 'close') as Promise<[number | null]>;
    try {
      await eventually(() => /http:\/\/127\.0\.0\.1:\d+\/\?token=\S+/.test(stdout), 20_000, 'the URL');
      const url = new URL((/http:\/\/127\.0\.0\.1:\d+\/\?token=\S+/.exec(stdout) as RegExpExecArray)[0]);
      expect((await fetch(`${url.origin}/api/servers`)).status).toBe(401);
      const servers = await fetch(`${url.origin}/api/servers?token=${url.searchParams.get('token')}`);
      expect(servers.status).toBe(200);
      expect(await servers.json()).toMatchObject({
        servers: [{ namespace: 'studio', era: 'modern' }],
        store: true,
      });
      const page = await fetch(url, { redirect: 'manual' });
      expect(page.status).toBe(303);
      expect(page.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict/);
    } finally {
      child.kill('SIGINT');
    }
    const [code] = await closed;
    expect(code).toBe(0);
  });
});
