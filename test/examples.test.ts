/**
 * The core-flow examples run exactly as a reader runs them (`node examples/…/*.mjs`, importing the
 * built package) against a fresh dual-era demo server, and what they print is checked: the human
 * lines, and the JSON summary each prints last. `test/docs.test.ts` runs every example; this file
 * checks what four of them found.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './helpers/clients.js';
import { built, DIST_ENTRY, describeRun, type ExampleRun, lastJSON, runExample } from './helpers/examples.js';

beforeAll(() => {
  if (!built()) throw new Error(`${DIST_ENTRY} is missing: run npm run build first (npm test does).`);
});

function lines(run: ExampleRun): string[] {
  return run.stdout.trimEnd().split('\n');
}

function succeeded(run: ExampleRun): ExampleRun {
  expect(run.code, describeRun(run)).toBe(0);
  return run;
}

describe('examples', () => {
  it('guarded-and-explained: a misspelled guard refused, the destructive tool denied, a callback plan, explain and a warning', async () => {
    let toolCalls: number | undefined;
    const run = succeeded(
      await runExample('examples/security/guarded-and-explained.mjs', {
        afterRun: (demo) => {
          toolCalls = demo.state().methodCounts.modern['tools/call'];
        },
      }),
    );
    const result = lastJSON<{
      misspelled: unknown;
      destructiveDenied: boolean;
      stockTotal: number;
      planned: unknown;
      explained: unknown[];
      warnings: string[];
    }>(run);
    expect(result.misspelled).toEqual({
      code: 'invalid_options',
      path: 'authorizeToolcall',
      suggestion: 'authorizeToolCall',
    });
    expect(result.destructiveDenied).toBe(true);
    expect(result.stockTotal).toBeGreaterThan(0);
    // Only get_stock reached the (fresh) server: the denied call sent nothing.
    expect(toolCalls).toBe(1);
    expect(result.planned).toEqual({ uri: 'inventory://warehouse/berlin' });
    expect(result.explained).toEqual([
      { routeId: 'wake-on-stock', matches: false, reason: expect.objectContaining({ code: 'identity' }) },
      { routeId: 'wake-on-stock', matches: true },
    ]);
    expect(result.warnings.some((warning) => warning.includes('wake-on-stock'))).toBe(true);
    expect(lines(run).some((line) => line.startsWith('denied:'))).toBe(true);
  });

  it('catalog-discovery: tools, concrete resources, templates and cache hints', async () => {
    const run = succeeded(await runExample('examples/client/catalog-discovery.mjs'));
    const summary = lastJSON<{
      era: string;
      tools: string[];
      resources: string[];
      templates: string[];
      cache: Record<string, unknown>;
    }>(run);
    expect(summary).toMatchObject({ era: 'modern', protocolVersion: '2026-07-28', server: 'ax-mcp-demo' });
    expect(summary.tools).toEqual(expect.arrayContaining(['get_stock', 'adjust_stock', 'start_reindex']));
    expect([...summary.resources].sort()).toEqual([
      'inventory://warehouse/berlin',
      'inventory://warehouse/current',
      'inventory://warehouse/lisbon',
    ]);
    expect(summary.templates).toEqual(['inventory://warehouse/{warehouseId}']);
    // The demo's default hints: lists for a minute, resources/list for 10 s, all public.
    expect(summary.cache.tools).toMatchObject({ ttlMs: 60_000, cacheScope: 'public' });
    expect(summary.cache.resources).toMatchObject({ ttlMs: 10_000, cacheScope: 'public' });
    expect(lines(run)).toContain('cache resources: TTL 10000 ms, scope public');
    expect(
      lines(run).some((line) => line.startsWith('templates (never expanded): inventory://warehouse/{')),
    ).toBe(true);
  });

  it('subscription-policy: the select policy, an authenticated wake, and a spoofed event that wakes nothing', async () => {
    const run = succeeded(
      await runExample('examples/subscriptions/subscription-policy.mjs', {
        // The example closed everything it opened: the server sees no listen stream any more.
        afterRun: (demo) =>
          eventually(() => demo.state().listenStreams.length === 0, 5_000, 'the listen streams to end'),
      }),
    );
    const result = lastJSON<{ subscriptions: string[]; woken: string[]; spoofedDeliveries: number }>(run);
    expect(result.subscriptions).toEqual(['inventory://warehouse/berlin', 'inventory://warehouse/lisbon']);
    expect(result.woken).toEqual(['inventory://warehouse/berlin']);
    expect(result.spoofedDeliveries).toBe(0);
    expect(lines(run).filter((line) => line.includes('error'))).toEqual([]);
  });

  it('task-continuation: the completed task resumes its owner in the same identity scope', async () => {
    let serverTasks: readonly { taskId: string; status: string }[] = [];
    const run = succeeded(
      await runExample('examples/client/task-continuation.mjs', {
        afterRun: (demo) => {
          serverTasks = demo.state().tasks;
        },
      }),
    );
    const result = lastJSON<{
      taskId: string;
      taskKey: string;
      status: string;
      wokenScope: string;
      resumedScope: string;
    }>(run);
    expect(result.status).toBe('completed');
    expect(result.taskKey).toBe(`inventory:${result.taskId}`);
    expect(result.wokenScope).toBe('id:demo//operator/');
    expect(result.resumedScope).toBe(result.wokenScope);
    expect(serverTasks.find((task) => task.taskId === result.taskId)?.status).toBe('completed');
    expect(lines(run).filter((line) => line.includes('error'))).toEqual([]);
  });
});
