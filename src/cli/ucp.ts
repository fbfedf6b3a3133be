/**
 * `ax-mcp ucp inspect|call`: a UCP business from the terminal. `inspect` discovers the business
 * (`/.well-known/ucp`) and prints what was negotiated; `call` runs one operation and prints its
 * JSON result. `checkout.complete` commits an order and moves money: it runs only with `--yes`,
 * which is the CLI's `authorizeOperation` — without it nothing is sent.
 */
import {
  AxMCPSSRFError,
  type AxUCPAuthorizationDecision,
  AxUCPClient,
  type AxUCPClientOptions,
  AxUCPError,
  type AxUCPNegotiation,
  type AxUCPOperation,
  AxUCPOutcomeUnknownError,
  AxUCPResponseError,
  axMCPBearerAuthentication,
  UCP_OPERATIONS,
} from '../index.js';
import { nearest } from '../options/check.js';
import { UsageError } from './connect.js';
import { type Flags, parseFlags } from './flags.js';
import { cliHint, cliMessage } from './hints.js';
import { table } from './table.js';

/** The platform profile sent when `--profile` is not given: a name that resolves nowhere. */
export const CLI_PLATFORM_PROFILE = 'https://platform.invalid/.well-known/ucp';

const FLAGS = {
  profile: { type: 'string' },
  header: { type: 'string', multiple: true },
  bearer: { type: 'string' },
  'allow-localhost': { type: 'boolean' },
  namespace: { type: 'string' },
  timeout: { type: 'string' },
} as const satisfies Flags;

const COMMON_HELP = `<business> is the business's origin (https://shop.example) or its profile URL
(…/.well-known/ucp).
Common flags:
  --profile URL              your platform profile, sent as UCP-Agent: profile="URL"
                             (default ${CLI_PLATFORM_PROFILE}: a business that fetches
                             platform profiles refuses it)
  --header "Name: value"     extra HTTP header (repeatable)
  --bearer TOKEN             bearer token
  --allow-localhost          allow businesses on this machine (127.0.0.1, ::1, localhost), plain HTTP included
  --timeout MS               give up on a request after MS milliseconds (default 30000)
  --namespace NAME           the client's namespace (default cli)`;

const OPERATION_NAMES = Object.keys(UCP_OPERATIONS) as AxUCPOperation[];

const INSPECT_HELP = `ax-mcp ucp inspect <business> [--json]

Discovers the business and negotiates with it as a platform would: prints the protocol
version, the services, the negotiated capabilities (and those left out, with the reason), the
payment handlers, the signing keys and the operations this client can run there. --json
prints the same as JSON, with the business profile.

${COMMON_HELP}`;

const CALL_HELP = `ax-mcp ucp call <business> <operation> ['{"json":"arguments"}'] [--args JSON]
                [--yes] [--idempotency-key KEY]

Runs one UCP operation and prints its JSON result. Operations on one resource take its id in
the arguments ({"id":"chk_123", …}); the rest is the request body.
Operations: ${OPERATION_NAMES.join(', ')}.

  --yes                      authorize checkout.complete: it commits an order and moves money,
                             and without --yes it is refused before anything is sent
  --idempotency-key KEY      the Idempotency-Key of a mutating call (default: a new UUID);
                             after "outcome unknown", run the same call again with the key it printed

${COMMON_HELP}`;

export const UCP_HELP = `ax-mcp ucp inspect <business> [--json]
ax-mcp ucp call <business> <operation> ['{"json":"arguments"}'] [--yes]

A UCP (Universal Commerce Protocol) business from the terminal: inspect discovers it and prints
the negotiated profile and capabilities; call runs one operation and prints the JSON result.
checkout.complete moves money: it runs only with --yes.

ax-mcp ucp inspect --help and ax-mcp ucp call --help print each one's flags.

${COMMON_HELP}`;

type Values = Record<string, unknown>;

/** The help of `ucp inspect` or `ucp call`, by the first argument; the command's otherwise. */
export function ucpUsage(argv: string[]): string {
  return argv[0] === 'inspect' ? INSPECT_HELP : argv[0] === 'call' ? CALL_HELP : UCP_HELP;
}

