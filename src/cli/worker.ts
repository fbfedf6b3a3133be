/**
 * `ax-mcp worker`: run one event-runtime worker against a PostgreSQL store. The routes,
 * targets and sources come from a user module:
 *
 * ```sh
 * ax-mcp worker --store postgres://app@db.internal/events --module ./my-runtime.js
 * ```
 *
 * The module exports `routes` (and optionally `targets`, `sources`, `options`, `close`), or
 * a default function `({ workerId }) => ({ routes, targets, ... })` for async setup.
 * SIGTERM or SIGINT drains: nothing more is claimed and running deliveries finish; a second
 * signal aborts them (idempotent ones go back to the fleet, others end `outcome_unknown`).
 */

import { parseArgs } from 'node:util';
import { AxPostgresEventStore } from '../node/postgres/event-store.js';
import { AxPostgresEventWorker } from '../node/postgres/event-store-worker.js';
import { type AxWorkerModule, loadRuntimeModule, RuntimeModuleError } from './runtime-module.js';

export type { AxWorkerModule };

/** Usage of `ax-mcp worker`. */
export const WORKER_HELP = `ax-mcp worker — run an event-runtime worker against PostgreSQL

Usage:
  ax-mcp worker --store postgres://user@host:5432/db --module ./my-runtime.js [options]

  --store URL             PostgreSQL connection string (or env AX_MCP_STORE; PG* variables
                          such as PGPASSWORD fill in what the URL leaves out)
  --module PATH           ES module exporting routes (and targets, sources, options, close)
  --schema NAME           schema of the store's tables (default ax_mcp)
  --concurrency N         deliveries run at once by this worker (default: the module's
                          options.workerConcurrency, else 4)
  --lease-ms MS           lease of a claimed delivery (default 30000)
  --poll-ms MS            longest idle sleep; NOTIFY wakes sooner (default 5000)
  --drain-timeout-ms MS   on shutdown, abort deliveries still running after MS (default: wait)
  --worker-id ID          lease owner name (default random)

SIGTERM/SIGINT: stop claiming and let running deliveries finish; a second signal aborts them.
`;

/** What `runWorker` writes to and listens to (the real process by default). */
export interface AxWorkerIO {
  out?: (line: string) => void;
  err?: (line: string) => void;
  /** Aborting it is a shutdown signal, like SIGTERM (abort twice with a second controller: use `force`). */
  signal?: AbortSignal;
  /** Aborting it forces a stop, like a second SIGTERM. */
  force?: AbortSignal;
  /** Install SIGTERM/SIGINT handlers. Default `true`. */
  handleSignals?: boolean;
}

class WorkerUsageError extends Error {}

function integer(value: string | undefined, name: string, fallback: number | undefined): number | undefined {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!(Number.isInteger(n) && n >= 1)) throw new WorkerUsageError(`${name} must be a positive integer`);
  return n;
}

