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
import { connectionStringProblem } from '../node/postgres/connection-string.js';
import { AxPostgresEventStore } from '../node/postgres/event-store.js';
import { AxPostgresEventWorker } from '../node/postgres/event-store-worker.js';
import { nearest } from '../options/check.js';
import { flagParseProblem } from './flags.js';
import { type AxWorkerModule, loadRuntimeModule, RuntimeModuleError } from './runtime-module.js';
import { causeOf, redactUrl, WORKER_LOG_FORMATS, WorkerLog, type WorkerLogFormat } from './worker-log.js';

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
  --log-format FORMAT     text (default): "<ISO-8601 time> <level> <message>" lines;
                          json: one object per line { time, level, msg, worker, ... }

SIGTERM/SIGINT: stop claiming and let running deliveries finish; a second signal aborts them;
a third exits at once (code 130), leaving what still ran to the fleet once its leases expire.

Logging: info lines on stdout, warn and error lines on stderr. A failure that repeats (the
database unreachable) is one incident: its first failure is an error line naming the cause,
repeats are counted, and an info line says when it recovered, after how many failures and how
long. Passwords and the credentials of URLs are never printed.

Exit codes:
  0  stopped by SIGTERM/SIGINT after draining (also when a second signal or --drain-timeout-ms
     aborted what still ran), or --help
  1  a fatal error: the store could not be reached or migrated at start, the module's setup
     function threw, or its options, routes or targets are invalid
  2  a usage error: an unknown flag, a bad value, no --store or --module, a module that cannot
     be loaded or exports no routes
  130  a third SIGTERM/SIGINT: exited without waiting
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

