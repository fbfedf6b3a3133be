/**
 * The examples in `examples/` run against a fresh dual-era demo server, exactly as a user would
 * run them (their `main(url, log)`), and their results are checked.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { main as catalogDiscovery } from '../examples/catalog-discovery.js';
import { main as guardedAndExplained } from '../examples/guarded-and-explained.js';
import { main as subscriptionPolicy } from '../examples/subscription-policy.js';
import { main as taskContinuation } from '../examples/task-continuation.js';
import { AxMCPDemoServer, type AxMCPDemoServerOptions } from '../src/demo.js';
import { eventually } from './helpers/clients.js';

const servers: AxMCPDemoServer[] = [];

async function demo(options: AxMCPDemoServerOptions = {}): Promise<{ server: AxMCPDemoServer; url: string }> {
  const server = new AxMCPDemoServer({ era: 'dual', keepAliveMs: 0, ...options });
  servers.push(server);
  return { server, url: await server.start() };
}

afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

describe('examples', () => {
  it('guarded-and-explained: a misspelled guard refused, the destructive tool denied, a callback plan, explain and a warning', async () => {
    const { server, url } = await demo();
    const lines: string[] = [];
    const before = server.state().methodCounts;
    const result = await guardedAndExplained(url, (line) => lines.push(line));
    expect(result.misspelled).toEqual({
      code: 'invalid_options',
      path: 'authorizeToolcall',
      suggestion: 'authorizeToolCall',
    });
    expect(result.destructiveDenied).toBe(true);
    expect(result.stockTotal).toBeGreaterThan(0);
    expect(server.state().methodCounts.modern['tools/call'] ?? 0).toBe(
      (before.modern['tools/call'] ?? 0) + 1,
    );
    expect(result.planned).toEqual({ uri: 'inventory://warehouse/berlin' });
    expect(result.explained).toEqual([
      { routeId: 'wake-on-stock', matches: false, reason: expect.objectContaining({ code: 'identity' }) },
      { routeId: 'wake-on-stock', matches: true },
    ]);
    expect(result.warnings.some((warning) => warning.includes('wake-on-stock'))).toBe(true);
    expect(lines.some((line) => line.startsWith('denied:'))).toBe(true);
  });

  it('catalog-discovery: tools, concrete resources, templates and cache hints', async () => {
    const { url } = await demo();
    const lines: string[] = [];
    const summary = await catalogDiscovery(url, (line) => lines.push(line));
    expect(summary).toMatchObject({ era: 'modern', protocolVersion: '2026-07-28', server: 'ax-mcp-demo' });
    expect(summary.tools).toEqual(expect.arrayContaining(['get_stock', 'adjust_stock', 'start_reindex']));
    expect([...summary.resources].sort()).toEqual([
      'inventory://warehouse/berlin',
      'inventory://warehouse/current',
      'inventory://warehouse/lisbon',
    ]);
    expect(summary.templates).toEqual(['inventory://warehouse/{warehouseId}']);
    // The demo's default hints: lists for a minute, resources/list for 10 s, all public.
    expect(summary.cache.tools).toEqual({ ttlMs: 60_000, cacheScope: 'public' });
    expect(summary.cache.resources).toEqual({ ttlMs: 10_000, cacheScope: 'public' });
    expect(lines).toContain('cache resources: TTL 10000 ms, scope public');
    expect(lines.some((line) => line.startsWith('templates (never expanded): inventory://warehouse/{'))).toBe(
      true,
    );
  });

  it('subscription-policy: the select policy, an authenticated wake, and a spoofed event that wakes nothing', async () => {
    const { server, url } = await demo();
    const lines: string[] = [];
    const result = await subscriptionPolicy(url, (line) => lines.push(line));
    expect(result.subscriptions).toEqual(['inventory://warehouse/berlin', 'inventory://warehouse/lisbon']);
    expect(result.woken).toEqual(['inventory://warehouse/berlin']);
    expect(result.spoofedDeliveries).toBe(0);
    expect(lines.filter((line) => line.includes('error'))).toEqual([]);
    // The example closed everything it opened: the server sees no listen stream any more.
    await eventually(() => server.state().listenStreams.length === 0, 5_000, 'the listen streams to end');
  });

  it('task-continuation: the completed task resumes its owner in the same identity scope', async () => {
    const { server, url } = await demo({ taskCompletesAfterPolls: 2, taskPollIntervalMs: 100 });
    const lines: string[] = [];
    const result = await taskContinuation(url, (line) => lines.push(line), 15_000);
    expect(result.status).toBe('completed');
    expect(result.taskKey).toBe(`inventory:${result.taskId}`);
    expect(result.wokenScope).toBe('id:demo//operator/');
    expect(result.resumedScope).toBe(result.wokenScope);
    expect(server.state().tasks.find((task) => task.taskId === result.taskId)?.status).toBe('completed');
    expect(lines.filter((line) => line.includes('error'))).toEqual([]);
  });
});
