/**
 * Runs the documentation's example files (`examples/**\/*.mjs`) the way a reader does: `node
 * <file>` as a child process, against a fresh demo server (`AX_MCP_ENDPOINT`) and a scripted
 * OpenAI-compatible server (`OPENAI_BASE_URL`, `OPENAI_API_KEY`), in an empty working directory.
 * The examples import the package by name (`ax-mcp`), which resolves to `dist/`: build first.
 *
 * A header of comments at the top of an example configures its run (see examples/README.md):
 *   // demo: { "taskCompletesAfterPolls": 2 }     AxMCPDemoServer options (JSON)
 *   // openai: [{ "content": "{\"advice\":\"…\"}" }]   the scripted replies, in order (JSON)
 *   // requires: postgres                          needs AX_MCP_TEST_POSTGRES_URL (as DATABASE_URL)
 *   // timeout: 60000                              milliseconds before the run is killed
 *   // trigger: { "when": "waiting", "tool": "adjust_stock", "arguments": { … } }
 *                                                  once stdout shows `when`, call the demo's tool,
 *                                                  as the reader does from another terminal
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AxMCPDemoServer, type AxMCPDemoServerOptions } from '../../src/demo.js';
import { type ScriptedReply, startScriptedOpenAI } from '../servers/scripted-openai.js';
import { httpClient } from './clients.js';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The built package the examples import; they cannot run without it. */
export const DIST_ENTRY = join(ROOT, 'dist', 'index.js');

/** What an example's header asks for. */
export interface ExampleHeader {
  /** Options of the demo server it runs against (`era` defaults to `dual`). */
  demo: AxMCPDemoServerOptions;
  /** Replies of the scripted OpenAI-compatible server, in order. */
  openai: ScriptedReply[];
  /** Services it needs beyond the demo and the scripted model: `postgres`. */
  requires: string[];
  /** How long it may run, ms (default 30 000). */
  timeoutMs: number;
  /** A tool call on the demo, made once stdout contains `when` (what the reader does in another terminal). */
  trigger?: { when: string; tool: string; arguments?: Record<string, unknown> };
}

/** Every example file, relative to the root (`examples/client/catalog-discovery.mjs`), sorted. */
export function exampleFiles(): string[] {
  const directory = join(ROOT, 'examples');
  return (readdirSync(directory, { recursive: true }) as string[])
    .filter((path) => path.endsWith('.mjs') && !path.split(/[\\/]/).includes('node_modules'))
    .map((path) => `examples/${path.split('\\').join('/')}`)
    .sort();
}

const KNOWN_REQUIREMENTS = new Set(['postgres']);

/** Reads the directives at the top of an example (`// demo: …`, `// openai: …`, …). */
export function readExampleHeader(file: string): ExampleHeader {
  const header: ExampleHeader = { demo: {}, openai: [], requires: [], timeoutMs: 30_000 };
  for (const line of readFileSync(join(ROOT, file), 'utf8').split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '') continue;
    if (!trimmed.startsWith('//')) break;
    const directive = /^\/\/\s*(demo|openai|requires|timeout|trigger):\s*(.*)$/.exec(trimmed);
    if (!directive) continue;
    const [, key, value = ''] = directive;
    try {
      if (key === 'demo') header.demo = JSON.parse(value) as AxMCPDemoServerOptions;
      else if (key === 'openai') header.openai = JSON.parse(value) as ScriptedReply[];
      else if (key === 'timeout') header.timeoutMs = Number(JSON.parse(value));
      else if (key === 'trigger') header.trigger = JSON.parse(value) as ExampleHeader['trigger'];
      else header.requires = value.split(/[\s,]+/).filter(Boolean);
    } catch (error) {
      throw new Error(`${file}: the "// ${key}:" directive is not valid JSON: ${(error as Error).message}`);
    }
  }
  if (!Number.isFinite(header.timeoutMs) || header.timeoutMs <= 0) {
    throw new Error(`${file}: "// timeout:" must be a positive number of milliseconds`);
  }
  const trigger = header.trigger;
  if (trigger !== undefined && (typeof trigger?.when !== 'string' || typeof trigger.tool !== 'string')) {
    throw new Error(
      `${file}: "// trigger:" needs { "when": "<stdout text>", "tool": "<name>", "arguments"?: {…} }`,
    );
  }
  if (!Array.isArray(header.openai)) throw new Error(`${file}: "// openai:" must be a JSON array of replies`);
  for (const requirement of header.requires) {
    if (!KNOWN_REQUIREMENTS.has(requirement)) {
      throw new Error(`${file}: unknown requirement "${requirement}" (known: ${[...KNOWN_REQUIREMENTS]})`);
    }
  }
  return header;
}

