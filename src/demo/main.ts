/**
 * Runs the demo server from the environment: `PORT` (default 3000), `ERA` (`dual` | `modern` |
 * `legacy`, default `dual`), `HOST` (default 127.0.0.1), `TASK_POLLS` (complete a task on its
 * N-th poll). Run directly, it stops on SIGINT/SIGTERM. Used by `ax-mcp demo`.
 */
import { pathToFileURL } from 'node:url';
import { AxMCPDemoServer, type AxMCPDemoServerOptions } from './server.js';

/** Parses the environment into server options; throws `RangeError` on invalid values. */
export function demoOptionsFromEnv(env: NodeJS.ProcessEnv): AxMCPDemoServerOptions {
  const era = env.ERA ?? 'dual';
  if (era !== 'dual' && era !== 'modern' && era !== 'legacy') {
    throw new RangeError(`ERA must be dual, modern or legacy (got ${era.slice(0, 20)})`);
  }
  const port = Number(env.PORT ?? '3000');
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new RangeError('PORT must be 0-65535');
  const polls = env.TASK_POLLS === undefined ? undefined : Number(env.TASK_POLLS);
  if (polls !== undefined && (!Number.isInteger(polls) || polls < 1)) {
    throw new RangeError('TASK_POLLS must be a positive integer');
  }
  return {
    era,
    port,
    host: env.HOST ?? '127.0.0.1',
    ...(polls === undefined ? {} : { taskCompletesAfterPolls: polls }),
  };
}

/** Starts a server configured from `env`, prints where it listens, and resolves with it. */
export async function startDemoFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  out: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<AxMCPDemoServer> {
  const server = new AxMCPDemoServer(demoOptionsFromEnv(env));
  const url = await server.start();
  out(`ax-mcp demo (${server.era}) listening on ${url}`);
  out(`control: ${url.replace(/\/mcp$/, '/control/state')}`);
  if (server.shopState() !== undefined) out(`shop: ${url.replace(/\/mcp$/, '/.well-known/ucp')} (UCP)`);
  return server;
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  startDemoFromEnv().then(
    (server) => {
      const stop = () => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        void server.close();
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
