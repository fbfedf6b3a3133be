/**
 * The CLI speaks in flags, not in library options: an error whose remedy is a library option
 * gets the flag that sets it. The library's own message stays as it is (it is right for code).
 */
import { AxMCPError } from '../index.js';

/** Library option paths and the CLI flags that set them. */
const FLAG_FOR_OPTION: Readonly<Record<string, string>> = {
  era: '--era',
  namespace: '--namespace',
  headers: '--header',
  authentication: '--bearer',
};

/** What to do, in the CLI's words, or `undefined` when the message says it already. */
export function cliHint(error: unknown): string | undefined {
  if (!(error instanceof AxMCPError)) return undefined;
  switch (error.code) {
    case 'ssrf_blocked':
      return 'the CLI reaches plain HTTP and servers on this machine (loopback) only with --allow-localhost; other private addresses stay refused';
    case 'invalid_options': {
      const path = (error as { path?: unknown }).path;
      const flag = typeof path === 'string' ? FLAG_FOR_OPTION[path.split(/[.[]/)[0] ?? ''] : undefined;
      return flag === undefined ? undefined : `check ${flag}`;
    }
    default:
      return undefined;
  }
}
