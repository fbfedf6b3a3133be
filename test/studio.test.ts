/**
 * The studio in real headless Chromium, against the dual-era demo server, a small modern
 * server whose tool description carries `<script>`, and an event runtime on SQLite: every
 * view loads; a tool call from the form reaches the server and its result renders; a denied
 * call shows the denial; the 2,001-tool list draws only the rows in view and fetches the rows
 * scrolled to; a subscription's update appears in its timeline; a routed event shows each
 * route's decision and links to its run; a dead letter is redriven from the page and succeeds;
 * a burst of 3,000 events keeps the newest 1,000 and draws only the rows in view. The new views:
 * the catalog's revision history (and a list_changed appearing in it); a prompt got with
 * completions as you type; a resource read from a template typed out; progress bars live while
 * a call runs; a task's input request answered from the call's form (tasks/update) and a
 * bridged form elicitation answered from the list; runs filtered by status and route; a
 * recording started, stopped, downloaded, then opened offline and stepped through, and files
 * that are not recordings refused. A request without the token is refused; server strings stay
 * text. Screenshots of each view go to AX_MCP_STUDIO_SHOTS (docs/studio refreshes the docs'
 * images), else to a folder under the OS tmp dir (printed).
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { AxMCPDemoServer } from '../src/demo/index.js';
import {
  type AxEventRuntime,
  AxMCPClient,
  AxMCPEventSource,
  AxMCPMemoryEraStore,
  AxMCPStreamableHTTPTransport,
  eventPath,
  eventRoute,
  eventRuntime,
  eventTarget,
} from '../src/index.js';
import {
  AxSQLiteEventStore,
  type AxStudio,
  AxStudioRecordingTransport,
  axStudioElicitation,
  startStudio,
} from '../src/node.js';
import { CHROMIUM, HAVE_CHROMIUM, launchChromium } from './helpers/chromium.js';
import { CLI_BIN, CLI_BUILT, runCLI } from './helpers/cli.js';
import { eventually, httpClient, LOOPBACK } from './helpers/clients.js';
import {
  disconnectSignal,
  type LoopbackServer,
  listenLoopback,
  readBody,
  toWebRequest,
  writeWebResponse,
} from './servers/node-http.js';

if (!HAVE_CHROMIUM) {
  console.warn(
    `studio.test.ts: SKIPPED the headless Chromium tests: ${CHROMIUM} is missing (apt-get install -y chromium)`,
  );
}

const BERLIN = 'inventory://warehouse/berlin';
const HOSTILE_DESCRIPTION =
  '<script>window.__studioXSS = 1</script><img src=x onerror="window.__studioXSS = 2"> lists things';
const BULK_TOOLS = 2000;
/** Where the screenshots go: AX_MCP_STUDIO_SHOTS=docs/studio refreshes the docs' images. */
const SHOTS = resolve(process.env.AX_MCP_STUDIO_SHOTS ?? join(tmpdir(), 'ax-mcp-studio-screenshots'));
const WAREHOUSE_TEMPLATE = 'inventory://warehouse/{warehouseId}';

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
/** A second client of the demo whose form elicitations the studio's bridge holds for the page. */
let asking: AxMCPClient;
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

  demo = new AxMCPDemoServer({ keepAliveMs: 0, taskPollIntervalMs: 100 });
  await demo.start();
  scripted = await startScriptServer();
  // Recordable from the page: its transport is wrapped in the studio's recorder.
  inventory = new AxMCPClient(
    new AxStudioRecordingTransport(new AxMCPStreamableHTTPTransport(demo.url, { ssrfProtection: LOOPBACK })),
    {
      namespace: 'inventory',
      eraStore: new AxMCPMemoryEraStore(),
      timeoutMs: 10_000,
      // A guard that refuses destructive tools: the studio must not get around it.
      authorizeToolCall: ({ tool }) => tool.annotations?.destructiveHint !== true,
    },
  );
  const elicitation = axStudioElicitation({ timeoutMs: 60_000 });
  asking = httpClient(demo.url, {
    namespace: 'asking',
    timeoutMs: 10_000,
    elicitation: elicitation.handlers,
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
  // Runs that wait for a shipment: one for ten minutes, one that expires at once.
  const order = eventTarget('order')
    .waitFor('app.shipment', eventPath.data('orderId'), { expiresInMs: 600_000 })
    .invoke(async () => ({ placed: true }))
    .build();
  const quote = eventTarget('quote')
    .waitFor('app.reply', eventPath.data('orderId'), { expiresInMs: 1 })
    .invoke(async () => ({ asked: true }))
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
      eventRoute('order-placed')
        .types('app.order')
        .instanceKey(eventPath.data('orderId'))
        .wake(order)
        .build(),
      eventRoute('order-shipped')
        .types('app.shipment')
        .correlate('app.shipment', eventPath.data('orderId'))
        .resume(order)
        .build(),
      eventRoute('quote-asked').types('app.quote').instanceKey(eventPath.data('orderId')).wake(quote).build(),
      eventRoute('quote-replied')
        .types('app.reply')
        .correlate('app.reply', eventPath.data('orderId'))
        .resume(quote)
        .build(),
    ],
    pollIntervalMs: 50,
    onWarning: () => {},
  });
  await runtime.start();
  studio = await startStudio({
    clients: [inventory, hostile, asking],
    runtime,
    assets: join(dir, 'page'),
    elicitation,
  });
  mkdirSync(SHOTS, { recursive: true });
  console.log(`studio.test.ts: screenshots in ${SHOTS}`);
}, 60_000);