/** Why an example cannot run here, or `undefined` when it can. */
export function missingRequirement(header: ExampleHeader): string | undefined {
  if (header.requires.includes('postgres') && !process.env.AX_MCP_TEST_POSTGRES_URL) {
    return 'needs PostgreSQL: set AX_MCP_TEST_POSTGRES_URL';
  }
  return undefined;
}

/** How one run went. */
export interface ExampleRun {
  file: string;
  /** Exit code (`null` when killed). */
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** Requests the scripted model received, and scripted replies left unused. */
  openaiRequests: number;
  openaiPending: number;
}

/** Options of {@link runExample}. */
export interface RunExampleOptions {
  /** Runs after the example exited, before the servers close (inspect the demo's state). */
  afterRun?: (demo: AxMCPDemoServer) => void | Promise<void>;
  /** Extra environment variables. */
  env?: Record<string, string>;
}

/** Runs one example as a reader would and reports how it went. */
export async function runExample(file: string, options: RunExampleOptions = {}): Promise<ExampleRun> {
  const header = readExampleHeader(file);
  const demo = new AxMCPDemoServer({ era: 'dual', keepAliveMs: 0, ...header.demo });
  const openai = await startScriptedOpenAI();
  openai.script(...header.openai);
  const cwd = mkdtempSync(join(tmpdir(), 'ax-mcp-example-'));
  try {
    const endpoint = await demo.start();
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(process.env)) {
      if (value !== undefined && !name.startsWith('OPENAI_') && !name.startsWith('AX_MCP_'))
        env[name] = value;
    }
    Object.assign(env, {
      AX_MCP_ENDPOINT: endpoint,
      OPENAI_BASE_URL: openai.baseURL,
      OPENAI_API_KEY: 'sk-docs-test-key',
      NO_COLOR: '1',
      ...(header.requires.includes('postgres') && process.env.AX_MCP_TEST_POSTGRES_URL
        ? { DATABASE_URL: process.env.AX_MCP_TEST_POSTGRES_URL }
        : {}),
      ...options.env,
    });
    const result = await new Promise<Omit<ExampleRun, 'file' | 'openaiRequests' | 'openaiPending'>>(
      (resolve, reject) => {
        const child = spawn(process.execPath, [join(ROOT, file)], {
          cwd,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        let timedOut = false;
        let triggered = false;
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          stdout += chunk;
          const trigger = header.trigger;
          if (trigger && !triggered && stdout.includes(trigger.when)) {
            triggered = true;
            const client = httpClient(endpoint, { namespace: 'trigger' });
            client
              .callTool(trigger.tool, trigger.arguments ?? {})
              .catch((error: unknown) => {
                stderr += `\n[docs test] the trigger ${trigger.tool} failed: ${String(error)}\n`;
              })
              .finally(() => client.close());
          }
        });
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        const timer = setTimeout(() => {
          timedOut = true;
          child.kill('SIGKILL');
        }, header.timeoutMs);
        child.on('error', (error) => {
          clearTimeout(timer);
          reject(error);
        });
        child.on('close', (code, signal) => {
          clearTimeout(timer);
          resolve({ code, signal, timedOut, stdout, stderr });
        });
      },
    );
    await options.afterRun?.(demo);
    return { file, ...result, openaiRequests: openai.requests.length, openaiPending: openai.pending };
  } finally {
    await demo.close();
    await openai.close();
    rmSync(cwd, { recursive: true, force: true });
  }
}

/** The example's last printed line, parsed as JSON (the examples end with their findings). */
export function lastJSON<T>(run: ExampleRun): T {
  const lines = run.stdout.trimEnd().split('\n');
  const last = lines.at(-1) ?? '';
  try {
    return JSON.parse(last) as T;
  } catch {
    throw new Error(`${run.file} did not end with a JSON line:\n${describeRun(run)}`);
  }
}

/** The run's exit and the ends of its output, for failure messages. */
export function describeRun(run: ExampleRun): string {
  const tail = (text: string) => (text.length > 4000 ? `…${text.slice(-4000)}` : text);
  const how = run.timedOut ? 'timed out and was killed' : `exited with ${run.code ?? run.signal}`;
  return `node ${run.file} ${how}\n--- stdout\n${tail(run.stdout)}\n--- stderr\n${tail(run.stderr)}`;
}

/** True when the package has been built (the examples import it from dist/). */
export function built(): boolean {
  return existsSync(DIST_ENTRY);
}
