#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { type AxEventTrust, AxMCPError, eventRuntime } from '../index.js';
import { CONNECT_OPTIONS, type ConnectFlags, connect, UsageError } from './connect.js';
import { runDemo } from './demo.js';
import { cliHint } from './hints.js';
import { inspect } from './inspect.js';
import { RECORD_HELP, recordCommand } from './record.js';
import { loadRuntimeModule, RuntimeModuleError } from './runtime-module.js';
import { watch, watchPolicy } from './watch.js';
import { runWorker } from './worker.js';

const HELP = `ax-mcp — a live Model Context Protocol client

Usage:
  ax-mcp inspect <endpoint> [--json]          era, server, capabilities and catalog
  ax-mcp call <endpoint> <tool> [--args JSON]  call a tool, print the raw result
  ax-mcp watch <endpoint> [--subscribe all|<uri>...] [--select <glob>]
              [--routes ./my-runtime.js] [--tenant ID] [--trust LEVEL]
                                               stream events live; with --routes, what each
                                               route would do with each event, and why not;
                                               --tenant/--trust attribute the events as your
                                               source would; Ctrl-C stops
  ax-mcp demo                                  start the demo server and walk through it
  ax-mcp worker --store postgres://… --module ./my-runtime.js
                                               run an event-runtime worker (ax-mcp worker --help)
${RECORD_HELP}

<endpoint> is an http(s) URL or stdio:<command> [args...].
Common flags:
  --era auto|legacy|modern   pin the protocol era (default auto)
  --header "Name: value"     extra HTTP header (repeatable)
  --bearer TOKEN             bearer token
  --allow-localhost          allow plain HTTP to loopback: the only way to reach 127.0.0.1
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const out = (text: string) => process.stdout.write(`${text}\n`);
  switch (command) {
    case 'inspect': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { ...CONNECT_OPTIONS, json: { type: 'boolean' } },
      });
      const endpoint = positionals[0];
      if (!endpoint) throw new UsageError('inspect needs an endpoint');
      const client = connect(endpoint, values as ConnectFlags);
      try {
        await inspect(client, values.json === true, out);
      } finally {
        await client.close();
      }
      return 0;
    }
    case 'call': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { ...CONNECT_OPTIONS, args: { type: 'string' } },
      });
      const [endpoint, tool] = positionals;
      if (!endpoint || !tool) throw new UsageError('call needs an endpoint and a tool name');
      let args: unknown = {};
      if (values.args !== undefined) {
        try {
          args = JSON.parse(values.args);
        } catch {
          throw new UsageError('--args is not valid JSON');
        }
        if (typeof args !== 'object' || args === null || Array.isArray(args)) {
          throw new UsageError('--args must be a JSON object');
        }
      }
      const client = connect(endpoint, values as ConnectFlags);
      try {
        const result = await client.callTool(tool, args as Record<string, unknown>, {
          onProgress: (p) => process.stderr.write(`${progressBar(p.progress, p.total)} ${p.message ?? ''}\n`),
          onStatus: (task) =>
            process.stderr.write(
              `task ${task.taskId}: ${task.status}${task.statusMessage ? ` — ${task.statusMessage}` : ''}\n`,
            ),
        });
        out(JSON.stringify(result, null, 2));
        return result.isError ? 1 : 0;
      } finally {
        await client.close();
      }
    }
    case 'watch': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: {
          ...CONNECT_OPTIONS,
          subscribe: { type: 'string', multiple: true },
          select: { type: 'string' },
          routes: { type: 'string' },
          tenant: { type: 'string' },
          trust: { type: 'string' },
        },
      });
      const endpoint = positionals[0];
      if (!endpoint) throw new UsageError('watch needs an endpoint');
      const subscribe = [...(values.subscribe ?? []), ...positionals.slice(1)];
      const trust = values.trust as AxEventTrust | undefined;
      if (trust !== undefined && !['trusted', 'authenticated', 'untrusted'].includes(trust)) {
        throw new UsageError('--trust must be trusted, authenticated or untrusted');
      }
      const attribution = {
        ...(values.tenant ? { identity: { tenantId: values.tenant } } : {}),
        ...(trust ? { trust } : {}),
      };
      const module = values.routes
        ? await loadRuntimeModule(values.routes, { workerId: 'watch' })
        : undefined;
      const routes = module
        ? {
            routes: module.routes,
            // Never started: it only answers explain(); nothing runs and nothing is stored.
            runtime: eventRuntime({
              routes: module.routes,
              ...(module.targets ? { targets: module.targets } : {}),
              allowVolatile: true,
              onWarning: () => {},
            }),
          }
        : undefined;
      const client = connect(endpoint, values as ConnectFlags);
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        await watch(client, watchPolicy(subscribe, values.select), out, stop.signal, {
          ...(routes ? { routes } : {}),
          attribution,
        });
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        await client.close();
        await routes?.runtime.close();
        await module?.close?.();
      }
      return 0;
    }
    case 'record':
      return recordCommand(rest, out);
    case 'worker':
      return runWorker(rest);
    case 'demo':
      return runDemo(out);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      out(HELP);
      return command === undefined ? 1 : 0;
    default:
      throw new UsageError(`Unknown command "${command}"`);
  }
}

/** `[#####-----] 50%` when the total is known, the bare count otherwise. */
function progressBar(progress: number, total: number | undefined): string {
  if (!total || total <= 0) return `progress ${progress}`;
  const share = Math.max(0, Math.min(1, progress / total));
  const filled = Math.round(share * 20);
  return `[${'#'.repeat(filled)}${'-'.repeat(20 - filled)}] ${Math.round(share * 100)}%`;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (
      error instanceof UsageError ||
      error instanceof RuntimeModuleError ||
      (error instanceof Error && error.name === 'TypeError' && 'code' in error)
    ) {
      process.stderr.write(`ax-mcp: ${error.message}\n\n${HELP}`);
      process.exitCode = 2;
    } else if (error instanceof AxMCPError) {
      const hint = cliHint(error);
      process.stderr.write(`ax-mcp: ${error.message} [${error.code}]\n${hint ? `hint: ${hint}\n` : ''}`);
      process.exitCode = 1;
    } else {
      process.stderr.write(`ax-mcp: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    }
  },
);
