/**
 * The package as a user installs it: `npm pack`, then `npm install` of the tarball beside the
 * official OpenTelemetry SDK in an empty project. `@opentelemetry/api` keeps its registrations
 * in one process-wide slot and refuses, silently, a registration made by an older copy than
 * itself: had ax-mcp pinned a newer api than the SDK accepts, npm would give ax-mcp its own
 * copy, and every span of ax-mcp would go nowhere without a word. This test installs for real
 * and checks that one copy is installed and the SDK records ax-mcp's spans.
 *
 * It needs the build (`npm test` builds first) and the npm registry (or npm's cache); without
 * the registry it is reported as skipped.
 */
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const devDependencies = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  .devDependencies as Record<string, string>;
const sdkVersion = devDependencies['@opentelemetry/sdk-trace-node'] as string;
const work = mkdtempSync(join(tmpdir(), 'ax-mcp-install-'));
const OFFLINE = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ENOTCACHED|ETIMEDOUT|ECONNRESET/;

/** Every installed copy of `name` under `dir`'s node_modules, nested ones included. */
function copies(dir: string, name: string): string[] {
  const found: string[] = [];
  const visit = (modules: string) => {
    if (!existsSync(modules)) return;
    if (existsSync(join(modules, name, 'package.json'))) found.push(join(modules, name));
    for (const entry of readdirSync(modules)) {
      if (entry.startsWith('.')) continue;
      const packages = entry.startsWith('@')
        ? readdirSync(join(modules, entry)).map((n) => join(modules, entry, n))
        : [join(modules, entry)];
      for (const p of packages) visit(join(p, 'node_modules'));
    }
  };
  visit(join(dir, 'node_modules'));
  return found;
}

const CHECK = `
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
const exporter = new InMemorySpanExporter();
new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).register();
const { eventRoute, eventRuntime, eventTarget } = await import('ax-mcp');
const target = eventTarget('noted').invoke(async () => ({ ok: true })).build();
const runtime = eventRuntime({ routes: [eventRoute('noted').types('app.noted').wake(target).build()] });
await runtime.start();
await runtime.publish({ event: { id: 'n-1', source: 'app://install', type: 'app.noted', data: {} } });
await runtime.waitForIdle();
await runtime.close();
console.log(JSON.stringify(exporter.getFinishedSpans().map((s) => s.name)));
`;

describe('npm install ax-mcp beside the OpenTelemetry SDK', () => {
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('installs one @opentelemetry/api, and the SDK records the spans of ax-mcp', {
    timeout: 180_000,
  }, async (ctx) => {
    expect(existsSync(join(root, 'dist', 'index.js')), 'build first (npm run build)').toBe(true);
    const packed = await run('npm', ['pack', '--silent', '--pack-destination', work], { cwd: root });
    const tarball = join(work, packed.stdout.trim().split('\n').at(-1) as string);
    const app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    try {
      await run(
        'npm',
        [
          'install',
          '--prefer-offline',
          '--no-audit',
          '--no-fund',
          '--ignore-scripts',
          tarball,
          `@opentelemetry/sdk-trace-node@${sdkVersion}`,
        ],
        { cwd: app, maxBuffer: 16 * 1024 * 1024 },
      );
    } catch (error) {
      const output = String((error as { stderr?: string }).stderr ?? error);
      if (OFFLINE.test(output)) {
        return ctx.skip(`npm could not reach the registry (${output.match(OFFLINE)?.[0]})`);
      }
      throw error;
    }
    writeFileSync(join(app, 'check.mjs'), CHECK);
    const checked = await run(process.execPath, ['check.mjs'], { cwd: app });
    expect(JSON.parse(checked.stdout.trim()), 'spans the SDK recorded').toContain('ax.event.delivery');
    expect(copies(app, '@opentelemetry/api')).toHaveLength(1);
  });
});
