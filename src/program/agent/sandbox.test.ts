import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, type SandboxHost, SandboxSession } from './sandbox.js';

const sessions: SandboxSession[] = [];
afterEach(() => {
  for (const session of sessions.splice(0)) session.close();
});

const calls: { path: readonly string[]; args: readonly unknown[] }[] = [];
const host: SandboxHost = {
  async call(path, args, signal) {
    calls.push({ path, args });
    if (path[0] === 'functions' && path[1] === 'wait') {
      await new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, 5_000);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(signal.reason);
        });
      });
    }
    if (path[0] === 'functions' && path[1] === 'fail') throw new Error('it failed on purpose');
    return { path: path.join('.'), args };
  },
};

async function open(limits: Partial<typeof DEFAULT_LIMITS> = {}) {
  const session = await SandboxSession.open(
    host,
    { ...DEFAULT_LIMITS, ...limits },
    {
      namespaces: { docs: ['echo'] },
      agents: [],
      functions: ['wait', 'fail'],
      inputs: JSON.stringify({ question: 'q?' }),
    },
  );
  sessions.push(session);
  return session;
}

const run = (session: SandboxSession, code: string) => session.run(code, new AbortController().signal);

describe('SandboxSession', () => {
  it('keeps top-level declarations across steps and lets a later step redeclare them', async () => {
    const session = await open();
    const first = await run(session, 'const n = 21\nfunction twice(x) { return x * 2 }\nconsole.log("n", n)');
    expect(first).toMatchObject({ output: 'n 21', kept: ['n', 'twice'] });
    const second = await run(session, 'console.log(twice(n)); const n2 = n + 1');
    expect(second.output).toBe('42');
    const third = await run(session, 'const n = 1; console.log(n, n2, inputs.question)');
    expect(third.output).toBe('1 22 q?');
  });

  it('awaits host calls, concurrently, with JSON copies and errors the code can catch', async () => {
    const session = await open();
    calls.length = 0;
    const step = await run(
      session,
      [
        'const [a, b] = await Promise.all([mcp.docs.tools.echo({ m: 1 }), mcp.docs.resources.read("res://x")])',
        'console.log(a.path, b.path, JSON.stringify(b.args))',
        'try { await functions.fail({}) } catch (e) { console.log("caught", e.message) }',
        'final("answer", { a: a.args[0] })',
      ].join('\n'),
    );
    expect(step.error).toBeUndefined();
    expect(step.output).toBe(
      'mcp.docs.tools.echo mcp.docs.resources.read ["res://x"]\ncaught it failed on purpose',
    );
    expect(step.final).toEqual({ task: 'answer', evidence: { a: { m: 1 } } });
    expect(calls.map((call) => call.path.join('.'))).toEqual([
      'mcp.docs.tools.echo',
      'mcp.docs.resources.read',
      'functions.fail',
    ]);
  });

  it('ends a runaway loop at the time limit and keeps the session usable', async () => {
    const session = await open({ stepTimeoutMs: 200 });
    await run(session, 'const kept = "still here"');
    const loop = await run(session, 'while (true) {}');
    expect(loop).toMatchObject({ limit: 'time' });
    expect(loop.error).toContain('time limit of 200 ms');
    const waiting = await run(session, 'await functions.wait({})');
    expect(waiting.limit).toBe('time');
    const after = await run(session, 'console.log(kept)');
    expect(after.output).toBe('still here');
  });

  it('reports memory and stack exhaustion as step errors', async () => {
    const session = await open({ memoryLimitBytes: 8 * 1024 * 1024 });
    const bomb = await run(
      session,
      'const parts = []; for (let i = 0; ; i++) parts.push(("x" + i).repeat(1 << 14))',
    );
    expect(bomb.limit).toBe('memory');
    expect(bomb.error).toMatch(/out of memory.*8 MiB/);
    const deep = await run(session, 'function f() { return f() } f()');
    expect(deep.limit).toBe('stack');
    const parse = await run(session, 'JSON.parse("[".repeat(200000))');
    expect(['memory', 'stack']).toContain(parse.limit);
    expect((await run(session, 'console.log(1 + 1)')).output).toBe('2');
    const roomy = await open();
    await run(roomy, 'const before = "kept"');
    // The parser recurses natively deeper than the host stack allows: the runtime is replaced.
    const host = await run(roomy, 'eval("(".repeat(100000))');
    expect(host).toMatchObject({ limit: 'stack', reset: true });
    const after = await run(roomy, 'console.log(1 + 1, typeof before)');
    expect(after.output).toBe('2 undefined');
  });

  it('grants no host globals, modules or prototype paths', async () => {
    const session = await open();
    const probe = await run(
      session,
      [
        'console.log(typeof process, typeof require, typeof setTimeout, typeof fetch, typeof globalThis.std)',
        'console.log(typeof (function () { return this })())',
        'console.log(typeof Function("return this")().process)',
        'Object.prototype.polluted = true',
        'console.log(mcp.docs.tools.__proto__, mcp.docs.tools.constructor)',
        'try { mcp = 1 } catch (e) { console.log(e.name) }',
      ].join('\n'),
    );
    expect(probe.output).toBe(
      'undefined undefined undefined undefined undefined\nundefined\nundefined\nundefined undefined\nTypeError',
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const imported = await run(session, 'const fs = await import("fs")');
    expect(imported.error).toContain("could not load module 'fs'");
    const staticImport = await run(session, 'import fs from "node:fs"');
    expect(staticImport.error).toContain('could not load module');
  });

  it('aborts the step and its host calls when the run is aborted', async () => {
    const session = await open();
    const controller = new AbortController();
    const running = session.run('await functions.wait({})', controller.signal);
    setTimeout(() => controller.abort(new Error('stop')), 50);
    await expect(running).rejects.toMatchObject({ code: 'aborted' });
  });
});

describe('SandboxSession lifetime', () => {
  it('close() during a step ends it and frees the instance; later runs are refused', async () => {
    const session = await open();
    const running = session.run('await functions.wait({})', new AbortController().signal);
    setTimeout(() => session.close(), 50);
    await expect(running).rejects.toMatchObject({ code: 'closed' });
    await expect(run(session, '1')).rejects.toMatchObject({ code: 'closed' });
  });

  it('a host result that is not JSON becomes an error the code can catch', async () => {
    const session = await SandboxSession.open({ call: async () => ({ big: 10n }) }, DEFAULT_LIMITS, {
      namespaces: {},
      agents: [],
      functions: ['odd'],
      inputs: '{}',
    });
    sessions.push(session);
    const step = await run(session, 'try { await functions.odd({}) } catch (e) { console.log(e.message) }');
    expect(step.output).toMatch(/^The result is not JSON/);
  });

  it('arguments with their own "__proto__" key are refused with a catchable error; the session stays healthy', async () => {
    const session = await open();
    calls.length = 0;
    const caught = await run(
      session,
      [
        'const args = JSON.parse(\'{"__proto__": {"polluted": true}, "m": 1}\')',
        'try { await mcp.docs.tools.echo(args) } catch (e) { console.log("refused:", e instanceof Error, e.message) }',
        'const after = await mcp.docs.tools.echo({ m: 2 })',
        'console.log("after:", JSON.stringify(after.args))',
      ].join('\n'),
    );
    expect(caught.error).toBeUndefined();
    expect(caught.output).toBe(
      'refused: true mcp.docs.tools.echo was not called: "__proto__" cannot be used as a key\nafter: [{"m":2}]',
    );
    // The refused call never reached the host.
    expect(calls.map((call) => call.args)).toEqual([[{ m: 2 }]]);
    const uncaught = await run(session, 'await functions.wait(JSON.parse(\'{"__proto__": 1}\'))');
    expect(uncaught.error).toBe(
      'Error: functions.wait was not called: "__proto__" cannot be used as a key (line 1)',
    );
    expect(uncaught.reset).toBeUndefined();
    const next = await run(session, 'console.log(after.args[0].m + 40, ({}).polluted)');
    expect(next).toMatchObject({ output: '42 undefined', kept: [] });
    expect(next.error).toBeUndefined();
  });

  it('a namespace that is not attached still has the shape of one: calls reach the host', async () => {
    const session = await open();
    calls.length = 0;
    const step = await run(
      session,
      [
        'const r = await mcp.other.tools.echo({ m: 1 })',
        'console.log(r.path, Object.keys(mcp).join(","), "other" in mcp, typeof mcp.then, typeof mcp.__proto__)',
      ].join('\n'),
    );
    expect(step.error).toBeUndefined();
    expect(step.output).toBe('mcp.other.tools.echo docs false undefined undefined');
  });

  it('a host error made from String(error) is not shown as "Error: Error: …"', async () => {
    const session = await SandboxSession.open(
      {
        call: async () => {
          throw new Error(String(new Error('boom')));
        },
      },
      DEFAULT_LIMITS,
      { namespaces: {}, agents: [], functions: ['boom'], inputs: '{}' },
    );
    sessions.push(session);
    const caught = await run(session, 'try { await functions.boom({}) } catch (e) { console.log(e) }');
    expect(caught.output).toBe('Error: boom');
    const uncaught = await run(session, 'await functions.boom({})');
    expect(uncaught.error).toBe('Error: boom (line 1)');
  });
});