/** `ax-mcp ucp …`; resolves with the exit code. Usage mistakes throw {@link UsageError}. */
export async function ucpCommand(argv: string[], out: (text: string) => void): Promise<number> {
  const [sub, ...rest] = argv;
  const asksHelp = rest.includes('--help') || rest.includes('-h');
  if (sub === 'inspect') {
    if (asksHelp) return help(out, INSPECT_HELP);
    const { values, positionals } = parse('ucp inspect', { ...FLAGS, json: { type: 'boolean' } }, rest);
    const [business, ...extra] = positionals;
    if (!business) throw new UsageError('ucp inspect needs a business URL');
    if (extra.length > 0)
      throw new UsageError(`ucp inspect takes one URL; not understood: ${extra.join(' ')}`);
    return withClient(business, values, undefined, async (client) => {
      const negotiation = await client.connect();
      printNegotiation(client, negotiation, values.json === true, out);
      return 0;
    });
  }
  if (sub === 'call') {
    if (asksHelp) return help(out, CALL_HELP);
    const { values, positionals } = parse(
      'ucp call',
      { ...FLAGS, args: { type: 'string' }, yes: { type: 'boolean' }, 'idempotency-key': { type: 'string' } },
      rest,
    );
    const [business, operation, given, ...extra] = positionals;
    if (!business) throw new UsageError('ucp call needs a business URL');
    if (!operation) throw new UsageError('ucp call needs an operation after the business URL');
    if (!Object.hasOwn(UCP_OPERATIONS, operation)) {
      const near = nearest(operation, OPERATION_NAMES);
      throw new UsageError(
        `unknown UCP operation "${operation.slice(0, 100)}"${near ? ` (did you mean ${near}?)` : `; operations: ${OPERATION_NAMES.join(', ')}`}`,
      );
    }
    if (given !== undefined && values.args !== undefined)
      throw new UsageError('give the arguments once: as the JSON after the operation, or --args');
    if (extra.length > 0)
      throw new UsageError(`ucp call takes one JSON object of arguments; not understood: ${extra.join(' ')}`);
    const args = jsonObject(
      given ?? (values.args as string | undefined),
      given !== undefined ? 'the arguments' : '--args',
    );
    const key = values['idempotency-key'] as string | undefined;
    if (key !== undefined && !/^[\x21-\x7e]{1,200}$/.test(key))
      throw new UsageError('--idempotency-key must be 1-200 visible ASCII characters');
    const authorize = (): AxUCPAuthorizationDecision => {
      if (values.yes !== true) return { allow: false, reason: 'not authorized: pass --yes' };
      process.stderr.write(`authorized by --yes: ${operation}\n`);
      return true;
    };
    return withClient(business, values, authorize, async (client) => {
      const result = await client.call(operation as AxUCPOperation, args, key ? { idempotencyKey: key } : {});
      out(JSON.stringify(result, null, 2));
      return 0;
    });
  }
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    out(UCP_HELP);
    return sub === undefined ? 1 : 0;
  }
  const near = nearest(sub, ['inspect', 'call']);
  throw new UsageError(`unknown ucp command "${sub.slice(0, 100)}"${near ? ` (did you mean ${near}?)` : ''}`);
}

function help(out: (text: string) => void, text: string): number {
  out(text);
  return 0;
}

function parse(name: string, flags: Flags, argv: string[]) {
  const { values, positionals, vector } = parseFlags(name, flags, argv);
  if (vector !== undefined) throw new UsageError(`${name} takes no -- argument vector`);
  return { values, positionals };
}

