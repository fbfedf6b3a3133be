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

/** Library remedies in a message, and the CLI's words for them. */
const FLAG_FOR_REMEDY: readonly [RegExp, string][] = [
  [/\(allow it with ssrfProtection: \{ allowLoopback: true \}\)/, '(pass --allow-localhost)'],
  [
    /\(HTTPS required; allow it with ssrfProtection: \{ allowHTTP: true \}, or ssrfProtection: \{ allowLoopback: true \} for loopback hosts\)/,
    '(HTTPS required; --allow-localhost permits plain HTTP to this machine only)',
  ],
  [
    /\(allow it with ssrfProtection: \{ allowPrivateNetwork: true \}\)/,
    '(the CLI does not reach private networks)',
  ],
];

/** The error's message with library remedies put in flags: the first line a CLI user reads. */
export function cliMessage(error: AxMCPError): string {
  let message = error.message;
  for (const [remedy, flag] of FLAG_FOR_REMEDY) message = message.replace(remedy, flag);
  return message;
}

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
    case 'transport_error':
    case 'timeout': {
      const cause = networkCause(error);
      if (cause === 'ECONNREFUSED')
        return `nothing accepts connections at ${error.endpoint ?? 'the endpoint'} (ECONNREFUSED): is the server running?`;
      if (cause === 'ENOTFOUND' || cause === 'EAI_AGAIN') return `the host name does not resolve (${cause})`;
      if (cause === 'ECONNRESET') return 'the server closed the connection (ECONNRESET)';
      if (cause === 'ETIMEDOUT' || error.code === 'timeout')
        return 'no answer in time: --timeout MS waits longer';
      if (cause?.startsWith('ERR_TLS') || cause?.includes('CERT'))
        return `the TLS handshake failed (${cause})`;
      return cause ? `the network said ${cause}` : undefined;
    }
    case 'http_status': {
      const { status, bodySnippet } = error as { status?: number; bodySnippet?: string };
      const html = typeof bodySnippet === 'string' && /^\s*<(!doctype|html)/i.test(bodySnippet);
      if (html || status === 404 || status === 405 || status === 501) {
        return `the server answered${status ? ` HTTP ${status}` : ''}${html ? ' with an HTML page' : ''}, not as MCP: is this an MCP endpoint? (Streamable HTTP servers often serve /mcp; 2024-11-05 servers /sse, reached with --sse)`;
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

/** The system error code somewhere down the cause chain (`ECONNREFUSED`, `ENOTFOUND`, …). */
function networkCause(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== undefined && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z][A-Z_0-9]+$/.test(code)) return code;
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0) current = errors[0];
    else current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
