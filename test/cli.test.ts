import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AxMCPDemoServer } from '../src/demo.js';
import { CLI_BIN, CLI_BUILT, type CLIRun, runCLI } from './helpers/cli.js';
import { eventually } from './helpers/clients.js';
import { startLegacyV1Server } from './servers/legacy-v1.js';
import { startWebSocketServer } from './servers/websocket.js';

// The CLI is tested as users run it: the built bin in a child process (npm test builds first).
const BIN = CLI_BIN;
const run = runCLI;

/** A CLI process that keeps running (watch, demo --serve): its output so far, and a stop that waits for its exit code. */
function running(args: string[]) {
  const child: ChildProcess = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, NO_COLOR: '1' },
  });
  let stdout = '';
  child.stdout?.on('data', (chunk) => {
    stdout += chunk;
  });
  return {
    output: () => stdout,
    stop: async (): Promise<number | null> => {
      const closed = once(child, 'close') as Promise<[number | null]>;
      child.kill('SIGINT');
      return (await closed)[0];
    },
  };
}

describe.skipIf(!CLI_BUILT)('the ax-mcp CLI', () => {
  let server: AxMCPDemoServer;
  let url: string;

  beforeAll(async () => {
    server = new AxMCPDemoServer({ era: 'dual' });
    url = await server.start();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('inspect prints era, server and catalog tables, or JSON', async () => {
    const text = await run(['inspect', url, '--allow-localhost']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/Era\s+modern \(2026-07-28\)/);
    expect(text.stdout).toContain('adjust_stock');
    expect(text.stdout).toContain('inventory://warehouse/{warehouseId}');
    const json = await run(['inspect', url, '--allow-localhost', '--json', '--era', 'legacy']);
    expect(json.code).toBe(0);
    const catalog = JSON.parse(json.stdout);
    expect(catalog).toMatchObject({ era: 'legacy', protocolVersion: '2025-11-25' });
    expect(catalog.tools.map((tool: { name: string }) => tool.name)).toContain('get_stock');
  });

  it('call prints the raw result and follows a task to its end', async () => {
    const stock = await run(['call', url, 'get_stock', '--allow-localhost', '--args', '{"sku":"widget-a"}']);
    expect(stock.code).toBe(0);
    expect(JSON.parse(stock.stdout)).toHaveProperty('content');
    const pending = run(['call', url, 'start_reindex', '--allow-localhost', '--args', '{"scope":"all"}']);
    await eventually(() => server.state().tasks.some((task) => task.status === 'working'), 10_000, 'a task');
    server.completeTask();
    const reindex = await pending;
    expect(reindex.code).toBe(0);
    expect(reindex.stderr).toMatch(/task \S+: completed/);
  });

  it('refuses loopback without --allow-localhost, bad JSON and unreachable endpoints, clearly', async () => {
    const refused = await run(['inspect', url]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('ssrf_blocked');
    expect(refused.stderr).toContain(
      'hint: the CLI reaches plain HTTP and servers on this machine (loopback) only with --allow-localhost',
    );
    const badArgs = await run(['call', url, 'get_stock', '--allow-localhost', '--args', '{nope']);
    expect(badArgs.code).toBe(2);
    expect(badArgs.stderr).toContain('--args is not valid JSON');
    const unreachable = await run(['inspect', 'http://127.0.0.1:9/mcp', '--allow-localhost']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/Could not reach|transport_error/);
  });

  it('watch streams updates and survives the server dropping every stream', async () => {
    const watching = running([
      'watch',
      url,
      '--allow-localhost',
      '--subscribe',
      'inventory://warehouse/berlin',
    ]);
    let stdout = '';
    const read = () => {
      stdout = watching.output();
      return stdout;
    };
    try {
      await eventually(() => read().includes('watching'), 15_000, 'the watch banner');
      await eventually(() => server.state().listenStreams.length > 0, 10_000, 'a listen stream');
      await server.emitResourceUpdated('inventory://warehouse/berlin');
      await eventually(() => read().includes('mcp.resource.updated'), 10_000, 'the first update');
      server.dropStreams();
      await eventually(
        () => /reconnected|connected/.test(read().split('mcp.resource.updated')[1] ?? ''),
        15_000,
        'a reconnect',
      );
      await eventually(() => server.state().listenStreams.length > 0, 10_000, 'the stream back');
      const before = read().split('mcp.resource.updated').length;
      await server.emitResourceUpdated('inventory://warehouse/berlin');
      await eventually(
        () => read().split('mcp.resource.updated').length > before,
        10_000,
        'an update after the drop',
      );
    } finally {
      await watching.stop();
    }
  });

  it('watch says when a subscribed URI is one the server neither lists nor could mean by a template', async () => {
    const watching = running([
      'watch',
      url,
      '--allow-localhost',
      '--subscribe',
      'inventory://warehous/berlin',
    ]);
    try {
      await eventually(() => watching.output().includes('warehous/berlin,'), 15_000, 'the report');
      expect(watching.output()).toContain(
        'resourceSubscriptions names inventory://warehous/berlin, which the cli server neither lists nor could mean by one of its URI templates',
      );
    } finally {
      await watching.stop();
    }
  });

  it('watch --routes shows what each route of a runtime module would do with each notification, and why not', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ax-mcp-watch-'));
    const module = join(dir, 'my-runtime.mjs');
    writeFileSync(
      module,
      `import { eventRoute, eventTarget } from ${JSON.stringify(pathToFileURL(resolve(import.meta.dirname, '../dist/index.js')).href)};
const agent = eventTarget('stock-agent').invoke(async () => 'ran').build();
export const routes = [
  eventRoute('wake-on-stock').types('mcp.resource.updated').authenticated().wake(agent).build(),
  eventRoute('log-catalog').types('mcp.catalog.changed').observe(() => {}).build(),
];
`,
    );
    const watchArgs = [
      'watch',
      url,
      '--allow-localhost',
      '--subscribe',
      'inventory://warehouse/berlin',
      '--routes',
      module,
    ];
    const anonymous = running(watchArgs);
    try {
      await eventually(() => anonymous.output().includes('watching'), 15_000, 'the watch banner');
      await eventually(() => server.state().listenStreams.length > 0, 10_000, 'a listen stream');
      await server.emitResourceUpdated('inventory://warehouse/berlin');
      await eventually(
        () => anonymous.output().includes('· wake-on-stock: identity'),
        10_000,
        'the explanation',
      );
      // Anonymous: the authenticated wake route says why not; the catalog route is not for this type.
      expect(anonymous.output()).toMatch(/· wake-on-stock: identity — .*anonymous/);
      expect(anonymous.output()).toMatch(/· log-catalog: type — /);
    } finally {
      await anonymous.stop();
    }
    const attributed = running([...watchArgs, '--tenant', 'acme', '--trust', 'authenticated']);
    try {
      await eventually(() => attributed.output().includes('watching'), 15_000, 'the watch banner');
      await eventually(() => server.state().listenStreams.length > 0, 10_000, 'a listen stream');
      await server.emitResourceUpdated('inventory://warehouse/berlin');
      await eventually(() => attributed.output().includes('✓ wake-on-stock'), 10_000, 'the matching route');
      expect(attributed.output()).toContain('✓ wake-on-stock: would wake stock-agent');
    } finally {
      await attributed.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--version, per-command --help, typos with the nearest name, each with its first line and exit code', async () => {
    const version = await run(['--version']);
    expect([version.code, version.stdout.trim()]).toEqual([0, '0.1.0']);
    for (const name of ['inspect', 'call', 'watch', 'record', 'worker', 'demo']) {
      const help = await run([name, '--help']);
      expect(help.code, name).toBe(0);
      expect(help.stdout.split('\n')[0], name).toMatch(new RegExp(`^ax-mcp ${name}\\b`));
    }
    const flag = await run(['inspect', url, '--jsno']);
    expect(flag.code).toBe(2);
    expect(flag.stderr.split('\n')[0]).toBe('ax-mcp: inspect: unknown flag --jsno (did you mean --json?)');
    const negative = await run(['inspect', url, '--timeout', '-3']);
    expect(negative.code).toBe(2);
    expect(negative.stderr.split('\n')[0]).toBe(
      'ax-mcp: inspect: --timeout needs a value: "-3" reads as a flag; for a value starting with "-", write --timeout=-3',
    );
    const command = await run(['inspct', url]);
    expect(command.code).toBe(2);
    expect(command.stderr.split('\n')[0]).toBe('ax-mcp: unknown command "inspct" (did you mean inspect?)');
  });

  it('every flag a help lists is accepted; two ways to say one thing are refused, not one silently ignored', async () => {
    const help = await run(['record', '--help']);
    expect(help.stdout).toContain('--timeout MS');
    expect(help.stdout).toContain("--namespace NAME           the client's namespace (default recorded)");
    const dir = mkdtempSync(join(tmpdir(), 'ax-mcp-record-'));
    try {
      const script = join(dir, 'script.mjs');
      writeFileSync(
        script,
        'export default async (client) => (await client.inspectCatalog()).tools.length;\n',
      );
      const out = join(dir, 'session.json');
      const recorded = await run([
        'record',
        url,
        '--allow-localhost',
        '--timeout',
        '5000',
        '--out',
        out,
        '--',
        script,
      ]);
      expect(recorded.code, recorded.stderr).toBe(0);
      expect(existsSync(out)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // A secret too short to scrub was dropped without a word, and stayed in the recording.
    const short = await run(['record', url, '--out', 'x.json', '--secret', '123', '--', 'script.mjs']);
    expect(short.code).toBe(2);
    expect(short.stderr.split('\n')[0]).toBe(
      'ax-mcp: --secret takes values of 4 characters or more (a shorter one would be scrubbed out of unrelated text)',
    );
    const typo = await run(['record', url, '--tmeout', '5', '--out', 'x.json', '--', 'script.mjs']);
    expect(typo.code).toBe(2);
    expect(typo.stderr.split('\n')[0]).toBe(
      'ax-mcp: record: unknown flag --tmeout (did you mean --timeout?)',
    );
    const both = await run([
      'watch',
      url,
      '--allow-localhost',
      '--select',
      'inventory://**',
      '--subscribe',
      'all',
    ]);
    expect(both.code).toBe(2);
    expect(both.stderr.split('\n')[0]).toBe(
      'ax-mcp: --select and --subscribe both choose what to subscribe: give one of them',
    );
  });

  it('call takes the arguments positionally and refuses what it does not understand', async () => {
    const stock = await run(['call', url, 'get_stock', '{"sku":"widget-a"}', '--allow-localhost']);
    expect(stock.code).toBe(0);
    expect(JSON.parse(stock.stdout).structuredContent).toMatchObject({ sku: 'widget-a' });
    const extra = await run(['call', url, 'get_stock', '{"sku":"widget-a"}', 'surplus', '--allow-localhost']);
    expect(extra.code).toBe(2);
    expect(extra.stderr.split('\n')[0]).toBe(
      'ax-mcp: call takes one JSON object of arguments; not understood: surplus',
    );
    const both = await run(['call', url, 'get_stock', '{}', '--args', '{}', '--allow-localhost']);
    expect(both.code).toBe(2);
  });

  it('errors name the network cause and say when the peer is not MCP; --timeout bounds a silent server', async () => {
    const silent = createServer(() => {}).listen(0, '127.0.0.1');
    const html = createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<!DOCTYPE html><html><body>Not here</body></html>');
    }).listen(0, '127.0.0.1');
    await Promise.all([once(silent, 'listening'), once(html, 'listening')]);
    const closed = createServer().listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    try {
      const refused = await run(['inspect', `http://127.0.0.1:${closedPort}/mcp`, '--allow-localhost']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('(ECONNREFUSED): is the server running?');
      const page = await run([
        'inspect',
        `http://127.0.0.1:${(html.address() as AddressInfo).port}/`,
        '--allow-localhost',
      ]);
      expect(page.code).toBe(1);
      expect(page.stderr).toContain('not as MCP: is this an MCP endpoint?');
      const started = Date.now();
      const waited = await run([
        'inspect',
        `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`,
        '--allow-localhost',
        '--era',
        'legacy',
        '--timeout',
        '300',
      ]);
      expect(waited.code).toBe(1);
      expect(waited.stderr).toMatch(/timed out after 300 ms/);
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
      await new Promise((resolve) => html.close(resolve));
    }
  });

  it('a reader that stops early is not an error (EPIPE)', async () => {
    const child = spawn(process.execPath, [BIN, 'inspect', url, '--allow-localhost', '--json'], {
      env: { ...process.env, NO_COLOR: '1' },
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.stdout.once('data', () => child.stdout.destroy());
    const [code] = (await once(child, 'close')) as [number | null];
    expect(code).toBe(0);
    expect(stderr).not.toContain('EPIPE');
  });

  it('stdio servers as an argument vector after --, and 2024-11-05 servers with --sse', async () => {
    const stdio = await run([
      'inspect',
      '--json',
      '--',
      process.execPath,
      resolve(import.meta.dirname, 'servers/stdio-v2-server.mjs'),
    ]);
    expect(stdio.code).toBe(0);
    expect(JSON.parse(stdio.stdout).tools.length).toBeGreaterThan(0);
    const sseServer = await startLegacyV1Server({ transport: 'sse' });
    try {
      const sse = await run(['inspect', sseServer.url, '--sse', '--allow-localhost', '--json']);
      expect(sse.code).toBe(0);
      expect(JSON.parse(sse.stdout).era).toBe('legacy');
    } finally {
      await sseServer.close();
    }
  });

  it('ws:// endpoints, and SSRF refusals worded in flags on the first line, never in library options', async () => {
    const peer = await startWebSocketServer();
    let refused: CLIRun;
    try {
      // Without NO_COLOR, but on a pipe: still no colour.
      const inspected = await run(['inspect', peer.url, '--allow-localhost'], 30_000, { NO_COLOR: '' });
      expect(inspected.code).toBe(0);
      expect(inspected.stdout).toContain('echo');
      expect(inspected.stdout).not.toContain('\u001b[');
      refused = await run(['inspect', peer.url]);
      expect(refused.code).toBe(1);
      expect(refused.stderr.split('\n')[0]).toBe(
        `ax-mcp: Refused ${peer.url}: loopback address (pass --allow-localhost) [ssrf_blocked]`,
      );
    } finally {
      await peer.close();
    }
    const closed = await run(['inspect', 'ws://127.0.0.1:9/mcp', '--allow-localhost']);
    expect(closed.code).toBe(1);
    expect(closed.stderr.split('\n')).toEqual([
      'ax-mcp: Could not open a WebSocket to ws://127.0.0.1:9/mcp [transport_error]',
      'hint: nothing accepts connections at ws://127.0.0.1:9/mcp (ECONNREFUSED): is the server running?',
      '',
    ]);
    // --allow-localhost is about this machine: plain HTTP elsewhere stays refused.
    const remote = await run(['inspect', 'http://example.com/mcp', '--allow-localhost']);
    expect(remote.code).toBe(1);
    expect(remote.stderr.split('\n')[0]).toBe(
      'ax-mcp: Refused http://example.com/mcp: plain http: is refused, HTTPS is required (--allow-localhost permits plain HTTP to this machine only) [ssrf_blocked]',
    );
    expect(`${refused.stderr}${closed.stderr}${remote.stderr}`).not.toContain('ssrfProtection');
  });

  it('refuses the HTTP-only flags where they would go nowhere: a token for a WebSocket or a stdio server', async () => {
    const cases: [string[], string][] = [
      [
        ['inspect', 'ws://127.0.0.1:9/mcp', '--allow-localhost', '--bearer', 'tok'],
        'ax-mcp: --bearer applies to http(s) endpoints only, not to a WebSocket endpoint',
      ],
      [
        ['inspect', '--header', 'X-Key: k', '--bearer', 'tok', '--', process.execPath, 'server.mjs'],
        'ax-mcp: --header and --bearer apply to http(s) endpoints only, not to a stdio server',
      ],
      [
        ['inspect', 'stdio:node server.mjs', '--sse'],
        'ax-mcp: --sse applies to http(s) endpoints only, not to a stdio server',
      ],
      [
        ['inspect', url, '--allow-localhost', '--sse', '--legacy-sse-fallback'],
        'ax-mcp: --sse and --legacy-sse-fallback both choose the transport: give one of them',
      ],
    ];
    for (const [args, first] of cases) {
      const refused = await run(args);
      expect([refused.code, refused.stderr.split('\n')[0]], args.join(' ')).toEqual([2, first]);
    }
  });

  it('demo --serve runs the standalone demo server until interrupted, for the other commands to use', async () => {
    const serving = running(['demo', '--serve', '--port', '0', '--era', 'legacy']);
    let code: number | null = null;
    try {
      await eventually(
        () => /listening on http:\/\/127\.0\.0\.1:\d+\/mcp/.test(serving.output()),
        15_000,
        'the served URL',
      );
      await eventually(
        () => serving.output().includes('Ctrl-C stops the server.'),
        5_000,
        'the control endpoints',
      );
      expect(serving.output()).toMatch(/control: http:\/\/127\.0\.0\.1:\d+\/control\/state/);
      const served = /listening on (\S+)/.exec(serving.output())?.[1] as string;
      const inspected = await run(['inspect', served, '--allow-localhost', '--json']);
      expect(inspected.code).toBe(0);
      expect(JSON.parse(inspected.stdout)).toMatchObject({
        era: 'legacy',
        serverInfo: { name: 'ax-mcp-demo' },
      });
    } finally {
      code = await serving.stop();
    }
    expect(code).toBe(0);
    const wrong = await run(['demo', '--port', '3001']);
    expect([wrong.code, wrong.stderr.split('\n')[0]]).toEqual([
      2,
      'ax-mcp: --port, --era and --task-polls go with --serve',
    ]);
  });

  it('demo walks through the whole flow and exits 0', async () => {
    const demo = await run(['demo'], 60_000);
    expect(demo.code).toBe(0);
    expect(demo.stdout).toContain('restock agent woke');
    expect(demo.stdout).toContain('the task is completed');
    expect(demo.stdout).toContain('Done.');
  });
});