/** The client options the flags ask for, checked. */
function clientOptions(values: Values): AxUCPClientOptions {
  const profile = (values.profile as string | undefined) ?? CLI_PLATFORM_PROFILE;
  if (!/^https?:\/\/[\x21-\x7e]+$/.test(profile) || /["\\]/.test(profile))
    throw new UsageError(`--profile must be an http(s) URL, not "${profile.slice(0, 100)}"`);
  const options: AxUCPClientOptions = {
    namespace: (values.namespace as string | undefined) ?? 'cli',
    profile,
    ssrfProtection: values['allow-localhost'] === true ? { allowLoopback: true } : true,
    // One attempt: a CLI user sees a failure and decides (with --idempotency-key) to retry.
    retry: { attempts: 1 },
  };
  if (values.timeout !== undefined) {
    const ms = Number(values.timeout);
    if (!(Number.isInteger(ms) && ms >= 1))
      throw new UsageError(`--timeout must be milliseconds ≥ 1, not "${String(values.timeout)}"`);
    options.timeoutMs = ms;
  }
  const headers: Record<string, string> = {};
  for (const header of (values.header as string[] | undefined) ?? []) {
    const colon = header.indexOf(':');
    if (colon <= 0) throw new UsageError(`--header needs "Name: value", got "${header}"`);
    headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
  }
  if (Object.keys(headers).length > 0) options.headers = headers;
  if (values.bearer) options.authentication = axMCPBearerAuthentication(values.bearer as string);
  return options;
}

/** Runs `body` with a client of `business`; UCP failures are printed in the CLI's words (exit 1). */
async function withClient(
  business: string,
  values: Values,
  authorize: (() => AxUCPAuthorizationDecision) | undefined,
  body: (client: AxUCPClient) => Promise<number>,
): Promise<number> {
  let url: URL;
  try {
    url = new URL(business);
  } catch {
    throw new UsageError(`"${business.slice(0, 200)}" is not a URL (the business origin or its profile URL)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`"${url.protocol}" businesses are not supported: use http(s)`);
  const options = clientOptions(values);
  if (authorize) options.authorizeOperation = authorize;
  let client: AxUCPClient;
  try {
    client = new AxUCPClient(url, options);
  } catch (error) {
    if (error instanceof AxUCPError && error.code === 'invalid_options') throw new UsageError(error.message);
    throw error;
  }
  try {
    return await body(client);
  } catch (error) {
    if (!(error instanceof AxUCPError)) throw error;
    process.stderr.write(describeFailure(error));
    return 1;
  } finally {
    client.close();
  }
}

/** Keeps a business's text on one line, without control characters, and short. */
function clean(text: string, max = 300): string {
  // Control and bidirectional-override characters (a business's text must not steer the terminal).
  const flat = text.replace(/[\p{Cc}\u202a-\u202e\u2066-\u2069]+/gu, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** `ax-mcp: <message> [code]`, the business's messages, and a hint in the CLI's words. */
export function describeFailure(error: AxUCPError): string {
  const cause = error.cause;
  let message = error.message;
  let hint: string | undefined;
  if (error.code === 'ssrf_blocked' && cause instanceof AxMCPSSRFError) {
    message = cliMessage(cause);
    hint = cliHint(cause);
  } else if (error.code === 'authorization_denied') {
    message = `${error.operation ?? 'the operation'} commits an order and moves money: nothing was sent`;
    hint = 'pass --yes to authorize it';
  } else if (error instanceof AxUCPOutcomeUnknownError) {
    hint = `run the same call again with --idempotency-key ${error.idempotencyKey}: the business answers from its idempotency store and does not act twice`;
  } else if (error.code === 'transport_error' || error.code === 'timeout') {
    hint = networkHint(error);
  } else if (error instanceof AxUCPResponseError && error.ucpCode === 'profile_unreachable') {
    hint = 'the business fetches platform profiles: pass --profile with the URL of yours';
  } else if (
    error.code === 'discovery_failed' ||
    (error instanceof AxUCPResponseError && error.status === 404)
  ) {
    hint = `is this a UCP business? its profile should be at ${error.endpoint ?? '/.well-known/ucp'}`;
  }
  const lines = [`ax-mcp: ${clean(message, 500)} [${error.code}]`];
  if (error instanceof AxUCPResponseError) {
    for (const m of error.messages.slice(0, 5)) {
      lines.push(
        `  ${clean(m.type ?? 'message', 20)}${m.code ? ` ${clean(m.code, 60)}` : ''}: ${clean(m.content ?? '')}`,
      );
    }
  }
  if (hint) lines.push(`hint: ${hint}`);
  return `${lines.join('\n')}\n`;
}

function networkHint(error: AxUCPError): string | undefined {
  let current: unknown = error.cause;
  for (let depth = 0; depth < 6 && current !== undefined && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (code === 'ECONNREFUSED')
      return `nothing accepts connections at ${error.endpoint ?? 'the business'}: is it running?`;
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `the host name does not resolve (${code})`;
    current = (current as { cause?: unknown }).cause;
  }
  return error.code === 'timeout' ? 'no answer in time: --timeout MS waits longer' : undefined;
}

function jsonObject(text: string | undefined, what: string): Record<string, unknown> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(`${what} ${what === '--args' ? 'is' : 'are'} not valid JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UsageError(`${what} must be a JSON object`);
  return value as Record<string, unknown>;
}

/** Prints the negotiation as tables, or as JSON. */
function printNegotiation(
  client: AxUCPClient,
  n: AxUCPNegotiation,
  json: boolean,
  out: (text: string) => void,
): void {
  const capabilities = [...n.capabilities.values()].sort((a, b) => a.name.localeCompare(b.name));
  const operations = OPERATION_NAMES.filter((op) => n.capabilities.has(UCP_OPERATIONS[op].capability));
  const handlers = Object.entries(n.paymentHandlers).flatMap(([name, entries]) =>
    entries.map((entry) => ({
      name,
      id: String(entry.id ?? ''),
      version: String(entry.version ?? ''),
      instruments: Array.isArray(entry.available_instruments)
        ? entry.available_instruments.map((i) => String((i as { type?: unknown }).type ?? '?'))
        : [],
    })),
  );
  const offered = [n.profile.ucp.version, ...Object.keys(n.profile.ucp.supported_versions ?? {})];
  if (json) {
    out(
      JSON.stringify(
        {
          business: client.endpoint,
          version: n.version,
          offeredVersions: offered,
          restEndpoint: n.restEndpoint || undefined,
          mcpEndpoint: n.mcpEndpoint,
          capabilities: capabilities.map((c) => ({ name: c.name, version: c.version, extends: c.extends })),
          rejected: n.rejected,
          paymentHandlers: handlers,
          keys: n.keys.map((k) => ({ kid: k.kid, kty: k.kty, crv: k.crv, alg: k.alg })),
          operations,
          profile: n.profile,
        },
        null,
        2,
      ),
    );
    return;
  }
  const keys = n.keys.map(
    (k) => `${clean(k.kid, 60)} (${[k.kty, k.crv ?? k.alg].filter(Boolean).join(' ')})`,
  );
  out(`Business   ${client.endpoint}`);
  out(`Version    ${n.version} (offers ${offered.map((v) => clean(v, 20)).join(', ')})`);
  out(`REST       ${n.restEndpoint ? clean(n.restEndpoint) : '—'}`);
  out(`MCP        ${n.mcpEndpoint ? clean(n.mcpEndpoint) : '—'}`);
  out(`Keys       ${keys.join(', ') || 'none published'}`);
  const section = (title: string, headers: string[], rows: string[][]) => {
    if (rows.length === 0) return;
    out(
      `\n${title} (${rows.length})\n${table(
        headers,
        rows.map((row) => row.map((cell) => clean(cell))),
      )}`,
    );
  };
  section(
    'Capabilities',
    ['name', 'version', 'extends'],
    capabilities.map((c) => [c.name, c.version, c.extends.join(', ')]),
  );
  section(
    'Left out',
    ['name', 'reason'],
    n.rejected.map((r) => [r.name, r.reason]),
  );
  section(
    'Payment handlers',
    ['name', 'id', 'instruments'],
    handlers.map((h) => [h.name, h.id, h.instruments.join(', ')]),
  );
  section(
    'Operations (ax-mcp ucp call)',
    ['operation', 'capability'],
    operations.map((op) => [op, UCP_OPERATIONS[op].capability]),
  );
}