afterAll(async () => {
  await studio?.close();
  await runtime?.close({ drain: false });
  await store?.close();
  await inventory?.close();
  await hostile?.close();
  await asking?.close();
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
      const browser = await launchChromium();
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

        // A hostile description is text; the list of 2,001 tools draws only the rows in view.
        await page.goto(`${studio.origin}/#/servers/script/tools`);
        await page.locator('[data-total][data-state="ready"]').waitFor();
        expect(await page.locator('[data-total]').getAttribute('data-total')).toBe(String(BULK_TOOLS + 1));
        await page.locator('.items [data-item="bulk_0000"]').waitFor();
        const drawn = await page.locator('.items [data-item]').count();
        expect(drawn).toBeGreaterThan(5);
        expect(drawn).toBeLessThan(40);
        // Scrolled to the end, the rows there are fetched and drawn; the DOM stays as small.
        await page.locator('[data-list="tools"]').evaluate((list) => {
          list.scrollTop = list.scrollHeight;
        });
        await page.locator(`[data-item="bulk_${String(BULK_TOOLS - 1).padStart(4, '0')}"]`).waitFor();
        expect(await page.locator('.items [data-item]').count()).toBeLessThan(40);
        await page.fill('[data-filter="tools"]', 'hostile');
        await page.locator('[data-description="hostile_list"]').waitFor({ state: 'attached' });
        expect(await page.locator('[data-description="hostile_list"]').textContent()).toBe(
          HOSTILE_DESCRIPTION,
        );
        expect(await page.locator('main script, main img[src="x"]').count()).toBe(0);
        await page.locator('[data-item="hostile_list"] .item-name').click();
        expect(await page.locator('[data-description-full="hostile_list"]').textContent()).toBe(
          HOSTILE_DESCRIPTION,
        );
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

    it('the new views: revisions, a prompt with completions, a read, a task and an elicitation answered, runs, a recording opened offline', async () => {
      const browser = await launchChromium();
      const outside: string[] = [];
      try {
        const context = await browser.newContext({
          viewport: { width: 1280, height: 860 },
          acceptDownloads: true,
        });
        const page = await context.newPage();
        page.on('request', (request) => {
          if (!request.url().startsWith(studio.origin)) outside.push(request.url());
        });
        const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
        await page.goto(studio.url);

        // Servers: the revision history starts with the whole catalog added; a change is a new entry.
        await page.goto(`${studio.origin}/#/servers/inventory`);
        await page.locator('[data-revisions="inventory"] > summary').click();
        const first = page.locator('[data-table="revisions"] [data-revision]').last();
        await first.waitFor();
        expect(
          await first.locator('[data-change-kind="tools"] [data-changes="added"]').textContent(),
        ).toContain('+get_stock');
        demo.addResource({ uri: 'inventory://catalog/studio-test', name: 'studio-test' });
        await page
          .locator('[data-table="revisions"] [data-change-kind="resources"] [data-changes="added"]', {
            hasText: 'inventory://catalog/studio-test',
          })
          .first()
          .waitFor({ timeout: 10_000 });
        await shot('servers-revisions');

        // Try a prompt: completions as you type, then the messages rendered and raw.
        await page.goto(`${studio.origin}/#/try/inventory/prompts/restock_plan`);
        await page.locator('input[name="warehouseId"]').pressSequentially('be');
        await page.locator('[data-suggestion="berlin"]').click();
        expect(await page.locator('input[name="warehouseId"]').inputValue()).toBe('berlin');
        await page.click('[data-action="Get"]');
        await page.locator('[data-result="ok"] .message').first().waitFor();
        expect(await page.locator('[data-result="ok"] .message').count()).toBe(2);
        expect(await page.locator('[data-result="ok"]').textContent()).toContain(
          'Plan a restock for the berlin',
        );
        await shot('try-prompt');

        // Read a resource by URI; a template is a hint, typed out by hand.
        await page.goto(
          `${studio.origin}/#/try/inventory/resources/${encodeURIComponent(WAREHOUSE_TEMPLATE)}`,
        );
        await page.locator(`[data-template="${WAREHOUSE_TEMPLATE}"]`).waitFor();
        await page.fill('[data-read-uri]', BERLIN);
        await page.click('[data-action="Read"]');
        await page.locator(`[data-result="ok"] [data-content-uri="${BERLIN}"]`).waitFor();
        expect(await page.locator('[data-result="ok"] .text-block').textContent()).toContain('widget');
        await shot('try-read');

        // Progress live from the stream while the call runs: a bar per notifications/progress.
        await page.goto(`${studio.origin}/#/try/inventory/count_stock`);
        await page.fill('input[name="sku"]', 'widget-a');
        await page.fill('input[name="delayMs"]', '1000');
        await page.click('[data-action="Call"]');
        // Looked at every frame: the first bar must be there while the call still runs.
        const firstBar = await page.waitForFunction(
          () =>
            document.querySelector('[data-progress="1"]')
              ? document.querySelector('[data-result="pending"]')
                ? 'while running'
                : 'after the result'
              : null,
          null,
          { polling: 'raf', timeout: 10_000 },
        );
        expect(await firstBar.jsonValue()).toBe('while running');
        expect(await page.locator('[data-progress] .dim').textContent()).toMatch(/^1 \/ 2 — counted /);
        await shot('try-progress');
        await page.locator('[data-result="ok"]').waitFor({ timeout: 10_000 });
        await page.locator('[data-progress="2"]').waitFor({ timeout: 10_000 });

        // A task: working, then input_required answered from the call's own form, then completed.
        // (The client asks its elicitation handlers, here the studio's bridge: a client without
        // one fails the call at input_required.)
        await page.goto(`${studio.origin}/#/try/asking/start_reindex`);
        await page.fill('input[name="scope"]', 'berlin');
        await page.click('[data-action="Call"]');
        await page.locator('[data-task-status="working"]').waitFor({ timeout: 10_000 });
        const berlin = demo.state().tasks.find((t) => t.scope === 'berlin');
        demo.requestTaskInput(berlin?.taskId);
        const form = page.locator('[data-input-request="confirm-1"]');
        await form.waitFor({ timeout: 10_000 });
        expect(await form.textContent()).toContain('Confirm reindexing scope "berlin"');
        // Shown with its call, not again in the list of waiting elicitations.
        expect(await page.locator('[data-elicitation]').count()).toBe(0);
        await shot('try-task');
        await form.locator('input[name="confirm"]').check();
        await form.locator('[data-answer="accept"]').click();
        await eventually(
          () =>
            demo.state().tasks.some((t) => t.taskId === berlin?.taskId && 'confirm-1' in t.inputResponses),
          10_000,
          'the input to reach the server',
        );
        expect(
          demo.state().tasks.find((t) => t.taskId === berlin?.taskId)?.inputResponses['confirm-1'],
        ).toEqual({
          action: 'accept',
          content: { confirm: true },
        });
        await page.locator('[data-task-status="working"] [data-state="input_required"]').waitFor();
        demo.completeTask(berlin?.taskId);
        await page.locator('[data-result="ok"]').waitFor({ timeout: 10_000 });
        expect(await page.locator('[data-result="ok"] .text-block').textContent()).toContain('Reindexed');
        // The answer may come before the stream's last batch: wait for the task's last state.
        await page.locator('[data-task-status="completed"]').waitFor({ timeout: 10_000 });
        expect(
          await page
            .locator('.task-states [data-state]')
            .evaluateAll((items) => items.map((item) => item.getAttribute('data-state'))),
        ).toEqual(['working', 'input_required', 'working', 'completed']);
        await shot('try-task-done');

        // A call the page did not start: its question waits in the list, answered from there.
        const token = new URL(studio.url).searchParams.get('token') as string;
        const headers = {
          'content-type': 'application/json',
          'x-ax-studio': '1',
          'x-ax-studio-token': token,
        };
        const elsewhere = fetch(`${studio.origin}/api/servers/asking/call`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ tool: 'start_reindex', arguments: { scope: 'hamburg' } }),
        });
        await eventually(() => demo.state().tasks.some((t) => t.scope === 'hamburg'), 10_000, 'the task');
        const hamburg = demo.state().tasks.find((t) => t.scope === 'hamburg');
        demo.requestTaskInput(hamburg?.taskId);
        await page.goto(`${studio.origin}/#/try`);
        const question = page.locator('[data-elicitation]').first();
        await question.waitFor({ timeout: 10_000 });
        expect(await question.textContent()).toContain('Confirm reindexing scope "hamburg"');
        expect(await page.locator('[data-elicitations]').getAttribute('data-elicitations')).toBe('1');
        await shot('try-elicitation');
        await question.locator('input[name="confirm"]').check();
        await question.locator('[data-answer="accept"]').click();
        await page.locator('[data-elicitation]').waitFor({ state: 'detached', timeout: 10_000 });
        await eventually(
          () =>
            demo.state().tasks.some((t) => t.taskId === hamburg?.taskId && 'confirm-1' in t.inputResponses),
          10_000,
          'the elicitation answer to reach the server',
        );
        demo.completeTask(hamburg?.taskId);
        expect(await (await elsewhere).json()).toMatchObject({ ok: true });

        // Runs: filters and the scope said; continuations listed.
        const runsBefore = targetRuns.length;
        await eventually(
          () => inventory.subscriptions.some((sub) => sub.uri === BERLIN),
          10_000,
          'the subscription',
        );
        await demo.emitResourceUpdated(BERLIN);
        await eventually(() => targetRuns.length > runsBefore, 10_000, 'a run');
        await page.goto(`${studio.origin}/#/runs`);
        const firstRun = page.locator('[data-table="runs"] [data-run]').first();
        await firstRun.waitFor({ timeout: 10_000 });
        const status = (await firstRun.getAttribute('data-status')) as string;
        await page.check(`[data-status-filter="${status}"]`);
        await page.locator(`[data-table="runs"] [data-run][data-status="${status}"]`).first().waitFor();
        expect(
          await page
            .locator('[data-table="runs"] [data-run]')
            .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-status'))),
        ).toEqual(expect.arrayContaining([status]));
        for (const shown of await page
          .locator('[data-table="runs"] [data-run]')
          .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-status'))))
          expect(shown).toBe(status);
        await page.check('[data-status-filter="claimed"]');
        await page.uncheck(`[data-status-filter="${status}"]`);
        await page.locator('[data-empty="runs"]').waitFor();
        await page.uncheck('[data-status-filter="claimed"]');
        await page.fill('[data-run-filter="route"]', 'berlin-stock');
        await page.press('[data-run-filter="route"]', 'Enter');
        await firstRun.waitFor();
        // Continuations: one run waits, one waited too long.
        const alice = { tenantId: 't1', userId: 'alice' };
        await runtime.publish({
          event: { id: 'order-1', source: 'app://shop', type: 'app.order', data: { orderId: 'o-1' } },
          identity: alice,
          trust: 'authenticated',
        });
        await runtime.publish({
          event: { id: 'quote-1', source: 'app://shop', type: 'app.quote', data: { orderId: 'o-2' } },
          identity: alice,
          trust: 'authenticated',
        });
        await page.fill('[data-run-filter="route"]', '');
        await page.press('[data-run-filter="route"]', 'Enter');
        const waiting = page.locator(
          '[data-table="continuations"] [data-continuation][data-expired="false"]',
        );
        await waiting.first().waitFor({ timeout: 10_000 });
        expect(await waiting.first().textContent()).toContain('app.shipment');
        expect(await waiting.first().textContent()).toContain('o-1');
        const expired = page.locator('[data-table="continuations"] [data-continuation][data-expired="true"]');
        await expired.first().waitFor({ timeout: 10_000 });
        expect(await expired.first().textContent()).toContain('app.reply');
        // Cursor paging: 50 runs a page, older ones on the next.
        const waitingBefore = (await store.listRuns({ status: ['waiting_event'], limit: 500 })).runs.length;
        await runtime.publishMany(
          Array.from({ length: 50 }, (_, i) => ({
            event: {
              id: `order-bulk-${i}`,
              source: 'app://shop',
              type: 'app.order',
              data: { orderId: `b-${i}` },
            },
            identity: alice,
            trust: 'authenticated' as const,
          })),
        );
        // Until every one of them waits, the newest runs keep changing under the page: let them
        // settle, so that the page read below is the one the cursor comes from.
        const bulkWaiting = async () =>
          (await store.listRuns({ status: ['waiting_event'], limit: 500 })).runs.length;
        const settleBy = Date.now() + 20_000;
        while ((await bulkWaiting()) < waitingBefore + 50 && Date.now() < settleBy)
          await new Promise((r) => setTimeout(r, 50));
        await page.check('[data-status-filter="waiting_event"]');
        await page.locator('[data-page="older"]:not([disabled])').waitFor({ timeout: 20_000 });
        const newest = await page.locator('[data-table="runs"] [data-run]').first().getAttribute('data-run');
        expect(await page.locator('[data-table="runs"] [data-run]').count()).toBe(50);
        await page.click('[data-page="older"]');
        await page.locator('.pager', { hasText: 'page 2' }).waitFor();
        await page.locator('[data-table="runs"] [data-run]').first().waitFor();
        const older = await page
          .locator('[data-table="runs"] [data-run]')
          .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-run')));
        expect(older.length).toBeGreaterThan(0);
        expect(older).not.toContain(newest);
        await page.uncheck('[data-status-filter="waiting_event"]');
        await shot('runs-filtered');

        // Record: start, a call, stop, download; the file opens offline and steps through.
        await page.goto(`${studio.origin}/#/record`);
        await page.click('[data-recorder="inventory"] [data-record-action="start"]');
        await page.locator('[data-recorder="inventory"][data-recording="true"]').waitFor();
        const call = await fetch(`${studio.origin}/api/servers/inventory/call`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ tool: 'get_stock', arguments: { sku: 'widget-b' } }),
        });
        expect(await call.json()).toMatchObject({ ok: true });
        await page.click('[data-recorder="inventory"] [data-record-action="stop"]');
        await page.locator('[data-recorder="inventory"][data-recording="false"] [data-download]').waitFor();
        await shot('record');
        const [download] = await Promise.all([
          page.waitForEvent('download'),
          page.click('[data-download="inventory"]'),
        ]);
        const file = join(dir, 'inventory.recording.json');
        await download.saveAs(file);
        const recording = JSON.parse(readFileSync(file, 'utf8'));
        expect(recording).toMatchObject({ format: 'ax-mcp-recording', version: 1 });
        expect(JSON.stringify(recording.steps)).toContain('widget-b');

        await context.setOffline(true);
        await page.setInputFiles('[data-open-recording]', file);
        const opened = page.locator('[data-opened-recording="inventory.recording.json"]');
        await opened.waitFor();
        expect(Number(await opened.getAttribute('data-step-count'))).toBe(recording.steps.length);
        await page.locator('[data-step="0"][data-step-direction="send"]').waitFor();
        for (let i = 0; i < recording.steps.length - 1; i++) await page.click('[data-step-nav="next"]');
        const last = recording.steps.length - 1;
        await page.locator(`[data-step="${last}"]`).waitFor();
        expect(await page.locator('[data-step-nav="next"]').isDisabled()).toBe(true);
        const callStep = recording.steps.findIndex(
          (step: { message?: { method?: string } }) => step.message?.method === 'tools/call',
        );
        await page.locator(`[data-step-row="${callStep}"]`).click();
        expect(await page.locator('[data-step-message]').textContent()).toContain('widget-b');
        await page.click('[data-step-nav="next"]');
        expect(await page.locator('[data-step]').getAttribute('data-step-type')).toBe('response');
        await shot('record-open');
        // A file that is not a recording says so.
        writeFileSync(join(dir, 'other.json'), JSON.stringify({ format: 'something-else', steps: [] }));
        await page.setInputFiles('[data-open-recording]', join(dir, 'other.json'));
        await page
          .locator('[data-recording-problem]', {
            hasText: 'other.json: This file is not an ax-mcp recording',
          })
          .waitFor();
        expect(await page.locator('[data-opened-recording]').count()).toBe(0);
        writeFileSync(
          join(dir, 'v2.json'),
          JSON.stringify({ format: 'ax-mcp-recording', version: 2, steps: [] }),
        );
        await page.setInputFiles('[data-open-recording]', join(dir, 'v2.json'));
        await page.locator('[data-recording-problem]', { hasText: 'version 2' }).waitFor();
        await context.setOffline(false);
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
