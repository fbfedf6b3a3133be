/**
 * `ax-mcp studio`: connect to the endpoints, run an event runtime over their notifications
 * (with the routes of a module, on a SQLite or PostgreSQL store if given), and serve the
 * studio page on 127.0.0.1 until Ctrl-C.
 */

import {
  type AxEventRuntime,
  type AxEventSource,
  type AxEventStore,
  AxMCPClient,
  AxMCPEventSource,
  eventRuntime,
} from '../index.js';
import {
  AxPostgresEventStore,
  AxSQLiteEventStore,
  AxStudioRecordingTransport,
  axStudioElicitation,
  startStudio,
} from '../node.js';
import {
  CONNECT_OPTIONS,
  type ConnectFlags,
  clientOptionsOf,
  connectHelp,
  transportFor,
  UsageError,
} from './connect.js';
import { loadRuntimeModule } from './runtime-module.js';
import { watchPolicy } from './watch.js';

/** Steps one on-demand recording of a CLI client keeps. */
const RECORDING_MAX_STEPS = 10_000;

export const STUDIO_HELP = `ax-mcp studio [endpoint...] [--store sqlite:FILE | postgres://…] [--routes ./my-runtime.js]
             [--subscribe all|<uri>...] [--port N] [--host ADDRESS]

Serves a local web app over live objects: the servers and their catalogs (with their
revision history), forms to call a tool, get a prompt, read a resource and ask for
completions, the subscriptions with their updates, the events with every route's decision,
and the runs and dead letters of the store (redrive, cancel). A form elicitation a server
sends is answered from the page (unanswered for 5 minutes: cancel). Each client can be
recorded on demand (at most ${RECORDING_MAX_STEPS} steps a recording, secrets redacted) and the recording
downloaded for replay. Prints the address with its per-run token; every request without the
token is refused.

  --store URL        sqlite:FILE or postgres://… (default: in memory, for this run only)
  --routes PATH      ES module exporting routes (and targets), as ax-mcp worker takes it; the
                     studio runs their deliveries (not on a postgres:// store: the fleet does)
  --subscribe        keep subscriptions: all concrete resources, or the URIs given
  --port N           the port (default: a free one)
  --host ADDRESS     listen on another interface than 127.0.0.1 (with a warning)

With several endpoints the clients are named studio-1, studio-2, … (or --namespace with -1, -2, …).

${connectHelp('studio')}`;

export const STUDIO_OPTIONS = {
  ...CONNECT_OPTIONS,
  store: { type: 'string' },
  routes: { type: 'string' },
  subscribe: { type: 'string', multiple: true },
  port: { type: 'string' },
  host: { type: 'string' },
} as const;

async function openStore(url: string): Promise<AxEventStore> {
  if (url.startsWith('sqlite:')) {
    const filename = url.slice('sqlite:'.length);
    if (filename === '')
      throw new UsageError('--store sqlite: needs a file name, for example sqlite:./events.db');
    return AxSQLiteEventStore.open({ filename });
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    const store = new AxPostgresEventStore({ connectionString: url });
    await store.migrate();
    return store;
  }
  throw new UsageError('--store must be sqlite:FILE or a postgres:// URL');
}

/** Runs the studio until `signal` aborts (or SIGINT/SIGTERM when none is given). */
export async function studioCommand(
  values: Record<string, unknown>,
  endpoints: (string | string[])[],
  out: (text: string) => void,
  signal?: AbortSignal,
): Promise<number> {
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!(Number.isInteger(port) && port >= 0 && port < 65536))
    throw new UsageError('--port must be a port number (0 for a free one)');
  const flags = values as ConnectFlags;
  const clients: AxMCPClient[] = [];
  const elicitation = axStudioElicitation();
  let store: AxEventStore | undefined;
  let runtime: AxEventRuntime | undefined;
  let module: Awaited<ReturnType<typeof loadRuntimeModule>> | undefined;
  try {
    const policy = watchPolicy(values.subscribe as string[] | undefined, undefined);
    for (const [i, endpoint] of endpoints.entries()) {
      const base = flags.namespace ?? 'studio';
      const namespace = endpoints.length === 1 ? base : `${base}-${i + 1}`;
      // Recorded only while the page says so; the credentials given here never reach a recording.
      const secrets = [...(flags.bearer ? [flags.bearer] : [])];
      for (const header of flags.header ?? []) secrets.push(header.slice(header.indexOf(':') + 1).trim());
      const transport = new AxStudioRecordingTransport(await transportFor(endpoint, flags), {
        secrets,
        maxSteps: RECORDING_MAX_STEPS,
      });
      clients.push(
        new AxMCPClient(transport, {
          ...clientOptionsOf({ ...flags, namespace }),
          elicitation: elicitation.handlers,
        }),
      );
    }
    if (values.store !== undefined) store = await openStore(values.store as string);
    module = values.routes
      ? await loadRuntimeModule(values.routes as string, { workerId: 'studio' })
      : undefined;
    const sources: AxEventSource[] = [
      ...clients.map((client) => new AxMCPEventSource({ client, resourceSubscriptions: policy })),
      ...(module?.sources ?? []),
    ];
    runtime = eventRuntime({
      ...module?.options,
      routes: module?.routes ?? [],
      ...(module?.targets ? { targets: module.targets } : {}),
      sources,
      ...(store ? { store } : {}),
      // A store that is given may be shared (a fleet, another process on the SQLite file): never
      // take back others' leases, and run deliveries only for the routes of --routes, on a store
      // that is not a fleet's. Otherwise the studio claims nothing: it only shows and redrives.
      ...(store ? { coordination: 'multi-worker' as const } : {}),
      ...(module && !(store instanceof AxPostgresEventStore) ? {} : { scheduling: 'host' as const }),
      allowVolatile: true,
      onWarning: (message) => process.stderr.write(`ax-mcp studio: ${message}\n`),
    });
    await runtime.start();
    const studio = await startStudio({
      clients,
      runtime,
      elicitation,
      port,
      ...(values.host === undefined ? {} : { host: values.host as string }),
      onWarning: (message) => process.stderr.write(`ax-mcp studio: warning: ${message}\n`),
    });
    out(`ax-mcp studio: ${studio.url}`);
    out('Ctrl-C stops the studio.');
    await new Promise<void>((resolve) => {
      if (signal) {
        if (signal.aborted) resolve();
        else signal.addEventListener('abort', () => resolve(), { once: true });
        return;
      }
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
    await studio.close();
    return 0;
  } finally {
    elicitation.close();
    await runtime?.close({ drain: false });
    for (const client of clients) await client.close();
    await store?.close();
    await module?.close?.();
  }
}