/** The host and database of a connection string, never its password. */
function describeStore(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname}`;
  } catch {
    return '(connection string)';
  }
}

/**
 * Run `ax-mcp worker` with these arguments (after the word `worker`) until a shutdown
 * signal; resolve with the exit code (0 after a clean drain, 1 on failure, 2 on bad usage).
 */
export async function runWorker(argv: string[], io: AxWorkerIO = {}): Promise<number> {
  const out = io.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const err = io.err ?? ((line: string) => process.stderr.write(`${line}\n`));
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      allowPositionals: false,
      options: {
        store: { type: 'string' },
        module: { type: 'string' },
        schema: { type: 'string' },
        concurrency: { type: 'string' },
        'lease-ms': { type: 'string' },
        'poll-ms': { type: 'string' },
        'drain-timeout-ms': { type: 'string' },
        'worker-id': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    err(`ax-mcp worker: ${(error as Error).message}\n\n${WORKER_HELP}`);
    return 2;
  }
  if (values.help) {
    out(WORKER_HELP);
    return 0;
  }

  let store: AxPostgresEventStore | null = null;
  let worker: AxPostgresEventWorker | null = null;
  let module: AxWorkerModule | null = null;
  const stop = new AbortController();
  const force = new AbortController();
  const onSignal = () => (stop.signal.aborted ? force.abort() : stop.abort());
  io.signal?.addEventListener('abort', () => stop.abort(), { once: true });
  io.force?.addEventListener('abort', () => force.abort(), { once: true });
  const handleSignals = io.handleSignals ?? true;
  if (handleSignals) {
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  }
  try {
    const url = (values.store as string | undefined) ?? process.env.AX_MCP_STORE;
    if (!url) throw new WorkerUsageError('--store (or AX_MCP_STORE) is required');
    if (!/^postgres(ql)?:\/\//.test(url)) throw new WorkerUsageError('--store must be a postgres:// URL');
    const modulePath = values.module as string | undefined;
    if (!modulePath) throw new WorkerUsageError('--module is required');
    const concurrencyFlag = integer(values.concurrency as string | undefined, '--concurrency', undefined);
    const leaseMs = integer(values['lease-ms'] as string | undefined, '--lease-ms', undefined);
    const pollMs = integer(values['poll-ms'] as string | undefined, '--poll-ms', undefined);
    const drainMs = values['drain-timeout-ms'];
    const drainTimeoutMs = drainMs === undefined ? undefined : Number(drainMs);
    if (drainTimeoutMs !== undefined && !(Number.isFinite(drainTimeoutMs) && drainTimeoutMs >= 0)) {
      throw new WorkerUsageError('--drain-timeout-ms must be a number ≥ 0');
    }
    const workerId = (values['worker-id'] as string | undefined) ?? `worker_${crypto.randomUUID()}`;

    module = await loadRuntimeModule(modulePath, { workerId });
    const concurrency = concurrencyFlag ?? module.options?.workerConcurrency ?? 4;
    const report = (error: unknown, where: string) =>
      err(`ax-mcp worker ${workerId}: ${where}: ${error instanceof Error ? error.message : String(error)}`);
    store = new AxPostgresEventStore({
      connectionString: url,
      schema: values.schema as string | undefined,
      // One connection per lane, one for LISTEN, one for publishes and NOTIFY.
      poolSize: concurrency + 2,
      onError: (error) => report(error, 'store'),
    });
    await store.migrate();
    worker = new AxPostgresEventWorker({
      ...module.options,
      routes: module.routes,
      targets: module.targets,
      sources: module.sources,
      store,
      workerId,
      workerConcurrency: concurrency,
      ...(leaseMs === undefined ? {} : { leaseMs }),
      ...(pollMs === undefined ? {} : { pollIntervalMs: pollMs }),
      onError: (error, info) => {
        report(error, info.deliveryId ? `${info.phase} ${info.deliveryId}` : info.phase);
        module?.options?.onError?.(error, info);
      },
    });
    if (!stop.signal.aborted) {
      await worker.start();
      out(
        `ax-mcp worker ${workerId}: running on ${describeStore(url)} schema ${store.schema} with ${concurrency} lanes`,
      );
      await new Promise<void>((resolve) => {
        if (stop.signal.aborted) resolve();
        stop.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    }
    out(`ax-mcp worker ${workerId}: draining (a second signal aborts running deliveries)`);
    const closing = worker.close({ drainTimeoutMs });
    const forced = new Promise<void>((resolve) => {
      if (force.signal.aborted) resolve();
      force.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await Promise.race([closing, forced.then(() => worker?.runtime.close({ drain: false }))]);
    await closing;
    out(`ax-mcp worker ${workerId}: stopped`);
    return 0;
  } catch (error) {
    if (error instanceof WorkerUsageError || error instanceof RuntimeModuleError) {
      err(`ax-mcp worker: ${error.message}\n\n${WORKER_HELP}`);
      return 2;
    }
    const code =
      typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string'
        ? ` [${(error as { code: string }).code}]`
        : '';
    err(`ax-mcp worker: ${error instanceof Error ? error.message : String(error)}${code}`);
    await worker?.close({ drainTimeoutMs: 0 }).catch(() => undefined);
    return 1;
  } finally {
    if (handleSignals) {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    }
    try {
      await module?.close?.();
    } catch (error) {
      err(`ax-mcp worker: module close failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    await store?.close();
  }
}
