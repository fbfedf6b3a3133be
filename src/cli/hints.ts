/**
 * The CLI speaks in flags, not in library options: an error whose remedy is a library option
 * gets the flag that sets it. The library's own message stays as it is (it is right for code).
 */
import { AxMCPError, type AxMCPSSRFAllowance, AxMCPSSRFError } from '../index.js';

/** Library option paths and the CLI flags that set them. */
const FLAG_FOR_OPTION: Readonly<Record<string, string>> = {
  era: '--era',
  namespace: '--namespace',
  headers: '--header',
  authentication: '--bearer',
};

/** What the CLI says for each SSRF option that would allow a refused URL. */
const FLAG_FOR_ALLOWANCE: Readonly<Record<AxMCPSSRFAllowance, string>> = {
  allowLoopback: 'pass --allow-localhost',
  // --allow-localhost is allowLoopback only: plain HTTP elsewhere has no flag, on purpose.
  allowHTTP: '--allow-localhost permits plain HTTP to this machine only',
  allowPrivateNetwork: 'the CLI does not reach private networks',
};

/** The error's message in the CLI's words: an SSRF refusal names the flag, not the library option. */
export function cliMessage(error: AxMCPError): string {
  if (!(error instanceof AxMCPSSRFError) || error.allowWith === undefined) return error.message;
  return `Refused ${error.url}: ${error.reason} (${FLAG_FOR_ALLOWANCE[error.allowWith]})`;
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
