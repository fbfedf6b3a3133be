#!/usr/bin/env node
import type { ParseArgsConfig } from 'node:util';
import { startDemoFromEnv } from '../demo/main.js';
import { AX_MCP_CLIENT_INFO, type AxEventTrust, AxMCPError, eventRuntime } from '../index.js';
import { nearest } from '../options/check.js';
import {
  CONNECT_HELP,
  CONNECT_OPTIONS,
  type ConnectFlags,
  connect,
  connectHelp,
  UsageError,
} from './connect.js';
import { runDemo } from './demo.js';
import { parseFlags } from './flags.js';
import { cliHint, cliMessage } from './hints.js';
import { inspect } from './inspect.js';
import { RECORD_HELP, RECORD_NAMESPACE, recordCommand } from './record.js';
import { loadRuntimeModule, RuntimeModuleError } from './runtime-module.js';
import { STUDIO_HELP, STUDIO_OPTIONS, studioCommand } from './studio.js';
import { UCP_HELP, ucpCommand, ucpUsage } from './ucp.js';
import { watch, watchPolicy } from './watch.js';
import { runWorker, WORKER_HELP } from './worker.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** One command: its usage, its flags, and what it does with the parsed arguments. */
interface Command {
  summary: string;
  usage: string;
  /** The usage of a subcommand (`ucp call`), from the arguments after the command's name. */
  usageFor?: (argv: string[]) => string;
  options?: Options;
  /** Arguments handed over unparsed (the command parses them itself). */
  raw?: (argv: string[]) => Promise<number>;
  run?: (
    values: Record<string, unknown>,
    positionals: string[],
    vector: string[] | undefined,
  ) => Promise<number>;
}

const out = (text: string) => process.stdout.write(`${text}\n`);