const FLAGS = {
  store: { type: 'string' },
  module: { type: 'string' },
  schema: { type: 'string' },
  concurrency: { type: 'string' },
  'lease-ms': { type: 'string' },
  'poll-ms': { type: 'string' },
  'drain-timeout-ms': { type: 'string' },
  'worker-id': { type: 'string' },
  'log-format': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function logFormat(value: string | undefined): WorkerLogFormat {
  if (value === undefined) return 'text';
  if ((WORKER_LOG_FORMATS as readonly string[]).includes(value)) return value as WorkerLogFormat;
  const near = nearest(value, WORKER_LOG_FORMATS);
  throw new WorkerUsageError(
    `--log-format must be ${WORKER_LOG_FORMATS.join(' or ')}, not "${value}"${near ? ` (did you mean ${near}?)` : ''}`,
  );
}

/** The password of a connection string (the URL's, or its password parameter), to keep out of every line. */
function passwordsOf(url: string): string[] {
  try {
    const u = new URL(url);
    const raw = u.password;
    const given = [raw, u.searchParams.get('password') ?? '', u.searchParams.get('sslpassword') ?? ''];
    try {
      given.push(decodeURIComponent(raw));
    } catch {
      // A malformed escape: the raw form is enough.
    }
    return given.filter((p) => p.length > 0);
  } catch {
    return [];
  }
}

function integer(value: string | undefined, name: string, fallback: number | undefined): number | undefined {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!(Number.isInteger(n) && n >= 1)) throw new WorkerUsageError(`${name} must be a positive integer`);
  return n;
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
    ({ values } = parseArgs({ args: argv, allowPositionals: false, options: FLAGS }));
  } catch (error) {
    err(`ax-mcp worker: ${flagParseProblem(error, Object.keys(FLAGS), argv)}\n\n${WORKER_HELP}`);
    return 2;
  }
  if (values.help) {
    out(WORKER_HELP);
    return 0;
  }

  let store: AxPostgresEventStore | null = null;
  let worker: AxPostgresEventWorker | null = null;
  let module: AxWorkerModule | null = null;
  let log: WorkerLog | null = null;
  let started = false;
  const stop = new AbortController();
  const force = new AbortController();
  let signals = 0;
  const onSignal = () => {
    signals++;
    if (signals === 1) stop.abort();
    else if (signals === 2) force.abort();
    else {
      // A target that ignores its abort signal would hold the worker forever: a third signal
      // ends the process. Its leases expire and the fleet recovers what was running.
      log?.error('third signal: exiting now; the fleet recovers what was running when its leases expire');
      process.exit(130);
    }
  };
  io.signal?.addEventListener('abort', () => stop.abort(), { once: true });
  io.force?.addEventListener('abort', () => force.abort(), { once: true });
  const handleSignals = io.handleSignals ?? true;
  if (handleSignals) {
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  }
  try {
    const format = logFormat(values['log-format'] as string | undefined);
    const url = (values.store as string | undefined) ?? process.env.AX_MCP_STORE;
    if (!url) throw new WorkerUsageError('--store (or AX_MCP_STORE) is required');
    if (!/^postgres(ql)?:\/\//.test(url)) throw new WorkerUsageError('--store must be a postgres:// URL');
    const storeProblem = connectionStringProblem(url);
    if (storeProblem)
      throw new WorkerUsageError(`--store must be a postgres:// URL, not ${storeProblem.received}`);
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
    const logged = new WorkerLog({
      worker: workerId,
      format,
      write: (line, level) => (level === 'info' ? out : err)(line),
      secrets: [...passwordsOf(url), process.env.PGPASSWORD],
    });
    log = logged;

    module = await loadRuntimeModule(modulePath, { workerId });
    const concurrency = concurrencyFlag ?? module.options?.workerConcurrency ?? 4;
    const own = module.options;
    store = new AxPostgresEventStore({
      connectionString: url,
      schema: values.schema as string | undefined,
      // One connection per lane, one for LISTEN, one for publishes and NOTIFY.
      poolSize: concurrency + 2,
      // The LISTEN connection, idle pool connections, NOTIFY.
      onError: (error) => logged.incident('database', error, { where: 'a store connection' }),
    });
    await store.migrate();
    worker = new AxPostgresEventWorker({
      ...own,
      routes: module.routes,
      targets: module.targets,
      sources: module.sources,
      store,
      workerId,
      workerConcurrency: concurrency,
      ...(leaseMs === undefined ? {} : { leaseMs }),
      ...(pollMs === undefined ? {} : { pollIntervalMs: pollMs }),
      onError: (error, info) => {
        if (info.phase === 'source') logged.incident(`source ${info.sourceId ?? '?'}`, error);
        else if (info.phase === 'authorize') logged.incident('authorize hook', error);
        else {
          const where =
            info.phase === 'delivery'
              ? `delivery ${info.deliveryId ?? '?'}`
              : info.phase === 'prune'
                ? 'prune'
                : 'a lane';
          logged.incident('database', error, { where });
        }
        own?.onError?.(error, info);
      },
      onWarning: (message, details) => {
        logged.warn(message, {
          code: details.code,
          source: details.sourceId,
          route: details.routeId,
          type: details.type,
        });
        own?.onWarning?.(message, details);
      },
      // A lane's round with the store went through: whatever kept the database failing is over.
      onStoreAnswered: () => logged.recovered('database'),
    });
    if (!stop.signal.aborted) {
      await worker.start();
      started = true;
      const where = redactUrl(url);
      logged.info(`started: ${concurrency} lanes, store ${where}, schema ${store.schema}`, {
        lanes: concurrency,
        store: where,
        schema: store.schema,
      });
      await new Promise<void>((resolve) => {
        if (stop.signal.aborted) resolve();
        stop.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    }
    logged.info('draining: claiming nothing more, running deliveries finish (a second signal aborts them)');
    const closing = worker.close({ drainTimeoutMs });
    const forced = new Promise<void>((resolve) => {
      if (force.signal.aborted) resolve();
      force.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await Promise.race([
      closing,
      forced.then(() => {
        logged.warn(
          'aborting running deliveries (second signal): idempotent ones go back to the fleet, others end outcome_unknown',
        );
        return worker?.runtime.close({ drain: false });
      }),
    ]);
    await closing;
    logged.info('stopped');
    return 0;
  } catch (error) {
    if (error instanceof WorkerUsageError || error instanceof RuntimeModuleError) {
      err(`ax-mcp worker: ${error.message}\n\n${WORKER_HELP}`);
      return 2;
    }
    const code =
      typeof (error as { code?: unknown } | null)?.code === 'string' ? (error as { code: string }).code : '';
    const cause = causeOf(error).text;
    const message = `${started ? 'stopped on a fatal error' : 'could not start'}: ${cause}${code && !cause.includes(code) ? ` [${code}]` : ''}`;
    if (log) log.error(message, code ? { code } : {});
    else err(`ax-mcp worker: ${message}`);
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
      const message = `module close failed: ${causeOf(error).text}`;
      if (log) log.error(message);
      else err(`ax-mcp worker: ${message}`);
    }
    await store?.close();
  }
}