const COMMANDS: Record<string, Command> = {
  inspect: {
    summary: 'era, server, capabilities and catalog',
    usage: `ax-mcp inspect <endpoint> [--json]\n\nPrints the server, its era and capabilities, and its catalog (tools, prompts, resources,\nURI templates, never expanded) as tables, or the catalog snapshot as JSON.\n\n${CONNECT_HELP}`,
    options: { ...CONNECT_OPTIONS, json: { type: 'boolean' } },
    run: async (values, positionals, vector) => {
      const endpoint = endpointOf('inspect', positionals, vector, 0);
      const client = await connect(endpoint, values as ConnectFlags);
      try {
        await inspect(client, values.json === true, out);
      } finally {
        await client.close();
      }
      return 0;
    },
  },
  call: {
    summary: 'call a tool, print the raw result',
    usage: `ax-mcp call <endpoint> <tool> ['{"json":"arguments"}'] [--args JSON]\n\nCalls a tool and prints its raw result; a call that becomes a task is followed to its end\n(progress and task status on stderr). Exit 1 when the result says isError.\n\n${CONNECT_HELP}`,
    options: { ...CONNECT_OPTIONS, args: { type: 'string' } },
    run: async (values, positionals, vector) => {
      const offset = vector ? 0 : 1;
      const endpoint = endpointOf('call', positionals, vector, 0);
      const tool = positionals[offset];
      if (!tool) throw new UsageError('call needs a tool name after the endpoint');
      const given = positionals[offset + 1];
      if (given !== undefined && values.args !== undefined)
        throw new UsageError('give the arguments once: as the JSON after the tool name, or --args');
      const extra = positionals.slice(offset + 2);
      if (extra.length > 0)
        throw new UsageError(`call takes one JSON object of arguments; not understood: ${extra.join(' ')}`);
      const args = jsonObject(
        given ?? (values.args as string | undefined),
        given !== undefined ? 'the arguments' : '--args',
      );
      const client = await connect(endpoint, values as ConnectFlags);
      try {
        const result = await client.callTool(tool, args, {
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
    },
  },
  watch: {
    summary: 'stream events live; Ctrl-C stops',
    usage: `ax-mcp watch <endpoint> [--subscribe all|<uri>...] [--select <glob>]
             [--routes ./my-runtime.js] [--tenant ID] [--trust LEVEL]

Streams the server's notifications as events. --subscribe keeps subscriptions (all concrete
resources, or the URIs given); --select subscribes to the URIs a glob matches (* within a
segment, ** across). With --routes, each event is followed by what every route of the module
would do with it, or why not; --tenant and --trust attribute the events as your source would.

${CONNECT_HELP}`,
    options: {
      ...CONNECT_OPTIONS,
      subscribe: { type: 'string', multiple: true },
      select: { type: 'string' },
      routes: { type: 'string' },
      tenant: { type: 'string' },
      trust: { type: 'string' },
    },
    run: async (values, positionals, vector) => {
      const endpoint = endpointOf('watch', positionals, vector, 0);
      const subscribe = [
        ...((values.subscribe as string[] | undefined) ?? []),
        ...positionals.slice(vector ? 0 : 1),
      ];
      const trust = values.trust as AxEventTrust | undefined;
      if (trust !== undefined && !['trusted', 'authenticated', 'untrusted'].includes(trust)) {
        throw new UsageError('--trust must be trusted, authenticated or untrusted');
      }
      const attribution = {
        ...(values.tenant ? { identity: { tenantId: values.tenant as string } } : {}),
        ...(trust ? { trust } : {}),
      };
      const module = values.routes
        ? await loadRuntimeModule(values.routes as string, { workerId: 'watch' })
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
      const client = await connect(endpoint, values as ConnectFlags);
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        await watch(client, watchPolicy(subscribe, values.select as string | undefined), out, stop.signal, {
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
    },
  },
  studio: {
    summary: 'a local web app: catalogs, calls, subscriptions, events, runs',
    usage: STUDIO_HELP.trim(),
    options: STUDIO_OPTIONS,
    run: (values, positionals, vector) =>
      studioCommand(values, [...positionals, ...(vector ? [vector] : [])], out),
  },
  record: {
    summary: "record a script's MCP session for replay",
    usage: `${RECORD_HELP.trim()}\n\n${connectHelp(RECORD_NAMESPACE)}`,
    raw: (argv) => recordCommand(argv, out),
  },
  ucp: {
    summary: 'inspect a UCP business, or call one of its operations',
    usage: UCP_HELP,
    usageFor: ucpUsage,
    raw: (argv) => ucpCommand(argv, out),
  },
  worker: {
    summary: 'run an event-runtime worker against PostgreSQL',
    usage: WORKER_HELP.trim(),
    raw: (argv) => runWorker(argv),
  },
  demo: {
    summary: 'walk through the client on the demo server, or serve it (--serve)',
    usage: `ax-mcp demo [--serve [--port N] [--era dual|modern|legacy] [--task-polls N]]

Without --serve: starts the dual-era demo MCP server on 127.0.0.1 and walks through the client
(the catalog, a tool call, a task, a subscription, an event that wakes a program). No key, no
network. With --serve: runs the standalone demo server until Ctrl-C and prints its endpoint and
control endpoints (POST /control/resource?uri=…, /control/task/complete, /control/drop,
GET /control/state), for the other commands to point at. The same origin serves a small UCP
shop (/.well-known/ucp; POST /control/shop/orders/<id>/ship) for ax-mcp ucp.`,
    options: {
      serve: { type: 'boolean' },
      port: { type: 'string' },
      era: { type: 'string' },
      'task-polls': { type: 'string' },
    },
    run: async (values, positionals) => {
      if (positionals.length > 0)
        throw new UsageError(`demo takes no arguments; not understood: ${positionals.join(' ')}`);
      if (!values.serve) {
        if (values.port !== undefined || values.era !== undefined || values['task-polls'] !== undefined)
          throw new UsageError('--port, --era and --task-polls go with --serve');
        return runDemo(out);
      }
      return serveDemo(values);
    },
  },
};

function globalHelp(): string {
  const lines = Object.entries(COMMANDS).map(
    ([name, command]) => `  ax-mcp ${name.padEnd(9)} ${command.summary}`,
  );
  return `ax-mcp ${AX_MCP_CLIENT_INFO.version} — a live Model Context Protocol client

Usage:
${lines.join('\n')}

  ax-mcp <command> --help    the command's flags
  ax-mcp --version           the version
`;
}

/** `ax-mcp demo --serve`: the standalone demo server until SIGINT/SIGTERM. */
async function serveDemo(values: Record<string, unknown>): Promise<number> {
  let server: Awaited<ReturnType<typeof startDemoFromEnv>>;
  try {
    server = await startDemoFromEnv(
      {
        PORT: (values.port as string | undefined) ?? '3000',
        ...(values.era ? { ERA: values.era as string } : {}),
        ...(values['task-polls'] ? { TASK_POLLS: values['task-polls'] as string } : {}),
      },
      out,
    );
  } catch (error) {
    if (error instanceof RangeError)
      throw new UsageError(
        error.message.replace(
          /^(PORT|ERA|TASK_POLLS)/,
          (name) => `--${name.toLowerCase().replace('_', '-')}`,
        ),
      );
    throw error;
  }
  out('Ctrl-C stops the server.');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await server.close();
  return 0;
}

/** The endpoint: the first positional, or the argument vector after `--` (a stdio command). */
function endpointOf(
  name: string,
  positionals: string[],
  vector: string[] | undefined,
  index: number,
): string | string[] {
  if (vector) return vector;
  const endpoint = positionals[index];
  if (!endpoint) throw new UsageError(`${name} needs an endpoint`);
  return endpoint;
}

function jsonObject(text: string | undefined, what: string): Record<string, unknown> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(`${what} is not valid JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UsageError(`${what} must be a JSON object`);
  return value as Record<string, unknown>;
}

let usageOf = globalHelp;

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    out(globalHelp());
    return 1;
  }
  if (name === '--version' || name === '-V' || name === 'version') {
    out(AX_MCP_CLIENT_INFO.version);
    return 0;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    const topic = rest[0] !== undefined ? COMMANDS[rest[0]] : undefined;
    out(topic ? topic.usage : globalHelp());
    return 0;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    const near = nearest(name, Object.keys(COMMANDS));
    throw new UsageError(`unknown command "${name}"${near ? ` (did you mean ${near}?)` : ''}`);
  }
  usageOf = () => command.usageFor?.(rest) ?? command.usage;
  if (rest.includes('--help') || rest.includes('-h')) {
    // A command's own arguments after `--` (a script's, a server's) are not ours to read.
    const split = rest.indexOf('--');
    const asked = rest.slice(0, split < 0 ? undefined : split);
    if (asked.includes('--help') || asked.includes('-h')) {
      out(usageOf());
      return 0;
    }
  }
  if (command.raw) return command.raw(rest);
  const { values, positionals, vector } = parseFlags(name, command.options ?? {}, rest);
  return (command.run as NonNullable<Command['run']>)(values, positionals, vector);
}

/** `[#####-----] 50%` when the total is known, the bare count otherwise. */
function progressBar(progress: number, total: number | undefined): string {
  if (!total || total <= 0) return `progress ${progress}`;
  const share = Math.max(0, Math.min(1, progress / total));
  const filled = Math.round(share * 20);
  return `[${'#'.repeat(filled)}${'-'.repeat(20 - filled)}] ${Math.round(share * 100)}%`;
}

// A reader that stops early (`ax-mcp inspect … | head`) is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError || error instanceof RuntimeModuleError) {
      process.stderr.write(`ax-mcp: ${error.message}\n\n${usageOf()}\n`);
      process.exitCode = 2;
    } else if (error instanceof AxMCPError) {
      const hint = cliHint(error);
      process.stderr.write(`ax-mcp: ${cliMessage(error)} [${error.code}]\n${hint ? `hint: ${hint}\n` : ''}`);
      process.exitCode = 1;
    } else {
      process.stderr.write(`ax-mcp: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    }
  },
);
